package parser

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// flinkAggregates are Flink's aggregate functions that TiDB parses as
// ordinary function calls, by the name TiDB sees (after the renames of
// funcsyntax.go) and the name the planner gets. fixAggregates turns their
// calls into ast.AggregateFuncExpr, the node every later stage looks for
// (COUNT, SUM, AVG, MIN, MAX and the STDDEV and VAR families are TiDB's
// own aggregates already).
var flinkAggregates = map[string]string{
	"listagg":                      "listagg",
	"collect":                      "collect",
	"percentile":                   "percentile",
	"array_agg":                    "array_agg",
	arrayAggDistinct:               "array_agg",
	collectDistinct:                "collect",
	firstValueFunc:                 "first_value",
	lastValueFunc:                  "last_value",
	jsonArrayAgg:                   "json_arrayagg",
	jsonObjectAgg:                  "json_objectagg",
	"bitmap_build_agg":             "bitmap_build_agg",
	"bitmap_build_cardinality_agg": "bitmap_build_cardinality_agg",
	"bitmap_and_agg":               "bitmap_and_agg",
	"bitmap_and_cardinality_agg":   "bitmap_and_cardinality_agg",
	"bitmap_or_agg":                "bitmap_or_agg",
	"bitmap_or_cardinality_agg":    "bitmap_or_cardinality_agg",
	"bitmap_xor_agg":               "bitmap_xor_agg",
	"bitmap_xor_cardinality_agg":   "bitmap_xor_cardinality_agg",
}

// FlinkAggregateNames lists the aggregate names fixAggregates produces,
// for the planner's test that it knows each of them.
func FlinkAggregateNames() []string {
	var out []string
	for _, n := range flinkAggregates {
		out = append(out, n)
	}
	return out
}

// fixAggregates replaces the calls of flinkAggregates in the statement.
func fixAggregates(n ast.Node) {
	if n != nil {
		n.Accept(aggFixer{})
	}
}

type aggFixer struct{}

func (aggFixer) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (aggFixer) Leave(n ast.Node) (ast.Node, bool) {
	if w, ok := n.(*ast.WindowFuncExpr); ok && strings.EqualFold(w.Name, "max") && len(w.Args) == 1 {
		// MAX(__over_listagg(x)) OVER w, from the pre-lexer: LISTAGG(x) OVER w.
		if fc, ok := w.Args[0].(*ast.FuncCallExpr); ok && strings.HasPrefix(fc.FnName.L, overPrefix) {
			if name, ok := flinkAggregates[strings.TrimPrefix(fc.FnName.L, overPrefix)]; ok {
				w.Name, w.Args = name, fc.Args
			}
		}
		return n, true
	}
	fc, ok := n.(*ast.FuncCallExpr)
	if !ok || fc.Schema.O != "" {
		return n, true
	}
	name, ok := flinkAggregates[strings.ToLower(fc.FnName.O)]
	if !ok {
		return n, true
	}
	agg := &ast.AggregateFuncExpr{F: name, Args: fc.Args, Distinct: strings.EqualFold(fc.FnName.O, arrayAggDistinct) || strings.EqualFold(fc.FnName.O, collectDistinct)}
	agg.SetOriginTextPosition(fc.OriginTextPosition())
	agg.SetText(nil, fc.Text())
	return agg, true
}

// AggIgnoreNulls takes apart ARRAY_AGG(x IGNORE NULLS) (see
// IgnoreNullsFunc): it returns the call's arguments without the mark
// and whether the mark was there.
func AggIgnoreNulls(agg *ast.AggregateFuncExpr) ([]ast.ExprNode, bool) {
	if n := len(agg.Args); n > 0 {
		if fc, ok := agg.Args[n-1].(*ast.FuncCallExpr); ok && fc.FnName.L == IgnoreNullsFunc && len(fc.Args) == 0 && fc.Schema.O == "" {
			return agg.Args[:n-1], true
		}
	}
	return agg.Args, false
}
