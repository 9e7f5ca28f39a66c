package operators

import (
	"github.com/streamsql/streamsql/dataflow"
)

// WatermarkCalc is a Calc whose expressions call CURRENT_WATERMARK: it
// stores each watermark the subtask receives into the cell that its
// compiled expressions read (expr.WithWatermarkCell), so that rows
// evaluated after a watermark see it. The cell holds math.MinInt64 (NULL
// to the function) until the first watermark. The cell belongs to this
// subtask alone.
type WatermarkCalc struct {
	*Calc // every call but ProcessWatermark
	cell  *int64
}

var _ dataflow.Operator = (*WatermarkCalc)(nil)

// NewWatermarkCalc wraps calc, whose expressions read cell.
func NewWatermarkCalc(calc *Calc, cell *int64) *WatermarkCalc {
	*cell = dataflow.MinWatermark
	return &WatermarkCalc{Calc: calc, cell: cell}
}

// ProcessWatermark implements dataflow.Operator.
func (w *WatermarkCalc) ProcessWatermark(wm int64, out dataflow.Collector) error {
	*w.cell = wm
	return nil
}
