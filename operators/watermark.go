package operators

import (
	"fmt"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// WatermarkAssigner generates event-time watermarks from a rowtime
// column: after each chunk it emits max(rowtime seen) minus the delay
// that `WATERMARK FOR ts AS ts - INTERVAL ...` declares. The watermark
// expression is evaluated per row, as in Flink, and the maximum is kept.
//
// It emits a watermark after every chunk it receives; a source that wants
// a watermark after every row (the values connector does, so late-data
// tests are deterministic) sends one-row chunks. With an interval
// (pipeline.auto-watermark-interval, which the planner sets for unbounded
// sources) it emits periodically instead, as Flink does: on each
// processing-time tick, the largest watermark seen since, if it advanced.
//
// Its watermark survives checkpoints: at each barrier it files the last
// watermark it emitted in keyed state (under the key-group anchors of its
// subtask, see kit.KeyGroupAnchor), and a restored assigner starts from the
// lowest of the restored values, emitting it with its first chunk.
type WatermarkAssigner struct {
	dataflow.BaseOperator
	expr   Scalar // the watermark expression over the row, a TIMESTAMP
	max    int64
	wm     int64
	saved  state.ValueState[int64]
	groups state.KeyGroupRange
	// interval > 0: emit on processing-time ticks rather than per chunk.
	interval time.Duration
}

var (
	_ dataflow.Operator = (*WatermarkAssigner)(nil)
)

// WithInterval makes the assigner emit every d (periodic watermarks)
// instead of after every chunk; 0 keeps per-chunk emission.
func (w *WatermarkAssigner) WithInterval(d time.Duration) *WatermarkAssigner {
	w.interval = d
	return w
}

// ProcessingTimeInterval implements dataflow.Operator.
func (w *WatermarkAssigner) ProcessingTimeInterval() time.Duration { return w.interval }

// OnProcessingTime implements dataflow.Operator: the periodic
// emission.
func (w *WatermarkAssigner) OnProcessingTime(_ time.Time, out dataflow.Collector) error {
	return w.emit(out)
}

// emit sends the largest watermark seen if it advanced.
func (w *WatermarkAssigner) emit(out dataflow.Collector) error {
	if w.max <= w.wm {
		return nil
	}
	w.wm = w.max
	return out.EmitWatermark(w.wm)
}

// Open implements dataflow.Operator: it restores the saved watermark.
func (w *WatermarkAssigner) Open(ctx *dataflow.OpContext) error {
	if ctx == nil || ctx.State == nil {
		return nil
	}
	var err error
	if w.saved, err = state.NewValueState[int64](ctx.State, "watermark", kit.Int64Codec{}); err != nil {
		return err
	}
	w.groups = state.RangeFor(ctx.Subtask, max(ctx.Parallelism, 1))
	restored, found := int64(dataflow.MaxWatermark), false
	for kg := w.groups.Start; kg < w.groups.End; kg++ {
		v, ok, err := w.saved.Get(kit.KeyGroupAnchor(kg))
		if err != nil {
			return err
		}
		if ok {
			restored, found = min(restored, v), true
		}
	}
	if found {
		w.max = restored
	}
	return nil
}

// SnapshotState implements dataflow.Operator.
func (w *WatermarkAssigner) SnapshotState(dataflow.Barrier) error {
	if w.saved == nil || w.wm == dataflow.MinWatermark {
		return nil
	}
	for kg := w.groups.Start; kg < w.groups.End; kg++ {
		if err := w.saved.Put(kit.KeyGroupAnchor(kg), w.wm); err != nil {
			return err
		}
	}
	return nil
}

// NewWatermarkAssigner returns an assigner using expr as the watermark
// strategy.
func NewWatermarkAssigner(expr Scalar) *WatermarkAssigner {
	return &WatermarkAssigner{expr: expr, max: dataflow.MinWatermark, wm: dataflow.MinWatermark}
}

// ProcessChunk implements dataflow.Operator.
func (w *WatermarkAssigner) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	for _, ch := range in.Changes {
		v, err := w.expr(ch.Row)
		if err != nil {
			return err
		}
		if v.IsNull() {
			continue // Flink: a NULL watermark leaves the watermark unchanged
		}
		if v.Kind() != types.KindTimestamp {
			return fmt.Errorf("watermark expression returned %v, not a TIMESTAMP", v.Kind())
		}
		w.max = max(w.max, v.Timestamp())
	}
	out.Emit(in)
	if w.interval > 0 {
		return nil // periodic: OnProcessingTime emits
	}
	return w.emit(out)
}
