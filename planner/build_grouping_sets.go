package planner

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// GROUPING SETS, ROLLUP and CUBE, planned as Flink plans them:
//
//	Calc(select list; GROUPING(...) from $e)
//	+- GroupAggregate(groupBy=[keys, $e])
//	   +- Expand(one row per grouping set: its keys, NULL for the others, $e)
//	      +- Calc(keys ++ aggregate arguments)
//
// $e numbers the grouping sets, so that a set's NULL-padded group is
// never merged with another set's group whose keys happen to be NULL.
// ROLLUP (a, b) is GROUPING SETS ((a, b), (a), ()), CUBE (a, b) is
// GROUPING SETS ((a, b), (a), (b), ()), and the elements of a GROUP BY
// multiply: GROUP BY a, ROLLUP (b) is GROUPING SETS ((a, b), (a)).

// groupingSets flattens the GROUP BY items: the distinct grouping
// expressions (GROUP BY 2 and aliases resolved by resolve) and the
// grouping sets as indexes into them; sets is nil for a plain GROUP BY.
func (b *builder) groupingSets(items []*ast.ByItem, scope []expr.Column, resolve func(ast.ExprNode) (ast.ExprNode, error)) ([]ast.ExprNode, [][]int, error) {
	var keys []ast.ExprNode
	index := func(e ast.ExprNode) (int, error) {
		e, err := resolve(e)
		if err != nil {
			return 0, err
		}
		for i, k := range keys {
			if sameExpr(k, e, scope) {
				return i, nil
			}
		}
		keys = append(keys, e)
		return len(keys) - 1, nil
	}
	// elems turns a ROLLUP/CUBE element or a grouping set into key indexes.
	elems := func(e ast.ExprNode) ([]int, error) {
		var list []ast.ExprNode
		switch x := e.(type) {
		case *ast.RowExpr:
			list = x.Values
		case *ast.FuncCallExpr:
			if x.FnName.L == parser.GroupingSetFunc {
				list = x.Args
				break
			}
			list = []ast.ExprNode{e}
		default:
			list = []ast.ExprNode{e}
		}
		var out []int
		for _, l := range list {
			if fc, ok := l.(*ast.FuncCallExpr); ok && isGroupingConstruct(fc.FnName.L) {
				return nil, b.errf(l, "nested GROUPING SETS, ROLLUP and CUBE are not supported")
			}
			i, err := index(l)
			if err != nil {
				return nil, err
			}
			out = append(out, i)
		}
		return out, nil
	}
	sets := [][]int{{}}
	special := false
	for _, it := range items {
		var alts [][]int
		fc, ok := it.Expr.(*ast.FuncCallExpr)
		if !ok || !isGroupingConstruct(fc.FnName.L) {
			i, err := index(it.Expr)
			if err != nil {
				return nil, nil, err
			}
			alts = [][]int{{i}}
		} else {
			special = true
			var parts [][]int
			for _, a := range fc.Args {
				p, err := elems(a)
				if err != nil {
					return nil, nil, err
				}
				parts = append(parts, p)
			}
			switch fc.FnName.L {
			case parser.GroupingSetsFunc:
				alts = parts
			case parser.RollupFunc:
				for n := len(parts); n >= 0; n-- {
					alts = append(alts, concatSets(parts[:n]))
				}
			case parser.CubeFunc:
				n := len(parts)
				if n > 12 {
					return nil, nil, b.errf(fc, "CUBE of %d elements makes too many grouping sets", n)
				}
				for mask := 1<<n - 1; mask >= 0; mask-- {
					var sel [][]int
					for i := range parts {
						if mask&(1<<(n-1-i)) != 0 {
							sel = append(sel, parts[i])
						}
					}
					alts = append(alts, concatSets(sel))
				}
			}
		}
		var next [][]int
		for _, s := range sets {
			for _, a := range alts {
				next = append(next, append(append([]int(nil), s...), a...))
			}
		}
		sets = next
	}
	if !special {
		return keys, nil, nil
	}
	if len(sets) > 4096 {
		return nil, nil, b.errf(items[0].Expr, "GROUP BY makes %d grouping sets, more than 4096", len(sets))
	}
	return keys, sets, nil
}

func isGroupingConstruct(name string) bool {
	return name == parser.GroupingSetsFunc || name == parser.RollupFunc || name == parser.CubeFunc || name == parser.GroupingSetFunc
}

func concatSets(parts [][]int) []int {
	out := []int{}
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// expandGroupingSets puts the Expand under the aggregation: pre's first
// nk columns are the keys; the result has the keys (nullable now) and
// the aggregate arguments, then $e.
func expandGroupingSets(pre Node, nk int, sets [][]int) Node {
	in := pre.Columns()
	cols := append([]expr.Column(nil), in...)
	for j := 0; j < nk; j++ {
		cols[j].Type = cols[j].Type.Nullable()
	}
	cols = append(cols, expr.Column{Name: "$e", Type: types.TypeBigInt.WithNotNull(true)})
	var projs [][]expr.Expr
	for si, s := range sets {
		in := map[int]bool{}
		for _, k := range s {
			in[k] = true
		}
		var p []expr.Expr
		for j, c := range pre.Columns() {
			if j < nk && !in[j] {
				p = append(p, expr.NewLiteral(types.NullValue, c.Type.Nullable()))
				continue
			}
			p = append(p, expr.NewColumnRef(j, c.Name, c.Type))
		}
		p = append(p, expr.NewLiteral(types.NewInt(int64(si)), types.TypeBigInt.WithNotNull(true)))
		projs = append(projs, p)
	}
	return &ExpandNode{nodeBase: nodeBase{cols: cols, inputs: []Node{pre}}, Projections: projs}
}

// groupingCalls finds GROUPING(...), GROUPING_ID(...) and GROUP_ID() in
// the select list and HAVING.
func groupingCalls(es ...ast.ExprNode) []*ast.FuncCallExpr {
	var out []*ast.FuncCallExpr
	for _, e := range es {
		if e == nil {
			continue
		}
		e.Accept(&groupingFinder{out: &out})
	}
	return out
}

type groupingFinder struct{ out *[]*ast.FuncCallExpr }

func (f *groupingFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.FuncCallExpr:
		if x.FnName.L == "grouping" || x.FnName.L == "grouping_id" || x.FnName.L == "group_id" {
			*f.out = append(*f.out, x)
			return n, true
		}
	case *ast.SubqueryExpr, *ast.AggregateFuncExpr:
		return n, true
	}
	return n, false
}

func (f *groupingFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// groupingValue is GROUPING(args) for each grouping set, as Flink
// computes it: bit n-1-i is 1 when args[i] is not grouped by the set.
// GROUPING with several arguments is GROUPING_ID.
func (b *builder) groupingValue(fc *ast.FuncCallExpr, keys []ast.ExprNode, sets [][]int, scope []expr.Column) ([]int64, error) {
	if fc.FnName.L == "group_id" {
		if len(fc.Args) > 0 {
			return nil, b.errf(fc, "GROUP_ID takes no arguments")
		}
		return groupIDs(sets), nil
	}
	if len(fc.Args) == 0 || len(fc.Args) > 63 {
		return nil, b.errf(fc, "%s takes 1 to 63 grouping expressions", strings.ToUpper(fc.FnName.O))
	}
	idx := make([]int, len(fc.Args))
	for i, a := range fc.Args {
		idx[i] = -1
		for k, g := range keys {
			if sameExpr(g, a, scope) {
				idx[i] = k
			}
		}
		if idx[i] < 0 {
			return nil, b.errf(a, "the arguments of %s must be grouping expressions", strings.ToUpper(fc.FnName.O))
		}
	}
	vals := make([]int64, len(sets))
	for si, s := range sets {
		in := map[int]bool{}
		for _, k := range s {
			in[k] = true
		}
		for i, k := range idx {
			if !in[k] {
				vals[si] |= 1 << (len(idx) - 1 - i)
			}
		}
	}
	return vals, nil
}

// groupingColumn binds GROUPING(...) over the aggregation's output, in
// which column e is $e: CASE $e WHEN 0 THEN v0 WHEN 1 THEN v1 ... END.
func (b *builder) groupingColumn(vals []int64, cols []expr.Column, e int) (expr.Expr, error) {
	marker := &ast.ColumnNameExpr{Name: &ast.ColumnName{}}
	c := &ast.CaseExpr{Value: marker, ElseClause: ast.NewValueExpr(int64(0), "", "")}
	for si, v := range vals {
		c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: ast.NewValueExpr(int64(si), "", ""), Result: ast.NewValueExpr(v, "", "")})
	}
	return expr.Bind(c, &expr.Scope{Zone: b.p.zone(), Columns: cols, Replace: func(n ast.ExprNode) (int, bool) {
		return e, n == ast.ExprNode(marker)
	}}, b.stmt.ErrorAtNode)
}

// groupIDs is GROUP_ID() for each grouping set, as Calcite (and so
// Flink) computes it: how many identical sets (the same keys, in any
// order) come before it in the GROUP BY, so that the copies of a set
// written twice are told apart: 0 for the first, 1 for the second, ...
// Without duplicate sets it is 0 everywhere.
func groupIDs(sets [][]int) []int64 {
	vals := make([]int64, len(sets))
	seen := map[string]int64{}
	for si, s := range sets {
		ks := append([]int(nil), s...)
		slices.Sort(ks)
		ks = slices.Compact(ks)
		var sb strings.Builder
		for _, k := range ks {
			sb.WriteString(itoa(k))
			sb.WriteByte(',')
		}
		vals[si] = seen[sb.String()]
		seen[sb.String()]++
	}
	return vals
}
