package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/types"
)

// Arithmetic operators.
const (
	opAdd byte = '+'
	opSub byte = '-'
	opMul byte = '*'
	opDiv byte = '/'
	opMod byte = '%'
)

type arithMode uint8

const (
	amInt32      arithMode = iota // INT op INT, checked against int32
	amInt64                       // BIGINT, checked against int64
	amFloat                       // DOUBLE; operands read with types.ToFloat
	amDecimal                     // DECIMAL; operands read with types.ToDecimal
	amTsInterval                  // TIMESTAMP/DATE +- INTERVAL (interval on the right)
	amInterval                    // INTERVAL +- INTERVAL
)

// arith is a binary arithmetic expression. Operands are never converted
// by cast nodes: the mode says how to read them.
type arith struct {
	op     byte
	sym    string // rendered operator: "+", "%", "DIV"
	l, r   Expr
	typ    types.Type
	mode   arithMode
	li, ri intExpr      // int fast paths (int modes), nil if unavailable
	lf, rf floatExpr    // float fast paths (amFloat)
	rd     *apd.Decimal // constant right operand (amDecimal)
}

// arithConstInt is arith with an integer literal on the right, the hot
// case of "a * 2" / "a + 1".
type arithConstInt struct {
	arith
	c int64
}

// arithResult decides the result type and mode of l op r; ok is false if
// the operand types do not support op.
func arithResult(op byte, lt, rt types.Type) (types.Type, arithMode, bool) {
	nn := lt.NotNull && rt.NotNull && op != opDiv && op != opMod
	if lt.ID == types.Null && rt.ID == types.Null {
		return types.Type{ID: types.Null}, amInt64, true
	}
	if lt.ID == types.Null {
		lt = rt
	}
	if rt.ID == types.Null {
		rt = lt
	}
	var t types.Type
	var m arithMode
	switch {
	case lt.IsNumeric() && rt.IsNumeric():
		switch {
		case lt.ID == types.Double || rt.ID == types.Double:
			t, m = types.TypeDouble, amFloat
		case lt.ID == types.Decimal || rt.ID == types.Decimal:
			t, m = decimalArithType(op, lt, rt), amDecimal
		case lt.ID == types.BigInt || rt.ID == types.BigInt:
			t, m = types.TypeBigInt, amInt64
		default:
			t, m = types.TypeInt, amInt32
		}
	case isTemporal(lt) && rt.ID == types.Interval && (op == opAdd || op == opSub):
		t, m = types.TimestampType(3), amTsInterval
		if lt.ID == types.Timestamp {
			t = types.TimestampType(lt.Precision)
		}
	case lt.ID == types.TimestampLTZ && rt.ID == types.Interval && (op == opAdd || op == opSub):
		// An instant moved by a day-time interval is an instant.
		t, m = types.TimestampLTZType(lt.Precision), amTsInterval
	case lt.ID == types.Interval && rt.ID == types.Interval && (op == opAdd || op == opSub):
		t, m = types.TypeInterval, amInterval
	case lt.ID == types.IntervalYM && rt.ID == types.IntervalYM && (op == opAdd || op == opSub):
		t, m = types.TypeIntervalYM, amInterval
	default:
		return types.Type{}, 0, false
	}
	t.NotNull = nn
	return t, m, true
}

func newArith(op byte, sym string, l, r Expr, t types.Type, m arithMode) Expr {
	a := arith{op: op, sym: sym, l: l, r: r, typ: t, mode: m}
	if m == amInt32 || m == amInt64 {
		a.li, a.ri = asIntExpr(l), asIntExpr(r)
		if lit, ok := r.(*literal); ok && !lit.v.IsNull() {
			return &arithConstInt{arith: a, c: lit.v.Int()}
		}
	}
	switch m {
	case amFloat:
		a.lf, a.rf = asFloatExpr(l), asFloatExpr(r)
	case amDecimal:
		if lit, ok := r.(*literal); ok && !lit.v.IsNull() {
			a.rd = new(apd.Decimal).Set(types.ToDecimal(lit.v))
		}
	}
	return &a
}

// floatExpr is implemented by nodes that can produce a numeric value as
// float64 without building a Value.
type floatExpr interface {
	evalFloat(row types.Row) (v float64, null bool, err error)
}

func asFloatExpr(e Expr) floatExpr {
	if !isNumericType(e.Type()) {
		return nil
	}
	if a, ok := e.(*arith); ok && a.mode != amFloat {
		return nil
	}
	fe, _ := e.(floatExpr)
	return fe
}

func (c *colRef) evalFloat(row types.Row) (float64, bool, error) {
	v := &row[c.idx]
	switch v.Kind() {
	case types.KindNull:
		return 0, true, nil
	case types.KindFloat:
		return v.Float(), false, nil
	case types.KindInt:
		return float64(v.Raw()), false, nil
	}
	return types.ToFloat(*v), false, nil
}

func (l *literal) evalFloat(types.Row) (float64, bool, error) {
	if l.v.IsNull() {
		return 0, true, nil
	}
	return types.ToFloat(l.v), false, nil
}

func (a *arith) evalFloat(row types.Row) (float64, bool, error) {
	var x, y float64
	if a.lf != nil && a.rf != nil {
		var xn, yn bool
		var err error
		if x, xn, err = a.lf.evalFloat(row); err != nil || xn {
			return 0, true, err
		}
		if y, yn, err = a.rf.evalFloat(row); err != nil || yn {
			return 0, true, err
		}
	} else {
		lv, rv, null, err := a.operands(row)
		if null {
			return 0, true, err
		}
		x, y = types.ToFloat(lv), types.ToFloat(rv)
	}
	return a.floatop(x, y)
}

// intExpr is implemented by nodes that can produce an int64 payload
// (INT, BIGINT, DATE, TIMESTAMP, BOOLEAN, INTERVAL) without building a
// Value. null reports SQL NULL.
type intExpr interface {
	evalInt(row types.Row) (v int64, null bool, err error)
}

// asIntExpr returns e's int fast path if e has an integer-payload type.
func asIntExpr(e Expr) intExpr {
	switch e.Type().ID {
	case types.Int, types.BigInt, types.Boolean, types.Date, types.Timestamp, types.TimestampLTZ, types.Interval, types.Time, types.IntervalYM, types.Null:
	default:
		return nil
	}
	if a, ok := e.(*arith); ok && a.mode != amInt32 && a.mode != amInt64 {
		return nil
	}
	ie, _ := e.(intExpr)
	return ie
}

func (c *colRef) evalInt(row types.Row) (int64, bool, error) {
	v := &row[c.idx]
	return v.Raw(), v.IsNull(), nil
}

func (l *literal) evalInt(types.Row) (int64, bool, error) { return l.v.Raw(), l.v.IsNull(), nil }

func (a *arith) evalInt(row types.Row) (int64, bool, error) {
	var x, y int64
	if a.li != nil && a.ri != nil {
		var xn, yn bool
		var err error
		if x, xn, err = a.li.evalInt(row); err != nil || xn {
			return 0, true, err
		}
		if y, yn, err = a.ri.evalInt(row); err != nil || yn {
			return 0, true, err
		}
	} else {
		lv, rv, null, err := a.operands(row)
		if null {
			return 0, true, err
		}
		x, y = lv.Raw(), rv.Raw()
	}
	return a.intop(x, y)
}

func (a *arithConstInt) evalInt(row types.Row) (int64, bool, error) {
	var x int64
	if a.li != nil {
		var xn bool
		var err error
		if x, xn, err = a.li.evalInt(row); err != nil || xn {
			return 0, true, err
		}
	} else {
		lv, err := a.l.Eval(row)
		if err != nil || lv.IsNull() {
			return 0, true, err
		}
		x = lv.Raw()
	}
	return a.intop(x, a.c)
}

// operands evaluates both operands as Values, the path of a mode or an
// operand without a typed fast path. null reports that the result is
// NULL: an operand is NULL (the right one is then not evaluated), or err.
func (a *arith) operands(row types.Row) (lv, rv types.Value, null bool, err error) {
	if lv, err = a.l.Eval(row); err != nil || lv.IsNull() {
		return lv, rv, true, err
	}
	if rv, err = a.r.Eval(row); err != nil || rv.IsNull() {
		return lv, rv, true, err
	}
	return lv, rv, false, nil
}

func (a *arith) intop(x, y int64) (int64, bool, error) {
	if a.mode == amInt32 {
		return a.int32op(x, y)
	}
	return a.int64op(x, y)
}

// intValue wraps an int fast-path result as a Value.
func intValue(v int64, null bool, err error) (types.Value, error) {
	if err != nil || null {
		return types.NullValue, err
	}
	return types.NewInt(v), nil
}

func (a *arith) Type() types.Type { return a.typ }
func (a *arith) String() string {
	return "(" + a.l.String() + " " + a.sym + " " + a.r.String() + ")"
}
func (a *arith) children() []Expr { return []Expr{a.l, a.r} }
func (a *arith) withChildren(k []Expr) Expr {
	return newArith(a.op, a.sym, k[0], k[1], a.typ, a.mode)
}

func (a *arith) Eval(row types.Row) (types.Value, error) {
	switch a.mode {
	case amInt32, amInt64:
		return intValue(a.evalInt(row))
	case amFloat:
		f, null, err := a.evalFloat(row)
		if err != nil || null {
			return types.NullValue, err
		}
		return types.NewFloat(f), nil
	}
	lv, rv, null, err := a.operands(row)
	if null {
		return types.NullValue, err
	}
	switch a.mode {
	case amDecimal:
		y := a.rd
		if y == nil {
			y = types.ToDecimal(rv)
		}
		return a.decimalop(types.ToDecimal(lv), y)
	case amTsInterval:
		return a.tsop(lv, rv.Raw())
	default:
		x, y := lv.Raw(), rv.Raw()
		if a.op == opSub {
			y = -y
		}
		s := x + y
		if (x > 0 && y > 0 && s < 0) || (x < 0 && y < 0 && s >= 0) {
			return types.NullValue, evalErr(a, "INTERVAL overflow")
		}
		if a.typ.ID == types.IntervalYM {
			return types.NewIntervalYM(s), nil
		}
		return types.NewInterval(timeDuration(s)), nil
	}
}

func (a *arithConstInt) Eval(row types.Row) (types.Value, error) {
	return intValue(a.evalInt(row))
}

func (a *arithConstInt) withChildren(k []Expr) Expr {
	return newArith(a.op, a.sym, k[0], k[1], a.typ, a.mode)
}

// divByZero is the error of an INT, BIGINT or DECIMAL division or MOD by
// zero, which fails the job as in Flink.
func (a *arith) divByZero() error {
	return evalErr(a, "division by zero")
}

func (a *arith) overflow(x, y int64) error {
	return evalErr(a, "%s overflow (%d %s %d)", a.typ.ID, x, a.sym, y)
}

func (a *arith) int32op(x, y int64) (int64, bool, error) {
	var r int64
	switch a.op {
	case opAdd:
		r = x + y
	case opSub:
		r = x - y
	case opMul:
		r = x * y
	case opDiv:
		if y == 0 {
			return 0, true, a.divByZero()
		}
		r = x / y
	default:
		if y == 0 {
			return 0, true, a.divByZero()
		}
		r = x % y
	}
	if r < math.MinInt32 || r > math.MaxInt32 {
		return 0, true, a.overflow(x, y)
	}
	return r, false, nil
}

func (a *arith) int64op(x, y int64) (int64, bool, error) {
	var r int64
	switch a.op {
	case opAdd:
		r = x + y
		if (x > 0 && y > 0 && r < 0) || (x < 0 && y < 0 && r >= 0) {
			return 0, true, a.overflow(x, y)
		}
	case opSub:
		r = x - y
		if (x >= 0 && y < 0 && r < 0) || (x < 0 && y > 0 && r >= 0) {
			return 0, true, a.overflow(x, y)
		}
	case opMul:
		r = x * y
		if x != 0 && (r/x != y || (x == -1 && y == math.MinInt64)) {
			return 0, true, a.overflow(x, y)
		}
	case opDiv:
		if y == 0 {
			return 0, true, a.divByZero()
		}
		if x == math.MinInt64 && y == -1 {
			return 0, true, a.overflow(x, y)
		}
		r = x / y
	default:
		if y == 0 {
			return 0, true, a.divByZero()
		}
		if y == -1 {
			return 0, false, nil
		}
		r = x % y
	}
	return r, false, nil
}

func (a *arith) floatop(x, y float64) (float64, bool, error) {
	switch a.op {
	case opAdd:
		return x + y, false, nil
	case opSub:
		return x - y, false, nil
	case opMul:
		return x * y, false, nil
	case opDiv:
		return x / y, false, nil // IEEE 754: +-Inf or NaN by zero, as in Flink
	default:
		return math.Mod(x, y), false, nil // NaN by zero, as Java's %
	}
}

func (a *arith) decimalop(x, y *apd.Decimal) (types.Value, error) {
	r := new(apd.Decimal)
	var err error
	switch a.op {
	case opAdd:
		_, err = decCtx.Add(r, x, y)
	case opSub:
		_, err = decCtx.Sub(r, x, y)
	case opMul:
		_, err = decCtx.Mul(r, x, y)
	case opDiv:
		if y.IsZero() {
			return types.NullValue, a.divByZero()
		}
		_, err = decCtx.Quo(r, x, y)
	default:
		if y.IsZero() {
			return types.NullValue, a.divByZero()
		}
		_, err = decCtx.Rem(r, x, y)
	}
	if err != nil {
		return types.NullValue, evalErr(a, "%s overflow (%s %s %s)", typeName(a.typ), x, a.sym, y)
	}
	d, ok := fitDecimalInPlace(r, a.typ.Precision, a.typ.Scale)
	if !ok {
		return types.NullValue, evalErr(a, "%s overflow (%s %s %s)", typeName(a.typ), x, a.sym, y)
	}
	return types.NewDecimal(d), nil
}

func (a *arith) tsop(lv types.Value, iv int64) (types.Value, error) {
	var ts int64
	if lv.Kind() == types.KindDate {
		var ok bool
		if ts, ok = tsFromDaysNanos(lv.Date(), 0); !ok {
			return types.NullValue, evalErr(a, "TIMESTAMP out of range")
		}
	} else {
		ts = lv.Raw()
	}
	if a.op == opSub {
		if iv == math.MinInt64 {
			return types.NullValue, evalErr(a, "TIMESTAMP out of range")
		}
		iv = -iv
	}
	r := ts + iv
	if (iv > 0 && r < ts) || (iv < 0 && r > ts) {
		return types.NullValue, evalErr(a, "TIMESTAMP out of range")
	}
	return types.NewTimestamp(r), nil
}

// neg is unary minus.
type neg struct {
	e   Expr
	typ types.Type
}

func (n *neg) Type() types.Type { return n.typ }
func (n *neg) String() string   { return "-" + n.e.String() }
func (n *neg) children() []Expr { return []Expr{n.e} }
func (n *neg) withChildren(k []Expr) Expr {
	c := *n
	c.e = k[0]
	return &c
}
func (n *neg) Eval(row types.Row) (types.Value, error) {
	v, err := n.e.Eval(row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	switch v.Kind() {
	case types.KindInt:
		x := v.Int()
		if (n.typ.ID == types.Int && x == math.MinInt32) || x == math.MinInt64 {
			return types.NullValue, evalErr(n, "%s overflow (-(%d))", n.typ.ID, x)
		}
		return types.NewInt(-x), nil
	case types.KindFloat:
		return types.NewFloat(-v.Float()), nil
	case types.KindDecimal:
		d := new(apd.Decimal).Neg(v.Decimal())
		if d.IsZero() {
			d.Negative = false
		}
		return types.NewDecimal(d), nil
	case types.KindInterval:
		if v.Raw() == math.MinInt64 {
			return types.NullValue, evalErr(n, "INTERVAL overflow")
		}
		return types.NewInterval(timeDuration(-v.Raw())), nil
	case types.KindIntervalYM:
		if v.Raw() == math.MinInt64 {
			return types.NullValue, evalErr(n, "INTERVAL overflow")
		}
		return types.NewIntervalYM(-v.Raw()), nil
	}
	return types.NullValue, evalErr(n, "cannot negate %s", typeName(n.e.Type()))
}
