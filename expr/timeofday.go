package expr

// TIME(p), Flink's time of day without a zone: literals, casts, the
// clock functions, fields and arithmetic with day-time intervals. A
// TIME value is nanoseconds since midnight; an interval added to it
// wraps around midnight, as in Flink.

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/internal/civil"
	"github.com/streamsql/streamsql/types"
)

// parseTimeText parses TIME text (types.ParseTimeOfDay).
func parseTimeText(text string) (int64, int, bool) { return types.ParseTimeOfDay(text) }

// timeOfDay is the time of day of TIMESTAMP nanoseconds.
func timeOfDay(ns int64) int64 { return civil.FloorMod(ns, nsPerDay) }

// timeLiteralNode binds TIME '12:34:56.789': a TIME(p) whose precision
// is the number of fraction digits written, as Calcite types it.
func (b *binder) timeLiteralNode(x *ast.FuncCallExpr) (Expr, error) {
	e, err := b.bind(x.Args[0])
	if err != nil {
		return nil, err
	}
	s, ok := constString(e)
	if !ok {
		return nil, b.errf(x, "TIME literal expects a string")
	}
	ns, frac, ok := parseTimeText(s)
	if !ok {
		return nil, b.errf(x, "invalid TIME literal '%s': write HH:mm:ss[.fffffffff]", s)
	}
	return NewLiteral(types.NewTime(ns), types.TimeType(frac).WithNotNull(true)), nil
}

// castToTime converts a value to TIME(p): a TIME loses its digits past
// p, a TIMESTAMP keeps its time of day, text is read as parseTimeText
// reads it.
func castToTime(v types.Value, from, to types.Type) (types.Value, error) {
	switch v.Kind() {
	case types.KindTime:
		return types.NewTime(truncNanos(v.TimeOfDay(), to.Precision)), nil
	case types.KindTimestamp:
		return types.NewTime(truncNanos(timeOfDay(v.Timestamp()), to.Precision)), nil
	case types.KindString:
		if ns, _, ok := parseTimeText(v.Str()); ok {
			return types.NewTime(truncNanos(ns, to.Precision)), nil
		}
	}
	return types.NullValue, castFail(v, from, to, "")
}

// timeUnit reports whether EXTRACT, HOUR() and kin take unit from a TIME.
func timeUnit(unit string) bool {
	switch unit {
	case "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND", "NANOSECOND":
		return true
	}
	return false
}

// newTimeField is EXTRACT(unit FROM time) for a TIME argument.
func (b *binder) newTimeField(x ast.Node, name, unit string, arg Expr, render func([]Expr) string) (Expr, error) {
	if !timeUnit(unit) {
		return nil, b.errf(x, "%s: unit %s does not apply to TIME (HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND and NANOSECOND do)", name, unit)
	}
	f, _ := extractUnit(unit)
	return &call{name: name, args: []Expr{arg}, typ: strictType(types.TypeBigInt, arg), strict: true, render: render,
		f1: func(v types.Value) (types.Value, error) { return types.NewInt(f(splitTS(v.TimeOfDay()))), nil }}, nil
}

// buildCurrentTime binds CURRENT_TIME and LOCALTIME: the wall clock of
// the session zone, TIME(0), as Flink's (a precision argument 0..9 asks
// for more digits).
func buildCurrentTime(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	p, err := clockPrecision(b, x, name, 0)
	if err != nil {
		return nil, err
	}
	if name == "CURTIME" {
		name = "CURRENT_TIME"
	}
	loc := b.loc
	return &call{name: name, typ: types.TimeType(p).WithNotNull(true), nondet: true,
		render: func([]Expr) string { return name },
		f0: func() (types.Value, error) {
			return types.NewTime(truncNanos(timeOfDay(types.LocalNanos(nowFunc().UnixNano(), loc)), p)), nil
		}}, nil
}

// timeArith is time ± interval: the interval's days and smaller units
// move the clock, around midnight as often as it takes (TIME '23:30:00'
// + INTERVAL '1' HOUR is 00:30:00), as in Flink. A month interval
// cannot move a TIME. n is an INTERVAL value, or the amount of unit;
// fixed is the interval when it is constant.
func (b *binder) timeArith(node ast.Node, name string, e, n Expr, unit string, sign int64, fixed *ivl, render func([]Expr) string) (Expr, error) {
	if fixed != nil && fixed.months != 0 || fixed == nil && (n.Type().ID == types.IntervalYM || dateUnit(unit) && unit != "DAY" && unit != "WEEK") {
		return nil, b.errf(node, "a TIME cannot be moved by a year-month interval (YEAR, QUARTER or MONTH)")
	}
	// The result is of e's type, as Calcite types TIME + INTERVAL; what
	// the interval moves past that precision is cut off.
	p := e.Type().Precision
	t := strictType(types.TimeType(p), e, n)
	nt := n.Type()
	return &call{name: name, args: []Expr{e, n}, typ: t, strict: true, render: render,
		f2: func(v, amount types.Value) (types.Value, error) {
			iv, err := fixedOrIntervalOf(fixed, amount, nt, unit)
			if err != nil {
				return types.NullValue, err
			}
			if iv.months != 0 {
				return types.NullValue, fmt.Errorf("a TIME cannot be moved by a year-month interval")
			}
			d := civil.FloorMod(iv.nanos, nsPerDay)
			if sign < 0 {
				d = nsPerDay - d
			}
			return types.NewTime(truncNanos((v.TimeOfDay()+d)%nsPerDay, p)), nil
		}}, nil
}

// intervalValueArith binds the arithmetic of interval values that arith
// modes do not cover (the interval is on the right): TIME ± a day-time
// interval, and DATE, TIMESTAMP or TIMESTAMP_LTZ ± INTERVAL YEAR TO
// MONTH, whose months clamp the day to the month's end as Flink's do.
// ok is false when l op r is none of them.
func (b *binder) intervalValueArith(n ast.Node, sym string, op byte, l, r Expr) (Expr, bool, error) {
	lt, rt := l.Type(), r.Type()
	if op != opAdd && op != opSub {
		return nil, false, nil
	}
	sign := int64(1)
	if op == opSub {
		sign = -1
	}
	render := func(a []Expr) string { return "(" + a[0].String() + " " + sym + " " + a[1].String() + ")" }
	switch {
	case lt.ID == types.Time && (rt.ID == types.Interval || rt.ID == types.IntervalYM):
		var fixed *ivl
		if lit, ok := r.(*literal); ok && !lit.v.IsNull() {
			iv, _ := intervalOfValue(lit.v, rt, "")
			fixed = &iv
		}
		e, err := b.timeArith(n, "'"+sym+"'", l, r, "", sign, fixed, render)
		return e, true, err
	case (isTemporal(lt) || lt.ID == types.TimestampLTZ) && rt.ID == types.IntervalYM:
		var fixed *ivl
		if lit, ok := r.(*literal); ok && !lit.v.IsNull() {
			fixed = &ivl{months: lit.v.Months()}
		}
		if lt.ID == types.Date && fixed == nil {
			// A DATE moved by months stays a DATE, also when the months
			// are known at run time only.
			return &call{name: sym, args: []Expr{l, r}, typ: strictType(types.TypeDate, l, r), strict: true, render: render,
				f2: func(d, m types.Value) (types.Value, error) {
					return types.NewDate(addMonths(d.Date(), sign*m.Months())), nil
				}}, true, nil
		}
		return b.dateArith(sym, l, r, "MONTH", sign, fixed, 0, render), true, nil
	}
	return nil, false, nil
}

// checkYearToMonth refuses a literal INTERVAL 'y-m' YEAR TO MONTH whose
// months are above 11, as Calcite does (write INTERVAL '18' MONTH for a
// year and a half).
func checkYearToMonth(n Expr) error {
	s, ok := constString(n)
	if !ok {
		return nil
	}
	t := strings.TrimSpace(s)
	if i := strings.LastIndexByte(t, '-'); i > 0 {
		var m int64
		for _, c := range t[i+1:] {
			if c < '0' || c > '9' {
				return nil // parseInterval names the malformed text
			}
			m = m*10 + int64(c-'0')
			if m > 11 {
				return fmt.Errorf("INTERVAL '%s' YEAR TO MONTH: the months must be 0..11", s)
			}
		}
	}
	return nil
}

// timeLiteral converts a string literal compared with a TIME, as
// temporalLiteral does for DATE and TIMESTAMP.
func timeLiteral(e Expr) (Expr, error) {
	lit, ok := e.(*literal)
	if !ok {
		return nil, fmt.Errorf("cannot compare STRING with TIME without an explicit CAST")
	}
	ns, frac, ok := parseTimeText(lit.v.Str())
	if !ok {
		return nil, fmt.Errorf("cannot convert %s to TIME", renderValue(lit.v, lit.typ))
	}
	return NewLiteral(types.NewTime(ns), types.TimeType(frac).WithNotNull(true)), nil
}
