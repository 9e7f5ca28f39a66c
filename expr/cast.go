package expr

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/internal/civil"
	"github.com/streamsql/streamsql/types"
)

// decCtx is the context of all DECIMAL arithmetic: wide enough that +, -
// and * of two 38-digit values are exact before the final rounding.
var decCtx = apd.Context{
	Precision:   100,
	MaxExponent: apd.MaxExponent,
	MinExponent: apd.MinExponent,
	Traps:       apd.DefaultTraps,
	Rounding:    apd.RoundHalfUp,
}

// fitDecimal rounds d HALF_UP to scale s and reports whether the result
// fits DECIMAL(p, s).
func fitDecimal(d *apd.Decimal, p, s int) (*apd.Decimal, bool) {
	if d.Form != apd.Finite {
		return nil, false
	}
	r := new(apd.Decimal)
	if _, err := decCtx.Quantize(r, d, -int32(s)); err != nil {
		return nil, false
	}
	if r.IsZero() {
		r.Negative = false
	} else if r.NumDigits() > int64(p) {
		return nil, false
	}
	return r, true
}

// fitDecimalInPlace is fitDecimal rounding d itself (d must be owned by
// the caller).
func fitDecimalInPlace(d *apd.Decimal, p, s int) (*apd.Decimal, bool) {
	if d.Form != apd.Finite {
		return nil, false
	}
	if d.Exponent != -int32(s) {
		if _, err := decCtx.Quantize(d, d, -int32(s)); err != nil {
			return nil, false
		}
	}
	if d.IsZero() {
		d.Negative = false
	} else if d.NumDigits() > int64(p) {
		return nil, false
	}
	return d, true
}

// castAllowed reports whether CAST(from AS to) is accepted at bind time.
func castAllowed(from, to types.Type) bool {
	f, t := from.ID, to.ID
	if allowed, ok := intervalCastAllowed(from, to); ok && !from.IsComposite() && !to.IsComposite() {
		return allowed // interval_cast.go
	}
	switch {
	case from.IsComposite() || to.IsComposite():
		return f == types.Null || t == types.String || compositeShape(from, to, castAllowed)
	case f == types.Null || f == t:
		return true
	case t == types.String:
		return true
	case f == types.String:
		return t != types.Null
	case f == types.Time && (t == types.Timestamp || t == types.TimestampLTZ), t == types.Time && (f == types.Timestamp || f == types.TimestampLTZ):
		return true // the time of day of a timestamp; a TIME on 1970-01-01
	case from.IsNumeric() && to.IsNumeric():
		return true
	case (from.IsNumeric() && t == types.Boolean) || (f == types.Boolean && to.IsNumeric()):
		return true
	case isTemporal(from) && isTemporal(to):
		return true
	case f == types.TimestampLTZ && (isTemporal(to) || t == types.TimestampLTZ), t == types.TimestampLTZ && isTemporal(from):
		return true
	}
	return false
}

// implicitAllowed reports whether from converts to `to` without an
// explicit CAST (Flink's implicit widening rules).
func implicitAllowed(from, to types.Type) bool {
	f, t := from.ID, to.ID
	if from.IsComposite() || to.IsComposite() {
		return f == types.Null || compositeShape(from, to, implicitAllowed)
	}
	if f == types.Null || f == t {
		return true
	}
	switch f {
	case types.Int:
		return t == types.BigInt || t == types.Decimal || t == types.Double
	case types.BigInt:
		return t == types.Decimal || t == types.Double
	case types.Decimal:
		return t == types.Double
	case types.Date:
		return t == types.Timestamp
	}
	return false
}

// CastValue converts one value of type from to type to. It is what CAST
// does at run time, and what INSERT VALUES and connectors use to turn text
// into typed values. Errors are plain (they do not name an expression).
func CastValue(v types.Value, from, to types.Type) (types.Value, error) {
	if !castAllowed(from, to) {
		return types.NullValue, castRefusal(from, to)
	}
	return castValue(v, from, to)
}

// CastValueIn is CastValue with TIMESTAMP_LTZ values converted to and
// from their wall clock in zone loc, the session's table.local-time-zone.
func CastValueIn(v types.Value, from, to types.Type, loc *time.Location) (types.Value, error) {
	if !castAllowed(from, to) {
		return types.NullValue, castRefusal(from, to)
	}
	return castValueIn(v, from, to, loc)
}

func castFail(v types.Value, from, to types.Type, why string) error {
	msg := "cannot cast " + renderValue(v, from) + " to " + typeName(to)
	if why != "" {
		msg += ": " + why
	}
	return errors.New(msg)
}

func castValue(v types.Value, from, to types.Type) (types.Value, error) {
	return castValueIn(v, from, to, time.UTC)
}

// castValueIn converts v of type from to type to; TIMESTAMP_LTZ values
// meet the other temporal types and text as the wall clock of zone loc.
func castValueIn(v types.Value, from, to types.Type, loc *time.Location) (types.Value, error) {
	if v.IsNull() {
		return v, nil
	}
	if from.ID == types.TimestampLTZ && v.Kind() == types.KindTimestamp && to.ID != types.TimestampLTZ {
		// The instant's wall clock in loc, then as from a TIMESTAMP.
		if to.ID == types.String {
			s := types.FormatIn(v, from, loc)
			if n := to.Precision; n > 0 && n < types.MaxStringLength && len(s) > n {
				s = s[:n]
			}
			return types.NewString(s), nil
		}
		from = types.TimestampType(from.Precision)
		v = types.NewTimestamp(types.LocalNanos(v.Timestamp(), loc))
	}
	if to.ID == types.TimestampLTZ && from.ID != types.TimestampLTZ && !v.IsComposite() {
		// As a TIMESTAMP, a wall clock read in loc.
		lv, err := castValueIn(v, from, types.TimestampType(to.Precision), loc)
		if err != nil {
			return types.NullValue, castFail(v, from, to, "")
		}
		return types.NewTimestamp(types.InstantNanos(lv.Timestamp(), loc)), nil
	}
	if from.ID == types.TimestampLTZ && to.ID == types.TimestampLTZ {
		return types.NewTimestamp(truncNanos(v.Timestamp(), to.Precision)), nil
	}
	if v.IsComposite() && to.IsComposite() {
		return castComposite(v, from, to) // composite.go
	}
	switch to.ID {
	case types.Bytes:
		// From STRING: its UTF-8 bytes; from BYTES: the same bytes. Both
		// are cut to a VARBINARY(n)'s length, as Flink's CAST does.
		if v.Kind() == types.KindString {
			if n := to.Precision; n > 0 && n < types.MaxStringLength && len(v.Str()) > n {
				return types.NewBytes([]byte(v.Str()[:n])), nil
			}
			return v, nil
		}
	case types.Boolean:
		switch v.Kind() {
		case types.KindBool:
			return v, nil
		case types.KindInt:
			return types.NewBool(v.Int() != 0), nil
		case types.KindFloat:
			return types.NewBool(v.Float() != 0), nil
		case types.KindDecimal:
			return types.NewBool(!v.Decimal().IsZero()), nil
		case types.KindString:
			switch strings.ToLower(strings.TrimSpace(v.Str())) {
			case "true", "t", "yes", "y", "1":
				return types.NewBool(true), nil
			case "false", "f", "no", "n", "0":
				return types.NewBool(false), nil
			}
		}
	case types.Int, types.BigInt:
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if to.ID == types.Int {
			lo, hi = math.MinInt32, math.MaxInt32
		}
		var i int64
		switch v.Kind() {
		case types.KindInt:
			i = v.Int()
		case types.KindBool:
			i = v.Raw()
		case types.KindInterval, types.KindIntervalYM:
			i = intervalToExact(v, from) // interval_cast.go
		case types.KindFloat:
			f := math.Trunc(v.Float())
			if math.IsNaN(f) || f < float64(lo) || f >= -float64(lo) {
				return types.NullValue, castFail(v, from, to, "out of range")
			}
			i = int64(f)
		case types.KindDecimal:
			var ip, fp apd.Decimal
			v.Decimal().Modf(&ip, &fp)
			n, err := ip.Int64()
			if err != nil {
				return types.NullValue, castFail(v, from, to, "out of range")
			}
			i = n
		case types.KindString:
			n, err := strconv.ParseInt(strings.TrimSpace(v.Str()), 10, 64)
			if err != nil {
				if errors.Is(err, strconv.ErrRange) {
					return types.NullValue, castFail(v, from, to, "out of range")
				}
				return types.NullValue, castFail(v, from, to, "")
			}
			i = n
		default:
			return types.NullValue, castFail(v, from, to, "")
		}
		if i < lo || i > hi {
			return types.NullValue, castFail(v, from, to, "out of range")
		}
		return types.NewInt(i), nil
	case types.Double:
		switch v.Kind() {
		case types.KindFloat:
			return v, nil
		case types.KindInt:
			return types.NewFloat(float64(v.Int())), nil
		case types.KindBool:
			return types.NewFloat(float64(v.Raw())), nil
		case types.KindDecimal:
			return types.NewFloat(types.ToFloat(v)), nil
		case types.KindString:
			f, err := strconv.ParseFloat(strings.TrimSpace(v.Str()), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return types.NullValue, castFail(v, from, to, "")
			}
			return types.NewFloat(f), nil
		}
	case types.Decimal:
		var d *apd.Decimal
		switch v.Kind() {
		case types.KindDecimal:
			d = v.Decimal()
		case types.KindInt, types.KindBool:
			d = apd.New(v.Raw(), 0)
		case types.KindInterval, types.KindIntervalYM:
			d = apd.New(intervalToExact(v, from), 0) // interval_cast.go
		case types.KindFloat:
			f := v.Float()
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return types.NullValue, castFail(v, from, to, "")
			}
			d = new(apd.Decimal)
			if _, err := d.SetFloat64(f); err != nil {
				return types.NullValue, castFail(v, from, to, "")
			}
		case types.KindString:
			x, _, err := apd.NewFromString(strings.TrimSpace(v.Str()))
			if err != nil || x.Form != apd.Finite {
				return types.NullValue, castFail(v, from, to, "")
			}
			d = x
		default:
			return types.NullValue, castFail(v, from, to, "")
		}
		r, ok := fitDecimal(d, to.Precision, to.Scale)
		if !ok {
			return types.NullValue, &decimalOverflow{castFail(v, from, to, "overflow")}
		}
		return types.NewDecimal(r), nil
	case types.String:
		var s string
		if v.Kind() == types.KindString {
			s = v.Str()
			if from.ID == types.Bytes {
				s = strings.ToValidUTF8(s, "\uFFFD") // the bytes read as UTF-8, as Flink
			}
		} else {
			s = types.Format(v, from)
		}
		if n := to.Precision; n > 0 && n < types.MaxStringLength && utf8.RuneCountInString(s) > n {
			s = truncRunes(s, n)
		}
		if v.Kind() == types.KindString && len(s) == len(v.Str()) {
			return v, nil
		}
		return types.NewString(s), nil
	case types.Date:
		switch v.Kind() {
		case types.KindDate:
			return v, nil
		case types.KindTimestamp:
			return types.NewDate(civil.FloorDiv(v.Timestamp(), nsPerDay)), nil
		case types.KindString:
			if d, ok := parseDateText(v.Str()); ok {
				return types.NewDate(d), nil
			}
		}
	case types.Timestamp:
		switch v.Kind() {
		case types.KindTimestamp:
			if from.IsTimestamp() && from.Precision <= to.Precision {
				return v, nil
			}
			return types.NewTimestamp(truncNanos(v.Timestamp(), to.Precision)), nil
		case types.KindDate:
			ns, ok := tsFromDaysNanos(v.Date(), 0)
			if !ok {
				return types.NullValue, castFail(v, from, to, "out of range")
			}
			return types.NewTimestamp(ns), nil
		case types.KindTime: // on 1970-01-01, as Flink
			return types.NewTimestamp(truncNanos(v.TimeOfDay(), to.Precision)), nil
		case types.KindString:
			if ns, _, ok := parseTimestampText(v.Str()); ok {
				return types.NewTimestamp(truncNanos(ns, to.Precision)), nil
			}
		}
	case types.Time:
		return castToTime(v, from, to) // timeofday.go
	case types.Interval, types.IntervalYM:
		return castToInterval(v, from, to) // interval_cast.go
	}
	return types.NullValue, castFail(v, from, to, "")
}

func truncRunes(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// castExpr converts its operand at run time.
type castExpr struct {
	e        Expr
	to       types.Type
	try      bool
	explicit bool
	loc      *time.Location // the session zone; nil is UTC
}

func (c *castExpr) Type() types.Type { return c.to }
func (c *castExpr) Eval(row types.Row) (types.Value, error) {
	v, err := c.e.Eval(row)
	if err != nil || v.IsNull() {
		return v, err
	}
	loc := c.loc
	if loc == nil {
		loc = time.UTC
	}
	r, err := castValueIn(v, c.e.Type(), c.to, loc)
	if err != nil {
		var ov *decimalOverflow
		if c.try || c.explicit && errors.As(err, &ov) {
			// An explicit CAST to a DECIMAL too narrow for the value is
			// NULL, as in Flink.
			return types.NullValue, nil
		}
		return r, wrapErr(c, err)
	}
	return r, nil
}

// decimalOverflow is castValue's error for a value that does not fit the
// target DECIMAL: NULL in an explicit CAST, an error elsewhere (INSERT,
// implicit conversions).
type decimalOverflow struct{ err error }

func (e *decimalOverflow) Error() string { return e.err.Error() }
func (e *decimalOverflow) Unwrap() error { return e.err }
func (c *castExpr) String() string {
	if !c.explicit {
		return c.e.String()
	}
	name := "CAST"
	if c.try {
		name = "TRY_CAST"
	}
	return name + "(" + c.e.String() + " AS " + typeName(c.to) + ")"
}
func (c *castExpr) children() []Expr { return []Expr{c.e} }
func (c *castExpr) withChildren(kids []Expr) Expr {
	n := *c
	n.e = kids[0]
	return &n
}

// Cast builds an explicit CAST(e AS to). It fails if no value of e's type
// could ever be converted (CAST(TRUE AS DATE)); values that fail at run
// time (CAST('abc' AS INT)) make Eval return an error.
// TIMESTAMP_LTZ values meet other types in UTC; the binder's own casts
// use the session zone.
func Cast(e Expr, to types.Type) (Expr, error) {
	return newCast(e, to, false, nil)
}

// CastIn is Cast meeting TIMESTAMP_LTZ values in zone loc (nil: UTC), as
// the binder's casts do in the session zone.
func CastIn(e Expr, to types.Type, loc *time.Location) (Expr, error) {
	return newCast(e, to, false, loc)
}

// TryCast is Cast whose run-time failures yield NULL.
func TryCast(e Expr, to types.Type) (Expr, error) {
	return newCast(e, to, true, nil)
}

func newCast(e Expr, to types.Type, try bool, loc *time.Location) (Expr, error) {
	from := e.Type()
	if !castAllowed(from, to) {
		return nil, castRefusal(from, to)
	}
	to.NotNull = from.NotNull && !try
	c := &castExpr{e: e, to: to, try: try, explicit: true, loc: loc}
	if _, ok := e.(*literal); ok {
		return fold(c), nil
	}
	return c, nil
}

// ImplicitCast coerces e to type to for INSERT, UNION and comparisons:
// widening numeric conversions (INT -> BIGINT -> DECIMAL -> DOUBLE), any
// DECIMAL to any DECIMAL, any VARCHAR to any VARCHAR, DATE -> TIMESTAMP,
// TIMESTAMP(p) -> TIMESTAMP(q), and a string literal to DATE / TIMESTAMP
// (converted now: unparsable text is an error here). NULL converts to
// anything. Anything else is an error.
func ImplicitCast(e Expr, to types.Type) (Expr, error) {
	return ImplicitCastIn(e, to, nil)
}

// ImplicitCastIn is ImplicitCast reading a string literal converted to a
// TIMESTAMP_LTZ as a wall clock in zone loc (nil: UTC), as INSERT VALUES
// does in Flink's session zone.
func ImplicitCastIn(e Expr, to types.Type, loc *time.Location) (Expr, error) {
	if loc == nil {
		loc = time.UTC
	}
	from := e.Type()
	if from.Equal(to) {
		return e, nil
	}
	if from.ID == types.String && to.ID == types.String {
		// VARCHAR(n) -> VARCHAR(m): the values stay as they are (Flink does
		// not enforce lengths on implicit conversion either).
		to.NotNull = from.NotNull
		return &retype{e: e, typ: to}, nil
	}
	lit, isLit := e.(*literal)
	if !implicitAllowed(from, to) {
		ok := isLit && from.ID == types.String && (isTemporal(to) || to.ID == types.TimestampLTZ)
		if !ok {
			return nil, fmt.Errorf("cannot implicitly convert %s to %s", typeName(from), typeName(to))
		}
	}
	to.NotNull = from.NotNull
	if isLit {
		v, err := castValueIn(lit.v, from, to, loc)
		if err != nil {
			return nil, err
		}
		return NewLiteral(v, to), nil
	}
	return &castExpr{e: e, to: to}, nil
}

// retype gives an expression another type of the same representation.
type retype struct {
	e   Expr
	typ types.Type
}

func (r *retype) Type() types.Type                        { return r.typ }
func (r *retype) Eval(row types.Row) (types.Value, error) { return r.e.Eval(row) }
func (r *retype) String() string                          { return r.e.String() }
func (r *retype) children() []Expr                        { return []Expr{r.e} }
func (r *retype) withChildren(k []Expr) Expr              { return &retype{e: k[0], typ: r.typ} }
