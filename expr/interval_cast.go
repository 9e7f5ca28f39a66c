package expr

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/types"
)

// CAST to and from the INTERVAL types, as Flink's LogicalTypeCasts
// allows them: an interval to any string; a string to any interval; an
// interval to an exact number (INT, BIGINT, DECIMAL) and an exact number
// to an interval only when the interval has a single field (YEAR, MONTH,
// DAY, HOUR, MINUTE or SECOND); a day-time interval to another day-time
// interval and a year-month one to another year-month one (the value
// unchanged). Nothing else: no DOUBLE, no BOOLEAN, no mixing of the two
// kinds.
//
// A number counts units of that field, as Calcite converts the cast:
// CAST(5 AS INTERVAL HOUR) is five hours, CAST(INTERVAL '90' MINUTE AS
// INT) is 90, CAST(INTERVAL '36' HOUR AS INTERVAL DAY) then to INT is 1
// (whole units, the remainder dropped toward zero). A DECIMAL is cut to
// whole months or milliseconds, what Flink keeps of an interval.

func isIntervalType(t types.Type) bool { return t.ID == types.Interval || t.ID == types.IntervalYM }

func isExactType(t types.Type) bool { return t.IsInteger() || t.ID == types.Decimal }

// intervalCastAllowed reports whether CAST(from AS to) is one of the
// interval casts above; ok is false when neither side is an interval.
func intervalCastAllowed(from, to types.Type) (allowed, ok bool) {
	switch {
	case !isIntervalType(from) && !isIntervalType(to):
		return false, false
	case from.ID == types.Null || from.ID == to.ID || to.ID == types.String || from.ID == types.String:
		return true, true
	case isIntervalType(from) && isExactType(to):
		return from.IsSingleFieldInterval(), true
	case isExactType(from) && isIntervalType(to):
		return to.IsSingleFieldInterval(), true
	}
	return false, true
}

// castRefusal is the error for a CAST castAllowed refuses.
func castRefusal(from, to types.Type) error {
	msg := fmt.Sprintf("cannot cast %s to %s", typeName(from), typeName(to))
	if isIntervalType(from) && isExactType(to) || isExactType(from) && isIntervalType(to) {
		msg += ": only an interval of a single field (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND) converts to and from an exact number, as in Flink"
	}
	return fmt.Errorf("%s", msg)
}

// intervalUnitSize is the size of one unit of an interval type's last
// field.
func intervalUnitSize(t types.Type) ivl {
	_, last := t.IntervalUnits()
	sz, _ := unitSize(last)
	return sz
}

// intervalToExact is the number of whole last-field units of an
// interval value, rounded toward zero.
func intervalToExact(v types.Value, from types.Type) int64 {
	sz := intervalUnitSize(from)
	if v.Kind() == types.KindIntervalYM {
		return v.Months() / max(sz.months, 1)
	}
	return v.Raw() / max(sz.nanos, 1)
}

// exactToInterval converts an INT, BIGINT or DECIMAL value to a
// single-field interval type of that many units.
func exactToInterval(v types.Value, from, to types.Type) (types.Value, error) {
	sz := intervalUnitSize(to)
	ym := to.ID == types.IntervalYM
	unit := sz.nanos
	if ym {
		unit = sz.months
	}
	if v.Kind() == types.KindInt {
		n, ok := mulAdd(0, v.Int(), unit)
		if !ok {
			return types.NullValue, castFail(v, from, to, "out of range")
		}
		if ym {
			return types.NewIntervalYM(n), nil
		}
		return types.NewInterval(time.Duration(n)), nil
	}
	// A DECIMAL: units times the unit's size in months or milliseconds,
	// cut toward zero.
	per := unit
	if !ym {
		per = unit / 1e6
	}
	var prod, ip, fp apd.Decimal
	if _, err := decCtx.Mul(&prod, v.Decimal(), apd.New(per, 0)); err != nil {
		return types.NullValue, castFail(v, from, to, "out of range")
	}
	prod.Modf(&ip, &fp)
	n, err := ip.Int64()
	if err != nil {
		return types.NullValue, castFail(v, from, to, "out of range")
	}
	if ym {
		return types.NewIntervalYM(n), nil
	}
	if n > math.MaxInt64/1_000_000 || n < math.MinInt64/1_000_000 {
		return types.NullValue, castFail(v, from, to, "out of range")
	}
	return types.NewInterval(time.Duration(n * 1e6)), nil
}

// textToInterval reads text as an interval of type to: first in the
// form of an INTERVAL literal of to's fields ('1 02' for DAY TO HOUR,
// '90' for MINUTE), else in the form CAST to STRING writes (+1 02:03:04.500,
// +1-06), so that a value read back is the value written.
func textToInterval(v types.Value, to types.Type) (types.Value, error) {
	first, last := to.IntervalUnits()
	unit := first
	if first != last {
		unit = first + "_" + last
	}
	full := "DAY_SECOND"
	if to.ID == types.IntervalYM {
		full = "YEAR_MONTH"
	}
	s := strings.TrimSpace(v.Str())
	r, _, err := parseInterval(s, unit)
	if err != nil && unit != full {
		r, _, err = parseInterval(s, full)
	}
	if err != nil {
		return types.NullValue, castFail(v, types.TypeString, to, "")
	}
	if to.ID == types.IntervalYM {
		return types.NewIntervalYM(r.months), nil
	}
	return types.NewInterval(time.Duration(r.nanos)), nil
}

// castToInterval is castValueIn's conversion to an interval type.
func castToInterval(v types.Value, from, to types.Type) (types.Value, error) {
	switch v.Kind() {
	case types.KindInterval:
		if to.ID == types.Interval {
			return v, nil
		}
	case types.KindIntervalYM:
		if to.ID == types.IntervalYM {
			return v, nil
		}
	case types.KindInt, types.KindDecimal:
		return exactToInterval(v, from, to)
	case types.KindString:
		return textToInterval(v, to)
	}
	return types.NullValue, castFail(v, from, to, "")
}

// literalIntervalResolutions are the resolutions of INTERVAL literals by
// their unit; a literal of another unit (WEEK, QUARTER, MILLISECOND,
// ...) is of the general TypeInterval or TypeIntervalYM.
var literalIntervalResolutions = map[string]types.IntervalRes{
	"YEAR": types.ResYear, "YEAR_MONTH": types.ResYearToMonth, "MONTH": types.ResMonth,
	"DAY": types.ResDay, "DAY_HOUR": types.ResDayToHour, "DAY_MINUTE": types.ResDayToMinute,
	"DAY_SECOND": types.ResDayToSecond, "HOUR": types.ResHour, "HOUR_MINUTE": types.ResHourToMinute,
	"HOUR_SECOND": types.ResHourToSecond, "MINUTE": types.ResMinute, "MINUTE_SECOND": types.ResMinuteToSecond,
	"SECOND": types.ResSecond,
}

// literalIntervalType is the type of INTERVAL '...' unit, as Flink's
// planner types it: the unit's fields, the default year or day precision
// (2) and, ending in SECOND, milliseconds (SECOND(3)).
func literalIntervalType(unit string, yearMonth bool) types.Type {
	res, ok := literalIntervalResolutions[unit]
	switch {
	case !ok && yearMonth:
		return types.TypeIntervalYM
	case !ok:
		return types.TypeInterval
	case yearMonth:
		return types.YearMonthIntervalType(res, types.DefaultYearPrecision)
	}
	return types.DayTimeIntervalType(res, types.DefaultDayPrecision, 3)
}
