package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// LookupJoinNode joins its one input with rows looked up in Table by key
// as each input row is processed (a processing-time temporal join; see
// build_lookupjoin.go). Its columns are the planned regular join's: the
// input's, then the table's. Insert-only: a result is never revised when
// the table changes later.
type LookupJoinNode struct {
	nodeBase
	Type operators.JoinType
	// LeftKeys are columns of the input; LookupKeys the table's columns
	// they equal, pairwise.
	LeftKeys, LookupKeys []int
	Cond                 expr.Expr // over input ++ table columns; nil if none
	Table                *TableEntry
	lookup               connectors.LookupSource
}

func (n *LookupJoinNode) Mode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (n *LookupJoinNode) UpsertKey() []int             { return nil }

func (n *LookupJoinNode) Explain() string {
	l, r := n.inputs[0].Columns(), n.Table.Conn.Columns
	var eq []string
	for i := range n.LeftKeys {
		eq = append(eq, fmt.Sprintf("%s=%s", r[n.LookupKeys[i]].Name, l[n.LeftKeys[i]].Name))
	}
	s := fmt.Sprintf("LookupJoin(table=[%s], joinType=[%s], lookup=[%s]", n.Table.Name, joinNames[n.Type], strings.Join(eq, ", "))
	if n.Cond != nil {
		s += ", where=[" + n.Cond.String() + "]"
	}
	return s + ", select=[" + allNames(n.cols) + "])"
}

// timeAttrs: the left side's rowtime attributes pass through.
func (n *LookupJoinNode) timeAttrs() []timeAttr {
	return append(rowtimeOnly(n.inputs[0]), make([]timeAttr, len(n.Table.Conn.Columns))...)
}

// translate: stateless, chained to its input (no exchange), as Flink's.
func (n *LookupJoinNode) translate(_ *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	e, p := forward(ins[0])
	ls, keys := n.lookup, n.LookupKeys
	spec := operators.LookupJoinSpec{
		Type: n.Type, LeftKeys: n.LeftKeys, Condition: predicate(n.Cond), Table: n.Table.Name,
		LeftWidth: len(n.inputs[0].Columns()), RightWidth: len(n.Table.Conn.Columns),
		NewLookuper: func() (operators.Lookuper, error) { return ls.Lookup(keys) },
	}
	return &dataflow.Node{Name: "LookupJoin(" + n.Table.Name + ")", Parallelism: p, Inputs: []dataflow.Edge{e},
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewLookupJoin(spec), nil }}, nil
}

func (n *LookupJoinNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
