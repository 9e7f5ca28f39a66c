package operators

import (
	"testing"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
)

// tsortSpec sorts rows (ts, k, v) by ts, then k DESC.
func tsortSpec(proc bool) TemporalSortSpec {
	return TemporalSortSpec{TimeCol: 0, ProcTime: proc, OrderBy: []SortKey{{Col: 1, Desc: true}}, Width: 3}
}

// tsortOpenPebble opens op over a Pebble store in dir (restored from ckpt
// when it is not empty) with metrics that count late rows.
func tsortOpenPebble(t *testing.T, op dataflow.Operator, dir, ckpt string) (*dataflow.SubtaskMetrics, state.Store) {
	t.Helper()
	all := state.RangeFor(0, 1)
	if ckpt != "" {
		if err := state.RestorePebble(dir, []state.RestoreSource{{Dir: ckpt, KeyGroups: all}}, all, state.PebbleOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := state.OpenPebbleStore(dir, "tsort", all, state.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	m := dataflow.NewSubtaskMetrics()
	if err := op.Open(&dataflow.OpContext{NodeName: "test", Parallelism: 1, State: st, Metrics: m}); err != nil {
		t.Fatal(err)
	}
	return m, st
}

// TestTemporalSortRowtime: rows arriving out of order come out when the
// watermark passes their time, times ascending and the rows of one time
// by k DESC (ties in arrival order); a row behind the watermark is
// dropped and counted; a checkpoint taken with rows buffered, restored
// into a new operator on Pebble, emits those rows and still judges late
// rows by the watermark it had.
func TestTemporalSortRowtime(t *testing.T) {
	dir := t.TempDir()
	op := NewTemporalSort(tsortSpec(false))
	m, st := tsortOpenPebble(t, op, dir+"/a", "")
	c := &tjCollector{t: t}
	tjPush(t, op, c, 0,
		joinRow(tjTS(3), 1, "a"), joinRow(tjTS(1), 1, "b"), joinRow(tjTS(2), 5, "c"),
		joinRow(tjTS(1), 7, "d"), joinRow(tjTS(1), 1, "e"), joinRow(nil, 9, "null time"))
	tjExpect(t, "before any watermark", c.take())
	tjExpect(t, "wm 1.5", tjWM(t, op, c, 1.5),
		"+I[1970-01-01 00:00:01.000, 7, d]",
		"+I[1970-01-01 00:00:01.000, 1, b]",
		"+I[1970-01-01 00:00:01.000, 1, e]")
	// 1.5 is not after the watermark: late. 2 joins the rows waiting.
	tjPush(t, op, c, 0, joinRow(tjTS(1.5), 0, "late"), joinRow(tjTS(2), 8, "f"), joinRow(tjTS(4), 2, "g"))
	if n := m.LateRecords(); n != 1 {
		t.Fatalf("late rows counted: %d, want 1", n)
	}
	// Checkpoint with (2: c, f), (3: a), (4: g) buffered.
	if err := op.SnapshotState(dataflow.Barrier{CheckpointID: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Checkpoint(dir + "/ckpt"); err != nil {
		t.Fatal(err)
	}
	_ = op.Close()

	re := NewTemporalSort(tsortSpec(false))
	m2, _ := tsortOpenPebble(t, re, dir+"/b", dir+"/ckpt")
	// The restored watermark is 1.5: a row at 1 is still late.
	tjPush(t, re, c, 0, joinRow(tjTS(1), 3, "late again"), joinRow(tjTS(3), 4, "h"))
	if n := m2.LateRecords(); n != 1 {
		t.Fatalf("late rows counted after the restore: %d, want 1", n)
	}
	tjExpect(t, "wm 3 after restore", tjWM(t, re, c, 3),
		"+I[1970-01-01 00:00:02.000, 8, f]",
		"+I[1970-01-01 00:00:02.000, 5, c]",
		"+I[1970-01-01 00:00:03.000, 4, h]",
		"+I[1970-01-01 00:00:03.000, 1, a]")
	tjExpect(t, "final watermark", tjWM(t, re, c, 100), "+I[1970-01-01 00:00:04.000, 2, g]")
	tjExpect(t, "nothing left", tjWM(t, re, c, 200))
}

// TestTemporalSortRejectsUpdates: a retraction is a broken plan, not a
// row to sort.
func TestTemporalSortRejectsUpdates(t *testing.T) {
	op := NewTemporalSort(tsortSpec(false))
	c, _ := tjOpen(t, op)
	ch := &dyntable.Chunk{}
	ch.Append(dyntable.Delete, joinRow(tjTS(1), 1, "a"))
	if err := op.ProcessChunk(0, ch, c); err == nil {
		t.Fatal("a -D row was accepted")
	}
}

// TestTemporalSortProctime: rows wait for the next processing-time
// tick, which emits them by k DESC; a checkpoint with rows held restores
// them, numbered before the rows that arrive after; the end of input
// emits the rest. Without secondary keys rows pass straight through.
func TestTemporalSortProctime(t *testing.T) {
	dir := t.TempDir()
	op := NewTemporalSort(tsortSpec(true))
	if op.ProcessingTimeInterval() <= 0 {
		t.Fatal("a processing-time sort asks for no ticks")
	}
	_, st := tsortOpenPebble(t, op, dir+"/a", "")
	c := &tjCollector{t: t}
	tick := func(op dataflow.Operator) []string {
		t.Helper()
		if err := op.OnProcessingTime(time.Unix(0, 0), c); err != nil {
			t.Fatal(err)
		}
		return c.take()
	}
	tjExpect(t, "rows wait", tjPush(t, op, c, 0, joinRow(tjTS(1), 1, "a"), joinRow(tjTS(1), 3, "b"), joinRow(tjTS(1), 1, "c")))
	tjExpect(t, "a watermark emits nothing", tjWM(t, op, c, 50))
	tjExpect(t, "tick", tick(op),
		"+I[1970-01-01 00:00:01.000, 3, b]",
		"+I[1970-01-01 00:00:01.000, 1, a]",
		"+I[1970-01-01 00:00:01.000, 1, c]")
	tjExpect(t, "empty tick", tick(op))
	tjPush(t, op, c, 0, joinRow(tjTS(2), 1, "d"), joinRow(tjTS(2), 2, "e"))
	if err := op.SnapshotState(dataflow.Barrier{CheckpointID: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Checkpoint(dir + "/ckpt"); err != nil {
		t.Fatal(err)
	}
	_ = op.Close()

	re := NewTemporalSort(tsortSpec(true))
	tsortOpenPebble(t, re, dir+"/b", dir+"/ckpt")
	tjPush(t, re, c, 0, joinRow(tjTS(3), 2, "f"), joinRow(tjTS(3), 0, "g"))
	if err := re.Finish(c); err != nil {
		t.Fatal(err)
	}
	tjExpect(t, "end of input after restore", c.take(),
		"+I[1970-01-01 00:00:02.000, 2, e]",
		"+I[1970-01-01 00:00:03.000, 2, f]",
		"+I[1970-01-01 00:00:02.000, 1, d]",
		"+I[1970-01-01 00:00:03.000, 0, g]")

	pass := NewTemporalSort(TemporalSortSpec{TimeCol: 0, ProcTime: true, Width: 3})
	pc, _ := tjOpen(t, pass)
	if pass.ProcessingTimeInterval() != 0 {
		t.Fatal("a processing-time sort without secondary keys asks for ticks")
	}
	tjExpect(t, "pass through", tjPush(t, pass, pc, 0, joinRow(tjTS(1), 1, "a"), joinRow(tjTS(1), 3, "b")),
		"+I[1970-01-01 00:00:01.000, 1, a]", "+I[1970-01-01 00:00:01.000, 3, b]")
}
