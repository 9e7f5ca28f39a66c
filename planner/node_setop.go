package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
)

// SetOpNode is INTERSECT [ALL] or EXCEPT [ALL] of two inputs with the
// same columns (operators.NewSetOp); the output has the left input's
// column names.
type SetOpNode struct {
	nodeBase
	Kind operators.SetOpKind
}

// Mode: a row's multiplicity in the result goes down when a copy leaves
// the left input or, for EXCEPT, enters the right one, and the operator
// emits -D then. INTERSECT [ALL] of insert-only inputs only gains copies.
func (n *SetOpNode) Mode() dyntable.ChangelogMode {
	if (n.Kind == operators.Intersect || n.Kind == operators.IntersectAll) &&
		!n.inputs[0].Mode().HasUpdates() && !n.inputs[1].Mode().HasUpdates() {
		return dyntable.InsertOnly
	}
	return dyntable.ModeI | dyntable.ModeD
}

// UpsertKey: the set forms output each distinct row at most once, so
// the whole row identifies it; the ALL forms repeat rows.
func (n *SetOpNode) UpsertKey() []int {
	if n.Kind == operators.Intersect || n.Kind == operators.Except {
		return allCols(len(n.cols))
	}
	return nil
}

func (n *SetOpNode) timeAttrs() []timeAttr { return make([]timeAttr, len(n.cols)) }

func (n *SetOpNode) partitionKeys(int) []int { return allCols(len(n.cols)) }

func (n *SetOpNode) Explain() string {
	name, all := "Intersect", n.Kind == operators.IntersectAll || n.Kind == operators.ExceptAll
	if n.Kind == operators.Except || n.Kind == operators.ExceptAll {
		name = "Minus" // Flink's (Calcite's) name for EXCEPT
	}
	return fmt.Sprintf("%s(all=[%t], fields=[%s])", name, all, allNames(n.cols))
}

func (n *SetOpNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	kind, width := n.Kind, len(n.cols)
	return t.keyed(n, ins, &dataflow.Node{Name: n.Kind.String(), StateTTL: true,
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewSetOp(kind, width), nil }}), nil
}

func (n *SetOpNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
