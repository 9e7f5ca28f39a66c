package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators/window"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// Window table functions in FROM (TUMBLE, HOP, CUMULATE, SESSION) and the
// window aggregation over them.
//
// A window TVF becomes a WindowTVFNode: its input's columns followed by
// window_start, window_end and window_time. Alone (a plain SELECT or a
// window Top-N over it) it runs as WindowTableFunction, which emits each
// row once per window. Under GROUP BY window_start, window_end[, keys] it
// is fused into the aggregation (see windowAggregate): the rows then
// reach the WindowAggregate once each, which slices them itself. The
// aggregation's input projection then reads the time attribute in the
// window columns' places, and the function leaves the plan:
//
//	WindowAggregate(groupBy=[auction], window=[HOP(time_col=[ts], ...)], ...)
//	+- Exchange(distribution=[hash[auction]])
//	   +- Calc(select=[auction, ts AS window_start, ts AS window_end, price])
//	      +- WatermarkAssigner(...)
//
// (When no projection sits between them, the fused function stays, as a
// Calc appending the time attribute three times.)

// windowColumnType is the type of window_start, window_end, window_time.
var windowColumnType = types.Type{ID: types.Timestamp, Precision: 3, NotNull: true}

var windowColumnNames = [3]string{"window_start", "window_end", "window_time"}

// buildWindowTVF builds FROM TUMBLE(TABLE t, DESCRIPTOR(ts), ...) and kin,
// which the parser replaced by the placeholder table tn.
func (b *builder) buildWindowTVF(tvf *parser.WindowTVF, tn *ast.TableName, alias string) (rel, error) {
	errAt := func(format string, args ...any) error { return b.stmt.ErrorAt(tvf.Line, tvf.Col, format, args...) }
	parts := strings.Split(tvf.Table, ".")
	path, ok := PathOf(parts)
	if !ok {
		return rel{}, errAt("table name %s has more than three parts", tvf.Table)
	}
	path = b.home.qualify(path)
	if _, isCTE := b.ctes[norm(tvf.Table)]; !isCTE {
		_, isView := b.p.Cat.View(path)
		_, isTable := b.p.Cat.Table(path)
		if !isView && !isTable {
			return rel{}, errAt("Table '%s' doesn't exist", tvf.Table)
		}
	}
	in, err := b.buildPath(path, len(parts) > 1, tn, "")
	if err != nil {
		return rel{}, err
	}
	if !in.node.Mode().IsInsertOnly() {
		return rel{}, errAt("%s needs an insert-only input; '%s' produces updates", tvf.Func, tvf.Table)
	}
	spec, err := windowSpecOf(tvf)
	if err != nil {
		return rel{}, errAt("%v", err)
	}
	tc := -1
	for i, c := range in.scope {
		if strings.EqualFold(c.Name, tvf.TimeCol) {
			tc = i
		}
	}
	if tc < 0 {
		return rel{}, errAt("%s: unknown time column '%s' in DESCRIPTOR", tvf.Func, tvf.TimeCol)
	}
	if in.scope[tc].Type.ID != types.Timestamp {
		return rel{}, errAt("%s: time column '%s' must be a TIMESTAMP, not %s", tvf.Func, tvf.TimeCol, in.scope[tc].Type)
	}
	attr := timeAttrOf(in.node, tc)
	if attr == attrNone {
		return rel{}, errAt("%s: column '%s' is not a time attribute: declare WATERMARK FOR %s on the table, or use a PROCTIME() column", tvf.Func, tvf.TimeCol, tvf.TimeCol)
	}
	if attr == attrProctime && spec.Kind == window.WindowSession {
		return rel{}, errAt("SESSION windows over processing time are not supported")
	}
	n := &WindowTVFNode{Window: spec, TimeCol: tc, ProcTime: attr == attrProctime, errAt: errAt}
	for _, p := range tvf.PartitionBy {
		idx := -1
		for i, c := range in.scope {
			if strings.EqualFold(c.Name, p) {
				idx = i
			}
		}
		if idx < 0 {
			return rel{}, errAt("SESSION: unknown PARTITION BY column '%s'", p)
		}
		n.PartitionBy = append(n.PartitionBy, idx)
	}
	q := alias
	if q == "" {
		q = tvf.Table
	}
	scope := requalify(in.scope, q)
	for _, name := range windowColumnNames {
		scope = append(scope, expr.Column{Name: name, Table: q, Type: windowColumnType})
	}
	n.nodeBase = nodeBase{cols: unqualified(scope), inputs: []Node{in.node}}
	return rel{node: n, scope: scope}, nil
}

// windowSpecOf converts the parsed call's sizes.
func windowSpecOf(tvf *parser.WindowTVF) (window.WindowSpec, error) {
	iv := tvf.Intervals
	var s window.WindowSpec
	switch tvf.Func {
	case "TUMBLE":
		s = window.WindowSpec{Kind: window.WindowTumble, Size: int64(iv[0])}
	case "HOP":
		s = window.WindowSpec{Kind: window.WindowHop, Slide: int64(iv[0]), Size: int64(iv[1])}
	case "CUMULATE":
		s = window.WindowSpec{Kind: window.WindowCumulate, Slide: int64(iv[0]), Size: int64(iv[1])}
	case "SESSION":
		s = window.WindowSpec{Kind: window.WindowSession, Size: int64(iv[0])}
	default:
		return s, fmt.Errorf("unknown window function %s", tvf.Func)
	}
	s.Offset = int64(tvf.Offset)
	return s, s.Validate()
}

// windowColOf traces column col of n through projections to a window
// column: the window node and which column it is.
func windowColOf(n Node, col int) (Node, window.WindowCol, bool) {
	switch x := n.(type) {
	case *CalcNode:
		if idx, ok := expr.ColumnIndex(x.Proj[col]); ok {
			return windowColOf(x.inputs[0], idx)
		}
	case *WindowTVFNode:
		nIn := len(x.inputs[0].Columns())
		if col >= nIn {
			return x, window.WinStart + window.WindowCol(col-nIn), true
		}
	case *WindowAggNode:
		if col < len(x.Out) && x.Out[col].Kind != window.WinKey {
			return x, x.Out[col].Kind, true
		}
	case *RankNode:
		if col < len(x.inputs[0].Columns()) {
			return windowColOf(x.inputs[0], col)
		}
	}
	return nil, 0, false
}
