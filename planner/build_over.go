package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/types"
)

// OVER aggregation: SUM(x) OVER (PARTITION BY k ORDER BY ts {ROWS |
// RANGE} BETWEEN ... PRECEDING AND CURRENT ROW), planned as
//
//	Calc(select list)
//	+- OverAggregate(input columns ++ aggregates)
//	   +- Calc(input columns ++ partition keys and arguments), if needed

// isOverAggregate reports whether a window function call is an
// aggregate over a window (not ROW_NUMBER, which builds a rank).
func isOverAggregate(w *ast.WindowFuncExpr) bool {
	name := strings.ToUpper(w.Name)
	return name == "LAG" || name == "LEAD" || isOverAggregateName(name) // build_agg_funcs.go
}

// buildOver plans the OVER aggregates of a select list. It returns the
// relation with one column per aggregate appended and the replace
// function that binds each call to its column.
func (b *builder) buildOver(in rel, fields []field) (rel, func(ast.ExprNode) (int, bool), error) {
	var wins []*ast.WindowFuncExpr
	for _, f := range fields {
		if f.expr != nil {
			wins = append(wins, find(f.expr).wins...)
		}
	}
	first := wins[0]
	spec := windowSpecText(first)
	for _, w := range wins {
		if !isOverAggregate(w) {
			return rel{}, nil, b.errf(w, "%s cannot be mixed with OVER aggregates in one SELECT; use a subquery", strings.ToUpper(w.Name))
		}
		if windowSpecText(w) != spec {
			return rel{}, nil, b.errf(w, "all OVER aggregates of one SELECT must use the same window (PARTITION BY, ORDER BY and frame)")
		}
		if w.Distinct {
			return rel{}, nil, b.errf(w, "DISTINCT in an OVER aggregate is not supported")
		}
	}
	if !in.node.Mode().IsInsertOnly() {
		return rel{}, nil, b.errf(first, "OVER aggregation needs an append-only input; this input is updating (%s)", in.node.Mode())
	}
	ws := &first.Spec
	if ws.Name.O != "" || ws.Ref.O != "" {
		return rel{}, nil, b.errf(first, "named windows are not supported; write OVER (PARTITION BY ... ORDER BY ...)")
	}
	scope := &expr.Scope{Zone: b.p.zone(), Columns: in.scope}
	// ORDER BY: one rowtime attribute, ascending.
	if ws.OrderBy == nil || len(ws.OrderBy.Items) != 1 {
		return rel{}, nil, b.errf(first, "an OVER window needs ORDER BY a single time attribute")
	}
	ob := ws.OrderBy.Items[0]
	oe, err := expr.Bind(ob.Expr, scope, b.stmt.ErrorAtNode)
	if err != nil {
		return rel{}, nil, err
	}
	timeCol, ok := expr.ColumnIndex(oe)
	if !ok || !isRowtime(in.node, timeCol) {
		return rel{}, nil, b.errf(ob.Expr, "an OVER window must be ordered by a rowtime attribute (a column with a WATERMARK); %s is not one", oe)
	}
	if ob.Desc {
		return rel{}, nil, b.errf(ob.Expr, "an OVER window must be ordered by its time attribute ascending")
	}
	rows, preceding, frameText, err := b.overFrame(first, ws.Frame)
	if err != nil {
		return rel{}, nil, err
	}
	// Partition keys and aggregate arguments that are not plain columns
	// are computed by a Calc below.
	var keys []expr.Expr
	nPart := 0
	if ws.PartitionBy != nil {
		for _, it := range ws.PartitionBy.Items {
			e, err := expr.Bind(it.Expr, scope, b.stmt.ErrorAtNode)
			if err != nil {
				return rel{}, nil, err
			}
			keys = append(keys, e)
		}
		nPart = len(keys)
	}
	var calls []operators.AggCall
	var texts []string
	argOf := make([]int, len(wins)) // index into keys, or -1 for COUNT(*)
	for i, w := range wins {
		var call operators.AggCall
		var arg expr.Expr
		var text string
		var err error
		if name := strings.ToUpper(w.Name); name == "LAG" || name == "LEAD" {
			call, arg, text, err = b.lagCall(w, scope) // build_over_lag.go
		} else {
			call, arg, text, err = b.aggCall(&ast.AggregateFuncExpr{F: w.Name, Args: w.Args}, scope)
		}
		if err != nil {
			return rel{}, nil, err
		}
		argOf[i] = -1
		if arg != nil {
			argOf[i] = len(keys)
			keys = append(keys, arg)
		}
		calls = append(calls, call)
		texts = append(texts, text)
	}
	input, idx := withKeyColumns(in.node, keys)
	n := &OverAggNode{TimeCol: timeCol, Rows: rows, Preceding: preceding, FrameText: frameText, AggText: texts}
	for _, k := range idx[:nPart] {
		n.PartitionKeys = append(n.PartitionKeys, k)
	}
	for i := range calls {
		if argOf[i] >= 0 {
			calls[i].Arg = idx[argOf[i]]
		}
	}
	n.Aggs = calls
	outScope := append([]expr.Column(nil), in.scope...)
	outScope = append(outScope, input.Columns()[len(in.scope):]...)
	width := len(outScope)
	for i, c := range calls {
		outScope = append(outScope, expr.Column{Name: fmt.Sprintf("$over%d", i), Type: c.ResultType})
	}
	n.nodeBase = nodeBase{cols: unqualified(outScope), inputs: []Node{input}}
	replace := func(e ast.ExprNode) (int, bool) {
		for i, w := range wins {
			if e == ast.ExprNode(w) {
				return width + i, true
			}
		}
		return 0, false
	}
	return rel{node: n, scope: outScope}, replace, nil
}

// windowSpecText renders a window's PARTITION BY, ORDER BY and frame, to
// compare the windows of several calls.
func windowSpecText(w *ast.WindowFuncExpr) string {
	var sb strings.Builder
	_ = restore(&w.Spec, &sb)
	return sb.String()
}

// overFrame reads the frame: {ROWS | RANGE} BETWEEN {UNBOUNDED | n |
// INTERVAL ...} PRECEDING AND CURRENT ROW, or no frame, which is RANGE
// BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW as in SQL.
func (b *builder) overFrame(w *ast.WindowFuncExpr, f *ast.FrameClause) (rows bool, preceding int64, text string, err error) {
	if f == nil {
		return false, operators.OverUnbounded, "RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW", nil
	}
	switch f.Type {
	case ast.Rows:
		rows = true
	case ast.Ranges:
	default:
		return false, 0, "", b.errf(w, "only ROWS and RANGE frames are supported")
	}
	kind := "RANGE"
	if rows {
		kind = "ROWS"
	}
	if e := f.Extent.End; e.Type != ast.CurrentRow {
		return false, 0, "", b.errf(w, "an OVER window must end at CURRENT ROW (Flink's OVER aggregation)")
	}
	s := f.Extent.Start
	switch {
	case s.Type == ast.CurrentRow:
		return rows, 0, kind + " BETWEEN CURRENT ROW AND CURRENT ROW", nil
	case s.Type != ast.Preceding:
		return false, 0, "", b.errf(w, "an OVER window must start at UNBOUNDED PRECEDING, a PRECEDING bound or CURRENT ROW")
	case s.UnBounded:
		return rows, operators.OverUnbounded, kind + " BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW", nil
	}
	if rows {
		n, ok := intLiteral(s.Expr)
		if !ok || n < 0 || s.Unit != ast.TimeUnitInvalid {
			return false, 0, "", b.errf(s.Expr, "a ROWS frame takes a non-negative integer number of preceding rows")
		}
		return true, n, fmt.Sprintf("ROWS BETWEEN %d PRECEDING AND CURRENT ROW", n), nil
	}
	d, err := b.frameInterval(s)
	if err != nil {
		return false, 0, "", err
	}
	return false, d, fmt.Sprintf("RANGE BETWEEN %s PRECEDING AND CURRENT ROW", fmtBound(d)), nil
}

// frameInterval evaluates the INTERVAL of a RANGE frame bound in
// nanoseconds: it binds DATE_ADD(t, value, unit) over a TIMESTAMP t and
// checks, as interval joins do, that it adds a constant day-time span.
func (b *builder) frameInterval(s ast.FrameBound) (int64, error) {
	if s.Unit == ast.TimeUnitInvalid {
		return 0, b.errf(s.Expr, "a RANGE frame over a time attribute needs an INTERVAL, e.g. INTERVAL '1' HOUR PRECEDING")
	}
	col := &ast.ColumnNameExpr{Name: &ast.ColumnName{Name: ast.NewCIStr("__t")}}
	call := &ast.FuncCallExpr{FnName: ast.NewCIStr("DATE_ADD"), Args: []ast.ExprNode{col, s.Expr, &ast.TimeUnitExpr{Unit: s.Unit}}}
	e, err := expr.Bind(call, &expr.Scope{Zone: b.p.zone(), Columns: []expr.Column{{Name: "__t", Type: types.TypeTimestamp}}}, b.stmt.ErrorAtNode)
	if err != nil {
		return 0, err
	}
	_, d, ok := timeOffset(e, 1)
	if !ok {
		return 0, b.errf(s.Expr, "the INTERVAL of a RANGE frame must be a constant day-time interval (not months or years)")
	}
	if d < 0 {
		return 0, b.errf(s.Expr, "the INTERVAL of a RANGE frame must not be negative")
	}
	return d, nil
}
