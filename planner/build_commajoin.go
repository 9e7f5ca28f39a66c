package planner

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/streamsql/streamsql/expr"
)

// Implicit joins, FROM a, b WHERE a.k = b.k, as the Nexmark reference
// queries write them. As in Flink, where the optimizer moves WHERE
// conjuncts into the join below them, each conjunct that references both
// sides of a join without ON (a comma join, or JOIN and CROSS JOIN
// without ON) becomes its join condition, at the lowest such join whose
// tables it references; so FROM a, b WHERE a.k = b.k plans exactly as
// FROM a JOIN b ON a.k = b.k. The rest of WHERE stays a filter over the
// joins (buildWhere pushes a one-side conjunct below them).

// commaJoins returns from with the ON conditions taken from where, and
// what is left of where; from unchanged if it has no join without ON.
// The AST is not changed: views are planned from their AST at each use.
func (b *builder) commaJoins(from ast.ResultSetNode, where ast.ExprNode) (ast.ResultSetNode, ast.ExprNode, error) {
	if !hasJoinWithoutOn(from) || where == nil {
		return from, where, nil
	}
	conj := splitAnd(where, nil)
	out, conj, err := b.takeJoinConds(from, conj)
	if err != nil {
		return nil, nil, err
	}
	return out, andAST(conj), nil
}

func hasJoinWithoutOn(n ast.ResultSetNode) bool {
	switch x := n.(type) {
	case *ast.Join:
		if x.Right == nil {
			return hasJoinWithoutOn(x.Left)
		}
		return x.On == nil && len(x.Using) == 0 && !x.NaturalJoin && x.Tp == ast.CrossJoin ||
			hasJoinWithoutOn(x.Left) || hasJoinWithoutOn(x.Right)
	case *ast.TableSource:
		if j, ok := x.Source.(*ast.Join); ok {
			return hasJoinWithoutOn(j)
		}
	}
	return false
}

// takeJoinConds moves the conjuncts of conj that reference both sides of
// a join without ON into that join, innermost joins first.
func (b *builder) takeJoinConds(n ast.ResultSetNode, conj []ast.ExprNode) (ast.ResultSetNode, []ast.ExprNode, error) {
	j, ok := n.(*ast.Join)
	if !ok {
		return n, conj, nil
	}
	if j.Right == nil {
		l, rest, err := b.takeJoinConds(j.Left, conj)
		if err != nil {
			return nil, nil, err
		}
		c := *j
		c.Left = l
		return &c, rest, nil
	}
	l, conj, err := b.takeJoinConds(j.Left, conj)
	if err != nil {
		return nil, nil, err
	}
	c := *j
	c.Left = l
	if j.On != nil || len(j.Using) > 0 || j.NaturalJoin || j.Tp != ast.CrossJoin {
		return &c, conj, nil
	}
	ls, err := b.scopeOf(l)
	if err != nil {
		return nil, nil, err
	}
	rs, err := b.scopeOf(j.Right)
	if err != nil {
		return nil, nil, err
	}
	both := append(append([]expr.Column(nil), ls...), rs...)
	var on, rest []ast.ExprNode
	for _, e := range conj {
		be, err := expr.Bind(e, &expr.Scope{Zone: b.p.zone(), Columns: both}, b.stmt.ErrorAtNode)
		if err == nil && sideOf(be, len(ls)) == sideBoth && len(find(e).aggs) == 0 {
			on = append(on, e)
		} else {
			rest = append(rest, e)
		}
	}
	if on != nil {
		c.On = &ast.OnCondition{Expr: andAST(on)}
	}
	return &c, rest, nil
}

// scopeOf is the scope of a FROM item, built only for its column names
// and types; ranks it may have pended are dropped with the plan.
func (b *builder) scopeOf(n ast.ResultSetNode) ([]expr.Column, error) {
	nr := len(b.ranks)
	r, err := b.buildFrom(n)
	b.ranks = b.ranks[:nr]
	return r.scope, err
}

// andAST conjoins AST conditions; nil for none.
func andAST(conj []ast.ExprNode) ast.ExprNode {
	var out ast.ExprNode
	for _, c := range conj {
		if out == nil {
			out = c
			continue
		}
		out = &ast.BinaryOperationExpr{Op: opcode.LogicAnd, L: out, R: c}
	}
	return out
}
