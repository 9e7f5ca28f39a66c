package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/streamsql/streamsql/types"
)

// Names of the internal functions the pre-lexer (package parser) rewrites
// Flink syntax into before TiDB's parser sees it.
const (
	// FuncCast is CAST(e AS T), written __cast(e, 'T') with the type as
	// text for types.ParseType.
	FuncCast = "__cast"
	// FuncTryCast is TRY_CAST(e AS T), written __try_cast(e, 'T').
	FuncTryCast = "__try_cast"
	// FuncInterval is INTERVAL '5' SECOND used as a function argument,
	// written __interval('5', 'SECOND').
	FuncInterval = "__interval"
	// FuncFloorTo is FLOOR(ts TO HOUR), written __floor_to(ts, 'HOUR').
	FuncFloorTo = "__floor_to"
	// FuncCeilTo is CEIL(ts TO HOUR), written __ceil_to(ts, 'HOUR').
	FuncCeilTo = "__ceil_to"
)

type binder struct {
	s    *Scope
	errf ErrorFunc
	loc  *time.Location // the session zone, never nil
	// ltzLocal is set while the direct arguments of a wall-clock
	// function (EXTRACT, HOUR, DATE_FORMAT, ...) are bound: a
	// TIMESTAMP_LTZ argument is then read as its TIMESTAMP in loc, as
	// Flink takes such values apart in the session zone.
	ltzLocal bool
}

func defaultErrf(n ast.Node, format string, args ...any) error {
	return fmt.Errorf(format, args...)
}

// Bind binds a parsed expression against s, type checking it. Errors are
// made by errf positioned at the offending node: the column for unknown or
// ambiguous columns, the operator for operand type errors, the argument
// for function argument type errors, the call for unknown functions and
// wrong argument counts. A nil errf makes unpositioned errors.
func Bind(e ast.ExprNode, s *Scope, errf ErrorFunc) (Expr, error) {
	if s == nil {
		s = &Scope{}
	}
	if errf == nil {
		errf = defaultErrf
	}
	b := &binder{s: s, errf: errf, loc: s.Zone}
	if b.loc == nil {
		b.loc = time.UTC
	}
	return b.bind(e)
}

func (b *binder) bind(n ast.ExprNode) (Expr, error) {
	local := b.ltzLocal
	b.ltzLocal = false
	e, err := b.bind1(n)
	b.ltzLocal = local
	if err != nil || !local || e.Type().ID != types.TimestampLTZ {
		return e, err
	}
	return fold(&castExpr{e: e, to: types.TimestampType(e.Type().Precision).WithNotNull(e.Type().NotNull), loc: b.loc}), nil
}

func (b *binder) bind1(n ast.ExprNode) (Expr, error) {
	if b.s.Replace != nil {
		if idx, ok := b.s.Replace(n); ok {
			if idx < 0 || idx >= len(b.s.Columns) {
				return nil, b.errf(n, "internal error: replacement column %d out of range", idx)
			}
			c := b.s.Columns[idx]
			return &colRef{idx: idx, name: c.Name, typ: c.Type}, nil
		}
	}
	e, err := b.bindNode(n)
	if err != nil {
		return nil, err
	}
	return fold(e), nil
}

func (b *binder) bindAll(ns []ast.ExprNode) ([]Expr, error) {
	out := make([]Expr, len(ns))
	for i, n := range ns {
		e, err := b.bind(n)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func nodeText(n ast.Node) string {
	var sb strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags, &sb)); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return sb.String()
}

func (b *binder) bindNode(n ast.ExprNode) (Expr, error) {
	switch x := n.(type) {
	case *test_driver.ParamMarkerExpr:
		return nil, b.errf(n, "parameter markers are not supported")
	case *test_driver.ValueExpr:
		return b.valueLiteral(x, false)
	case *ast.ColumnNameExpr:
		return b.column(x)
	case *ast.ParenthesesExpr:
		return b.bind(x.Expr)
	case *ast.BinaryOperationExpr:
		return b.binary(x)
	case *ast.UnaryOperationExpr:
		return b.unary(x)
	case *ast.FuncCallExpr:
		return b.call(x)
	case *ast.FuncCastExpr:
		return b.nativeCast(x)
	case *ast.AggregateFuncExpr:
		return nil, b.errf(n, "aggregate function %s is not allowed here", strings.ToUpper(x.F))
	case *ast.WindowFuncExpr:
		return nil, b.errf(n, "window function %s is not allowed here", strings.ToUpper(x.Name))
	case *ast.IsNullExpr:
		e, err := b.bind(x.Expr)
		if err != nil {
			return nil, err
		}
		return &isNull{e: e, not: x.Not}, nil
	case *ast.IsTruthExpr:
		e, err := b.bind(x.Expr)
		if err != nil {
			return nil, err
		}
		if !isBoolType(e.Type()) {
			what := "IS TRUE"
			if x.True == 0 {
				what = "IS FALSE"
			}
			return nil, b.errf(n, "%s expects BOOLEAN, got %s", what, typeName(e.Type()))
		}
		return &isTruth{e: e, not: x.Not, want: x.True != 0}, nil
	case *ast.PatternLikeOrIlikeExpr:
		return b.like(x)
	case *ast.PatternRegexpExpr:
		return b.regexpOp(x)
	case *ast.PatternInExpr:
		return b.in(x)
	case *ast.BetweenExpr:
		return b.between(x)
	case *ast.CaseExpr:
		return b.caseExpr(x)
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		return nil, b.errf(n, "subqueries are not supported")
	case *ast.DefaultExpr:
		return nil, b.errf(n, "DEFAULT is not supported")
	case *ast.VariableExpr:
		return nil, b.errf(n, "variables are not supported")
	case *ast.RowExpr:
		return nil, b.errf(n, "write a row constructor as ROW(a, b)")
	case *ast.SetCollationExpr:
		return nil, b.errf(n, "COLLATE is not supported")
	case *ast.TimeUnitExpr:
		return nil, b.errf(n, "unexpected time unit %s", x.Unit)
	}
	return nil, b.errf(n, "expression %s is not supported", nodeText(n))
}

// ---------------------------------------------------------------------------
// Literals and columns

func intLiteral(i int64) Expr {
	if i >= math.MinInt32 && i <= math.MaxInt32 {
		return NewLiteral(types.NewInt(i), types.TypeInt)
	}
	return NewLiteral(types.NewInt(i), types.TypeBigInt)
}

// decimalLiteral types a decimal literal by its digits, as Flink does:
// 1.5 is DECIMAL(2, 1), 0.05 is DECIMAL(2, 2).
func (b *binder) decimalLiteral(n ast.Node, text string, negate bool) (Expr, error) {
	d, _, err := apd.NewFromString(text)
	if err != nil {
		return nil, b.errf(n, "malformed number %s", text)
	}
	if negate {
		d.Negative = !d.Negative
	}
	if d.IsZero() {
		d.Negative = false
	}
	s := max(int(-d.Exponent), 0)
	if d.Exponent > 0 {
		if _, err := decCtx.Quantize(d, d, 0); err != nil {
			return nil, b.errf(n, "malformed number %s", text)
		}
	}
	p := max(int(d.NumDigits()), s, 1)
	if p > types.MaxDecimalPrecision {
		return nil, b.errf(n, "%s", types.LiteralPrecisionMessage(text))
	}
	return NewLiteral(types.NewDecimal(d), types.DecimalType(p, s)), nil
}

func (b *binder) valueLiteral(x *test_driver.ValueExpr, negate bool) (Expr, error) {
	switch x.Kind() {
	case test_driver.KindNull:
		return NewLiteral(types.NullValue, types.TypeNull), nil
	case test_driver.KindInt64:
		if mysql.HasIsBooleanFlag(x.Type.GetFlag()) {
			return NewLiteral(types.NewBool(x.GetInt64() != 0), types.TypeBoolean), nil
		}
		i := x.GetInt64()
		if negate {
			i = -i
		}
		return intLiteral(i), nil
	case test_driver.KindUint64:
		u := x.GetUint64()
		if negate && u == 1<<63 {
			return NewLiteral(types.NewInt(math.MinInt64), types.TypeBigInt), nil
		}
		return b.decimalLiteral(x, strconv.FormatUint(u, 10), negate)
	case test_driver.KindFloat32, test_driver.KindFloat64:
		f := x.GetFloat64()
		if negate {
			f = -f
		}
		return NewLiteral(types.NewFloat(f), types.TypeDouble), nil
	case test_driver.KindString, test_driver.KindBytes:
		return NewLiteral(types.NewString(x.GetString()), types.TypeString), nil
	case test_driver.KindMysqlDecimal:
		return b.decimalLiteral(x, x.GetMysqlDecimal().String(), negate)
	case test_driver.KindBinaryLiteral:
		if x.Type.GetFlag()&mysql.UnsignedFlag == 0 {
			return nil, b.errf(x, "bit literals are not supported; write bytes as X'0a1b'")
		}
		// X'0a1b' is BINARY(2) in Flink: VARBINARY(2) here.
		bs := x.GetBytes()
		t := types.TypeBytes
		if len(bs) > 0 {
			t = types.VarbinaryType(len(bs))
		}
		return NewLiteral(types.NewBytes(bs), t.WithNotNull(true)), nil
	}
	return nil, b.errf(x, "unsupported literal %s", nodeText(x))
}

func (b *binder) column(x *ast.ColumnNameExpr) (Expr, error) {
	name, tbl := x.Name.Name.O, x.Name.Table.O
	display := name
	if tbl != "" {
		display = tbl + "." + name
	}
	find := func(eq func(a, b string) bool) []int {
		var m []int
		for i, c := range b.s.Columns {
			if eq(c.Name, name) && (tbl == "" || eq(c.Table, tbl)) {
				m = append(m, i)
			}
		}
		return m
	}
	m := find(func(a, b string) bool { return a == b })
	if len(m) == 0 {
		m = find(strings.EqualFold)
	}
	switch len(m) {
	case 0:
		if e, ok, err := b.fieldAccess(x); ok { // composite.go: r.f, t.r.f
			return e, err
		}
		if x.Name.Schema.O != "" {
			display = x.Name.Schema.O + "." + display
		}
		return nil, b.errf(x, "Unknown column '%s'", display)
	case 1:
		c := b.s.Columns[m[0]]
		return &colRef{idx: m[0], name: c.Name, typ: c.Type}, nil
	}
	return nil, b.errf(x, "Column '%s' is ambiguous", display)
}

// ---------------------------------------------------------------------------
// Operators

func (b *binder) binary(x *ast.BinaryOperationExpr) (Expr, error) {
	var sym string
	switch x.Op {
	case opcode.LogicAnd, opcode.LogicOr, opcode.LogicXor:
		l, r, err := b.bind2(x.L, x.R)
		if err != nil {
			return nil, err
		}
		op := map[opcode.Op]logicOp{opcode.LogicAnd: logicAnd, opcode.LogicOr: logicOr, opcode.LogicXor: logicXor}[x.Op]
		if !isBoolType(l.Type()) || !isBoolType(r.Type()) {
			hint := ""
			if op == logicOr && l.Type().ID == types.String && r.Type().ID == types.String {
				hint = " (|| is OR unless PIPES_AS_CONCAT is set; use CONCAT)"
			}
			return nil, b.errf(x, "cannot apply '%s' to %s and %s%s", logicSyms[op], typeName(l.Type()), typeName(r.Type()), hint)
		}
		return newLogic(op, l, r), nil
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE, opcode.NullEQ:
		l, r, err := b.bind2(x.L, x.R)
		if err != nil {
			return nil, err
		}
		op := map[opcode.Op]cmpOp{opcode.EQ: cmpEQ, opcode.NE: cmpNE, opcode.LT: cmpLT, opcode.LE: cmpLE,
			opcode.GT: cmpGT, opcode.GE: cmpGE, opcode.NullEQ: cmpNullEQ}[x.Op]
		l, r, mode, err := comparePrep(cmpSyms[op], l, r, b.loc)
		if err != nil {
			return nil, b.errf(x, "%s", err)
		}
		if _, ok := l.(*literal); ok {
			if _, ok := r.(*colRef); ok {
				l, r, op = r, l, op.flip()
			}
		}
		return newCompare(op, l, r, mode), nil
	case opcode.Plus:
		sym = "+"
	case opcode.Minus:
		sym = "-"
	case opcode.Mul:
		sym = "*"
	case opcode.Div:
		sym = "/"
	case opcode.Mod:
		sym = "%"
	case opcode.IntDiv:
		sym = "DIV"
	default:
		return nil, b.errf(x, "operator %s is not supported", opName(x.Op))
	}
	l, r, err := b.bind2(x.L, x.R)
	if err != nil {
		return nil, err
	}
	return b.arith(x, sym, l, r)
}

func (b *binder) bind2(ln, rn ast.ExprNode) (Expr, Expr, error) {
	l, err := b.bind(ln)
	if err != nil {
		return nil, nil, err
	}
	r, err := b.bind(rn)
	if err != nil {
		return nil, nil, err
	}
	return l, r, nil
}

func (b *binder) arith(n ast.Node, sym string, l, r Expr) (Expr, error) {
	op := sym[0]
	switch sym {
	case "DIV":
		op = opDiv
	case "MOD":
		op = opMod
	}
	lt, rt := l.Type(), r.Type()
	if sym == "DIV" && !(isIntegerType(lt) && isIntegerType(rt)) {
		return nil, b.errf(n, "cannot apply 'DIV' to %s and %s", typeName(lt), typeName(rt))
	}
	// INTERVAL + TIMESTAMP: put the interval on the right.
	if op == opAdd && (lt.ID == types.Interval || lt.ID == types.IntervalYM) && (isTemporal(rt) || rt.ID == types.Time || rt.ID == types.TimestampLTZ) {
		l, r, lt, rt = r, l, rt, lt
	}
	if e, ok, err := b.intervalValueArith(n, sym, op, l, r); ok { // timeofday.go
		return e, err
	}
	t, mode, ok := arithResult(op, lt, rt)
	if !ok {
		return nil, b.errf(n, "cannot apply '%s' to %s and %s", sym, typeName(lt), typeName(rt))
	}
	if t.ID == types.Null {
		return NewLiteral(types.NullValue, types.TypeNull), nil
	}
	return newArith(op, sym, l, r, t, mode), nil
}

func (b *binder) unary(x *ast.UnaryOperationExpr) (Expr, error) {
	switch x.Op {
	case opcode.Minus:
		// Negative numeric literals are typed as written (-2147483648 is INT).
		if v, ok := x.V.(*test_driver.ValueExpr); ok && !b.replaced(v) {
			switch v.Kind() {
			case test_driver.KindInt64, test_driver.KindUint64, test_driver.KindFloat32,
				test_driver.KindFloat64, test_driver.KindMysqlDecimal:
				if !mysql.HasIsBooleanFlag(v.Type.GetFlag()) {
					return b.valueLiteral(v, true)
				}
			}
		}
		e, err := b.bind(x.V)
		if err != nil {
			return nil, err
		}
		t := e.Type()
		if !isNumericType(t) && t.ID != types.Interval && t.ID != types.IntervalYM {
			return nil, b.errf(x, "cannot apply '-' to %s", typeName(t))
		}
		if t.ID == types.Null {
			return e, nil
		}
		return &neg{e: e, typ: t}, nil
	case opcode.Plus:
		e, err := b.bind(x.V)
		if err != nil {
			return nil, err
		}
		if !isNumericType(e.Type()) && e.Type().ID != types.Interval && e.Type().ID != types.IntervalYM {
			return nil, b.errf(x, "cannot apply '+' to %s", typeName(e.Type()))
		}
		return e, nil
	case opcode.Not, opcode.Not2:
		e, err := b.bind(x.V)
		if err != nil {
			return nil, err
		}
		if !isBoolType(e.Type()) {
			return nil, b.errf(x, "cannot apply 'NOT' to %s", typeName(e.Type()))
		}
		return &not{e: e, te: asTruthExpr(e)}, nil
	}
	return nil, b.errf(x, "operator %s is not supported", opName(x.Op))
}

func opName(op opcode.Op) string {
	switch op {
	case opcode.And:
		return "&"
	case opcode.Or:
		return "|"
	case opcode.Xor:
		return "^"
	case opcode.LeftShift:
		return "<<"
	case opcode.RightShift:
		return ">>"
	case opcode.BitNeg:
		return "~"
	}
	return strings.ToUpper(op.String())
}

func (b *binder) replaced(n ast.ExprNode) bool {
	if b.s.Replace == nil {
		return false
	}
	_, ok := b.s.Replace(n)
	return ok
}

func (b *binder) like(x *ast.PatternLikeOrIlikeExpr) (Expr, error) {
	e, p, err := b.bind2(x.Expr, x.Pattern)
	if err != nil {
		return nil, err
	}
	op := "LIKE"
	if !x.IsLike {
		op = "ILIKE"
	}
	if !isStringType(e.Type()) || !isStringType(p.Type()) {
		return nil, b.errf(x, "cannot apply '%s' to %s and %s", op, typeName(e.Type()), typeName(p.Type()))
	}
	le := &likeExpr{e: e, pat: p, esc: -1, not: x.Not, ilike: !x.IsLike}
	if x.EscapeExplicit {
		le.esc = rune(x.Escape)
	}
	if lit, ok := p.(*literal); ok {
		if lit.v.IsNull() {
			return NewLiteral(types.NullValue, types.TypeBoolean), nil
		}
		ps := lit.v.Str()
		if le.ilike {
			ps = strings.ToLower(ps)
		}
		lp, err := compileLike(ps, le.esc)
		if err != nil {
			return nil, b.errf(x.Pattern, "%s", err)
		}
		le.fixed = lp
	}
	return le, nil
}

func (b *binder) regexpOp(x *ast.PatternRegexpExpr) (Expr, error) {
	if fc, ok := x.Pattern.(*ast.FuncCallExpr); ok { // predicates.go
		switch fc.FnName.L {
		case FuncIsJSON:
			return b.isJSON(x, fc)
		case FuncSimilarTo:
			return b.similarTo(x, fc)
		}
	}
	e, p, err := b.bind2(x.Expr, x.Pattern)
	if err != nil {
		return nil, err
	}
	return b.newRegexp(x, x.Pattern, "", e, p, x.Not)
}

func (b *binder) in(x *ast.PatternInExpr) (Expr, error) {
	if x.Sel != nil {
		return nil, b.errf(x, "subqueries are not supported")
	}
	e, err := b.bind(x.Expr)
	if err != nil {
		return nil, err
	}
	list, err := b.bindAll(x.List)
	if err != nil {
		return nil, err
	}
	e, list, modes, bad, err := prepList("IN", e, list, b.loc)
	if err != nil {
		return nil, b.errf(x.List[bad], "%s", err)
	}
	return newInList(e, list, modes, x.Not), nil
}

func (b *binder) between(x *ast.BetweenExpr) (Expr, error) {
	if fc, ok := x.Left.(*ast.FuncCallExpr); ok && fc.FnName.L == FuncSymmetric {
		return b.betweenSymmetric(x, fc) // predicates.go
	}
	e, err := b.bind(x.Expr)
	if err != nil {
		return nil, err
	}
	lo, hi, err := b.bind2(x.Left, x.Right)
	if err != nil {
		return nil, err
	}
	e, bounds, modes, _, err := prepList("BETWEEN", e, []Expr{lo, hi}, b.loc)
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	lo, hi, mlo, mhi := bounds[0], bounds[1], modes[0], modes[1]
	return newBetween(e, lo, hi, mlo, mhi, x.Not), nil
}

// prepList prepares comparisons of e with each of items (IN, BETWEEN,
// simple CASE). If any comparison needs e itself converted (a DATE
// operand against a TIMESTAMP), e is converted once for all. On error it
// returns the index of the offending item.
func prepList(sym string, e Expr, items []Expr, loc *time.Location) (Expr, []Expr, []cmpMode, int, error) {
	for i, it := range items {
		ne, _, _, err := comparePrep(sym, e, it, loc)
		if err != nil {
			return nil, nil, nil, i, err
		}
		if ne != e {
			e = ne
			break
		}
	}
	out := make([]Expr, len(items))
	modes := make([]cmpMode, len(items))
	for i, it := range items {
		_, ni, mode, err := comparePrep(sym, e, it, loc)
		if err != nil {
			return nil, nil, nil, i, err
		}
		out[i], modes[i] = ni, mode
	}
	return e, out, modes, 0, nil
}

func (b *binder) caseExpr(x *ast.CaseExpr) (Expr, error) {
	c := &caseExpr{}
	var err error
	if x.Value != nil {
		if c.value, err = b.bind(x.Value); err != nil {
			return nil, err
		}
	}
	var results []Expr
	var whenNodes []ast.ExprNode
	for _, w := range x.WhenClauses {
		if fc, ok := w.Expr.(*ast.FuncCallExpr); ok && fc.FnName.L == FuncAny {
			// WHEN a, b THEN r (values.go): one WHEN per value, same result.
			if c.value == nil {
				return nil, b.errf(w.Expr, "WHEN with several values needs CASE value WHEN ...")
			}
			re, err := b.bind(w.Result)
			if err != nil {
				return nil, err
			}
			for _, a := range fc.Args {
				we, err := b.bind(a)
				if err != nil {
					return nil, err
				}
				c.whens = append(c.whens, we)
				whenNodes = append(whenNodes, a)
				results = append(results, re)
			}
			continue
		}
		we, err := b.bind(w.Expr)
		if err != nil {
			return nil, err
		}
		whenNodes = append(whenNodes, w.Expr)
		if c.value == nil && !isBoolType(we.Type()) {
			return nil, b.errf(w.Expr, "CASE WHEN expects BOOLEAN, got %s", typeName(we.Type()))
		}
		re, err := b.bind(w.Result)
		if err != nil {
			return nil, err
		}
		c.whens = append(c.whens, we)
		results = append(results, re)
	}
	if c.value != nil {
		v, whens, modes, bad, err := prepList("=", c.value, c.whens, b.loc)
		if err != nil {
			return nil, b.errf(whenNodes[bad], "CASE: %s", err)
		}
		c.value, c.whens, c.modes = v, whens, modes
	}
	if x.ElseClause != nil {
		re, err := b.bind(x.ElseClause)
		if err != nil {
			return nil, err
		}
		results = append(results, re)
	}
	out, t, err := unify("CASE", results)
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	nn := x.ElseClause != nil
	for _, r := range out {
		nn = nn && r.Type().NotNull
	}
	t.NotNull = nn
	c.thens = out[:len(c.whens)]
	if x.ElseClause != nil {
		c.els = out[len(c.whens)]
	}
	c.typ = t
	return c.finish(), nil
}

// nativeCast binds TiDB's CAST(e AS type) for the types TiDB parses.
func (b *binder) nativeCast(x *ast.FuncCastExpr) (Expr, error) {
	e, err := b.bind(x.Expr)
	if err != nil {
		return nil, err
	}
	if x.FunctionType == ast.CastBinaryOperator {
		return nil, b.errf(x, "BINARY is not supported")
	}
	ft := x.Tp
	var to types.Type
	switch ft.GetType() {
	case mysql.TypeLonglong, mysql.TypeLong, mysql.TypeInt24, mysql.TypeShort, mysql.TypeTiny:
		to = types.TypeBigInt
	case mysql.TypeNewDecimal:
		p, s := ft.GetFlen(), ft.GetDecimal()
		if p <= 0 {
			p = 10
		}
		if s < 0 {
			s = 0
		}
		if p > types.MaxDecimalPrecision || s > p {
			return nil, b.errf(x, "DECIMAL(%d, %d): precision must be 1..%d and scale 0..precision", p, s, types.MaxDecimalPrecision)
		}
		to = types.DecimalType(p, s)
	case mysql.TypeDouble, mysql.TypeFloat:
		to = types.TypeDouble
	case mysql.TypeVarString, mysql.TypeString, mysql.TypeVarchar:
		to = types.TypeString
		if n := ft.GetFlen(); n > 0 {
			to = types.VarcharType(n)
		}
	case mysql.TypeDate:
		to = types.TypeDate
	case mysql.TypeDuration: // TIME(p)
		to = types.TimeType(max(ft.GetDecimal(), 0))
	case mysql.TypeDatetime, mysql.TypeTimestamp:
		p := ft.GetDecimal()
		if p < 0 {
			p = 0
		}
		to = types.TimestampType(p)
	default:
		name := strings.ToUpper(ft.String())
		if i := strings.IndexAny(name, " ("); i > 0 {
			name = name[:i]
		}
		return nil, b.errf(x, "CAST to %s is not supported", name)
	}
	c, err := newCast(e, to, false, b.loc)
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	return c, nil
}
