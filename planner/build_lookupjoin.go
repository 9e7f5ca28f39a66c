package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// Processing-time lookup joins (Flink's LookupJoin):
//
//	SELECT ... FROM o [LEFT] JOIN r FOR SYSTEM_TIME AS OF o.proc_time ON o.k = r.k
//
// where o.proc_time is a PROCTIME() attribute and r's connector can look
// rows up by key (connectors.LookupSource). Instead of scanning r, the
// join looks each left row's key up in r when the row is processed. The
// plan node has the left input only; r is not scanned.

// LookupJoinNode joins its one input with rows looked up in Table.
// Its columns are the planned regular join's: the left input's, then
// the table's.
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

// lookupJoin returns jn as a lookup join when asOf names a
// processing-time attribute of l; ok is false otherwise (an event-time
// temporal join then). Errors name the construct that prevents it.
func (b *builder) lookupJoin(jn *JoinNode, asOf *ast.AsOfClause, l rel) (n Node, ok bool, err error) {
	te, err := expr.Bind(asOf.TsExpr, &expr.Scope{Columns: l.scope}, b.stmt.ErrorAtNode)
	if err != nil {
		return nil, false, err
	}
	// AS OF a PROCTIME() attribute of the left side, or PROCTIME() itself.
	lt, isCol := expr.ColumnIndex(te)
	if !strings.EqualFold(te.String(), "PROCTIME()") && (!isCol || timeAttrOf(l.node, lt) != attrProctime) {
		return nil, false, nil
	}
	if jn.Type != operators.InnerJoin && jn.Type != operators.LeftJoin {
		return nil, true, b.errf(asOf.TsExpr, "a lookup join (FOR SYSTEM_TIME AS OF a PROCTIME() attribute) is an INNER or LEFT join")
	}
	ln, rn := jn.inputs[0], jn.inputs[1]
	// The right side must be the table itself, as planned by scanTable.
	if w, isWm := rn.(*WatermarkNode); isWm {
		rn = w.inputs[0]
	}
	if c, isCalc := rn.(*CalcNode); isCalc && c.Filter == nil {
		// withKeyColumns appended a computed key to the table's columns.
		if sn, overScan := c.inputs[0].(*ScanNode); overScan {
			for _, k := range jn.RightKeys {
				if k >= len(sn.Columns()) {
					return nil, true, b.errf(asOf.TsExpr, "a lookup join's ON condition must equate plain columns of table '%s' (not expressions or casts of them) with the left side", sn.Table.Name)
				}
			}
		}
	}
	scan, isScan := rn.(*ScanNode)
	if !isScan {
		return nil, true, b.errf(asOf.TsExpr, "the right side of a lookup join (FOR SYSTEM_TIME AS OF a PROCTIME() attribute) must be a table whose connector can look rows up, not a view, a query or an upsert table")
	}
	sc, err := scan.Table.Scan(b.p.Env)
	if err != nil {
		return nil, true, b.errf(asOf.TsExpr, "%v", err)
	}
	ls, canLookup := sc.(connectors.LookupSource)
	if !canLookup {
		return nil, true, b.errf(asOf.TsExpr, "table '%s' cannot be looked up (connector '%s' has no lookup source), so it cannot be the right side of a processing-time temporal join", scan.Table.Name, scan.Table.connector.Name())
	}
	nr := len(scan.Columns())
	if len(jn.RightKeys) == 0 {
		return nil, true, b.errf(asOf.TsExpr, "a lookup join's ON condition needs an equality between a column of table '%s' and the left side", scan.Table.Name)
	}
	for _, k := range jn.RightKeys {
		if k >= nr {
			return nil, true, fmt.Errorf("internal error: lookup key column %d of table '%s' with %d columns", k, scan.Table.Name, nr)
		}
	}
	if !ln.Mode().IsInsertOnly() {
		return nil, true, b.errf(asOf.TsExpr, "a lookup join needs an insert-only left input; it is updating (%s)", ln.Mode())
	}
	if _, err := ls.Lookup(jn.RightKeys); err != nil { // validate the keys now
		return nil, true, b.errf(asOf.TsExpr, "table '%s': %v", scan.Table.Name, err)
	}
	lj := &LookupJoinNode{
		nodeBase: nodeBase{cols: jn.cols, inputs: []Node{ln}, mode: dyntable.InsertOnly},
		Type:     jn.Type, LeftKeys: jn.LeftKeys, LookupKeys: jn.RightKeys, Cond: jn.Cond,
		Table: scan.Table, lookup: ls,
	}
	return lj, true, nil
}

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

// rowtimeColumns: the left side's rowtime attributes pass through.
func (n *LookupJoinNode) rowtimeColumns() []bool {
	return append(rowtimeColumns(n.inputs[0]), make([]bool, len(n.Table.Conn.Columns))...)
}

// translate: stateless, chained to its input (no exchange), as Flink's.
func (n *LookupJoinNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
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
