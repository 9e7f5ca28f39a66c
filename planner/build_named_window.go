package planner

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// resolveNamedWindows replaces each OVER w and OVER (w ...) of a select
// list by the window the WINDOW clause defines, as Flink does:
//
//	SELECT SUM(x) OVER w FROM t WINDOW w AS (PARTITION BY k ORDER BY ts)
//
// OVER (w ORDER BY ...) adds to w what w leaves out. A window may refer
// to an earlier one of the clause. The AST is not changed (views are
// planned from theirs at each use): the calls get copies.
func (b *builder) resolveNamedWindows(sel *ast.SelectStmt, fields []field) ([]field, error) {
	named := map[string]*ast.WindowSpec{}
	for i := range sel.WindowSpecs {
		ws := sel.WindowSpecs[i]
		if _, dup := named[ws.Name.L]; dup {
			return nil, b.errf(sel, "window %s is defined twice", ws.Name.O)
		}
		r, err := mergeWindow(&ws, named)
		if err != nil {
			return nil, b.errf(sel, "WINDOW %s: %v", ws.Name.O, err)
		}
		named[ws.Name.L] = r
	}
	out := make([]field, len(fields))
	for i, f := range fields {
		out[i] = f
		if f.expr == nil {
			continue
		}
		var werr error
		e, _ := f.expr.Accept(&windowResolver{fn: func(w *ast.WindowFuncExpr) *ast.WindowFuncExpr {
			if w.Spec.Name.O == "" && w.Spec.Ref.O == "" {
				return w
			}
			spec := w.Spec
			if spec.OnlyAlias {
				spec = ast.WindowSpec{Ref: w.Spec.Name}
			}
			r, err := mergeWindow(&spec, named)
			if err != nil {
				werr = b.errf(w, "%v", err)
				return w
			}
			c := *w
			c.Spec = *r
			c.Spec.Name = ast.CIStr{}
			c.SetOriginTextPosition(w.OriginTextPosition())
			return &c
		}})
		if werr != nil {
			return nil, werr
		}
		out[i].expr = e.(ast.ExprNode)
	}
	return out, nil
}

// mergeWindow resolves a window's reference to a named one.
func mergeWindow(ws *ast.WindowSpec, named map[string]*ast.WindowSpec) (*ast.WindowSpec, error) {
	r := *ws
	if ws.Ref.O == "" {
		return &r, nil
	}
	base, ok := named[ws.Ref.L]
	if !ok {
		return nil, fmt.Errorf("window %s is not defined in the WINDOW clause", ws.Ref.O)
	}
	r.Ref = ast.CIStr{}
	if r.PartitionBy != nil && base.PartitionBy != nil {
		return nil, fmt.Errorf("a window that refers to %s cannot have its own PARTITION BY", ws.Ref.O)
	}
	if r.PartitionBy == nil {
		r.PartitionBy = base.PartitionBy
	}
	if r.OrderBy == nil {
		r.OrderBy = base.OrderBy
	}
	if r.Frame == nil {
		r.Frame = base.Frame
	}
	return &r, nil
}

// windowResolver rewrites the window function calls of an expression,
// copying the nodes above a changed call instead of changing them.
type windowResolver struct {
	fn func(*ast.WindowFuncExpr) *ast.WindowFuncExpr
}

func (v *windowResolver) Enter(n ast.Node) (ast.Node, bool) {
	if w, ok := n.(*ast.WindowFuncExpr); ok {
		return v.fn(w), true
	}
	return n, false
}

func (v *windowResolver) Leave(n ast.Node) (ast.Node, bool) { return n, true }
