package window

import (
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Rows are (k, window_start, window_end, v); the join keys are k,
// window_start and window_end.
func wjSpec(jt operators.JoinType) WindowJoinSpec {
	return WindowJoinSpec{
		Join:    operators.JoinSpec{Type: jt, LeftKeys: []int{0, 1, 2}, RightKeys: []int{0, 1, 2}, LeftWidth: 4, RightWidth: 4},
		LeftEnd: 2, RightEnd: 2,
	}
}

// TestWindowJoin: windows [0, 10) and [10, 20) s. A window fires when the
// watermark reaches window_end - 1 ms; rows of a fired window are late.
func TestWindowJoin(t *testing.T) {
	for _, tc := range []struct {
		jt            operators.JoinType
		first, second []string
	}{
		{operators.InnerJoin,
			[]string{"+I[1, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, l1, 1, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, r1]"},
			nil},
		{operators.FullJoin,
			[]string{
				"+I[1, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, l1, 1, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, r1]",
				"+I[2, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, l2, NULL, NULL, NULL, NULL]",
				"+I[NULL, NULL, NULL, NULL, 3, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, r3]"},
			[]string{"+I[NULL, NULL, NULL, NULL, 1, 1970-01-01 00:00:10.000, 1970-01-01 00:00:20.000, r1b]"}},
	} {
		op := NewWindowJoin(wjSpec(tc.jt))
		c, _ := tjOpen(t, op)
		tjPush(t, op, c, 0, joinRow(1, tjTS(0), tjTS(10), "l1"), joinRow(2, tjTS(0), tjTS(10), "l2"))
		tjPush(t, op, c, 1, joinRow(1, tjTS(0), tjTS(10), "r1"), joinRow(3, tjTS(0), tjTS(10), "r3"),
			joinRow(1, tjTS(10), tjTS(20), "r1b"))
		// 9.998 < 10 - 0.001: nothing fires yet.
		tjExpect(t, tc.jt.String()+" wm 9.998", tjWM(t, op, c, 9.998))
		// Window [0, 10) fires at 9.999: keys 1, 2, 3 in key order.
		tjExpect(t, tc.jt.String()+" wm 9.999", tjWM(t, op, c, 9.999), tc.first...)
		// A row of the fired window is late and dropped.
		tjPush(t, op, c, 0, joinRow(3, tjTS(0), tjTS(10), "late"))
		tjExpect(t, tc.jt.String()+" wm 30", tjWM(t, op, c, 30), tc.second...)
	}
}

// TestWindowJoinWindowKeyOnPebble joins on the window only, as Nexmark q5
// does, so every row of a window is under one join key: 3,000 left rows
// and 2 right rows in window [0, 10), one right row alone in [10, 20).
// The state is on Pebble with a tiny cache and is checkpointed and
// restored into a new store halfway through the left rows. The result,
// worked out directly: each left row with each right row of its window,
// the left rows in arrival order; the lone right row padded (full join).
func TestWindowJoinWindowKeyOnPebble(t *testing.T) {
	spec := WindowJoinSpec{
		Join:    operators.JoinSpec{Type: operators.FullJoin, LeftKeys: []int{1, 2}, RightKeys: []int{1, 2}, LeftWidth: 4, RightWidth: 4},
		LeftEnd: 2, RightEnd: 2,
	}
	const n = 3000
	dir := t.TempDir()
	all := state.RangeFor(0, 1)
	opts := state.PebbleOptions{CacheEntries: 16}
	open := func(work string) (dataflow.Operator, *state.PebbleStore) {
		st, err := state.OpenPebbleStore(work, "wj", all, opts)
		if err != nil {
			t.Fatal(err)
		}
		op := NewWindowJoin(spec)
		if err := op.Open(&dataflow.OpContext{NodeName: "test", Parallelism: 1, State: st, Metrics: dataflow.NewSubtaskMetrics()}); err != nil {
			t.Fatal(err)
		}
		return op, st
	}
	left := func(i int) types.Row { return joinRow(i, tjTS(0), tjTS(10), fmt.Sprintf("l%d", i)) }
	op, st := open(dir + "/a")
	c := &tjCollector{t: t}
	for i := 0; i < n/2; i++ {
		tjPush(t, op, c, 0, left(i))
	}
	tjPush(t, op, c, 1, joinRow(100, tjTS(0), tjTS(10), "r1"))
	if err := op.SnapshotState(dataflow.Barrier{CheckpointID: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Checkpoint(dir + "/ckpt"); err != nil {
		t.Fatal(err)
	}
	_ = op.Close()
	_ = st.Close()
	if err := state.RestorePebble(dir+"/b", []state.RestoreSource{{Dir: dir + "/ckpt", KeyGroups: all}}, all, opts); err != nil {
		t.Fatal(err)
	}
	op, st = open(dir + "/b")
	defer st.Close()
	for i := n / 2; i < n; i++ {
		tjPush(t, op, c, 0, left(i))
	}
	tjPush(t, op, c, 1, joinRow(200, tjTS(0), tjTS(10), "r2"), joinRow(300, tjTS(10), tjTS(20), "r3"))
	got := tjWM(t, op, c, 30)
	var want []string
	for i := 0; i < n; i++ {
		for _, r := range []string{"100, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, r1", "200, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, r2"} {
			want = append(want, fmt.Sprintf("+I[%d, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, l%d, %s]", i, i, r))
		}
	}
	want = append(want, "+I[NULL, NULL, NULL, NULL, 300, 1970-01-01 00:00:10.000, 1970-01-01 00:00:20.000, r3]")
	tjExpect(t, "fired windows", got, want...)
	// The fired windows' state is gone: a new window of the same key
	// starts from nothing.
	if rows := tjWM(t, op, c, 40); len(rows) != 0 {
		t.Fatalf("a second watermark emitted %d rows", len(rows))
	}
}
