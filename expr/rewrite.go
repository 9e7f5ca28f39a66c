package expr

// Rewriting bound expressions for the planner's rules: merging one Calc
// into the next (Substitute) and pushing reads of ROW fields down to the
// scan (FieldPath, Rewrite).

// Rewrite returns e rebuilt bottom-up: where f returns (y, true) the node
// becomes y and its children are not visited; elsewhere the node is
// rebuilt over its rewritten children. e itself is not changed; nil stays
// nil.
func Rewrite(e Expr, f func(Expr) (Expr, bool)) Expr { return transform(e, f) }

// Substitute returns e with every reference to input column i replaced by
// defs[i]: e over the output of a projection defs becomes e over that
// projection's input. Every column e reads must have a definition.
func Substitute(e Expr, defs []Expr) Expr {
	return transform(e, func(x Expr) (Expr, bool) {
		if c, ok := x.(*colRef); ok {
			return defs[c.idx], true
		}
		return nil, false
	})
}

// FieldPath reports whether e reads a field of a column, r.f or r.f.g:
// the column, and the field indexes from the column down (at least one).
func FieldPath(e Expr) (col int, path []int, ok bool) {
	f, ok := e.(*fieldAccess)
	if !ok {
		return 0, nil, false
	}
	var rev []int
	var x Expr = f
	for {
		fa, ok := x.(*fieldAccess)
		if !ok {
			break
		}
		rev = append(rev, fa.idx)
		x = fa.e
	}
	c, ok := x.(*colRef)
	if !ok {
		return 0, nil, false
	}
	path = make([]int, len(rev))
	for i, idx := range rev {
		path[len(rev)-1-i] = idx
	}
	return c.idx, path, true
}

// AccessPath returns the read of field path of base, a ROW (nested ROWs
// for a longer path), with the types and names of base's type: the
// inverse of FieldPath.
func AccessPath(base Expr, path []int) Expr {
	e := base
	for _, idx := range path {
		t := e.Type()
		ft := t.Fields[idx].Type
		ft.NotNull = ft.NotNull && t.NotNull
		e = &fieldAccess{e: e, idx: idx, name: t.Fields[idx].Name, typ: ft}
	}
	return e
}

// Conjuncts splits e at its top-level ANDs, in evaluation order; nil has
// none.
func Conjuncts(e Expr) []Expr {
	if e == nil {
		return nil
	}
	if l, ok := e.(*logic); ok && l.op == logicAnd {
		return append(Conjuncts(l.l), Conjuncts(l.r)...)
	}
	return []Expr{e}
}

// IsTrivial reports whether e is a column, a literal or a field of a
// column: evaluating it twice costs next to nothing, so a rule may copy
// it into several places.
func IsTrivial(e Expr) bool {
	switch e.(type) {
	case *colRef, *literal:
		return true
	}
	_, _, ok := FieldPath(e)
	return ok
}
