package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/window"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// Planner plans statements of one session.
type Planner struct {
	Cat  *Catalog
	Env  *connectors.Env
	Conf *config.Config
}

// rel is a relation under construction: a plan node and the scope its
// columns are visible under (names with their table qualifiers).
type rel struct {
	node  Node
	scope []expr.Column
}

// builder builds the plan of one statement.
type builder struct {
	p    *Planner
	stmt *parser.Statement
	ctes map[string]*cte
	// ranks are the ROW_NUMBER ranks created, checked in finish.
	ranks []*pendingRank
	depth int
	// home is the catalog and database of unqualified table names: the
	// view's (ViewEntry.Home) while a view's query is built, else zero,
	// the session's current ones.
	home ObjectPath
}

type cte struct {
	query ast.ResultSetNode
	cols  []string
}

type pendingRank struct {
	node *RankNode
	at   ast.Node
	stmt *parser.Statement
}

// zone is the session time zone expressions are bound in
// (table.local-time-zone); UTC for a planner without a session.
func (p *Planner) zone() *time.Location {
	if p == nil || p.Conf == nil {
		return time.UTC
	}
	return p.Conf.Location()
}

func (p *Planner) newBuilder(stmt *parser.Statement) *builder {
	return &builder{p: p, stmt: stmt, ctes: map[string]*cte{}}
}

// path is the catalog path of a table name of the statement.
func (b *builder) path(tn *ast.TableName) ObjectPath {
	p, _ := PathOf(b.stmt.TablePath(tn))
	return b.home.qualify(p)
}

func (b *builder) errf(n ast.Node, format string, args ...any) error {
	return b.stmt.ErrorAtNode(n, format, args...)
}

// bindCondition binds the condition c over scope and refuses it unless
// it is BOOLEAN (or NULL); what names the clause in the error ("WHERE",
// "HAVING", "join", "FILTER").
func (b *builder) bindCondition(what string, c ast.ExprNode, scope *expr.Scope) (expr.Expr, error) {
	e, err := expr.Bind(c, scope, b.stmt.ErrorAtNode)
	if err != nil {
		return nil, err
	}
	if e.Type().ID != types.Boolean && e.Type().ID != types.Null {
		return nil, b.errf(c, "%s condition must be BOOLEAN, not %s", what, e.Type())
	}
	return e, nil
}

// buildStatement builds the query of stmt and checks the complete plan.
func (p *Planner) buildStatement(stmt *parser.Statement, q ast.ResultSetNode) (rel, error) {
	b := p.newBuilder(stmt)
	r, err := b.buildQuery(q)
	if err != nil {
		return rel{}, err
	}
	return r, b.finish(r.node)
}

// finish checks what can only be checked once the plan is complete.
func (b *builder) finish(root Node) error {
	for _, r := range b.ranks {
		if r.node.Limit < 0 {
			return r.stmt.ErrorAtNode(r.at, "ROW_NUMBER() must be filtered in the enclosing query by rn <= N (Top-N) or rn = 1 (deduplication)")
		}
	}
	return unaggregatedSession(root)
}

// unaggregatedSession rejects a SESSION window function that no window
// aggregation consumed: sessions are only known when they close, so the
// function cannot emit rows on its own.
func unaggregatedSession(n Node) error {
	if w, ok := n.(*WindowTVFNode); ok && w.Window.Kind == window.WindowSession && !w.Fused {
		return w.errAt("SESSION windows must be aggregated with GROUP BY window_start, window_end")
	}
	for _, in := range n.Inputs() {
		if err := unaggregatedSession(in); err != nil {
			return err
		}
	}
	return nil
}

// buildQuery builds a SELECT, a set operation, or a parenthesized query.
func (b *builder) buildQuery(n ast.ResultSetNode) (rel, error) {
	b.depth++
	defer func() { b.depth-- }()
	if b.depth > 64 {
		return rel{}, b.errf(n, "query nested too deeply")
	}
	switch n := n.(type) {
	case *ast.SelectStmt:
		return b.buildSelect(n)
	case *ast.SetOprStmt:
		return b.buildSetOpr(n)
	case *ast.SubqueryExpr:
		return b.buildQuery(n.Query)
	}
	return rel{}, b.errf(n, "unsupported query form %T", n)
}

func (b *builder) withCTEs(w *ast.WithClause) error {
	if w == nil {
		return nil
	}
	if w.IsRecursive {
		return b.errf(w, "WITH RECURSIVE is not supported")
	}
	for _, c := range w.CTEs {
		var cols []string
		for _, n := range c.ColNameList {
			cols = append(cols, n.O)
		}
		b.ctes[norm(c.Name.O)] = &cte{query: c.Query.Query, cols: cols}
	}
	return nil
}

func (b *builder) buildSelect(sel *ast.SelectStmt) (rel, error) {
	if err := b.withCTEs(sel.With); err != nil {
		return rel{}, err
	}
	if sel.Kind == ast.SelectStmtKindValues {
		return b.buildValuesQuery(sel) // build_values.go
	}
	if sel.Kind == ast.SelectStmtKindTable {
		return rel{}, b.errf(sel, "TABLE as a query is not supported; use SELECT * FROM")
	}
	if sel.LockInfo != nil && sel.LockInfo.LockType != ast.SelectLockNone {
		return rel{}, b.errf(sel, "SELECT ... FOR UPDATE is not supported")
	}
	if sel.SelectIntoOpt != nil {
		return rel{}, b.errf(sel, "SELECT ... INTO is not supported")
	}
	var in rel
	var err error
	where := sel.Where
	if sel.From == nil {
		in = rel{node: &ValuesNode{Rows: []types.Row{{}}}}
	} else {
		var from ast.ResultSetNode = sel.From.TableRefs
		if from, where, err = b.commaJoins(from, where); err != nil { // build_commajoin.go
			return rel{}, err
		}
		if in, err = b.buildFrom(from); err != nil {
			return rel{}, err
		}
	}
	if where != nil {
		if in, err = b.buildWhere(in, where); err != nil {
			return rel{}, err
		}
	}
	fields, err := b.expandFields(in, sel.Fields.Fields)
	if err != nil {
		return rel{}, err
	}
	if fields, err = b.resolveNamedWindows(sel, fields); err != nil { // build_named_window.go
		return rel{}, err
	}
	// Aggregation.
	if sel.GroupBy != nil || hasAggregate(sel) {
		return b.buildAggregateSelect(in, sel, fields)
	}
	if sel.Having != nil {
		return rel{}, b.errf(sel.Having, "HAVING without GROUP BY or aggregate is not supported")
	}
	// Window functions (ROW_NUMBER).
	var rk *RankNode
	var rkCol int
	replace := func(n ast.ExprNode) (int, bool) { return 0, false }
	wf := findWindowFunc(fields)
	if wf != nil && isOverAggregate(wf) {
		// Aggregates OVER a window (build_over.go).
		if in, replace, err = b.buildOver(in, fields); err != nil {
			return rel{}, err
		}
		wf = nil
	}
	if wf != nil {
		var scope []expr.Column
		if rk, scope, err = b.buildRank(in, wf); err != nil {
			return rel{}, err
		}
		rkCol = len(scope) - 1
		in = rel{node: rk, scope: scope}
		replace = func(n ast.ExprNode) (int, bool) {
			if n == ast.ExprNode(wf) {
				return rkCol, true
			}
			return 0, false
		}
	}
	return b.selectList(in, sel, fields, replace)
}

// selectList plans a SELECT from its select list on: the projection,
// DISTINCT, then ORDER BY ... LIMIT.
func (b *builder) selectList(in rel, sel *ast.SelectStmt, fields []field, replace func(ast.ExprNode) (int, bool)) (rel, error) {
	out, err := b.project(in, fields, replace)
	if err != nil {
		return rel{}, err
	}
	if sel.Distinct {
		if out, err = b.distinct(out); err != nil {
			return rel{}, err
		}
	}
	return b.orderLimit(out, sel.OrderBy, sel.Limit)
}

// field is one SELECT item after * expansion.
type field struct {
	expr    ast.ExprNode
	name    string
	aliased bool
	// col is set for fields expanded from *: the input column index.
	col int
	// sel is the SELECT item; nil for fields expanded from *.
	sel *ast.SelectField
}

func (b *builder) expandFields(in rel, fs []*ast.SelectField) ([]field, error) {
	var out []field
	for _, f := range fs {
		if f.WildCard != nil {
			q := f.WildCard.Table.O
			found := false
			for i, c := range in.scope {
				if q == "" || strings.EqualFold(c.Table, q) {
					out = append(out, field{name: c.Name, col: i})
					found = true
				}
			}
			if !found && q != "" {
				return nil, b.errf(f, "Unknown table '%s'", q)
			}
			continue
		}
		name := f.AsName.O
		if name == "" {
			name = fieldName(f)
		}
		out = append(out, field{expr: f.Expr, name: name, col: -1, aliased: f.AsName.O != "", sel: f})
	}
	return out, nil
}

// fieldName is the name of an unaliased SELECT item: a column's own
// name, or the item's text as written, as MySQL names it.
func fieldName(f *ast.SelectField) string {
	if c, ok := f.Expr.(*ast.ColumnNameExpr); ok {
		return c.Name.Name.O
	}
	if t := strings.TrimSpace(f.Text()); t != "" {
		return t
	}
	var sb strings.Builder
	_ = restore(f.Expr, &sb)
	return sb.String()
}

// project builds the Calc of a SELECT list.
func (b *builder) project(in rel, fields []field, replace func(ast.ExprNode) (int, bool)) (rel, error) {
	var proj []expr.Expr
	var scope []expr.Column
	identity := len(fields) == len(in.scope)
	for i, f := range fields {
		var e expr.Expr
		if f.expr == nil {
			c := in.scope[f.col]
			e = expr.NewColumnRef(f.col, c.Name, c.Type)
		} else {
			var err error
			e, err = expr.Bind(f.expr, &expr.Scope{Zone: b.p.zone(), Columns: in.scope, Replace: replace}, b.stmt.ErrorAtNode)
			if err != nil {
				return rel{}, err
			}
		}
		if _, isCol := f.expr.(*ast.ColumnNameExpr); f.expr != nil && !isCol && !hasAlias(f) {
			// The item's text may be the pre-lexer's rewrite (__cast(...),
			// x <=> y IS FALSE): name the column by the text the user
			// wrote, as every other unaliased item is named.
			f.name = b.originalFieldText(f, e)
		}
		if idx, ok := expr.ColumnIndex(e); !ok || idx != i || in.scope[idx].Name != f.name {
			identity = false
		}
		proj = append(proj, e)
		scope = append(scope, expr.Column{Name: f.name, Type: e.Type()})
	}
	if identity {
		return rel{node: in.node, scope: unqualified(in.scope)}, nil
	}
	return rel{node: newCalc(in.node, nil, proj, scope), scope: scope}, nil
}

func hasAlias(f field) bool { return f.aliased }

// originalFieldText is the text of an unaliased SELECT item as the user
// wrote it, before the pre-lexer's rewrites, or else the bound
// expression e.
func (b *builder) originalFieldText(f field, e expr.Expr) string {
	if f.sel != nil {
		text := f.sel.Text()
		start := f.sel.Offset + len(text) - len(strings.TrimLeft(text, " \t\r\n"))
		orig := strings.TrimSpace(b.stmt.OriginalText(start, f.sel.Offset+len(strings.TrimRight(text, " \t\r\n"))))
		if orig != "" && !strings.Contains(orig, "__") {
			return orig
		}
	}
	return e.String()
}

func unqualified(cols []expr.Column) []expr.Column {
	out := make([]expr.Column, len(cols))
	for i, c := range cols {
		out[i] = expr.Column{Name: c.Name, Type: c.Type}
	}
	return out
}

func (b *builder) buildWhere(in rel, where ast.ExprNode) (rel, error) {
	conj := splitAnd(where, nil)
	var rest []ast.ExprNode
	// Conjuncts on a pending rank number close its range (build_agg.go).
	var rank *RankNode
	var rankAt ast.ExprNode
	lo, hi := int64(1), int64(-1)
	for _, c := range conj {
		rk, l, h, folded, err := b.rankBound(in, c)
		if err != nil {
			return rel{}, err
		}
		if !folded {
			rest = append(rest, c)
			continue
		}
		rank, rankAt = rk, c
		lo = max(lo, l)
		if h >= 0 && (hi < 0 || h < hi) {
			hi = h
		}
	}
	if rank != nil {
		if hi < 0 {
			return rel{}, b.errf(rankAt, "the rank number needs an upper bound: add rn <= N")
		}
		if hi < lo {
			return rel{}, b.errf(rankAt, "the rank range %d..%d is empty", lo, hi)
		}
		// Closing the range completes the rank (its mode and key follow
		// from it): the one change made to a node after it is built.
		rank.Offset, rank.Limit = lo-1, hi-lo+1
	}
	var filter expr.Expr
	var subqueries []ast.ExprNode // [NOT] IN / EXISTS: build_subquery.go
	for _, c := range rest {
		if _, _, ok := subqueryConjunct(c); ok {
			subqueries = append(subqueries, c)
			continue
		}
		e, err := b.bindCondition("WHERE", c, &expr.Scope{Zone: b.p.zone(), Columns: in.scope})
		if err != nil {
			return rel{}, err
		}
		if !expr.IsDeterministic(e) && in.node.Mode().HasUpdates() {
			return rel{}, b.errf(c, "a non-deterministic condition over an updating input would retract rows it never emitted")
		}
		if j, ok := pushIntoJoin(in.node, e); ok {
			in.node = j
			continue
		}
		filter = andExpr(filter, e)
	}
	if filter != nil {
		in = rel{node: newCalc(in.node, filter, nil, nil), scope: in.scope}
	}
	for _, c := range subqueries {
		var err error
		if in, err = b.subqueryFilter(in, c); err != nil {
			return rel{}, err
		}
	}
	return in, nil
}

// pushIntoJoin pushes a WHERE conjunct that references one side of a
// regular join below it, where that keeps the join's meaning: into
// either side of an inner join, and into the preserved side of an outer
// join. It returns the join with the filtered input.
func pushIntoJoin(n Node, e expr.Expr) (Node, bool) {
	jn, ok := n.(*JoinNode)
	if !ok {
		return n, false
	}
	l, r := jn.inputs[0], jn.inputs[1]
	nl := len(l.Columns())
	switch s := sideOf(e, nl); {
	case s == sideLeft && (jn.Type == operators.InnerJoin || jn.Type == operators.LeftJoin):
		l = newCalc(l, e, nil, nil)
	case s == sideRight && (jn.Type == operators.InnerJoin || jn.Type == operators.RightJoin):
		r = newCalc(r, expr.RemapColumns(e, shiftMap(nl, len(r.Columns()))), nil, nil)
	default:
		return n, false
	}
	return jn.withInputs([]Node{l, r}), true
}

// splitAnd flattens a conjunction.
func splitAnd(e ast.ExprNode, out []ast.ExprNode) []ast.ExprNode {
	switch x := e.(type) {
	case *ast.BinaryOperationExpr:
		if x.Op == opcode.LogicAnd {
			return splitAnd(x.R, splitAnd(x.L, out))
		}
	case *ast.ParenthesesExpr:
		return splitAnd(x.Expr, out)
	}
	return append(out, e)
}

// andExpr conjoins two bound predicates.
func andExpr(a, b expr.Expr) expr.Expr {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return expr.And(a, b)
}

// intLiteral returns the value of an integer literal AST node, or the
// position of a GROUP BY / ORDER BY position (GROUP BY 1).
func intLiteral(e ast.ExprNode) (int64, bool) {
	if p, ok := e.(*ast.PositionExpr); ok && p.P == nil {
		return int64(p.N), true
	}
	v, ok := e.(*test_driver.ValueExpr)
	if !ok {
		return 0, false
	}
	switch x := v.GetValue().(type) {
	case int64:
		return x, true
	case uint64:
		if x < 1<<62 {
			return int64(x), true
		}
	}
	return 0, false
}

func (b *builder) orderLimit(in rel, ob *ast.OrderByClause, lim *ast.Limit) (rel, error) {
	if ob == nil && lim == nil {
		return in, nil
	}
	if lim == nil {
		return b.temporalSort(in, ob)
	}
	count, ok := intLiteral(lim.Count)
	if !ok || count < 0 {
		return rel{}, b.errf(lim, "LIMIT must be a non-negative integer literal")
	}
	var offset int64
	if lim.Offset != nil {
		if offset, ok = intLiteral(lim.Offset); !ok || offset < 0 {
			return rel{}, b.errf(lim, "OFFSET must be a non-negative integer literal")
		}
	}
	keys, err := b.sortKeys(in, ob)
	if err != nil {
		return rel{}, err
	}
	rk := &RankNode{nodeBase: nodeBase{cols: in.node.Columns(), inputs: []Node{in.node}},
		OrderBy: keys, Offset: offset, Limit: count}
	return rel{node: rk, scope: in.scope}, nil
}

// sortKeys resolves the items of ob (nil: none) to sort keys over the
// output columns.
func (b *builder) sortKeys(in rel, ob *ast.OrderByClause) ([]operators.SortKey, error) {
	if ob == nil {
		return nil, nil
	}
	var keys []operators.SortKey
	for _, it := range ob.Items {
		idx, err := b.sortColumn(in, it.Expr)
		if err != nil {
			return nil, err
		}
		keys = append(keys, operators.SortKey{Col: idx, Desc: it.Desc})
	}
	return keys, nil
}

// sortColumn resolves an ORDER BY item: a column of the output by name,
// alias or 1-based position.
func (b *builder) sortColumn(in rel, e ast.ExprNode) (int, error) {
	if pos, ok := intLiteral(e); ok {
		if pos < 1 || int(pos) > len(in.scope) {
			return 0, b.errf(e, "ORDER BY position %d is not in the select list", pos)
		}
		return int(pos - 1), nil
	}
	be, err := expr.Bind(e, &expr.Scope{Zone: b.p.zone(), Columns: in.scope}, b.stmt.ErrorAtNode)
	if err != nil {
		return 0, err
	}
	idx, ok := expr.ColumnIndex(be)
	if !ok {
		return 0, b.errf(e, "ORDER BY must name a column of the select list")
	}
	return idx, nil
}

// distinct is SELECT DISTINCT: a group aggregation over every column.
func (b *builder) distinct(in rel) (rel, error) {
	keys := make([]int, len(in.scope))
	for i := range keys {
		keys[i] = i
	}
	n, err := b.withMiniBatch(newAgg(in.node, keys, nil, nil, unqualified(in.scope)))
	if err != nil {
		return rel{}, err
	}
	return rel{node: n, scope: in.scope}, nil
}

func restore(n ast.Node, sb *strings.Builder) error {
	return n.Restore(newRestoreCtx(sb))
}

func exprText(n ast.ExprNode) string {
	var sb strings.Builder
	_ = restore(n, &sb)
	return sb.String()
}

func (b *builder) buildSetOpr(n *ast.SetOprStmt) (rel, error) {
	if err := b.withCTEs(n.With); err != nil {
		return rel{}, err
	}
	// Each input with the operator written before it; a parenthesized
	// input is an *ast.SetOprSelectList carrying its operator itself.
	var ins []setInput
	for i, s := range n.SelectList.Selects {
		var in setInput
		var err error
		switch s := s.(type) {
		case *ast.SelectStmt:
			in.op, in.at = s.AfterSetOperator, s
			in.r, err = b.buildSelect(s)
		case *ast.SetOprSelectList:
			in.op, in.at = s.AfterSetOperator, s
			in.r, err = b.buildQuery(&ast.SetOprStmt{SelectList: s, OrderBy: s.OrderBy, Limit: s.Limit})
		default:
			return rel{}, b.errf(n, "unsupported set operation input %T", s)
		}
		if err != nil {
			return rel{}, err
		}
		if i > 0 && in.op == nil {
			return rel{}, b.errf(n, "internal error: set operation input %d has no operator", i+1)
		}
		ins = append(ins, in)
	}
	out, err := b.combineSetInputs(ins) // build_setop.go
	if err != nil {
		return rel{}, err
	}
	return b.orderLimit(out, n.OrderBy, n.Limit)
}

// union joins two relations with UNION ALL, casting both to common types.
func (b *builder) union(l, r rel, at ast.Node) (rel, error) {
	if len(l.scope) != len(r.scope) {
		return rel{}, b.errf(at, "UNION inputs have %d and %d columns", len(l.scope), len(r.scope))
	}
	var lp, rp []expr.Expr
	var cols []expr.Column
	castL, castR := false, false
	for i := range l.scope {
		lt, rt := l.scope[i].Type, r.scope[i].Type
		ct, ok := expr.CommonType(lt, rt)
		if !ok {
			return rel{}, b.errf(at, "UNION column %d ('%s') has types %s and %s, which have no common type", i+1, l.scope[i].Name, lt, rt)
		}
		le, err := expr.ImplicitCast(expr.NewColumnRef(i, l.scope[i].Name, lt), ct)
		if err != nil {
			return rel{}, b.errf(at, "UNION column '%s': %v", l.scope[i].Name, err)
		}
		re, err := expr.ImplicitCast(expr.NewColumnRef(i, r.scope[i].Name, rt), ct)
		if err != nil {
			return rel{}, b.errf(at, "UNION column '%s': %v", l.scope[i].Name, err)
		}
		castL = castL || !lt.Equal(ct)
		castR = castR || !rt.Equal(ct)
		lp, rp = append(lp, le), append(rp, re)
		cols = append(cols, expr.Column{Name: l.scope[i].Name, Type: ct})
	}
	ln, rn := l.node, r.node
	if castL {
		ln = newCalc(ln, nil, lp, cols)
	}
	if castR {
		rn = newCalc(rn, nil, rp, cols)
	}
	u := &UnionNode{nodeBase: nodeBase{cols: cols, inputs: []Node{ln, rn}}}
	// Flatten nested unions, so a UNION ALL of many inputs is one node.
	var ins []Node
	for _, in := range u.inputs {
		if nu, ok := in.(*UnionNode); ok {
			ins = append(ins, nu.inputs...)
		} else {
			ins = append(ins, in)
		}
	}
	u.inputs = ins
	return rel{node: u, scope: cols}, nil
}

func errUnsupported(what string) error { return fmt.Errorf("%s is not supported yet", what) }
