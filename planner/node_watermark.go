package planner

import (
	"fmt"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// WatermarkNode assigns event-time watermarks: the table's WATERMARK FOR
// Rowtime AS Expr, right above its scan (or its ChangelogNormalize).
type WatermarkNode struct {
	nodeBase
	Rowtime int
	Expr    expr.Expr
}

func (n *WatermarkNode) Mode() dyntable.ChangelogMode { return n.inputs[0].Mode() }
func (n *WatermarkNode) UpsertKey() []int             { return n.inputs[0].UpsertKey() }

func (n *WatermarkNode) timeAttrs() []timeAttr {
	attrs := make([]timeAttr, len(n.cols))
	attrs[n.Rowtime] = attrRowtime
	return attrs
}

func (n *WatermarkNode) Explain() string {
	return fmt.Sprintf("WatermarkAssigner(rowtime=[%s], watermark=[%s])", n.cols[n.Rowtime].Name, n.Expr)
}

// translate: a stateful operator (its watermark is checkpointed), chained
// to its input. When the source below generates the watermarks itself,
// the translator leaves the node out (translator.pushWatermark).
func (n *WatermarkNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	e, p := forward(ins[0])
	ex := n.Expr
	iv := t.watermarkInterval(n)
	return &dataflow.Node{Name: "WatermarkAssigner", Parallelism: p, Inputs: []dataflow.Edge{e}, GeneratesWatermarks: true, Stateful: true,
		NewOperator: func(int) (dataflow.Operator, error) {
			return operators.NewWatermarkAssigner(scalar(ex)).WithInterval(iv), nil
		}}, nil
}

func (n *WatermarkNode) withInputs(ins []Node) Node { return copyOver(n, ins) }

// watermarkInterval is the periodic watermark interval of an assigner:
// pipeline.auto-watermark-interval over an unbounded source; 0 (a
// watermark after every chunk) over a bounded one, whose input is all
// there is, so that results do not depend on timing (the values
// connector's tests rely on a watermark after every row).
func (t *translator) watermarkInterval(n *WatermarkNode) time.Duration {
	in := n.inputs[0]
	if nn, ok := in.(*NormalizeNode); ok {
		in = nn.inputs[0]
	}
	sn, ok := in.(*ScanNode)
	if !ok {
		return 0
	}
	sc, err := sn.Table.Scan(t.p.Env)
	if err != nil || sc.Bounded() {
		return 0
	}
	return t.p.Conf.Duration("pipeline.auto-watermark-interval")
}
