package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/connectors"
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

// lookupJoin returns jn as a lookup join when asOf names a
// processing-time attribute of l; ok is false otherwise (an event-time
// temporal join then). Errors name the construct that prevents it.
func (b *builder) lookupJoin(jn *JoinNode, asOf *ast.AsOfClause, l rel) (n Node, ok bool, err error) {
	te, err := expr.Bind(asOf.TsExpr, &expr.Scope{Zone: b.p.zone(), Columns: l.scope}, b.stmt.ErrorAtNode)
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
		nodeBase: nodeBase{cols: jn.cols, inputs: []Node{ln}},
		Type:     jn.Type, LeftKeys: jn.LeftKeys, LookupKeys: jn.RightKeys, Cond: jn.Cond,
		Table: scan.Table, lookup: ls,
	}
	return lj, true, nil
}
