package planner

import (
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators/window"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// The older group-window form:
//
//	SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE), COUNT(*) FROM t
//	GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE)
//
// with TUMBLE(ts, size), HOP(ts, slide, size) and SESSION(ts, gap), and
// the auxiliary functions <F>_START, <F>_END and <F>_ROWTIME. It is
// planned as the window table function form: a window function over the
// FROM clause adds three hidden window columns, the GROUP BY call becomes
// GROUP BY of them, and the auxiliary calls become references to them;
// windowAggregate then fuses it all into one window aggregation. For
// SESSION, as in Flink, sessions are per value of the other GROUP BY keys.

// Hidden column names; "$" keeps them apart from user columns.
var legacyColumns = [3]string{"$window_start", "$window_end", "$window_time"}

// legacyWindow is what the rewrite of one SELECT found; it is kept so
// that a view, whose AST is planned again at every use, finds it again.
type legacyWindow struct {
	fn      string
	timeCol string
	spec    window.WindowSpec
	errAt   func(format string, args ...any) error
}

// legacyRewritten maps a rewritten SELECT (weakly, so that the entry
// goes with the AST) to what its rewrite found.
var legacyRewritten sync.Map // weak.Pointer[ast.SelectStmt] -> *legacyWindow

func rememberLegacy(sel *ast.SelectStmt, lw *legacyWindow) {
	k := weak.Make(sel)
	legacyRewritten.Store(k, lw)
	runtime.AddCleanup(sel, func(k weak.Pointer[ast.SelectStmt]) { legacyRewritten.Delete(k) }, k)
}

// legacyGroupWindow rewrites a SELECT that groups by TUMBLE/HOP/SESSION
// and returns its input with the window columns added; a SELECT without
// a group window is returned as it is.
func (b *builder) legacyGroupWindow(in rel, sel *ast.SelectStmt, fields []field) (rel, error) {
	var lw *legacyWindow
	if v, ok := legacyRewritten.Load(weak.Make(sel)); ok {
		lw = v.(*legacyWindow)
	} else {
		if sel.GroupBy == nil {
			return in, nil
		}
		var err error
		if lw, err = b.rewriteLegacyWindow(in, sel, fields); err != nil || lw == nil {
			return in, err
		}
		rememberLegacy(sel, lw)
	}
	tc := -1
	for i, c := range in.scope {
		if strings.EqualFold(c.Name, lw.timeCol) {
			if tc >= 0 {
				return rel{}, lw.errAt("%s: column '%s' is ambiguous", lw.fn, lw.timeCol)
			}
			tc = i
		}
	}
	if tc < 0 {
		return rel{}, lw.errAt("%s: unknown time column '%s'", lw.fn, lw.timeCol)
	}
	if in.scope[tc].Type.ID != types.Timestamp {
		return rel{}, lw.errAt("%s: time column '%s' must be a TIMESTAMP, not %s", lw.fn, lw.timeCol, in.scope[tc].Type)
	}
	if !in.node.Mode().IsInsertOnly() {
		return rel{}, lw.errAt("%s needs an insert-only input", lw.fn)
	}
	attr := timeAttrOf(in.node, tc)
	if attr == attrNone {
		return rel{}, lw.errAt("%s: column '%s' is not a time attribute: declare WATERMARK FOR %s on the table, or use a PROCTIME() column", lw.fn, lw.timeCol, lw.timeCol)
	}
	if attr == attrProctime && lw.spec.Kind == window.WindowSession {
		return rel{}, lw.errAt("SESSION windows over processing time are not supported")
	}
	n := &WindowTVFNode{Window: lw.spec, TimeCol: tc, ProcTime: attr == attrProctime, errAt: lw.errAt}
	scope := append([]expr.Column(nil), in.scope...)
	for _, name := range legacyColumns {
		scope = append(scope, expr.Column{Name: name, Type: windowColumnType})
	}
	n.nodeBase = nodeBase{cols: unqualified(scope), inputs: []Node{in.node}}
	return rel{node: n, scope: scope}, nil
}

var legacyAux = map[string]int{"_START": 0, "_END": 1, "_ROWTIME": 2}

// rewriteLegacyWindow finds the group window call, checks it, and
// rewrites GROUP BY, the select list and HAVING to the hidden columns.
func (b *builder) rewriteLegacyWindow(in rel, sel *ast.SelectStmt, fields []field) (*legacyWindow, error) {
	var lw *legacyWindow
	var items []*ast.ByItem
	for _, it := range sel.GroupBy.Items {
		fc, ok := unparen(it.Expr).(*ast.FuncCallExpr)
		name := ""
		if ok {
			name = strings.ToUpper(fc.FnName.O)
			if strings.EqualFold(name, parser.SessionGroupWindow) {
				name = "SESSION"
			}
		}
		if name != "TUMBLE" && name != "HOP" && name != "SESSION" {
			items = append(items, it)
			continue
		}
		if lw != nil {
			return nil, b.errf(fc, "only one group window is allowed in GROUP BY")
		}
		var err error
		if lw, err = b.legacyCall(fc, name, in.scope); err != nil {
			return nil, err
		}
		for _, c := range legacyColumns {
			items = append(items, &ast.ByItem{Expr: legacyRef(c)})
		}
	}
	if lw == nil {
		return nil, nil
	}
	sel.GroupBy.Items = items
	rw := &legacyRewriter{fn: lw.fn}
	for i := range fields {
		if fields[i].expr == nil {
			continue
		}
		if fc, ok := fields[i].expr.(*ast.FuncCallExpr); ok && !fields[i].aliased {
			// An unaliased TUMBLE_START(...) is named after the function.
			fields[i].name = strings.ToUpper(fc.FnName.O)
		}
		fields[i].expr = rewriteExpr(fields[i].expr, rw)
	}
	for i, f := range sel.Fields.Fields {
		if f.Expr != nil {
			sel.Fields.Fields[i].Expr = rewriteExpr(f.Expr, rw)
		}
	}
	if sel.Having != nil {
		sel.Having.Expr = rewriteExpr(sel.Having.Expr, rw)
	}
	if rw.bad != nil {
		return nil, b.errf(rw.bad, "%s does not match the group window %s in GROUP BY", rw.badName, lw.fn)
	}
	return lw, nil
}

// legacyCall checks TUMBLE(ts, size), HOP(ts, slide, size) or
// SESSION(ts, gap).
func (b *builder) legacyCall(fc *ast.FuncCallExpr, name string, scope []expr.Column) (*legacyWindow, error) {
	want := map[string]int{"TUMBLE": 2, "HOP": 3, "SESSION": 2}[name]
	if len(fc.Args) != want {
		return nil, b.errf(fc, "%s in GROUP BY takes %d arguments", name, want)
	}
	cn, ok := unparen(fc.Args[0]).(*ast.ColumnNameExpr)
	if !ok {
		return nil, b.errf(fc.Args[0], "%s expects a time column as its first argument", name)
	}
	var ds []int64
	for _, a := range fc.Args[1:] {
		e, err := expr.Bind(a, &expr.Scope{Columns: scope}, b.stmt.ErrorAtNode)
		if err != nil {
			return nil, err
		}
		v, ok := expr.IsLiteral(e)
		if !ok || v.Kind() != types.KindInterval || v.Interval() <= 0 {
			return nil, b.errf(a, "%s expects a positive constant INTERVAL", name)
		}
		ds = append(ds, int64(v.Interval()))
	}
	lw := &legacyWindow{fn: name, timeCol: cn.Name.Name.O}
	switch name {
	case "TUMBLE":
		lw.spec = window.WindowSpec{Kind: window.WindowTumble, Size: ds[0]}
	case "HOP":
		lw.spec = window.WindowSpec{Kind: window.WindowHop, Slide: ds[0], Size: ds[1]}
	case "SESSION":
		lw.spec = window.WindowSpec{Kind: window.WindowSession, Size: ds[0]}
	}
	if err := lw.spec.Validate(); err != nil {
		return nil, b.errf(fc, "%s: %v", name, err)
	}
	stmt := b.stmt
	lw.errAt = func(format string, args ...any) error { return stmt.ErrorAtNode(fc, format, args...) }
	return lw, nil
}

func legacyRef(name string) *ast.ColumnNameExpr {
	return &ast.ColumnNameExpr{Name: &ast.ColumnName{Name: ast.NewCIStr(name)}}
}

// legacyRewriter replaces TUMBLE_START(...) and kin by the hidden
// columns; it notes an auxiliary function of another window kind.
type legacyRewriter struct {
	fn      string
	bad     ast.Node
	badName string
}

func (r *legacyRewriter) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.SubqueryExpr); ok {
		return n, true
	}
	return n, false
}

func (r *legacyRewriter) Leave(n ast.Node) (ast.Node, bool) {
	fc, ok := n.(*ast.FuncCallExpr)
	if !ok {
		return n, true
	}
	name := strings.ToUpper(fc.FnName.O)
	for _, f := range []string{"TUMBLE", "HOP", "SESSION"} {
		for suffix, col := range legacyAux {
			if name != f+suffix {
				continue
			}
			if f != r.fn && r.bad == nil {
				r.bad, r.badName = fc, name
			}
			return legacyRef(legacyColumns[col]), true
		}
	}
	return n, true
}

func rewriteExpr(e ast.ExprNode, v ast.Visitor) ast.ExprNode {
	out, _ := e.Accept(v)
	return out.(ast.ExprNode)
}
