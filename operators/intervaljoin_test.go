package operators

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Test helpers for the time-based operators (interval join, temporal
// join, OVER aggregation). Names start with "tj".

// tjCollector records output changes and emitted watermarks.
type tjCollector struct {
	t   testing.TB
	out []string
	wms []int64
}

func (c *tjCollector) Emit(ch *dyntable.Chunk) {
	if ch.Len() == 0 {
		c.t.Errorf("operator emitted an empty chunk")
	}
	for _, x := range ch.Changes {
		c.out = append(c.out, x.Kind.String()+"["+types.FormatRow(x.Row, nil, ", ")+"]")
	}
}

func (c *tjCollector) EmitWatermark(ts int64) error {
	c.wms = append(c.wms, ts)
	return nil
}

// take returns and clears what was emitted so far.
func (c *tjCollector) take() []string {
	o := c.out
	c.out = nil
	return o
}

// tjTS is a timestamp at second s (fractional seconds allowed).
func tjTS(s float64) types.Value {
	return types.NewTimestamp(int64(math.Round(s * 1e9)))
}

// tjOpen opens op with a fresh memory store.
func tjOpen(t testing.TB, op dataflow.Operator) (*tjCollector, state.Store) {
	t.Helper()
	st := state.NewMemoryStore("tj")
	if err := op.Open(&dataflow.OpContext{NodeName: "test", Parallelism: 1, State: st}); err != nil {
		t.Fatal(err)
	}
	return &tjCollector{t: t}, st
}

func tjPush(t testing.TB, op dataflow.Operator, c *tjCollector, input int, rows ...types.Row) []string {
	t.Helper()
	ch := &dyntable.Chunk{}
	for _, r := range rows {
		ch.Append(dyntable.Insert, r)
	}
	if err := op.ProcessChunk(input, ch, c); err != nil {
		t.Fatal(err)
	}
	return c.take()
}

func tjWM(t testing.TB, op dataflow.Operator, c *tjCollector, sec float64) []string {
	t.Helper()
	if err := op.ProcessWatermark(tjTS(sec).Timestamp(), c); err != nil {
		t.Fatal(err)
	}
	return c.take()
}

func tjExpect(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}

// ijSpec joins (k, ts, v) with (k, ts, v) on k and
// l.ts BETWEEN r.ts - 2s AND r.ts + 1s.
func ijSpec(jt JoinType) IntervalJoinSpec {
	return IntervalJoinSpec{
		Join:     JoinSpec{Type: jt, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3},
		LeftTime: 1, RightTime: 1,
		Lower: -2 * int64(time.Second), Upper: int64(time.Second),
	}
}

// ijStateRows counts the rows the join holds for the given keys.
func ijStateRows(t testing.TB, op dataflow.Operator, keys ...int) int {
	t.Helper()
	j := op.(*intervalJoinOp)
	n := 0
	for _, k := range keys {
		key, _ := kit.EncodeKey(nil, types.Row{types.NewInt(int64(k))}, []int{0})
		for side := range 2 {
			if err := j.sides[side].Range(key, func(_ []byte, v kit.Rows) bool { n += len(v.Rows); return true }); err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

// TestIntervalJoinBounds: rows exactly at either bound match, rows one
// millisecond outside do not.
func TestIntervalJoinBounds(t *testing.T) {
	op := NewIntervalJoin(ijSpec(InnerJoin))
	c, _ := tjOpen(t, op)
	// Right row at 10 s: left rows match when lt - 10 s is in [-2 s, +1 s],
	// i.e. lt in [8 s, 11 s].
	tjExpect(t, "right", tjPush(t, op, c, 1, joinRow(1, tjTS(10), "r")))
	got := tjPush(t, op, c, 0,
		joinRow(1, tjTS(7.999), "a"),  // 1 ms before the lower bound
		joinRow(1, tjTS(8), "b"),      // at the lower bound
		joinRow(1, tjTS(11), "c"),     // at the upper bound
		joinRow(1, tjTS(11.001), "d"), // 1 ms after the upper bound
		joinRow(2, tjTS(10), "e"),     // other key
	)
	tjExpect(t, "left rows", got,
		"+I[1, 1970-01-01 00:00:08.000, b, 1, 1970-01-01 00:00:10.000, r]",
		"+I[1, 1970-01-01 00:00:11.000, c, 1, 1970-01-01 00:00:10.000, r]")
	// A second right row at 9.999 s: left rows in [7.999 s, 10.999 s]:
	// a (7.999) and b (8) match, c (11) and d (11.001) do not.
	got = tjPush(t, op, c, 1, joinRow(1, tjTS(9.999), "r2"))
	tjExpect(t, "second right", got,
		"+I[1, 1970-01-01 00:00:07.999, a, 1, 1970-01-01 00:00:09.999, r2]",
		"+I[1, 1970-01-01 00:00:08.000, b, 1, 1970-01-01 00:00:09.999, r2]")
}

// TestIntervalJoinStateCleanup shows the state shrinking as the
// watermark passes each row's last possible match.
func TestIntervalJoinStateCleanup(t *testing.T) {
	op := NewIntervalJoin(ijSpec(InnerJoin))
	c, _ := tjOpen(t, op)
	tjPush(t, op, c, 0, joinRow(1, tjTS(10), "l10"), joinRow(2, tjTS(20), "l20"))
	tjPush(t, op, c, 1, joinRow(1, tjTS(10), "r10"), joinRow(2, tjTS(12), "r12"))
	if n := ijStateRows(t, op, 1, 2); n != 4 {
		t.Fatalf("state holds %d rows, want 4", n)
	}
	// After watermark W only rows with time > W follow. A left row at lt
	// can match right rows up to lt - Lower = lt + 2 s: l10 lives while
	// wm < 12 s, l20 while wm < 22 s. A right row at rt can match left
	// rows up to rt + Upper = rt + 1 s: r10 lives while wm < 11 s, r12
	// while wm < 13 s.
	tjWM(t, op, c, 10.999)
	if n := ijStateRows(t, op, 1, 2); n != 4 {
		t.Fatalf("at wm 10.999 s state holds %d rows, want 4 (r10 expires at 11 s)", n)
	}
	tjWM(t, op, c, 11) // r10 gone
	if n := ijStateRows(t, op, 1, 2); n != 3 {
		t.Fatalf("at wm 11 s state holds %d rows, want 3", n)
	}
	tjWM(t, op, c, 13) // l10 (12 s) and r12 (13 s) gone
	if n := ijStateRows(t, op, 1, 2); n != 1 {
		t.Fatalf("at wm 13 s state holds %d rows, want 1", n)
	}
	tjWM(t, op, c, 30)
	if n := ijStateRows(t, op, 1, 2); n != 0 {
		t.Fatalf("at wm 30 s state holds %d rows, want 0", n)
	}
	// The watermark is forwarded held back by max(Upper, -Lower) = 2 s.
	want := []int64{tjTS(8.999).Timestamp(), tjTS(9).Timestamp(), tjTS(11).Timestamp(), tjTS(28).Timestamp()}
	if len(c.wms) != len(want) {
		t.Fatalf("watermarks %v, want %v", c.wms, want)
	}
	for i := range want {
		if c.wms[i] != want[i] {
			t.Fatalf("watermarks %v, want %v", c.wms, want)
		}
	}
}

// TestIntervalJoinLateAndOuter: a late row joins what is still in state;
// an unmatched row of an outer side is padded when it expires, or at once
// when it arrives too late to be stored.
func TestIntervalJoinLateAndOuter(t *testing.T) {
	op := NewIntervalJoin(ijSpec(LeftJoin))
	c, _ := tjOpen(t, op)
	tjPush(t, op, c, 1, joinRow(1, tjTS(10), "r10")) // lives while wm < 11 s
	tjExpect(t, "left l5", tjPush(t, op, c, 0, joinRow(1, tjTS(5), "l5")))
	// l5 expires at 5 + 2 = 7 s < 10.5 s, unmatched: padded now.
	tjExpect(t, "wm 10.5", tjWM(t, op, c, 10.5), "+I[1, 1970-01-01 00:00:05.000, l5, NULL, NULL, NULL]")
	// l9 is late (9 <= 10.5) but r10 is still in state: 9 - 10 = -1 s is
	// in [-2, 1]. l9 expires at 11 s > 10.5, so it is stored, matched.
	tjExpect(t, "late l9", tjPush(t, op, c, 0, joinRow(1, tjTS(9), "l9")),
		"+I[1, 1970-01-01 00:00:09.000, l9, 1, 1970-01-01 00:00:10.000, r10]")
	// l8 is late and expires at 10 s < 10.5,
	// so it is not stored; it matches r10 (8 - 10 = -2 s, the bound).
	tjExpect(t, "late l8", tjPush(t, op, c, 0, joinRow(1, tjTS(8), "l8")),
		"+I[1, 1970-01-01 00:00:08.000, l8, 1, 1970-01-01 00:00:10.000, r10]")
	// l7 is late, expires at 9 s: not stored, and no match (7 - 10 = -3 s):
	// padded at once.
	tjExpect(t, "late l7", tjPush(t, op, c, 0, joinRow(1, tjTS(7), "l7")),
		"+I[1, 1970-01-01 00:00:07.000, l7, NULL, NULL, NULL]")
	// Watermark 30: l9 expires matched (no padding), r10 is inner.
	tjExpect(t, "wm 30", tjWM(t, op, c, 30))

	// A fresh join: l5 without a match is padded when the watermark
	// reaches 5 + 2 = 7 s, not before.
	op = NewIntervalJoin(ijSpec(LeftJoin))
	c, _ = tjOpen(t, op)
	tjPush(t, op, c, 0, joinRow(1, tjTS(5), "l5"))
	tjExpect(t, "wm 6.999", tjWM(t, op, c, 6.999))
	tjExpect(t, "wm 7", tjWM(t, op, c, 7), "+I[1, 1970-01-01 00:00:05.000, l5, NULL, NULL, NULL]")
}

// TestIntervalJoinRightOuterMatchedFlag: a right row matched by a later
// left row is not padded at expiry.
func TestIntervalJoinRightOuterMatchedFlag(t *testing.T) {
	op := NewIntervalJoin(ijSpec(RightJoin))
	c, _ := tjOpen(t, op)
	tjPush(t, op, c, 1, joinRow(1, tjTS(10), "r10"), joinRow(1, tjTS(20), "r20"))
	tjExpect(t, "l10", tjPush(t, op, c, 0, joinRow(1, tjTS(10), "l10")),
		"+I[1, 1970-01-01 00:00:10.000, l10, 1, 1970-01-01 00:00:10.000, r10]")
	// r10 lives while wm < 11 s and is matched; r20 unmatched, padded at
	// wm >= 21 s.
	tjExpect(t, "wm 20.999", tjWM(t, op, c, 20.999))
	tjExpect(t, "wm 21", tjWM(t, op, c, 21), "+I[NULL, NULL, NULL, 1, 1970-01-01 00:00:20.000, r20]")
}

func TestIntervalJoinRejectsRetraction(t *testing.T) {
	op := NewIntervalJoin(ijSpec(InnerJoin))
	c, _ := tjOpen(t, op)
	err := op.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{joinC("-D", 1, tjTS(1), "x")}}, c)
	if err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("got %v, want an append-only error", err)
	}
}

func TestIntervalJoinCodec(t *testing.T) {
	v := kit.Rows{Rows: []types.Row{joinRow(1, tjTS(2), "a"), joinRow(nil, joinDec("1.50"), "")}, Matched: []bool{true, false}}
	b := kit.RowsCodec{}.Encode(nil, v)
	got, err := kit.RowsCodec{}.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 2 || got.Matched[0] != true || got.Matched[1] != false ||
		types.FormatRow(got.Rows[1], nil, ",") != types.FormatRow(v.Rows[1], nil, ",") {
		t.Fatalf("round trip: %+v", got)
	}
	if _, err := (kit.RowsCodec{}).Decode(b[:len(b)-1]); err == nil {
		t.Fatal("truncated state decoded without error")
	}
}

// ijEvent is one step of a scripted input: a row on a side, or a
// watermark (side -1).
type ijEvent struct {
	side int
	row  types.Row
	wm   int64
}

// ijScript is a deterministic input with late rows: keys drift with
// time (each lives for about 1 s of event time), times jittered up to
// 0.5 s back, a watermark 0.6 s behind the newest time after every 7th
// row. From row 1500 on, keys are new ones, so rows still in state at a
// checkpoint taken there expire only through the restored timers; split
// is the index of that row's event.
func ijScript() (ev []ijEvent, split int) {
	r := rand.New(rand.NewPCG(7, 7))
	maxTS := int64(math.MinInt64)
	for i := 0; i < 3000; i++ {
		ts := int64(i)*10e6 - r.Int64N(500e6)
		maxTS = max(maxTS, ts)
		k := i/50 + r.IntN(2)
		if i == 1500 {
			split = len(ev)
		}
		if i >= 1500 {
			k += 1000
		}
		ev = append(ev, ijEvent{side: r.IntN(2), row: joinRow(k, types.NewTimestamp(ts), i)})
		if i%7 == 6 {
			ev = append(ev, ijEvent{side: -1, wm: maxTS - 600e6})
		}
	}
	return ev, split
}

// ijRun feeds events to the subtasks of a join (rows routed by key group
// as an exchange routes them, watermarks to all) and returns the output.
func ijRun(t *testing.T, ops []dataflow.Operator, ev []ijEvent) []string {
	t.Helper()
	c := &tjCollector{t: t}
	for _, e := range ev {
		if e.side < 0 {
			for _, op := range ops {
				if err := op.ProcessWatermark(e.wm, c); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		key, _ := kit.EncodeKey(nil, e.row, []int{0})
		op := ops[state.SubtaskFor(state.KeyGroup(key), len(ops))]
		if err := op.ProcessChunk(e.side, &dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: e.row}}}, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range ops {
		if err := op.ProcessWatermark(dataflow.MaxWatermark, c); err != nil {
			t.Fatal(err)
		}
	}
	return c.out
}

// TestIntervalJoinRestoreRescaled: a LEFT interval join checkpointed
// half way into Pebble and restored at parallelism 2 — state, timers and
// watermark re-split by key group — produces, together with what the
// first run emitted before the checkpoint, exactly the output of an
// uninterrupted run.
func TestIntervalJoinRestoreRescaled(t *testing.T) {
	ev, half := ijScript()
	// A narrow interval, so that many left rows never match and must be
	// padded when they expire — through timers that a restore re-split.
	spec := ijSpec(LeftJoin)
	spec.Lower, spec.Upper = -30e6, 10e6

	ref := NewIntervalJoin(spec)
	tjOpen(t, ref)
	want := ijRun(t, []dataflow.Operator{ref}, ev)

	dir := t.TempDir()
	all := state.RangeFor(0, 1)
	st, err := state.OpenPebbleStore(dir+"/a", "ij", all, state.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := NewIntervalJoin(spec)
	if err := a.Open(&dataflow.OpContext{Parallelism: 1, State: st}); err != nil {
		t.Fatal(err)
	}
	c := &tjCollector{t: t}
	for _, e := range ev[:half] {
		if e.side < 0 {
			if err := a.ProcessWatermark(e.wm, c); err != nil {
				t.Fatal(err)
			}
		} else if err := a.ProcessChunk(e.side, &dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: e.row}}}, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.SnapshotState(dataflow.Barrier{CheckpointID: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Checkpoint(dir + "/ckpt"); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	_ = st.Close()
	got := c.out

	var ops []dataflow.Operator
	for s := 0; s < 2; s++ {
		kgs := state.RangeFor(s, 2)
		work := fmt.Sprintf("%s/b%d", dir, s)
		if err := state.RestorePebble(work, []state.RestoreSource{{Dir: dir + "/ckpt", KeyGroups: all}}, kgs, state.PebbleOptions{}); err != nil {
			t.Fatal(err)
		}
		ps, err := state.OpenPebbleStore(work, "ij", kgs, state.PebbleOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer ps.Close()
		op := NewIntervalJoin(spec)
		if err := op.Open(&dataflow.OpContext{Subtask: s, Parallelism: 2, State: ps}); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	got = append(got, ijRun(t, ops, ev[half:])...)

	// The subtasks interleave differently from one operator: compare as
	// multisets.
	sort.Strings(got)
	sort.Strings(want)
	padded := 0
	for _, w := range want {
		if strings.HasSuffix(w, "NULL, NULL, NULL]") {
			padded++
		}
	}
	if padded < 100 || len(want)-padded < 100 {
		t.Fatalf("the script produced %d matches and %d padded rows; want 100 of each", len(want)-padded, padded)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("restored run: %d rows, uninterrupted: %d rows; they differ", len(got), len(want))
	}
}
