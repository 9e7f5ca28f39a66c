package planner

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// The aggregates beyond COUNT, SUM, AVG, MIN and MAX (operators/
// aggfuncs_flink.go computes them). The parser makes every aggregate call
// an *ast.AggregateFuncExpr named in lower case: TiDB's own (STDDEV_POP
// ...) and Flink's (parser/aggregates.go).

// flinkAggKinds maps those names to their kind.
var flinkAggKinds = map[string]operators.AggKind{
	"STDDEV_POP":     operators.AggStddevPop,
	"STDDEV_SAMP":    operators.AggStddevSamp,
	"VAR_POP":        operators.AggVarPop,
	"VAR_SAMP":       operators.AggVarSamp,
	"FIRST_VALUE":    operators.AggFirstValue,
	"LAST_VALUE":     operators.AggLastValue,
	"LISTAGG":        operators.AggListAgg,
	"PERCENTILE":     operators.AggPercentile,
	"JSON_ARRAYAGG":  operators.AggJSONArrayAgg,
	"JSON_OBJECTAGG": operators.AggJSONObjectAgg,
	"ARRAY_AGG":      operators.AggArrayAgg,
	"COLLECT":        operators.AggCollect,
}

// AggregateNames lists the aggregate functions the planner computes, for
// the test that the function catalog lists each.
func AggregateNames() []string {
	out := []string{"COUNT", "SUM", "AVG", "MIN", "MAX", "GROUPING", "GROUPING_ID", "GROUP_ID"} // the last three: build_grouping_sets.go
	for n := range flinkAggKinds {
		out = append(out, n)
	}
	return out
}

// isOverAggregateName reports whether an aggregate may run OVER a window.
func isOverAggregateName(name string) bool {
	switch name {
	case "COUNT", "SUM", "AVG", "MIN", "MAX":
		return true
	case "JSON_ARRAYAGG", "JSON_OBJECTAGG", "ARRAY_AGG": // not in OVER windows, as in Flink
		return false
	}
	if _, ok := flinkAggKinds[name]; ok {
		return true
	}
	// Flink aggregates streamsql lacks: planned as aggregates, so that
	// flinkAggCall names them.
	return slices.Contains(parser.FlinkAggregateNames(), strings.ToLower(name))
}

// flinkAggCall binds a call of flinkAggKinds, as aggCall does the basic
// ones: the call, its argument (bound over scope) and its EXPLAIN text.
func (b *builder) flinkAggCall(c *ast.AggregateFuncExpr, name string, scope *expr.Scope) (operators.AggCall, expr.Expr, string, error) {
	var call operators.AggCall
	kind, ok := flinkAggKinds[name]
	if !ok {
		if _, ok := expr.Unsupported(name); ok {
			return call, nil, "", b.errf(c, "%s", strings.Replace(expr.UnsupportedError(name), "function", "aggregate function", 1))
		}
		return call, nil, "", b.errf(c, "aggregate function %s is not supported", name)
	}
	call.Kind, call.Distinct = kind, c.Distinct
	ignoreNulls := false
	if kind == operators.AggArrayAgg {
		stripped := *c // without IGNORE NULLS' mark (parser.IgnoreNullsFunc)
		stripped.Args, ignoreNulls = parser.AggIgnoreNulls(c)
		c = &stripped
	}
	if kind == operators.AggJSONArrayAgg || kind == operators.AggJSONObjectAgg {
		return b.jsonAggCall(c, name, call, scope)
	}
	nargs := map[operators.AggKind][2]int{operators.AggListAgg: {1, 2}, operators.AggPercentile: {2, 2}}[kind]
	if nargs == [2]int{} {
		nargs = [2]int{1, 1}
	}
	if len(c.Args) < nargs[0] || len(c.Args) > nargs[1] {
		if kind == operators.AggPercentile && len(c.Args) == 3 {
			return call, nil, "", b.errf(c, "PERCENTILE with a frequency argument is not supported")
		}
		return call, nil, "", b.errf(c, "wrong number of arguments to %s (got %d)", name, len(c.Args))
	}
	arg, text, err := b.aggArg(c, name, scope)
	if err != nil {
		return call, nil, "", err
	}
	at := arg.Type()
	call.ArgType = at
	if at.ID == types.Null {
		return call, nil, "", b.errf(c, "%s of NULL: CAST the argument to a type", name)
	}
	switch kind {
	case operators.AggStddevPop, operators.AggStddevSamp, operators.AggVarPop, operators.AggVarSamp:
		switch at.ID {
		case types.Int, types.BigInt, types.Double:
			call.ResultType = at.Nullable()
		case types.Decimal: // AVG's type
			call.ResultType = types.DecimalType(types.MaxDecimalPrecision, max(6, at.Scale))
		default:
			return call, nil, "", b.errf(c, "%s expects a numeric argument, got %s", name, at)
		}
	case operators.AggFirstValue, operators.AggLastValue:
		if at.ID == types.Interval {
			return call, nil, "", b.errf(c, "%s of %s is not supported", name, at)
		}
		call.ResultType = at.Nullable()
	case operators.AggArrayAgg:
		if at.ID == types.Interval {
			return call, nil, "", b.errf(c, "%s of %s is not supported", name, at)
		}
		// Flink keeps NULL values unless IGNORE NULLS; every other
		// aggregate skips them.
		call.KeepNulls = !ignoreNulls
		call.ResultType = types.ArrayType(at)
		if ignoreNulls {
			call.ResultType = types.ArrayType(at.WithNotNull(true))
			text += " IGNORE NULLS"
		}
	case operators.AggCollect:
		if at.ID == types.Interval {
			return call, nil, "", b.errf(c, "%s of %s is not supported", name, at)
		}
		// Flink's COLLECT skips NULL values; its bag is never NULL.
		call.ResultType = types.MultisetType(at)
	case operators.AggListAgg:
		if at.ID != types.String {
			return call, nil, "", b.errf(c.Args[0], "LISTAGG expects STRING, got %s", at)
		}
		call.ResultType = types.TypeString
		call.Param = types.NewString(",")
		if len(c.Args) == 2 {
			sep, ok := stringLiteral(c.Args[1])
			if !ok {
				return call, nil, "", b.errf(c.Args[1], "LISTAGG expects a string literal separator")
			}
			call.Param = types.NewString(sep)
			text += ", " + quoteSQLString(sep)
		}
	case operators.AggPercentile:
		if !at.IsNumeric() {
			return call, nil, "", b.errf(c.Args[0], "PERCENTILE expects a number, got %s", at)
		}
		p, err := expr.Bind(c.Args[1], scope, b.stmt.ErrorAtNode)
		if err != nil {
			return call, nil, "", err
		}
		v, ok := expr.IsLiteral(p)
		if !ok || !p.Type().IsNumeric() || v.IsNull() {
			return call, nil, "", b.errf(c.Args[1], "PERCENTILE expects a numeric literal percentage between 0 and 1")
		}
		f := types.ToFloat(v)
		if !(f >= 0 && f <= 1) {
			return call, nil, "", b.errf(c.Args[1], "PERCENTILE expects a percentage between 0 and 1, got %s", p)
		}
		call.Param = types.NewFloat(f)
		call.ResultType = types.TypeDouble
		text += ", " + p.String()
	}
	return call, arg, text + ")", nil
}

// jsonAggCall binds JSON_ARRAYAGG and JSON_OBJECTAGG: the aggregate
// collects one STRING per row, the element's or member's JSON text,
// computed by the pre-projection (expr.BindJSONAgg).
func (b *builder) jsonAggCall(c *ast.AggregateFuncExpr, name string, call operators.AggCall, scope *expr.Scope) (operators.AggCall, expr.Expr, string, error) {
	object := call.Kind == operators.AggJSONObjectAgg
	if err := b.noNestedAgg(c); err != nil {
		return call, nil, "", err
	}
	arg, value, mode, err := expr.BindJSONAgg(object, c.Args, scope, b.stmt.ErrorAtNode)
	if err != nil {
		return call, nil, "", err
	}
	call.ArgType = types.TypeString
	call.ResultType = types.TypeString.WithNotNull(true)
	inner := value.String()
	if object {
		key, _ := expr.Bind(c.Args[0], scope, b.stmt.ErrorAtNode)
		inner = "KEY " + key.String() + " VALUE " + inner
	}
	if mode == "NULL" && !object || mode == "ABSENT" && object {
		inner += " " + mode + " ON NULL"
	}
	return call, arg, name + "(" + inner + ")", nil
}

func stringLiteral(n ast.ExprNode) (string, bool) {
	v, ok := n.(*test_driver.ValueExpr)
	if !ok || v.Kind() != test_driver.KindString {
		return "", false
	}
	return v.GetString(), true
}

func quoteSQLString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
