package planner

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// setInput is one input of a set operation with the operator written
// before it (nil for the first).
type setInput struct {
	r  rel
	op *ast.SetOprType
	at ast.Node
}

// combineSetInputs folds the inputs of a set operation as SQL does:
// INTERSECT binds tighter than UNION and EXCEPT, which fold from the
// left, so a UNION b INTERSECT c EXCEPT d is (a UNION (b INTERSECT c))
// EXCEPT d, and a UNION b UNION ALL c is (a UNION b) UNION ALL c.
func (b *builder) combineSetInputs(ins []setInput) (rel, error) {
	// INTERSECT first: each run a INTERSECT b INTERSECT c becomes one input.
	var folded []setInput
	for _, in := range ins {
		if len(folded) > 0 && (*in.op == ast.Intersect || *in.op == ast.IntersectAll) {
			last := &folded[len(folded)-1]
			r, err := b.setOp(last.r, in.r, *in.op, in.at)
			if err != nil {
				return rel{}, err
			}
			last.r = r
			continue
		}
		folded = append(folded, in)
	}
	out := folded[0].r
	for _, in := range folded[1:] {
		var err error
		switch *in.op {
		case ast.Union, ast.UnionAll:
			if out, err = b.union(out, in.r, in.at); err == nil && *in.op == ast.Union {
				out, err = b.distinct(out)
			}
		default:
			out, err = b.setOp(out, in.r, *in.op, in.at)
		}
		if err != nil {
			return rel{}, err
		}
	}
	return out, nil
}

var setOpKinds = map[ast.SetOprType]operators.SetOpKind{
	ast.Intersect: operators.Intersect, ast.IntersectAll: operators.IntersectAll,
	ast.Except: operators.Except, ast.ExceptAll: operators.ExceptAll,
}

// setOp plans l INTERSECT [ALL] r or l EXCEPT [ALL] r: both inputs cast
// to common column types as for UNION (the column names are the left
// input's), then a SetOpNode.
func (b *builder) setOp(l, r rel, op ast.SetOprType, at ast.Node) (rel, error) {
	kind, ok := setOpKinds[op]
	if !ok {
		return rel{}, b.errf(at, "set operation %s is not supported", op.String())
	}
	u, err := b.union(l, r, at)
	if err != nil {
		return rel{}, err
	}
	// The union's column types are the common ones; its own node is not used.
	ln, err := castTo(l.node, u.scope)
	if err != nil {
		return rel{}, b.errf(at, "%v", err)
	}
	rn, err := castTo(r.node, u.scope)
	if err != nil {
		return rel{}, b.errf(at, "%v", err)
	}
	n := &SetOpNode{nodeBase: nodeBase{cols: u.scope, inputs: []Node{ln, rn}}, Kind: kind}
	return rel{node: n, scope: u.scope}, nil
}

// castTo casts the columns of n to the types of cols, with a Calc when
// any differs.
func castTo(n Node, cols []expr.Column) (Node, error) {
	in := n.Columns()
	proj := make([]expr.Expr, len(cols))
	same := true
	for i, c := range cols {
		e, err := expr.ImplicitCast(expr.NewColumnRef(i, in[i].Name, in[i].Type), c.Type)
		if err != nil {
			return nil, err
		}
		same = same && in[i].Type.Equal(c.Type)
		proj[i] = e
	}
	if same {
		return n, nil
	}
	return newCalc(n, nil, proj, unqualified(cols)), nil
}
