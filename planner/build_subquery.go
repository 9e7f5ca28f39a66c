package planner

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/streamsql/streamsql/expr"
)

// Subqueries in WHERE, as Flink plans them: a conjunct
//
//	x [NOT] IN (SELECT y ...)     a semi (anti) join on x = y
//	[NOT] EXISTS (SELECT ...)     a semi (anti) join on the subquery's
//	                              correlation conditions
//
// Both may be correlated (x IN (SELECT y FROM t WHERE t.k = outer.k)).
// Each filters the rows of the FROM clause by whether the subquery has a
// matching row. NOT IN follows SQL's three-valued logic, as Flink's does:
// x NOT IN (...) is TRUE only when no y equals x and the comparison is
// never NULL, so a NULL y, or a NULL x against a non-empty subquery,
// drops the row. When x or y can be NULL the anti join matches on
// (x = y) IS NOT FALSE and cannot be partitioned by key (one subtask,
// as in Flink); when neither can, it is an ordinary keyed anti join.

// subqueryConjunct reports whether a WHERE conjunct is [NOT] IN or
// [NOT] EXISTS over a subquery, and whether it is negated.
func subqueryConjunct(c ast.ExprNode) (ast.ExprNode, bool, bool) {
	e, not := unparen(c), false
	if u, ok := e.(*ast.UnaryOperationExpr); ok && (u.Op == opcode.Not || u.Op == opcode.Not2) {
		e, not = unparen(u.V), true
	}
	switch x := e.(type) {
	case *ast.PatternInExpr:
		if x.Sel != nil {
			return x, not != x.Not, true
		}
	case *ast.ExistsSubqueryExpr:
		return x, not != x.Not, true
	}
	return nil, false, false
}

// subqueryFilter plans a conjunct found by subqueryConjunct over in.
func (b *builder) subqueryFilter(in rel, c ast.ExprNode) (rel, error) {
	e, anti, _ := subqueryConjunct(c)
	if x, ok := e.(*ast.PatternInExpr); ok {
		return b.inSubquery(in, x, anti)
	}
	return b.existsSubquery(in, e.(*ast.ExistsSubqueryExpr), anti)
}

func (b *builder) inSubquery(in rel, x *ast.PatternInExpr, anti bool) (rel, error) {
	if _, ok := x.Expr.(*ast.RowExpr); ok {
		return rel{}, b.errf(x, "IN with a row of values over a subquery is not supported")
	}
	sub, ok := x.Sel.(*ast.SubqueryExpr)
	if !ok {
		return rel{}, b.errf(x, "unsupported IN subquery")
	}
	if sel, simple := simpleSubquery(sub.Query); simple && b.correlated(in, sub.Query) {
		return b.correlatedSemiJoin(in, sel, anti, x)
	}
	r, err := b.buildQuery(sub.Query)
	if err != nil {
		return rel{}, err
	}
	if len(r.scope) != 1 {
		return rel{}, b.errf(x, "the subquery of IN must return one column, not %d", len(r.scope))
	}
	lk, err := expr.Bind(x.Expr, &expr.Scope{Zone: b.p.zone(), Columns: in.scope}, b.stmt.ErrorAtNode)
	if err != nil {
		return rel{}, err
	}
	rk := expr.NewColumnRef(0, r.scope[0].Name, r.scope[0].Type)
	if lk, rk, err = b.inCommonType(x, lk, rk); err != nil {
		return rel{}, err
	}
	ln, lidx := withKeyColumns(in.node, []expr.Expr{lk})
	rn, ridx := withKeyColumns(r.node, []expr.Expr{rk})
	n := &SemiJoinNode{nodeBase: nodeBase{cols: ln.Columns(), inputs: []Node{ln, rn}}, Anti: anti}
	if anti && (!lk.Type().NotNull || !rk.Type().NotNull) {
		// NULL-aware: a pair matches unless x = y is FALSE.
		lm, rm := &ast.ColumnNameExpr{Name: &ast.ColumnName{}}, &ast.ColumnNameExpr{Name: &ast.ColumnName{}}
		joined := append(append([]expr.Column(nil), ln.Columns()...), rn.Columns()...)
		nl := len(ln.Columns())
		cond, err := expr.Bind(&ast.IsTruthExpr{Expr: &ast.BinaryOperationExpr{Op: opcode.EQ, L: lm, R: rm}, Not: true, True: 0},
			&expr.Scope{Zone: b.p.zone(), Columns: joined, Replace: func(e ast.ExprNode) (int, bool) {
				switch e {
				case ast.ExprNode(lm):
					return lidx[0], true
				case ast.ExprNode(rm):
					return nl + ridx[0], true
				}
				return 0, false
			}}, b.stmt.ErrorAtNode)
		if err != nil {
			return rel{}, err
		}
		n.Cond = cond
	} else {
		n.LeftKeys, n.RightKeys = lidx, ridx
	}
	return b.dropKeyColumns(n, in), nil
}

// dropKeyColumns projects the key columns withKeyColumns added to the
// left input away again.
func (b *builder) dropKeyColumns(n Node, in rel) rel {
	if len(n.Columns()) == len(in.scope) {
		return rel{node: n, scope: in.scope}
	}
	proj := make([]expr.Expr, len(in.scope))
	for i, c := range in.scope {
		proj[i] = expr.NewColumnRef(i, c.Name, c.Type)
	}
	return rel{node: newCalc(n, nil, proj, unqualified(in.scope)), scope: in.scope}
}

// simpleSubquery reports whether a subquery is a plain SELECT ... FROM
// ... WHERE, whose WHERE may refer to the enclosing query.
func simpleSubquery(q ast.ResultSetNode) (*ast.SelectStmt, bool) {
	sel, ok := q.(*ast.SelectStmt)
	if !ok || sel.Kind != ast.SelectStmtKindSelect || sel.From == nil || sel.With != nil || sel.GroupBy != nil ||
		sel.Having != nil || sel.Limit != nil || sel.OrderBy != nil || sel.Distinct || hasAggregate(sel) {
		return nil, false
	}
	return sel, true
}

func (b *builder) existsSubquery(in rel, x *ast.ExistsSubqueryExpr, anti bool) (rel, error) {
	sub, ok := x.Sel.(*ast.SubqueryExpr)
	if !ok {
		return rel{}, b.errf(x, "unsupported EXISTS subquery")
	}
	sel, simple := simpleSubquery(sub.Query)
	if !simple {
		// Uncorrelated: every row of in matches every row of r.
		r, err := b.buildQuery(sub.Query)
		if err != nil {
			return rel{}, err
		}
		n := &SemiJoinNode{nodeBase: nodeBase{cols: in.node.Columns(), inputs: []Node{in.node, r.node}}, Anti: anti}
		return rel{node: n, scope: in.scope}, nil
	}
	return b.correlatedSemiJoin(in, sel, anti, nil)
}

// correlatedSemiJoin plans [NOT] EXISTS (sel), or with inx, the
// correlated inx.Expr [NOT] IN (sel), as Flink decorrelates them: the
// subquery's own WHERE conjuncts filter it, its equalities with the
// enclosing query are the join keys and its other references to it the
// join condition. IN adds x = y to the keys; NOT IN adds (x = y) IS NOT
// FALSE to the condition when x or y can be NULL (SQL's NULL semantics:
// among the rows the correlation selects, a NULL y, or a NULL x against
// any row, drops the row), else x = y to the keys.
func (b *builder) correlatedSemiJoin(in rel, sel *ast.SelectStmt, anti bool, inx *ast.PatternInExpr) (rel, error) {
	from, where, err := b.commaJoins(sel.From.TableRefs, sel.Where)
	if err != nil {
		return rel{}, err
	}
	r, err := b.buildFrom(from)
	if err != nil {
		return rel{}, err
	}
	// The conjuncts over the subquery's own columns filter it; the others
	// refer to the enclosing query and become the join's condition.
	nl, nr := len(in.scope), len(r.scope)
	both := append(append([]expr.Column(nil), in.scope...), r.scope...)
	var own, corr []ast.ExprNode
	for _, c := range splitAnd(where, nil) {
		if c == nil {
			continue
		}
		if _, err := expr.Bind(c, &expr.Scope{Zone: b.p.zone(), Columns: r.scope}, b.stmt.ErrorAtNode); err == nil {
			own = append(own, c)
			continue
		}
		if _, err := expr.Bind(c, &expr.Scope{Zone: b.p.zone(), Columns: both}, b.stmt.ErrorAtNode); err != nil {
			return rel{}, err
		}
		if _, _, nested := subqueryConjunct(c); nested {
			return rel{}, b.errf(c, "a correlated subquery inside a subquery is not supported")
		}
		corr = append(corr, c)
	}
	if own != nil {
		if r, err = b.buildWhere(r, andAST(own)); err != nil {
			return rel{}, err
		}
	}
	var lkeys, rkeys []expr.Expr
	var residual expr.Expr
	for _, c := range corr {
		le, re, ok, err := b.equiKeys(c, both, nl)
		if err != nil {
			return rel{}, err
		}
		if ok {
			lkeys, rkeys = append(lkeys, le), append(rkeys, expr.RemapColumns(re, shiftMap(nl, nr)))
			continue
		}
		e, err := b.bindCondition("WHERE", c, &expr.Scope{Zone: b.p.zone(), Columns: both})
		if err != nil {
			return rel{}, err
		}
		residual = andExpr(residual, e)
	}
	nullAware := false
	if inx != nil {
		if len(sel.Fields.Fields) != 1 || sel.Fields.Fields[0].WildCard != nil {
			return rel{}, b.errf(inx, "the subquery of IN must return one column")
		}
		x, err := expr.Bind(inx.Expr, &expr.Scope{Columns: in.scope}, b.stmt.ErrorAtNode)
		if err != nil {
			return rel{}, err
		}
		y, err := expr.Bind(sel.Fields.Fields[0].Expr, &expr.Scope{Columns: r.scope}, b.stmt.ErrorAtNode)
		if err != nil {
			return rel{}, b.errf(sel.Fields.Fields[0].Expr, "the column of a correlated IN subquery must be over the subquery's own tables: %v", err)
		}
		if x, y, err = b.inCommonType(inx, x, y); err != nil {
			return rel{}, err
		}
		// x and y go last among the key columns; they are keys unless
		// the anti join must be NULL-aware.
		nullAware = anti && (!x.Type().NotNull || !y.Type().NotNull)
		lkeys, rkeys = append(lkeys, x), append(rkeys, y)
	}
	ln, lk := withKeyColumns(in.node, lkeys)
	rn, rk := withKeyColumns(r.node, rkeys)
	var nullCond expr.Expr // over ln ++ rn
	if nullAware {
		lx, ry := lk[len(lk)-1], rk[len(rk)-1]
		lk, rk = lk[:len(lk)-1], rk[:len(rk)-1]
		lm, rm := &ast.ColumnNameExpr{Name: &ast.ColumnName{}}, &ast.ColumnNameExpr{Name: &ast.ColumnName{}}
		joined := append(append([]expr.Column(nil), ln.Columns()...), rn.Columns()...)
		nln := len(ln.Columns())
		cond, err := expr.Bind(&ast.IsTruthExpr{Expr: &ast.BinaryOperationExpr{Op: opcode.EQ, L: lm, R: rm}, Not: true, True: 0},
			&expr.Scope{Columns: joined, Replace: func(e ast.ExprNode) (int, bool) {
				switch e {
				case ast.ExprNode(lm):
					return lx, true
				case ast.ExprNode(rm):
					return nln + ry, true
				}
				return 0, false
			}}, b.stmt.ErrorAtNode)
		if err != nil {
			return rel{}, err
		}
		nullCond = cond
	}
	if nle := len(ln.Columns()) - nl; residual != nil && nle > 0 {
		m := map[int]int{}
		for i := 0; i < nr; i++ {
			m[nl+i] = nl + nle + i
		}
		residual = expr.RemapColumns(residual, m)
	}
	n := &SemiJoinNode{nodeBase: nodeBase{cols: ln.Columns(), inputs: []Node{ln, rn}}, Anti: anti,
		equiJoin: equiJoin{LeftKeys: lk, RightKeys: rk, Cond: andExpr(residual, nullCond)}}
	return b.dropKeyColumns(n, in), nil
}

// correlated reports whether a plain subquery's WHERE refers to the
// enclosing query's columns.
func (b *builder) correlated(in rel, q ast.ResultSetNode) bool {
	sel, ok := simpleSubquery(q)
	if !ok || sel.Where == nil {
		return false
	}
	inner, err := b.scopeOf(sel.From.TableRefs)
	if err != nil {
		return false
	}
	both := append(append([]expr.Column(nil), in.scope...), inner...)
	for _, c := range splitAnd(sel.Where, nil) {
		if _, err := expr.Bind(c, &expr.Scope{Zone: b.p.zone(), Columns: inner}, b.stmt.ErrorAtNode); err == nil {
			continue
		}
		if _, err := expr.Bind(c, &expr.Scope{Zone: b.p.zone(), Columns: both}, b.stmt.ErrorAtNode); err == nil {
			return true
		}
	}
	return false
}

// inCommonType casts l and r, the two sides of x IN (SELECT ...), to
// their common type, or refuses them at x when they have none.
func (b *builder) inCommonType(x ast.Node, l, r expr.Expr) (expr.Expr, expr.Expr, error) {
	if l.Type().Equal(r.Type()) {
		return l, r, nil
	}
	ct, ok := expr.CommonType(l.Type(), r.Type())
	if !ok {
		return nil, nil, b.errf(x, "IN compares %s with a subquery of %s, which have no common type", l.Type(), r.Type())
	}
	l, err := expr.ImplicitCast(l, ct)
	if err != nil {
		return nil, nil, b.errf(x, "%v", err)
	}
	if r, err = expr.ImplicitCast(r, ct); err != nil {
		return nil, nil, b.errf(x, "%v", err)
	}
	return l, r, nil
}
