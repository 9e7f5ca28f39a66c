package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// ExpandNode copies each input row once per projection list: the rows
// of GROUPING SETS, ROLLUP and CUBE, one per grouping set, before the
// aggregation (build_grouping_sets.go).
type ExpandNode struct {
	nodeBase
	Projections [][]expr.Expr
}

func (n *ExpandNode) Mode() dyntable.ChangelogMode { return n.inputs[0].Mode() }
func (n *ExpandNode) UpsertKey() []int             { return nil }
func (n *ExpandNode) timeAttrs() []timeAttr        { return make([]timeAttr, len(n.cols)) }

func (n *ExpandNode) Explain() string {
	var ps []string
	for _, p := range n.Projections {
		var es []string
		for _, e := range p {
			es = append(es, e.String())
		}
		ps = append(ps, "{"+strings.Join(es, ", ")+"}")
	}
	return fmt.Sprintf("Expand(projects=[%s])", strings.Join(ps, ", "))
}

func (n *ExpandNode) translate(_ *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	projs := make([][]operators.Scalar, len(n.Projections))
	for i, p := range n.Projections {
		for _, e := range p {
			projs[i] = append(projs[i], scalar(e))
		}
	}
	e, p := forward(ins[0])
	return &dataflow.Node{Name: "Expand", Parallelism: p, Inputs: []dataflow.Edge{e},
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewExpand(projs), nil }}, nil
}

func (n *ExpandNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
