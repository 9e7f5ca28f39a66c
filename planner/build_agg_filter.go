package planner

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/parser"
)

// filteredAggCall binds AGG(x) FILTER (WHERE c). Every accumulator sees
// only the non-NULL values of its argument (operators/aggfuncs.go), so
// the aggregate of the rows that pass c is the aggregate of CASE WHEN c
// THEN x END over all rows, and COUNT(*) FILTER (WHERE c) counts CASE
// WHEN c THEN TRUE END. A row for which c is NULL does not pass, as in
// Flink. The JSON aggregates keep NULL values (JSON_OBJECTAGG's NULL ON
// NULL), so they take no FILTER. ARRAY_AGG without IGNORE NULLS keeps
// NULL values too: it gets the bound condition as a column of its own,
// returned as filter (operators.AggCall.Filtered); filter is nil for the
// others.
func (b *builder) filteredAggCall(c *ast.AggregateFuncExpr, scope *expr.Scope) (call operators.AggCall, arg, filter expr.Expr, text string, err error) {
	cond, arg0, _ := parser.AggFilter(c)
	name := strings.ToUpper(c.F)
	if name == "JSON_ARRAYAGG" || name == "JSON_OBJECTAGG" {
		return operators.AggCall{}, nil, nil, "", b.errf(c, "FILTER is not supported on %s", name)
	}
	if len(find(cond).aggs) > 0 {
		return operators.AggCall{}, nil, nil, "", b.errf(cond, "aggregate functions are not allowed in FILTER")
	}
	bc, err := b.bindCondition("FILTER", cond, scope)
	if err != nil {
		return operators.AggCall{}, nil, nil, "", err
	}
	plain := *c // the call without its filter
	plain.Args = append([]ast.ExprNode{arg0}, c.Args[1:]...)
	if arg0 == nil { // COUNT(*)
		plain.Args = []ast.ExprNode{ast.NewValueExpr(1, "", "")}
		arg0 = ast.NewValueExpr(true, "", "")
	}
	call, arg, text, err = b.aggCall(&plain, scope)
	if err != nil {
		return operators.AggCall{}, nil, nil, "", err
	}
	text += " FILTER (WHERE " + bc.String() + ")"
	if call.KeepNulls {
		return call, arg, bc, text, nil
	}
	masked := plain
	masked.Args = append([]ast.ExprNode{&ast.CaseExpr{WhenClauses: []*ast.WhenClause{{Expr: cond, Result: arg0}}}}, c.Args[1:]...)
	call, arg, _, err = b.aggCall(&masked, scope)
	if err != nil {
		return operators.AggCall{}, nil, nil, "", err
	}
	return call, arg, nil, text, nil
}
