package planner

import (
	"strings"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// CalcNode is projection and filter: the rows of its input for which
// Filter holds, each replaced by the values of Proj.
type CalcNode struct {
	nodeBase
	Filter expr.Expr   // nil: none
	Proj   []expr.Expr // one per output column
}

// newCalc builds a Calc; nil proj keeps the input's columns. A Calc over
// a filter-only Calc merges with it (a rewrite rule: one operator, and
// the scan below can then be pruned to the columns both use).
func newCalc(in Node, filter expr.Expr, proj []expr.Expr, cols []expr.Column) *CalcNode {
	if lower, ok := in.(*CalcNode); ok && isIdentity(lower.Proj, len(lower.inputs[0].Columns())) {
		in, filter = lower.inputs[0], andExpr(lower.Filter, filter)
	}
	if proj == nil {
		for i, c := range in.Columns() {
			proj = append(proj, expr.NewColumnRef(i, c.Name, c.Type))
		}
		cols = in.Columns()
	}
	return &CalcNode{nodeBase: nodeBase{cols: unqualified(cols), inputs: []Node{in}}, Filter: filter, Proj: proj}
}

func (n *CalcNode) Mode() dyntable.ChangelogMode { return n.inputs[0].Mode() }

// UpsertKey: the input's key survives if every key column is projected
// as it is.
func (n *CalcNode) UpsertKey() []int {
	k := n.inputs[0].UpsertKey()
	if k == nil {
		return nil
	}
	nk := []int{}
	for _, kc := range k {
		found := -1
		for i, p := range n.Proj {
			if idx, ok := expr.ColumnIndex(p); ok && idx == kc {
				found = i
				break
			}
		}
		if found < 0 {
			return nil
		}
		nk = append(nk, found)
	}
	return nk
}

// timeAttrs: a column projected as it is keeps its attribute, and a
// PROCTIME() call makes one.
func (n *CalcNode) timeAttrs() []timeAttr {
	in := n.inputs[0].timeAttrs()
	attrs := make([]timeAttr, len(n.Proj))
	for i, p := range n.Proj {
		if idx, ok := expr.ColumnIndex(p); ok {
			attrs[i] = in[idx]
		} else if strings.EqualFold(p.String(), "PROCTIME()") {
			attrs[i] = attrProctime
		}
	}
	return attrs
}

func (n *CalcNode) Explain() string {
	var sel []string
	in := n.inputs[0].Columns()
	for i, p := range n.Proj {
		s := p.String()
		if idx, ok := expr.ColumnIndex(p); !ok || in[idx].Name != n.cols[i].Name {
			s += " AS " + n.cols[i].Name
		}
		sel = append(sel, s)
	}
	out := "Calc(select=[" + strings.Join(sel, ", ") + "]"
	if n.Filter != nil {
		out += ", where=[" + n.Filter.String() + "]"
	}
	return out + ")"
}

// isIdentity reports whether proj passes a row of width columns on as
// it is.
func isIdentity(proj []expr.Expr, width int) bool {
	if len(proj) != width {
		return false
	}
	for i, p := range proj {
		if idx, ok := expr.ColumnIndex(p); !ok || idx != i {
			return false
		}
	}
	return true
}

// translate: stateless, chained to its input. A Calc that calls
// CURRENT_WATERMARK gets a watermark cell per subtask.
func (n *CalcNode) translate(_ *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	e, p := forward(ins[0])
	if n.usesCurrentWatermark() {
		return &dataflow.Node{Name: "Calc", Parallelism: p, Inputs: []dataflow.Edge{e},
			NewOperator: n.newWatermarkCalc}, nil
	}
	filter := predicate(n.Filter)
	var proj []operators.Projection
	if !isIdentity(n.Proj, len(n.inputs[0].Columns())) {
		for _, pe := range n.Proj {
			proj = append(proj, projection(pe))
		}
	}
	return &dataflow.Node{Name: "Calc", Parallelism: p, Inputs: []dataflow.Edge{e},
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewCalc(filter, proj), nil }}, nil
}

func (n *CalcNode) usesCurrentWatermark() bool {
	uses := expr.UsesCurrentWatermark(n.Filter)
	for _, e := range n.Proj {
		uses = uses || expr.UsesCurrentWatermark(e)
	}
	return uses
}

// newWatermarkCalc makes the operator of a subtask of a Calc that calls
// CURRENT_WATERMARK: its own copy of the expressions, reading a
// watermark cell that the operator keeps current.
func (n *CalcNode) newWatermarkCalc(int) (dataflow.Operator, error) {
	cell := new(int64)
	var ps []operators.Projection
	for _, e := range n.Proj {
		ps = append(ps, projection(expr.WithWatermarkCell(e, cell)))
	}
	var f expr.Expr
	if n.Filter != nil {
		f = expr.WithWatermarkCell(n.Filter, cell)
	}
	return operators.NewWatermarkCalc(operators.NewCalc(predicate(f), ps), cell), nil
}

func (n *CalcNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
