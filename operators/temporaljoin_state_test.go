package operators

import (
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/types"
)

// The pending left rows keep their kinds; state written by the
// append-only version (kit.RowsCodec, flag byte 0) reads back as +I rows.
func TestTemporalJoinLeftStateKinds(t *testing.T) {
	r1, r2 := types.Row{types.NewString("o1")}, types.Row{types.NewString("o2")}
	in := tjLeftRows{Rows: []types.Row{r1, r2}, Kinds: []dyntable.RowKind{dyntable.UpdateBefore, dyntable.Delete}}
	got, err := tjLeftCodec{}.Decode(tjLeftCodec{}.Encode(nil, in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 2 || got.Kinds[0] != dyntable.UpdateBefore || got.Kinds[1] != dyntable.Delete || got.Rows[1][0].Str() != "o2" {
		t.Errorf("round trip: %+v", got)
	}
	old := kit.RowsCodec{}.Encode(nil, kit.Rows{Rows: []types.Row{r1}, Matched: []bool{false}})
	got, err = tjLeftCodec{}.Decode(old)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kinds) != 1 || got.Kinds[0] != dyntable.Insert || got.Rows[0][0].Str() != "o1" {
		t.Errorf("old state: %+v", got)
	}
}

// The left-row codec writes kit.RowsCodec's bytes, the kind in the flag
// byte, and its errors name the temporal join's state.
func TestTemporalJoinLeftStateBytes(t *testing.T) {
	r := types.Row{types.NewString("o1")}
	enc := types.EncodeRow(nil, r)
	want := append([]byte{1, byte(dyntable.Delete), byte(len(enc))}, enc...)
	got := tjLeftCodec{}.Encode(nil, tjLeftRows{Rows: []types.Row{r}, Kinds: []dyntable.RowKind{dyntable.Delete}})
	if string(got) != string(want) {
		t.Fatalf("Encode = %x, want %x", got, want)
	}
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{want[:len(want)-1], "temporal join state: corrupt row length"},
		{append([]byte{1, 9}, want[2:]...), "temporal join state: corrupt row kind 9"},
		{append(append([]byte(nil), want...), 0), "temporal join state: 1 trailing bytes"},
		{[]byte{1}, "temporal join state: truncated row"},
	} {
		if _, err := (tjLeftCodec{}).Decode(c.b); err == nil || err.Error() != c.want {
			t.Errorf("Decode(%x): err = %v, want %q", c.b, err, c.want)
		}
	}
}
