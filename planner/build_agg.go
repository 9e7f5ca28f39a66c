package planner

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// finder collects aggregate and window function calls of an expression,
// not descending into them or into subqueries.
type finder struct {
	aggs []*ast.AggregateFuncExpr
	wins []*ast.WindowFuncExpr
	cols []*ast.ColumnNameExpr // column references outside aggregates
}

func (f *finder) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.AggregateFuncExpr:
		f.aggs = append(f.aggs, x)
		return n, true
	case *ast.WindowFuncExpr:
		f.wins = append(f.wins, x)
		return n, true
	case *ast.SubqueryExpr:
		return n, true
	case *ast.ColumnNameExpr:
		f.cols = append(f.cols, x)
	}
	return n, false
}

func (f *finder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func find(e ast.Node) *finder {
	f := &finder{}
	if e != nil {
		e.Accept(f)
	}
	return f
}

func hasAggregate(sel *ast.SelectStmt) bool {
	for _, fl := range sel.Fields.Fields {
		if fl.Expr != nil && len(find(fl.Expr).aggs) > 0 {
			return true
		}
	}
	return sel.Having != nil && len(find(sel.Having.Expr).aggs) > 0
}

func findWindowFunc(fields []field) *ast.WindowFuncExpr {
	for _, f := range fields {
		if f.expr != nil {
			if w := find(f.expr).wins; len(w) > 0 {
				return w[0]
			}
		}
	}
	return nil
}

// buildAggregateSelect plans SELECT ... GROUP BY ... HAVING ...:
//
//	Calc(select list, having)
//	+- GroupAggregate(group keys ++ aggregates)
//	   +- Calc(group key expressions ++ aggregate arguments)
func (b *builder) buildAggregateSelect(in rel, sel *ast.SelectStmt, fields []field) (rel, error) {
	// GROUP BY TUMBLE(ts, ...) and kin (build_window_legacy.go).
	in, err := b.legacyGroupWindow(in, sel, fields)
	if err != nil {
		return rel{}, err
	}
	inScope := &expr.Scope{Zone: b.p.zone(), Columns: in.scope}
	var groupAST []ast.ExprNode
	var pre []expr.Expr
	var aggCols []expr.Column
	var sets [][]int // GROUPING SETS, ROLLUP, CUBE: build_grouping_sets.go
	if sel.GroupBy != nil {
		if sel.GroupBy.Rollup {
			return rel{}, b.errf(sel.GroupBy, "GROUP BY ... WITH ROLLUP is not supported; write GROUP BY ROLLUP (...)")
		}
		// GROUP BY 2 or GROUP BY alias refer to the select list.
		resolve := func(g ast.ExprNode) (ast.ExprNode, error) {
			if pos, ok := intLiteral(g); ok {
				if pos < 1 || int(pos) > len(fields) || fields[pos-1].expr == nil {
					return nil, b.errf(g, "GROUP BY position %d is not in the select list", pos)
				}
				return fields[pos-1].expr, nil
			}
			if cn, ok := g.(*ast.ColumnNameExpr); ok && cn.Name.Table.O == "" && !hasColumn(in.scope, cn.Name.Name.O) {
				for _, f := range fields {
					if f.expr != nil && strings.EqualFold(f.name, cn.Name.Name.O) {
						g = f.expr
					}
				}
			}
			return g, nil
		}
		var items []ast.ExprNode
		var err error
		if items, sets, err = b.groupingSets(sel.GroupBy.Items, in.scope, resolve); err != nil {
			return rel{}, err
		}
		for _, g := range items {
			if len(find(g).aggs) > 0 {
				return rel{}, b.errf(g, "aggregate functions are not allowed in GROUP BY")
			}
			e, err := expr.Bind(g, inScope, b.stmt.ErrorAtNode)
			if err != nil {
				return rel{}, err
			}
			groupAST = append(groupAST, g)
			pre = append(pre, e)
			name := exprText(g)
			if idx, ok := expr.ColumnIndex(e); ok {
				name = in.scope[idx].Name
			}
			aggCols = append(aggCols, expr.Column{Name: name, Type: e.Type()})
		}
	}
	var havingExpr ast.ExprNode
	if sel.Having != nil {
		havingExpr = sel.Having.Expr
	}
	var selExprs []ast.ExprNode
	for _, f := range fields {
		selExprs = append(selExprs, f.expr)
	}
	grouping := groupingCalls(append(selExprs, havingExpr)...)
	if sets == nil && grouping != nil {
		sets = [][]int{allCols(len(pre))} // GROUPING(x) of a plain GROUP BY is 0
	}
	nk := len(pre)
	groupingIndex := map[*ast.FuncCallExpr]int{}
	// Collect the aggregate calls of the select list and HAVING.
	var calls []*ast.AggregateFuncExpr
	for _, f := range fields {
		if f.expr == nil {
			return rel{}, b.errf(sel.Fields, "SELECT * cannot be used with GROUP BY")
		}
		calls = append(calls, find(f.expr).aggs...)
	}
	if sel.Having != nil {
		calls = append(calls, find(sel.Having.Expr).aggs...)
	}
	var aggs []operators.AggCall
	var aggText []string
	var distinctArgs []expr.Expr // for splitDistinct: DISTINCT arguments without FILTER
	aggIndex := map[ast.ExprNode]int{}
	byText := map[string]int{}
	retracts := in.node.Mode().HasUpdates()
	// preColumn is the pre-projection column computing e; several
	// aggregates of one input column share its column.
	preColumn := func(e expr.Expr) int {
		if ai, ok := expr.ColumnIndex(e); ok {
			for j := nk; j < len(pre); j++ {
				if pj, ok := expr.ColumnIndex(pre[j]); ok && pj == ai {
					return j
				}
			}
		}
		pre = append(pre, e)
		return len(pre) - 1
	}
	for _, c := range calls {
		var call operators.AggCall
		var arg, filter expr.Expr
		var text string
		var err error
		if _, _, ok := parser.AggFilter(c); ok {
			call, arg, filter, text, err = b.filteredAggCall(c, inScope)
		} else {
			call, arg, text, err = b.aggCall(c, inScope)
		}
		if err != nil {
			return rel{}, err
		}
		if i, ok := byText[text]; ok {
			aggIndex[c] = i // the same aggregate twice is computed once
			continue
		}
		if arg != nil {
			call.Arg = preColumn(arg)
		}
		if filter != nil {
			call.Filtered, call.Filter = true, preColumn(filter)
		}
		var darg expr.Expr
		if call.Distinct && len(c.Args) > 0 {
			a := c.Args[0]
			if _, fa, ok := parser.AggFilter(c); ok {
				a = fa
			}
			if darg, err = expr.Bind(a, inScope, b.stmt.ErrorAtNode); err != nil {
				return rel{}, err
			}
		}
		distinctArgs = append(distinctArgs, darg)
		byText[text] = len(aggs)
		aggIndex[c] = len(aggs)
		aggs = append(aggs, call)
		aggText = append(aggText, text)
		aggCols = append(aggCols, expr.Column{Name: text, Type: call.ResultType})
	}
	preCols := make([]expr.Column, len(pre))
	for i, e := range pre {
		preCols[i] = expr.Column{Name: exprName(e, i), Type: e.Type()}
	}
	for i := 0; i < nk; i++ {
		preCols[i].Name = aggCols[i].Name
	}
	keys := make([]int, nk)
	for i := range keys {
		keys[i] = i
	}
	var preNode Node = in.node
	if !isIdentity(pre, len(in.scope)) {
		preNode = newCalc(in.node, nil, pre, preCols)
	}
	_ = retracts
	var aggNode Node
	if sets != nil {
		// One row per grouping set, grouped by the keys and $e; the keys
		// not in a row's set are NULL.
		preNode = expandGroupingSets(preNode, nk, sets)
		keys = append(keys, len(pre))
		for i := 0; i < nk; i++ {
			aggCols[i].Type = aggCols[i].Type.Nullable()
		}
		withE := append(append(append([]expr.Column(nil), aggCols[:nk]...), preNode.Columns()[len(pre)]), aggCols[nk:]...)
		agg, err := b.withMiniBatch(newAgg(preNode, keys, aggs, aggText, withE))
		if err != nil {
			return rel{}, err
		}
		// Drop $e again, and add the GROUPING(...) columns.
		var proj []expr.Expr
		var cols []expr.Column
		for i, c := range withE {
			if i != nk {
				proj, cols = append(proj, expr.NewColumnRef(i, c.Name, c.Type)), append(cols, c)
			}
		}
		for _, g := range grouping {
			vals, err := b.groupingValue(g, groupAST, sets, in.scope)
			if err != nil {
				return rel{}, err
			}
			e, err := b.groupingColumn(vals, withE, nk)
			if err != nil {
				return rel{}, err
			}
			groupingIndex[g] = len(cols)
			proj, cols = append(proj, e), append(cols, expr.Column{Name: "$g" + itoa(len(groupingIndex)-1), Type: e.Type()})
		}
		aggNode, aggCols = newCalc(agg, nil, proj, cols), cols
	} else {
		// GROUP BY window_start, window_end: a window aggregation (build_window_agg.go).
		var err error
		agg := newAgg(preNode, keys, aggs, aggText, aggCols)
		if aggNode, err = b.windowAggregate(agg); err != nil {
			return rel{}, err
		}
		var split Node
		if aggNode == agg { // a group aggregation (build_agg_split.go)
			if split, err = b.splitDistinct(in.node, pre, preCols, agg, distinctArgs); err != nil {
				return rel{}, b.errf(sel, "%v", err)
			}
		}
		if split != nil {
			aggNode = split
		} else if aggNode, err = b.withMiniBatch(aggNode); err != nil {
			return rel{}, err
		}
	}
	// Bind the select list and HAVING over the aggregate's output.
	replace := func(n ast.ExprNode) (int, bool) {
		if fc, ok := n.(*ast.FuncCallExpr); ok {
			if i, ok := groupingIndex[fc]; ok {
				return i, true
			}
		}
		if a, ok := n.(*ast.AggregateFuncExpr); ok {
			if i, ok := aggIndex[a]; ok {
				return nk + i, true
			}
		}
		for i, g := range groupAST {
			if sameExpr(g, n, in.scope) {
				return i, true
			}
		}
		return 0, false
	}
	for _, f := range fields {
		if err := b.checkGrouped(f.expr, groupAST, in.scope); err != nil {
			return rel{}, err
		}
	}
	out := rel{node: aggNode, scope: aggCols}
	if sel.Having != nil {
		if err := b.checkGrouped(sel.Having.Expr, groupAST, in.scope); err != nil {
			return rel{}, err
		}
		h, err := b.bindCondition("HAVING", sel.Having.Expr, &expr.Scope{Zone: b.p.zone(), Columns: aggCols, Replace: replace})
		if err != nil {
			return rel{}, err
		}
		out.node = newCalc(out.node, h, nil, nil)
	}
	if w := findWindowFunc(fields); w != nil {
		return rel{}, b.errf(w, "window functions cannot be combined with GROUP BY in one SELECT; use a subquery")
	}
	return b.selectList(out, sel, fields, replace)
}

func hasColumn(cols []expr.Column, name string) bool {
	for _, c := range cols {
		if strings.EqualFold(c.Name, name) {
			return true
		}
	}
	return false
}

func exprName(e expr.Expr, i int) string {
	if _, ok := expr.ColumnIndex(e); ok {
		return e.String()
	}
	return "$f" + itoa(i)
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// sameExpr reports whether two AST expressions are the same grouping
// expression: the same column, or the same text.
func sameExpr(a, b ast.ExprNode, scope []expr.Column) bool {
	ca, ok1 := unparen(a).(*ast.ColumnNameExpr)
	cb, ok2 := unparen(b).(*ast.ColumnNameExpr)
	if ok1 && ok2 {
		ia, oka := resolveColumn(ca, scope)
		ib, okb := resolveColumn(cb, scope)
		if !oka && !okb && ca.Name.Table.O != "" {
			// Field accesses (r.f, t.r.f) are no columns: the same text.
			return strings.EqualFold(exprText(a), exprText(b))
		}
		return oka && okb && ia == ib
	}
	if ok1 != ok2 {
		return false
	}
	return exprText(a) == exprText(b)
}

func resolveColumn(c *ast.ColumnNameExpr, scope []expr.Column) (int, bool) {
	found := -1
	for i, col := range scope {
		if strings.EqualFold(col.Name, c.Name.Name.O) && (c.Name.Table.O == "" || strings.EqualFold(col.Table, c.Name.Table.O)) {
			if found >= 0 {
				return 0, false
			}
			found = i
		}
	}
	return found, found >= 0
}

// checkGrouped rejects a column used outside aggregates that is not a
// grouping expression, as SQL requires.
func (b *builder) checkGrouped(e ast.ExprNode, groups []ast.ExprNode, scope []expr.Column) error {
	var bad ast.ExprNode
	var visit func(n ast.ExprNode) bool
	visit = func(n ast.ExprNode) bool { // returns true when n is covered
		for _, g := range groups {
			if sameExpr(g, n, scope) {
				return true
			}
		}
		switch x := n.(type) {
		case *ast.AggregateFuncExpr:
			return true
		case *ast.ColumnNameExpr:
			if _, ok := resolveColumn(x, scope); ok && bad == nil {
				bad = x
			}
			return false
		}
		return false
	}
	// Walk the tree top-down, stopping at covered subtrees.
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		if bad != nil || n == nil {
			return
		}
		if en, ok := n.(ast.ExprNode); ok && visit(en) {
			return
		}
		if _, ok := n.(*ast.ColumnNameExpr); ok {
			return
		}
		n.Accept(&childVisitor{root: n, fn: walk})
	}
	walk(e)
	if bad != nil {
		c := bad.(*ast.ColumnNameExpr)
		return b.errf(c, "column '%s' must appear in GROUP BY or be used in an aggregate function", c.Name.Name.O)
	}
	return nil
}

// childVisitor calls fn on each direct child of root.
type childVisitor struct {
	root ast.Node
	fn   func(ast.Node)
}

func (v *childVisitor) Enter(n ast.Node) (ast.Node, bool) {
	if n == v.root {
		return n, false
	}
	v.fn(n)
	return n, true
}

func (v *childVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// aggCall binds one aggregate function call: the call, its argument
// (bound over scope) and its EXPLAIN text. A call whose FILTER needs a
// column of its own (filteredAggCall) is refused; GROUP BY plans those
// through filteredAggCall.
func (b *builder) aggCall(c *ast.AggregateFuncExpr, scope *expr.Scope) (operators.AggCall, expr.Expr, string, error) {
	if _, _, ok := parser.AggFilter(c); ok {
		call, arg, filter, text, err := b.filteredAggCall(c, scope) // build_agg_filter.go
		if err == nil && filter != nil {
			err = b.errf(c, "FILTER is not supported on %s here", text)
		}
		return call, arg, text, err
	}
	name := strings.ToUpper(c.F)
	var call operators.AggCall
	switch name {
	case "COUNT":
		call.Kind = operators.AggCount
	case "SUM":
		call.Kind = operators.AggSum
	case "AVG":
		call.Kind = operators.AggAvg
	case "MIN":
		call.Kind = operators.AggMin
	case "MAX":
		call.Kind = operators.AggMax
	default:
		return b.flinkAggCall(c, name, scope) // build_agg_funcs.go
	}
	if len(c.Args) != 1 {
		return call, nil, "", b.errf(c, "%s takes one argument", name)
	}
	call.Distinct = c.Distinct
	if name == "COUNT" && !c.Distinct {
		if v, ok := c.Args[0].(*test_driver.ValueExpr); ok && v.GetValue() != nil {
			call.Kind = operators.AggCountStar
			call.ResultType = types.TypeBigInt.WithNotNull(true)
			return call, nil, "COUNT(*)", nil
		}
	}
	arg, text, err := b.aggArg(c, name, scope)
	if err != nil {
		return call, nil, "", err
	}
	at := arg.Type()
	call.ArgType = at
	text += ")"
	switch call.Kind {
	case operators.AggCount:
		call.ResultType = types.TypeBigInt.WithNotNull(true)
	case operators.AggSum, operators.AggAvg:
		switch at.ID {
		case types.Int, types.BigInt, types.Double:
			call.ResultType = at.Nullable()
		case types.Decimal:
			s := at.Scale
			if call.Kind == operators.AggAvg {
				s = max(s, 6)
			}
			call.ResultType = types.DecimalType(types.MaxDecimalPrecision, s)
		case types.Null:
			return call, nil, "", b.errf(c, "%s of NULL: CAST the argument to a numeric type", name)
		default:
			return call, nil, "", b.errf(c, "%s expects a numeric argument, got %s", name, at)
		}
	case operators.AggMin, operators.AggMax:
		if at.ID == types.Null || at.ID == types.Interval {
			return call, nil, "", b.errf(c, "%s of %s is not supported", name, at)
		}
		call.ResultType = at.Nullable()
	}
	return call, arg, text, nil
}

// noNestedAgg refuses an aggregate call with an aggregate in one of its
// arguments.
func (b *builder) noNestedAgg(c *ast.AggregateFuncExpr) error {
	for _, a := range c.Args {
		if len(find(a).aggs) > 0 {
			return b.errf(c, "aggregate functions cannot be nested")
		}
	}
	return nil
}

// aggArg binds the first argument of the aggregate call c (of function
// name) over scope, after noNestedAgg, and begins the call's EXPLAIN
// text: "NAME(", DISTINCT, the argument; the caller adds the rest and
// the closing parenthesis.
func (b *builder) aggArg(c *ast.AggregateFuncExpr, name string, scope *expr.Scope) (expr.Expr, string, error) {
	if err := b.noNestedAgg(c); err != nil {
		return nil, "", err
	}
	arg, err := expr.Bind(c.Args[0], scope, b.stmt.ErrorAtNode)
	if err != nil {
		return nil, "", err
	}
	text := name + "("
	if c.Distinct {
		text += "DISTINCT "
	}
	return arg, text + arg.String(), nil
}

// buildRank plans ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...). The
// rank range is left open; the enclosing query's WHERE on the rank
// number closes it (rankBound, buildWhere).
func (b *builder) buildRank(in rel, w *ast.WindowFuncExpr) (*RankNode, []expr.Column, error) {
	if !strings.EqualFold(w.Name, "row_number") {
		return nil, nil, b.errf(w, "window function %s is not supported yet; ROW_NUMBER is", strings.ToUpper(w.Name))
	}
	if w.Spec.Frame != nil {
		return nil, nil, b.errf(w, "ROW_NUMBER does not take a window frame")
	}
	if w.Spec.Name.O != "" || w.Spec.Ref.O != "" {
		return nil, nil, b.errf(w, "named windows are not supported; write OVER (PARTITION BY ... ORDER BY ...)")
	}
	scope := &expr.Scope{Zone: b.p.zone(), Columns: in.scope}
	// Keys that are not plain columns are computed by a Calc below.
	var keys []expr.Expr
	bindKey := func(e ast.ExprNode) (int, error) {
		be, err := expr.Bind(e, scope, b.stmt.ErrorAtNode)
		if err != nil {
			return 0, err
		}
		keys = append(keys, be)
		return len(keys) - 1, nil
	}
	rk := &RankNode{Limit: -1, OutputRank: true}
	var part []int
	if w.Spec.PartitionBy != nil {
		for _, it := range w.Spec.PartitionBy.Items {
			k, err := bindKey(it.Expr)
			if err != nil {
				return nil, nil, err
			}
			part = append(part, k)
		}
	}
	if w.Spec.OrderBy == nil {
		return nil, nil, b.errf(w, "ROW_NUMBER() needs ORDER BY in its OVER clause")
	}
	var ord []operators.SortKey
	for _, it := range w.Spec.OrderBy.Items {
		k, err := bindKey(it.Expr)
		if err != nil {
			return nil, nil, err
		}
		ord = append(ord, operators.SortKey{Col: k, Desc: it.Desc})
	}
	input, idx := withKeyColumns(in.node, keys)
	for _, k := range part {
		rk.PartitionKeys = append(rk.PartitionKeys, idx[k])
	}
	for _, o := range ord {
		rk.OrderBy = append(rk.OrderBy, operators.SortKey{Col: idx[o.Col], Desc: o.Desc})
	}
	outScope := append([]expr.Column(nil), in.scope...)
	outScope = append(outScope, input.Columns()[len(in.scope):]...)
	outScope = append(outScope, expr.Column{Name: "rn", Type: types.TypeBigInt.WithNotNull(true)})
	rk.nodeBase = nodeBase{cols: unqualified(outScope), inputs: []Node{input}}
	b.ranks = append(b.ranks, &pendingRank{node: rk, at: w, stmt: b.stmt})
	return rk, outScope, nil
}

// rankBound recognises a WHERE conjunct on a pending rank number (rn <=
// N, rn < N, rn = N, rn > N, rn >= N, N >= rn, rn BETWEEN a AND b) and
// returns the rank with the range lo..hi the conjunct allows (hi < 0: no
// upper bound). buildWhere intersects the ranges of every such conjunct
// (rn > 1 AND rn <= 3 is 2..3) and closes the rank with the result.
func (b *builder) rankBound(in rel, c ast.ExprNode) (_ *RankNode, lo, hi int64, _ bool, _ error) {
	rk, rnCol := pendingRankOf(in.node)
	if rk == nil {
		return nil, 0, 0, false, nil
	}
	isRn := func(e ast.ExprNode) bool {
		cn, ok := unparen(e).(*ast.ColumnNameExpr)
		if !ok {
			return false
		}
		idx, ok := resolveColumn(cn, in.scope)
		return ok && idx == rnCol
	}
	lo, hi = 1, -1
	switch x := unparen(c).(type) {
	case *ast.BinaryOperationExpr:
		l, r, op := x.L, x.R, x.Op
		if !isRn(l) && isRn(r) {
			l, r = r, l
			switch op {
			case opcode.LE:
				op = opcode.GE
			case opcode.LT:
				op = opcode.GT
			case opcode.GE:
				op = opcode.LE
			case opcode.GT:
				op = opcode.LT
			}
		}
		if !isRn(l) {
			return nil, 0, 0, false, nil
		}
		n, ok := intLiteral(r)
		if !ok {
			return nil, 0, 0, false, b.errf(c, "the rank number must be compared with an integer literal")
		}
		switch op {
		case opcode.LE:
			hi = n
		case opcode.LT:
			hi = n - 1
		case opcode.EQ:
			lo, hi = n, n
		case opcode.GT:
			lo = n + 1
		case opcode.GE:
			lo = n
		default:
			return nil, 0, 0, false, b.errf(c, "unsupported condition on the rank number; use rn <= N, rn < N, rn = N, rn > N or rn >= N")
		}
	case *ast.BetweenExpr:
		if !isRn(x.Expr) || x.Not {
			return nil, 0, 0, false, nil
		}
		a, ok1 := intLiteral(x.Left)
		z, ok2 := intLiteral(x.Right)
		if !ok1 || !ok2 {
			return nil, 0, 0, false, b.errf(c, "the rank number must be compared with integer literals")
		}
		lo, hi = a, z
	default:
		return nil, 0, 0, false, nil
	}
	return rk, max(lo, 1), hi, true, nil
}

// pendingRankOf finds a rank with an open range under n, looking through
// projections, and returns it with the column of n that carries its rank
// number.
func pendingRankOf(n Node) (*RankNode, int) {
	switch x := n.(type) {
	case *RankNode:
		if x.Limit < 0 {
			return x, len(x.cols) - 1
		}
	case *CalcNode:
		if x.Filter != nil {
			return nil, 0
		}
		rk, col := pendingRankOf(x.inputs[0])
		if rk == nil {
			return nil, 0
		}
		for i, p := range x.Proj {
			if idx, ok := expr.ColumnIndex(p); ok && idx == col {
				return rk, i
			}
		}
	}
	return nil, 0
}
