package planner

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

func (b *builder) buildFrom(n ast.ResultSetNode) (rel, error) {
	switch n := n.(type) {
	case *ast.Join:
		if n.Right == nil {
			return b.buildFrom(n.Left)
		}
		return b.buildJoin(n)
	case *ast.TableSource:
		return b.buildTableSource(n)
	}
	return rel{}, b.errf(n, "unsupported FROM item")
}

func (b *builder) buildTableSource(ts *ast.TableSource) (rel, error) {
	ca, alias := b.columnAlias(ts) // AS T(a, b): build_values.go
	var r rel
	var err error
	switch src := ts.Source.(type) {
	case *ast.TableName:
		r, err = b.buildTableName(src, alias)
	case *ast.SelectStmt, *ast.SetOprStmt:
		// Unlike MySQL, and like Flink, a derived table needs no alias.
		r, err = b.buildQuery(src.(ast.ResultSetNode))
		r.scope = requalify(r.scope, alias)
	case *ast.Join:
		r, err = b.buildFrom(src)
	default:
		return rel{}, b.errf(ts, "unsupported FROM item")
	}
	if err == nil && ca != nil {
		return b.renameColumns(r, ca)
	}
	return r, err
}

func requalify(cols []expr.Column, q string) []expr.Column {
	out := make([]expr.Column, len(cols))
	for i, c := range cols {
		out[i] = expr.Column{Name: c.Name, Table: q, Type: c.Type}
	}
	return out
}

func (b *builder) buildTableName(tn *ast.TableName, alias string) (rel, error) {
	name := tn.Name.O
	if parser.IsPlaceholderTable(name) {
		if tvf := b.stmt.WindowTVFs[name]; tvf != nil {
			return b.buildWindowTVF(tvf, tn, alias) // build_window.go
		}
		return rel{}, b.errf(tn, "window table functions are not supported yet")
	}
	if tn.AsOf != nil {
		return rel{}, b.stmt.ErrorAtIdent(name, tn, "temporal joins (FOR SYSTEM_TIME AS OF) are only supported as the right side of a join")
	}
	return b.buildPath(b.path(tn), len(b.stmt.TablePath(tn)) > 1, tn, alias)
}

// buildPath reads the CTE (when the name is not qualified), view or
// table at path; at is where the name is written.
func (b *builder) buildPath(path ObjectPath, qualified bool, tn *ast.TableName, alias string) (rel, error) {
	name := path.Name
	q := alias
	if q == "" {
		q = name
	}
	hinted := tn != nil && b.stmt.TableHints(tn) != nil
	if c, ok := b.ctes[norm(name)]; ok && !qualified {
		if hinted {
			return rel{}, b.stmt.ErrorAtIdent(name, tn, "'%s' is a WITH query: the OPTIONS hint applies to tables only", name)
		}
		delete(b.ctes, norm(name)) // a CTE cannot refer to itself
		r, err := b.buildQuery(c.query)
		b.ctes[norm(name)] = c
		if err != nil {
			return rel{}, err
		}
		if c.cols != nil {
			if len(c.cols) != len(r.scope) {
				return rel{}, b.stmt.ErrorAtIdent(name, tn, "WITH %s names %d columns but its query has %d", name, len(c.cols), len(r.scope))
			}
			for i := range r.scope {
				r.scope[i].Name = c.cols[i]
			}
		}
		return rel{node: r.node, scope: requalify(r.scope, q)}, nil
	}
	if v, ok := b.p.Cat.View(path); ok {
		if hinted {
			return rel{}, b.stmt.ErrorAtIdent(name, tn, "view '%s' cannot take new options: the OPTIONS hint applies to tables only", path)
		}
		vb := b.p.newBuilder(v.stmt)
		vb.home = v.Home
		r, err := vb.buildQuery(v.Query)
		if err != nil {
			return rel{}, err
		}
		b.ranks = append(b.ranks, vb.ranks...)
		cols := make([]expr.Column, len(v.Columns))
		for i, c := range v.Columns {
			cols[i] = expr.Column{Name: c.Name, Table: q, Type: r.scope[i].Type}
		}
		return rel{node: r.node, scope: cols}, nil
	}
	t, ok := b.p.Cat.Table(path)
	if !ok {
		if err := b.p.Cat.CheckDatabase(path); err != nil {
			return rel{}, b.stmt.ErrorAtIdent(name, tn, "Table '%s' doesn't exist: %v", path, err)
		}
		return rel{}, b.stmt.ErrorAtIdent(name, tn, "Table '%s' doesn't exist", path)
	}
	if tn != nil {
		var err error
		if t, err = b.p.withHints(b.stmt, tn, t); err != nil { // hints.go
			return rel{}, err
		}
	}
	return b.scanTable(t, tn, q)
}

// scanTable reads a table: the scan, then ChangelogNormalize for an
// upsert source, then the watermark assigner.
func (b *builder) scanTable(t *TableEntry, at ast.Node, qual string) (rel, error) {
	sc, err := t.Scan(b.p.Env)
	if err != nil {
		return rel{}, b.errf(at, "%v", err)
	}
	var node Node = newScan(t, sc.ChangelogMode())
	if m := sc.ChangelogMode(); m.HasUpdates() && !m.Contains(dyntable.UpdateBefore) {
		if len(t.Conn.PrimaryKey) == 0 {
			return rel{}, b.errf(at, "table '%s' produces an upsert stream and needs a PRIMARY KEY", t.Name)
		}
		node = &NormalizeNode{nodeBase: nodeBase{cols: node.Columns(), inputs: []Node{node}}, Keys: t.Conn.PrimaryKey}
	}
	// Computed and metadata columns: the schema from the read columns.
	if node, err = t.schemaProjection(node, b.p.zone()); err != nil { // computed.go
		return rel{}, err
	}
	cols := t.schema(t.Conn, "")
	if t.Watermark != nil {
		e, err := expr.Bind(t.Watermark.Expr, &expr.Scope{Zone: b.p.zone(), Columns: t.schema(t.Conn, t.Name)}, t.Watermark.stmt.ErrorAtNode)
		if err != nil {
			return rel{}, err
		}
		node = &WatermarkNode{nodeBase: nodeBase{cols: cols, inputs: []Node{node}}, Rowtime: t.Watermark.Column, Expr: e}
	}
	return rel{node: node, scope: t.schema(t.Conn, qual)}, nil
}

// side says which join inputs an expression references.
type side uint8

const (
	sideNone  side = 0
	sideLeft  side = 1
	sideRight side = 2
	sideBoth  side = 3
)

func sideOf(e expr.Expr, nLeft int) side {
	var s side
	expr.Walk(e, func(x expr.Expr) bool {
		if idx, ok := expr.ColumnIndex(x); ok {
			if idx < nLeft {
				s |= sideLeft
			} else {
				s |= sideRight
			}
		}
		return true
	})
	return s
}

func (b *builder) buildJoin(j *ast.Join) (rel, error) {
	if r, ok, err := b.buildUnnestJoin(j); ok { // node_unnest.go
		return r, err
	}
	if j.NaturalJoin {
		return rel{}, b.errf(j, "NATURAL JOIN is not supported; write JOIN ... ON")
	}
	if len(j.Using) > 0 {
		return rel{}, b.errf(j, "JOIN ... USING is not supported yet; write JOIN ... ON")
	}
	l, err := b.buildFrom(j.Left)
	if err != nil {
		return rel{}, err
	}
	asOf, reattach := detachAsOf(j.Right) // a temporal join (build_timejoin.go)
	r, err := b.buildFrom(j.Right)
	reattach()
	if err != nil {
		return rel{}, err
	}
	jt := operators.InnerJoin
	switch {
	case parser.IsFullJoin(j):
		jt = operators.FullJoin
	case j.Tp == ast.LeftJoin:
		jt = operators.LeftJoin
	case j.Tp == ast.RightJoin:
		jt = operators.RightJoin
	}
	if j.On == nil {
		return rel{}, b.errf(j, "a join needs an ON condition, or for FROM a, b a WHERE condition, with an equality between the two sides (cross joins are not supported)")
	}
	nl := len(l.scope)
	scope := append(append([]expr.Column(nil), l.scope...), r.scope...)
	// Outer joins make the padded side nullable.
	if jt == operators.LeftJoin || jt == operators.FullJoin {
		for i := nl; i < len(scope); i++ {
			scope[i].Type = scope[i].Type.Nullable()
		}
	}
	if jt == operators.RightJoin || jt == operators.FullJoin {
		for i := 0; i < nl; i++ {
			scope[i].Type = scope[i].Type.Nullable()
		}
	}
	bindScope := append(append([]expr.Column(nil), l.scope...), r.scope...)
	nr := len(r.scope)
	// Time bounds between rowtime attributes make an interval join
	// (build_timejoin.go); they are not residual conditions then.
	var tb *intervalBounds
	if asOf == nil {
		if tb, err = b.intervalJoinBounds(j.On.Expr, l, r); err != nil {
			return rel{}, err
		}
	}
	// Key expressions of each side; plain columns stay columns, anything
	// else (k % 10, a cast to a common type) becomes an extra column that
	// a Calc appends to that side's input.
	var lkeys, rkeys []expr.Expr
	var lFilter, rFilter, residual expr.Expr
	for _, c := range splitAnd(j.On.Expr, nil) {
		if tb.consumes(c) {
			continue
		}
		e, err := b.bindCondition("join", c, &expr.Scope{Zone: b.p.zone(), Columns: bindScope})
		if err != nil {
			return rel{}, err
		}
		if le, re, ok, err := b.equiKeys(c, bindScope, nl); err != nil {
			return rel{}, err
		} else if ok {
			lkeys = append(lkeys, le)
			rkeys = append(rkeys, expr.RemapColumns(re, shiftMap(nl, nr)))
			continue
		}
		s := sideOf(e, nl)
		switch {
		case s == sideLeft && (jt == operators.InnerJoin || jt == operators.RightJoin):
			// The left side does not need to be preserved: filter it early.
			lFilter = andExpr(lFilter, e)
		case s == sideRight && (jt == operators.InnerJoin || jt == operators.LeftJoin) && asOf == nil:
			// (A filter below a versioned table would change which
			// version is valid when: it stays a join condition.)
			rFilter = andExpr(rFilter, expr.RemapColumns(e, shiftMap(nl, nr)))
		default:
			residual = andExpr(residual, e)
		}
	}
	if len(lkeys) == 0 && tb == nil { // an interval join may go without (one subtask)
		return rel{}, b.errf(j.On.Expr, "a join needs at least one equality between a column of each side (cross and theta joins are not supported)")
	}
	ln, rn := l.node, r.node
	if lFilter != nil {
		ln = newCalc(ln, lFilter, nil, nil)
	}
	if rFilter != nil {
		rn = newCalc(rn, rFilter, nil, nil)
	}
	ln, lk := withKeyColumns(ln, lkeys)
	rn, rk := withKeyColumns(rn, rkeys)
	nle, nre := len(ln.Columns())-nl, len(rn.Columns())-nr
	if residual != nil && nle > 0 {
		m := map[int]int{}
		for i := 0; i < nr; i++ {
			m[nl+i] = nl + nle + i
		}
		residual = expr.RemapColumns(residual, m)
	}
	cols := append(append(unqualified(scope[:nl]), ln.Columns()[nl:]...), unqualified(scope[nl:])...)
	cols = append(cols, rn.Columns()[nr:]...)
	var jn Node = &JoinNode{nodeBase: nodeBase{cols: cols, inputs: []Node{ln, rn}},
		Type: jt, equiJoin: equiJoin{LeftKeys: lk, RightKeys: rk, Cond: residual}}
	// Interval, temporal and window joins: build_timejoin.go.
	if jn, err = b.timeJoin(jn.(*JoinNode), tb, asOf, l); err != nil {
		return rel{}, err
	}
	if nle == 0 && nre == 0 {
		return rel{node: jn, scope: scope}, nil
	}
	// Drop the extra key columns again.
	var proj []expr.Expr
	for i := 0; i < nl; i++ {
		proj = append(proj, expr.NewColumnRef(i, scope[i].Name, scope[i].Type))
	}
	for i := 0; i < nr; i++ {
		proj = append(proj, expr.NewColumnRef(nl+nle+i, scope[nl+i].Name, scope[nl+i].Type))
	}
	return rel{node: newCalc(jn, nil, proj, scope), scope: scope}, nil
}

// withKeyColumns returns n extended by the key expressions that are not
// plain columns, and the key column indexes.
func withKeyColumns(n Node, keys []expr.Expr) (Node, []int) {
	cols := n.Columns()
	var proj []expr.Expr
	var outCols []expr.Column
	for i, c := range cols {
		proj = append(proj, expr.NewColumnRef(i, c.Name, c.Type))
		outCols = append(outCols, c)
	}
	idx := make([]int, len(keys))
	for i, k := range keys {
		if c, ok := expr.ColumnIndex(k); ok {
			idx[i] = c
			continue
		}
		idx[i] = len(proj)
		proj = append(proj, k)
		outCols = append(outCols, expr.Column{Name: "$k" + itoa(i), Type: k.Type()})
	}
	if len(proj) == len(cols) {
		return n, idx
	}
	return newCalc(n, nil, proj, outCols), idx
}

// equiKeys recognises `l = r` where each side references columns of one
// join input only, and returns the two key expressions, left first, cast
// to a common type when their types differ.
func (b *builder) equiKeys(c ast.ExprNode, scope []expr.Column, nl int) (expr.Expr, expr.Expr, bool, error) {
	bo, ok := unparen(c).(*ast.BinaryOperationExpr)
	if !ok || bo.Op != opcode.EQ {
		return nil, nil, false, nil
	}
	le, err := expr.Bind(bo.L, &expr.Scope{Zone: b.p.zone(), Columns: scope}, b.stmt.ErrorAtNode)
	if err != nil {
		return nil, nil, false, err
	}
	re, err := expr.Bind(bo.R, &expr.Scope{Zone: b.p.zone(), Columns: scope}, b.stmt.ErrorAtNode)
	if err != nil {
		return nil, nil, false, err
	}
	ls, rs := sideOf(le, nl), sideOf(re, nl)
	switch {
	case ls == sideLeft && rs == sideRight:
	case ls == sideRight && rs == sideLeft:
		le, re = re, le
	default:
		return nil, nil, false, nil
	}
	if !expr.IsDeterministic(le) || !expr.IsDeterministic(re) {
		return nil, nil, false, nil
	}
	if keyKind(le.Type()) != keyKind(re.Type()) || le.Type().ID == types.Decimal && le.Type().Scale != re.Type().Scale {
		ct, ok := expr.CommonType(le.Type(), re.Type())
		if !ok {
			return nil, nil, false, b.errf(c, "join keys of types %s and %s cannot be compared", le.Type(), re.Type())
		}
		if le, err = expr.ImplicitCast(le, ct); err != nil {
			return nil, nil, false, b.errf(c, "%v", err)
		}
		if re, err = expr.ImplicitCast(re, ct); err != nil {
			return nil, nil, false, b.errf(c, "%v", err)
		}
	}
	return le, re, true, nil
}

// shiftMap maps right-side column indexes of the joined row to indexes
// of the right input.
func shiftMap(nl, nr int) map[int]int {
	m := map[int]int{}
	for i := 0; i < nr; i++ {
		m[nl+i] = i
	}
	return m
}

// keyKind groups types whose values encode alike as join keys.
func keyKind(t types.Type) types.TypeID {
	switch t.ID {
	case types.Int, types.BigInt:
		return types.BigInt
	case types.Decimal:
		return types.Decimal // same scale is ensured by the value encoding's text
	}
	return t.ID
}

func unparen(e ast.ExprNode) ast.ExprNode {
	for {
		p, ok := e.(*ast.ParenthesesExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}
