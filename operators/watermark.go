package operators

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// WatermarkAssigner generates event-time watermarks from a rowtime
// column: after each chunk it emits max(rowtime seen) minus the delay
// that `WATERMARK FOR ts AS ts - INTERVAL ...` declares. The watermark
// expression is evaluated per row, as in Flink, and the maximum is kept.
//
// It emits a watermark after every chunk it receives; a source that wants
// a watermark after every row (the values connector does, so late-data
// tests are deterministic) sends one-row chunks.
type WatermarkAssigner struct {
	base
	expr Scalar // the watermark expression over the row, a TIMESTAMP
	max  int64
	wm   int64
}

var _ dataflow.Operator = (*WatermarkAssigner)(nil)

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
	if w.max > w.wm {
		w.wm = w.max
		// The runtime forwards watermarks that operators emit through
		// the collector when it implements WatermarkEmitter.
		if we, ok := out.(dataflow.WatermarkEmitter); ok {
			return we.EmitWatermark(w.wm)
		}
		return fmt.Errorf("watermark assigner: collector %T cannot emit watermarks", out)
	}
	return nil
}
