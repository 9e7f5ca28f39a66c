package operators

import (
	"testing"

	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/types"
)

// overSpec aggregates rows (k, ts, x): COUNT(*), SUM(x), MIN(x), MAX(x),
// AVG(x) over the frame, partitioned by k, ordered by ts.
func overSpec(rows bool, preceding int64) OverAggSpec {
	bi := types.TypeBigInt
	return OverAggSpec{
		PartitionKeys: []int{0}, TimeCol: 1, Rows: rows, Preceding: preceding, Width: 3,
		Aggs: []AggCall{
			{Kind: AggCountStar, ResultType: bi},
			{Kind: AggSum, Arg: 2, ArgType: bi, ResultType: bi},
			{Kind: AggMin, Arg: 2, ArgType: bi, ResultType: bi},
			{Kind: AggMax, Arg: 2, ArgType: bi, ResultType: bi},
			{Kind: AggAvg, Arg: 2, ArgType: bi, ResultType: bi},
		},
	}
}

// The input of both frame tests, partition 1 (times in s, x):
//
//	(1, 10) (2, 20) (2, 5) (4, 1) (5, NULL)
//
// plus (9, 100) for partition 2. Rows arrive out of order: (2, 5) after
// (4, 1) — both before the watermark reaches 2.
func overFeed(t *testing.T, spec OverAggSpec) []string {
	op := NewOverAgg(spec)
	c, _ := tjOpen(t, op)
	tjPush(t, op, c, 0,
		joinRow(1, tjTS(1), 10), joinRow(1, tjTS(2), 20), joinRow(2, tjTS(9), 100),
		joinRow(1, tjTS(4), 1), joinRow(1, tjTS(2), 5))
	var out []string
	out = append(out, tjWM(t, op, c, 1.5)...)
	// Late: 1.5 <= 1.5; dropped.
	tjPush(t, op, c, 0, joinRow(1, tjTS(1.5), 1000), joinRow(1, tjTS(5), nil))
	out = append(out, tjWM(t, op, c, 100)...)
	return out
}

// TestOverRangeTies: RANGE BETWEEN 2 s PRECEDING AND CURRENT ROW, i.e.
// rows with time in [t - 2 s, t]; rows of equal time are peers.
func TestOverRangeTies(t *testing.T) {
	got := overFeed(t, overSpec(false, 2e9))
	tjExpect(t, "range", got,
		// wm 1.5: the row at 1 s alone: count 1, sum 10, min 10, max 10, avg 10.
		"+I[1, 1970-01-01 00:00:01.000, 10, 1, 10, 10, 10, 10]",
		// wm 100, in time order. t=2: frame [0, 2] = {10, 20, 5}: both
		// peers at 2 s get count 3, sum 35, min 5, max 20, avg 11 (35/3
		// truncated, integer AVG).
		"+I[1, 1970-01-01 00:00:02.000, 20, 3, 35, 5, 20, 11]",
		"+I[1, 1970-01-01 00:00:02.000, 5, 3, 35, 5, 20, 11]",
		// t=4: frame [2, 4] = {20, 5, 1} (the row at 1 s left): 3, 26, 1, 20, 8.
		"+I[1, 1970-01-01 00:00:04.000, 1, 3, 26, 1, 20, 8]",
		// t=5: frame [3, 5] = {1, NULL}: count(*) 2, sum 1, min 1, max 1, avg 1.
		"+I[1, 1970-01-01 00:00:05.000, NULL, 2, 1, 1, 1, 1]",
		// t=9, partition 2: itself.
		"+I[2, 1970-01-01 00:00:09.000, 100, 1, 100, 100, 100, 100]",
	)
}

// TestOverRowsTies: ROWS BETWEEN 1 PRECEDING AND CURRENT ROW: the row and
// the one before it, peers in arrival order (20 arrived before 5).
func TestOverRowsTies(t *testing.T) {
	got := overFeed(t, overSpec(true, 1))
	tjExpect(t, "rows", got,
		"+I[1, 1970-01-01 00:00:01.000, 10, 1, 10, 10, 10, 10]",
		// {10, 20}: 2, 30, 10, 20, 15
		"+I[1, 1970-01-01 00:00:02.000, 20, 2, 30, 10, 20, 15]",
		// {20, 5}: 2, 25, 5, 20, 12
		"+I[1, 1970-01-01 00:00:02.000, 5, 2, 25, 5, 20, 12]",
		// {5, 1}: 2, 6, 1, 5, 3
		"+I[1, 1970-01-01 00:00:04.000, 1, 2, 6, 1, 5, 3]",
		// {1, NULL}: 2, 1, 1, 1, 1
		"+I[1, 1970-01-01 00:00:05.000, NULL, 2, 1, 1, 1, 1]",
		"+I[2, 1970-01-01 00:00:09.000, 100, 1, 100, 100, 100, 100]",
	)
}

// TestOverUnbounded: every earlier row of the partition (RANGE: peers
// included; ROWS: arrival order among peers).
func TestOverUnbounded(t *testing.T) {
	tjExpect(t, "range unbounded", overFeed(t, overSpec(false, OverUnbounded)),
		"+I[1, 1970-01-01 00:00:01.000, 10, 1, 10, 10, 10, 10]",
		"+I[1, 1970-01-01 00:00:02.000, 20, 3, 35, 5, 20, 11]",
		"+I[1, 1970-01-01 00:00:02.000, 5, 3, 35, 5, 20, 11]",
		"+I[1, 1970-01-01 00:00:04.000, 1, 4, 36, 1, 20, 9]",
		"+I[1, 1970-01-01 00:00:05.000, NULL, 5, 36, 1, 20, 9]",
		"+I[2, 1970-01-01 00:00:09.000, 100, 1, 100, 100, 100, 100]",
	)
	tjExpect(t, "rows unbounded", overFeed(t, overSpec(true, OverUnbounded)),
		"+I[1, 1970-01-01 00:00:01.000, 10, 1, 10, 10, 10, 10]",
		"+I[1, 1970-01-01 00:00:02.000, 20, 2, 30, 10, 20, 15]",
		"+I[1, 1970-01-01 00:00:02.000, 5, 3, 35, 5, 20, 11]",
		"+I[1, 1970-01-01 00:00:04.000, 1, 4, 36, 1, 20, 9]",
		"+I[1, 1970-01-01 00:00:05.000, NULL, 5, 36, 1, 20, 9]",
		"+I[2, 1970-01-01 00:00:09.000, 100, 1, 100, 100, 100, 100]",
	)
}

func TestOverAccCodec(t *testing.T) {
	spec := overSpec(true, 3)
	c := overAccCodec{calls: spec.Aggs, retracts: true}
	v, err := c.fresh()
	if err != nil {
		t.Fatal(err)
	}
	v.n = 2
	for _, x := range []int64{7, 3} {
		for i := range v.accs {
			if err := v.accs[i].add(types.NewInt(x)); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := c.Decode(c.Encode(nil, v))
	if err != nil {
		t.Fatal(err)
	}
	// count 2, sum 10, min 3, max 7, avg 5
	want := []int64{2, 10, 3, 7, 5}
	if got.n != 2 {
		t.Fatalf("n = %d", got.n)
	}
	for i, w := range want {
		if r := got.accs[i].result(); r.Int() != w {
			t.Errorf("agg %d = %v, want %d", i, r, w)
		}
	}
}

// TestOverRangeStateCleanup: a partition that falls silent does not keep
// its RANGE frame once the watermark is past every row's reach.
func TestOverRangeStateCleanup(t *testing.T) {
	op := NewOverAgg(overSpec(false, 2e9))
	c, _ := tjOpen(t, op)
	o := op.(*overAggOp)
	frameRows := func() int {
		n := 0
		key, _ := kit.EncodeKey(nil, joinRow(1), []int{0})
		if err := o.frame.Range(key, func(_ []byte, v kit.Rows) bool { n += len(v.Rows); return true }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	tjPush(t, op, c, 0, joinRow(1, tjTS(1), 10), joinRow(1, tjTS(2), 20))
	tjWM(t, op, c, 2)
	if n := frameRows(); n != 2 {
		t.Fatalf("frame holds %d rows, want 2", n)
	}
	// Rows still to come have time > wm, so frames start after wm - 2 s:
	// the row at 1 s goes at wm 3 s (its cleanup time 1 + 2 s + 1 ns fires
	// at wm >= 3.000000001), the row at 2 s one second later.
	tjWM(t, op, c, 3.5)
	if n := frameRows(); n != 1 {
		t.Fatalf("at wm 3.5 s the frame holds %d rows, want 1", n)
	}
	tjWM(t, op, c, 4.5)
	if n := frameRows(); n != 0 {
		t.Fatalf("at wm 4.5 s the frame holds %d rows, want 0", n)
	}
	key, _ := kit.EncodeKey(nil, joinRow(1), []int{0})
	if _, ok, _ := o.accs.Get(key); ok {
		t.Fatal("the accumulators of the silent partition are still there")
	}
	// A new row starts from an empty frame: count 1, sum 5.
	tjPush(t, op, c, 0, joinRow(1, tjTS(10), 5))
	tjExpect(t, "new row", tjWM(t, op, c, 10), "+I[1, 1970-01-01 00:00:10.000, 5, 1, 5, 5, 5, 5]")
}
