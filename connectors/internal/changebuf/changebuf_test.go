package changebuf

import (
	"reflect"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func kv(kind dyntable.RowKind, k, v int64) dyntable.Change {
	return dyntable.Change{Kind: kind, Row: types.Row{types.NewInt(k), types.NewInt(v)}}
}

func fmtRows(rs []types.Row) []string {
	var out []string
	for _, r := range rs {
		out = append(out, types.FormatRow(r, nil, "|"))
	}
	return out
}

// With a key, the last change of each key wins, in first-arrival order:
// 1 is inserted then updated (upsert 1|11), 2 is updated without a +U
// after its -U (a delete), 3 is inserted then deleted (a delete of a
// row the table may not have: harmless), 4 is inserted.
func TestKeyedCompaction(t *testing.T) {
	b := New([]int{0})
	err := b.Add("test sink", &dyntable.Chunk{Changes: []dyntable.Change{
		kv(dyntable.Insert, 1, 10), kv(dyntable.UpdateBefore, 2, 20), kv(dyntable.Insert, 3, 30),
		kv(dyntable.UpdateBefore, 1, 10), kv(dyntable.UpdateAfter, 1, 11), kv(dyntable.Delete, 3, 30), kv(dyntable.Insert, 4, 40)}})
	if err != nil {
		t.Fatal(err)
	}
	ups, dels := b.Split()
	if got, want := fmtRows(ups), []string{"1|11", "4|40"}; !reflect.DeepEqual(got, want) {
		t.Errorf("upserts %v, want %v", got, want)
	}
	if got, want := fmtRows(dels), []string{"2|20", "3|30"}; !reflect.DeepEqual(got, want) {
		t.Errorf("deletes %v, want %v", got, want)
	}
	if b.Len() != 4 {
		t.Errorf("Len %d, want 4 keys", b.Len())
	}
	b.Reset()
	if ups, dels := b.Split(); b.Len() != 0 || len(ups)+len(dels) != 0 {
		t.Error("Reset left changes")
	}
}

// Without a key the buffer is an append log of inserts; anything else is
// refused, naming the sink.
func TestAppendOnly(t *testing.T) {
	b := New(nil)
	if err := b.Add("test sink", &dyntable.Chunk{Changes: []dyntable.Change{kv(dyntable.Insert, 1, 1), kv(dyntable.Insert, 1, 1)}}); err != nil {
		t.Fatal(err)
	}
	if ups, _ := b.Split(); len(ups) != 2 {
		t.Errorf("%d inserts, want both", len(ups))
	}
	err := b.Add("test sink", &dyntable.Chunk{Changes: []dyntable.Change{kv(dyntable.Delete, 1, 1)}})
	if err == nil || !strings.Contains(err.Error(), "test sink: -D reached a table without a primary key") {
		t.Errorf("got %v", err)
	}
}
