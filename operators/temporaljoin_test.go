package operators

import (
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/types"
)

// Left rows are orders (id, cur, ts); right rows are rates (cur, rate, ts)
// keyed by cur.
func tmSpec(jt JoinType) TemporalJoinSpec {
	return TemporalJoinSpec{
		Join:     JoinSpec{Type: jt, LeftKeys: []int{1}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3},
		LeftTime: 2, RightTime: 2,
	}
}

func tmRight(t *testing.T, j *temporalJoinOp, c *tjCollector, kind string, vals ...any) {
	t.Helper()
	if err := j.ProcessChunk(1, &dyntable.Chunk{Changes: []dyntable.Change{joinC(kind, vals...)}}, c); err != nil {
		t.Fatal(err)
	}
}

func tmVersions(t *testing.T, j *temporalJoinOp, cur string) int {
	t.Helper()
	key, _ := kit.EncodeKey(nil, types.Row{types.NewString(cur)}, []int{0})
	n := 0
	if err := j.versions.Range(key, func([]byte, tjVersion) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTemporalJoinVersionChanges: the rate changes between two orders;
// each order joins the rate valid at its own time, whatever the arrival
// order, and old versions are dropped once the watermark passes their
// successor.
func TestTemporalJoinVersionChanges(t *testing.T) {
	for _, jt := range []JoinType{InnerJoin, LeftJoin} {
		op := NewTemporalJoin(tmSpec(jt))
		j := op.(*temporalJoinOp)
		c, _ := tjOpen(t, op)
		tmRight(t, j, c, "+I", "EUR", 10, tjTS(1))
		tjPush(t, op, c, 0, joinRow("o1", "EUR", tjTS(2)))
		tmRight(t, j, c, "-U", "EUR", 10, tjTS(1)) // ignored
		tmRight(t, j, c, "+U", "EUR", 20, tjTS(3))
		tjPush(t, op, c, 0, joinRow("o2", "EUR", tjTS(4)), joinRow("o3", "EUR", tjTS(2.5)), joinRow("o0", "USD", tjTS(2)))
		// Nothing before the watermark reaches the orders.
		tjExpect(t, "wm 1.9", tjWM(t, op, c, 1.9))
		// wm 5: o1@2 sees the rate of 1 s (10), o3@2.5 too, o2@4 the rate
		// of 3 s (20); USD has no rate: dropped, or padded by LEFT.
		want := []string{
			"+I[o1, EUR, 1970-01-01 00:00:02.000, EUR, 10, 1970-01-01 00:00:01.000]",
		}
		if jt == LeftJoin {
			want = append(want, "+I[o0, USD, 1970-01-01 00:00:02.000, NULL, NULL, NULL]")
		}
		want = append(want,
			"+I[o3, EUR, 1970-01-01 00:00:02.500, EUR, 10, 1970-01-01 00:00:01.000]",
			"+I[o2, EUR, 1970-01-01 00:00:04.000, EUR, 20, 1970-01-01 00:00:03.000]")
		tjExpect(t, "wm 5", tjWM(t, op, c, 5), want...)
		// The version of 1 s is superseded at 3 s <= 5: dropped.
		if n := tmVersions(t, j, "EUR"); n != 1 {
			t.Fatalf("%v: %d versions kept, want 1", jt, n)
		}
		// EUR deleted at 6 s; an order at 7 s finds no rate.
		tmRight(t, j, c, "-D", "EUR", 20, tjTS(6))
		tjPush(t, op, c, 0, joinRow("o4", "EUR", tjTS(7)))
		want = nil
		if jt == LeftJoin {
			want = []string{"+I[o4, EUR, 1970-01-01 00:00:07.000, NULL, NULL, NULL]"}
		}
		tjExpect(t, "wm 8", tjWM(t, op, c, 8), want...)
		// The deletion is the newest version <= 8: both are gone.
		if n := tmVersions(t, j, "EUR"); n != 0 {
			t.Fatalf("%v: %d versions kept, want 0", jt, n)
		}
		// A late order at 3.5 s is joined at the next watermark with what
		// is left: nothing.
		tjPush(t, op, c, 0, joinRow("o5", "EUR", tjTS(3.5)))
		want = nil
		if jt == LeftJoin {
			want = []string{"+I[o5, EUR, 1970-01-01 00:00:03.500, NULL, NULL, NULL]"}
		}
		tjExpect(t, "wm 9", tjWM(t, op, c, 9), want...)
	}
}

func TestTemporalJoinVersionCodec(t *testing.T) {
	v := tjVersion{Row: joinRow("EUR", 10, tjTS(1)), Deleted: true}
	got, err := tjVersionCodec{}.Decode(tjVersionCodec{}.Encode(nil, v))
	if err != nil || !got.Deleted || types.FormatRow(got.Row, nil, ",") != types.FormatRow(v.Row, nil, ",") {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if _, err := (tjVersionCodec{}).Decode([]byte{7}); err == nil {
		t.Fatal("corrupt version decoded")
	}
}
