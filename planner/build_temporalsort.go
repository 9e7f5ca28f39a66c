package planner

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// temporalSort plans ORDER BY without LIMIT: on a stream only Flink's
// temporal sort, whose first key is a time attribute in ascending order
// over an append-only input, can emit rows in order (TemporalSortNode).
// Any other ORDER BY without LIMIT is refused, as Flink refuses it.
func (b *builder) temporalSort(in rel, ob *ast.OrderByClause) (rel, error) {
	const refused = "ORDER BY without LIMIT is not supported on a streaming query unless its first key is a time attribute of the select list in ascending order (a temporal sort)"
	first := ob.Items[0]
	if _, err := b.sortColumn(in, first.Expr); err != nil {
		// Not a column of the select list, so no time attribute of it.
		return rel{}, b.errf(first.Expr, "%s; %s is not a column of the select list: add LIMIT n, or sort the result in the client", refused, exprText(first.Expr))
	}
	keys, err := b.sortKeys(in, ob)
	if err != nil {
		return rel{}, err
	}
	name := in.scope[keys[0].Col].Name
	attr := timeAttrOf(in.node, keys[0].Col)
	switch {
	case attr == attrNone:
		return rel{}, b.errf(first.Expr, "%s; %s is not a time attribute: add LIMIT n, or sort the result in the client", refused, name)
	case first.Desc:
		return rel{}, b.errf(first.Expr, "ORDER BY without LIMIT sorts by the time attribute %s in ascending order only; a temporal sort cannot sort it DESC", name)
	case !in.node.Mode().IsInsertOnly():
		return rel{}, b.errf(first.Expr, "ORDER BY without LIMIT (a temporal sort by %s) takes an append-only input, but the query's rows are updated (changelog mode %s)", name, in.node.Mode())
	}
	n := &TemporalSortNode{nodeBase: nodeBase{cols: in.node.Columns(), inputs: []Node{in.node}},
		OrderBy: keys, ProcTime: attr == attrProctime}
	return rel{node: n, scope: in.scope}, nil
}
