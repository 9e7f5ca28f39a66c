package planner

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/types"
)

// lagCall binds LAG(x [, offset [, default]]) OVER w, as Flink takes it
// over an OVER window ordered by a rowtime attribute: x of the row
// offset rows (default 1) before the current one in the partition, or
// default (default NULL) when there is none. Only unbounded frames take
// it (it does not retract). LEAD needs rows that have not arrived, and
// Flink refuses it in streaming mode; so does streamsql.
func (b *builder) lagCall(w *ast.WindowFuncExpr, scope *expr.Scope) (operators.AggCall, expr.Expr, string, error) {
	var call operators.AggCall
	name := strings.ToUpper(w.Name)
	if name == "LEAD" {
		return call, nil, "", b.errf(w, "LEAD is not supported in streaming mode (as in Flink): it needs rows that have not arrived yet; use LAG")
	}
	if len(w.Args) < 1 || len(w.Args) > 3 {
		return call, nil, "", b.errf(w, "LAG takes 1 to 3 arguments: LAG(x [, offset [, default]])")
	}
	if f := w.Spec.Frame; f != nil && !(f.Extent.Start.Type == ast.Preceding && f.Extent.Start.UnBounded) {
		return call, nil, "", b.errf(w, "LAG needs an unbounded window (no frame, or BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)")
	}
	arg, err := expr.Bind(w.Args[0], scope, b.stmt.ErrorAtNode)
	if err != nil {
		return call, nil, "", err
	}
	call.Kind, call.Offset = operators.AggLag, 1
	call.ArgType, call.ResultType = arg.Type(), arg.Type().Nullable()
	text := "LAG(" + arg.String()
	if len(w.Args) > 1 {
		n, ok := intLiteral(w.Args[1])
		if !ok || n < 0 || n > 1<<20 {
			return call, nil, "", b.errf(w.Args[1], "the offset of LAG must be a non-negative integer literal")
		}
		call.Offset = int(n)
		text += ", " + itoa(int(n))
	}
	call.Param = types.NullValue
	if len(w.Args) > 2 {
		d, err := expr.Bind(w.Args[2], &expr.Scope{Zone: b.p.zone()}, b.stmt.ErrorAtNode)
		if err != nil {
			return call, nil, "", err
		}
		if d, err = expr.ImplicitCast(d, call.ResultType); err != nil {
			return call, nil, "", b.errf(w.Args[2], "the default of LAG must have the type of its argument, %s: %v", call.ResultType, err)
		}
		if call.Param, err = d.Eval(nil); err != nil {
			return call, nil, "", b.errf(w.Args[2], "%v", err)
		}
		text += ", " + d.String()
	}
	return call, arg, text + ")", nil
}
