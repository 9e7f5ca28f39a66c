package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// JoinNode is a regular (unbounded) equi-join. Its output is the left
// input's columns, then the right's. The joins over time
// (node_timejoin.go) embed it.
type JoinNode struct {
	nodeBase
	Type operators.JoinType
	equiJoin
}

// equiJoin is what the joins (JoinNode, SemiJoinNode) share: the key
// pairs, on which both inputs are partitioned, and the residual
// condition.
type equiJoin struct {
	LeftKeys, RightKeys []int
	Cond                expr.Expr // residual, over left ++ right; nil if none
}

// Mode: an inner join of insert-only inputs only inserts; an outer join
// retracts its padded rows when a match arrives, and a join of updating
// inputs retracts its results with them. A result row is retracted and
// added again, never updated in place (no -U/+U pairs).
func (n *JoinNode) Mode() dyntable.ChangelogMode {
	if n.Type != operators.InnerJoin || n.inputs[0].Mode().HasUpdates() || n.inputs[1].Mode().HasUpdates() {
		return dyntable.ModeI | dyntable.ModeD
	}
	return dyntable.InsertOnly
}

func (n *JoinNode) UpsertKey() []int      { return nil }
func (n *JoinNode) timeAttrs() []timeAttr { return make([]timeAttr, len(n.cols)) }

func (j *equiJoin) partitionKeys(i int) []int {
	if i == 0 {
		return j.LeftKeys
	}
	return j.RightKeys
}

var joinNames = map[operators.JoinType]string{
	operators.InnerJoin: "InnerJoin", operators.LeftJoin: "LeftOuterJoin",
	operators.RightJoin: "RightOuterJoin", operators.FullJoin: "FullOuterJoin",
}

func (n *JoinNode) Explain() string {
	return n.explainAs("Join", n.where(n.inputs))
}

// explainAs is explainJoin with the join's type.
func (n *JoinNode) explainAs(name string, attrs ...string) string {
	return n.explainJoin(name, joinNames[n.Type], attrs...)
}

// explainJoin renders a join's EXPLAIN line: its name, type, attrs
// (those not "") and residual condition, in the order Flink prints them.
func (j *equiJoin) explainJoin(name, joinType string, attrs ...string) string {
	s := name + "(joinType=[" + joinType + "]"
	for _, a := range attrs {
		if a != "" {
			s += ", " + a
		}
	}
	if j.Cond != nil {
		s += ", condition=[" + j.Cond.String() + "]"
	}
	return s + ")"
}

// where renders the join's key equalities over its two inputs ins
// ("where=[a = b AND c = d]"), "" when it has none.
func (j *equiJoin) where(ins []Node) string {
	l, r := ins[0].Columns(), ins[1].Columns()
	var eq []string
	for i := range j.LeftKeys {
		eq = append(eq, fmt.Sprintf("%s = %s", l[j.LeftKeys[i]].Name, r[j.RightKeys[i]].Name))
	}
	if eq == nil {
		return ""
	}
	return "where=[" + strings.Join(eq, " AND ") + "]"
}

// spec is the operator's description of the join, which the joins over
// time extend.
func (n *JoinNode) spec() operators.JoinSpec {
	return operators.JoinSpec{Type: n.Type, LeftKeys: n.LeftKeys, RightKeys: n.RightKeys,
		LeftWidth: len(n.inputs[0].Columns()), RightWidth: len(n.inputs[1].Columns()), Condition: predicate(n.Cond)}
}

func (n *JoinNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec := n.spec()
	return t.keyed(n, ins, &dataflow.Node{Name: "Join", StateTTL: true,
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewJoin(spec), nil }}), nil
}

func (n *JoinNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
