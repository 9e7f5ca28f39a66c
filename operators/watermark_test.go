package operators

import (
	"testing"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

const sec = int64(time.Second)

// wmCollector records the watermarks an assigner emits.
type wmCollector struct{ wms []int64 }

func (c *wmCollector) Emit(*dyntable.Chunk)         {}
func (c *wmCollector) EmitWatermark(ts int64) error { c.wms = append(c.wms, ts); return nil }

// TestWatermarkAssignerRestoresWatermark: the watermark survives a
// checkpoint. A restored assigner whose first rows are older than the
// restored watermark still emits the restored one, never less.
func TestWatermarkAssignerRestoresWatermark(t *testing.T) {
	ts := func(row types.Row) (types.Value, error) { return row[0], nil } // WATERMARK FOR ts AS ts
	chunk := func(s int64) *dyntable.Chunk {
		return &dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: types.Row{types.NewTimestamp(s * sec)}}}}
	}
	dir := t.TempDir()
	all := state.RangeFor(0, 1)
	st, err := state.OpenPebbleStore(dir+"/a", "wm", all, state.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := NewWatermarkAssigner(ts)
	if err := a.Open(&dataflow.OpContext{Parallelism: 1, State: st}); err != nil {
		t.Fatal(err)
	}
	var out wmCollector
	for _, s := range []int64{5, 20, 12} {
		if err := a.ProcessChunk(0, chunk(s), &out); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.SnapshotState(dataflow.Barrier{CheckpointID: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Checkpoint(dir + "/ckpt"); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	// Restore at parallelism 2: each subtask takes the lowest watermark
	// filed under its key groups, here 20 s everywhere.
	for s := 0; s < 2; s++ {
		kgs := state.RangeFor(s, 2)
		work := dir + "/b" + string(rune('0'+s))
		if err := state.RestorePebble(work, []state.RestoreSource{{Dir: dir + "/ckpt", KeyGroups: all}}, kgs, state.PebbleOptions{}); err != nil {
			t.Fatal(err)
		}
		ps, err := state.OpenPebbleStore(work, "wm", kgs, state.PebbleOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b := NewWatermarkAssigner(ts)
		if err := b.Open(&dataflow.OpContext{Subtask: s, Parallelism: 2, State: ps}); err != nil {
			t.Fatal(err)
		}
		var out2 wmCollector
		if err := b.ProcessChunk(0, chunk(7), &out2); err != nil {
			t.Fatal(err)
		}
		if len(out2.wms) != 1 || out2.wms[0] != 20*sec {
			t.Fatalf("subtask %d emitted %v after the restore, want the restored 20 s", s, out2.wms)
		}
		_ = ps.Close()
	}
}

// TestWatermarkAssignerPeriodic: with an interval, chunks only raise the
// watermark seen; the processing-time tick emits it, once.
func TestWatermarkAssignerPeriodic(t *testing.T) {
	a := NewWatermarkAssigner(func(row types.Row) (types.Value, error) { return row[0], nil }).WithInterval(200e6)
	if a.ProcessingTimeInterval() != 200e6 {
		t.Fatalf("interval %v", a.ProcessingTimeInterval())
	}
	var out wmCollector
	for _, s := range []int64{5, 20, 12} {
		c := &dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: types.Row{types.NewTimestamp(s * sec)}}}}
		if err := a.ProcessChunk(0, c, &out); err != nil {
			t.Fatal(err)
		}
	}
	if len(out.wms) != 0 {
		t.Fatalf("a periodic assigner emitted %v on chunks", out.wms)
	}
	for i := 0; i < 2; i++ {
		if err := a.OnProcessingTime(time.Time{}, &out); err != nil {
			t.Fatal(err)
		}
	}
	if len(out.wms) != 1 || out.wms[0] != 20*sec {
		t.Fatalf("ticks emitted %v, want [20 s] once", out.wms)
	}
}
