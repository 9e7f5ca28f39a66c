package planner

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
)

// SemiJoinNode is IN / EXISTS (a semi join) or NOT IN / NOT EXISTS (an
// anti join) of a WHERE clause: the left input's rows that have (or have
// not) a matching row in the subquery's relation. Its columns are the
// left input's.
type SemiJoinNode struct {
	nodeBase
	Anti bool
	equiJoin
}

// Mode: a semi join of insert-only inputs only gains rows (a left row's
// matches never go away); otherwise rows come and go: [I,D].
func (n *SemiJoinNode) Mode() dyntable.ChangelogMode {
	if !n.Anti && !n.inputs[0].Mode().HasUpdates() && !n.inputs[1].Mode().HasUpdates() {
		return dyntable.InsertOnly
	}
	return dyntable.ModeI | dyntable.ModeD
}

func (n *SemiJoinNode) UpsertKey() []int      { return nil }
func (n *SemiJoinNode) timeAttrs() []timeAttr { return make([]timeAttr, len(n.cols)) }

func (n *SemiJoinNode) Explain() string {
	t := "LeftSemiJoin"
	if n.Anti {
		t = "LeftAntiJoin"
	}
	return n.explainJoin("Join", t, n.where(n.inputs))
}

func (n *SemiJoinNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec := operators.SemiJoinSpec{Anti: n.Anti, LeftKeys: n.LeftKeys, RightKeys: n.RightKeys,
		LeftWidth: len(n.inputs[0].Columns()), RightWidth: len(n.inputs[1].Columns()), Condition: predicate(n.Cond)}
	return t.keyed(n, ins, &dataflow.Node{Name: "SemiJoin", StateTTL: true,
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewSemiJoin(spec), nil }}), nil
}

func (n *SemiJoinNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
