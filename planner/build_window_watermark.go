package planner

import (
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// currentWatermarkCalc translates a Calc whose expressions call
// CURRENT_WATERMARK: each subtask gets its own copy of the expressions,
// reading a watermark cell that its operator keeps current. It returns
// nil for any other Calc.
func currentWatermarkCalc(n *CalcNode, in dataflow.Edge, p int) *dataflow.Node {
	uses := expr.UsesCurrentWatermark(n.Filter)
	for _, e := range n.Proj {
		uses = uses || expr.UsesCurrentWatermark(e)
	}
	if !uses {
		return nil
	}
	filter, proj := n.Filter, n.Proj
	return &dataflow.Node{Name: "Calc", Parallelism: p, Inputs: []dataflow.Edge{in},
		NewOperator: func(int) (dataflow.Operator, error) {
			cell := new(int64)
			var ps []operators.Scalar
			for _, e := range proj {
				ps = append(ps, scalar(expr.WithWatermarkCell(e, cell)))
			}
			var f expr.Expr
			if filter != nil {
				f = expr.WithWatermarkCell(filter, cell)
			}
			return operators.NewWatermarkCalc(operators.NewCalc(predicate(f), ps), cell), nil
		}}
}

// watermarkInterval is the periodic watermark interval of an assigner:
// pipeline.auto-watermark-interval over an unbounded source; 0 (a
// watermark after every chunk) over a bounded one, whose input is all
// there is, so that results do not depend on timing (the values
// connector's tests rely on a watermark after every row).
func (t *translator) watermarkInterval(n *WatermarkNode) time.Duration {
	in := n.inputs[0]
	for {
		switch x := in.(type) {
		case *NormalizeNode:
			in = x.inputs[0]
			continue
		case *ScanNode:
			sc, err := x.Table.Scan(t.p.Env)
			if err != nil || sc.Bounded() {
				return 0
			}
			return t.p.Conf.Duration("pipeline.auto-watermark-interval")
		}
		return 0
	}
}
