package types

import (
	"fmt"
	"strings"
)

// IntervalRes is the resolution of an INTERVAL type, as Flink's
// YearMonthIntervalType and DayTimeIntervalType have it: the fields from
// the first to the last. The value underneath does not depend on it (a
// number of months, or of nanoseconds); it decides how the type is
// written, which casts to and from numbers Flink allows (a single field
// only), the unit of those casts, and how text is read into the type.
type IntervalRes uint8

// The resolutions. ResNone is the zero value of a Type that is no
// interval.
const (
	ResNone IntervalRes = iota
	ResYear
	ResYearToMonth
	ResMonth
	ResDay
	ResDayToHour
	ResDayToMinute
	ResDayToSecond
	ResHour
	ResHourToMinute
	ResHourToSecond
	ResMinute
	ResMinuteToSecond
	ResSecond
)

// The precisions Flink's Data Types page gives for intervals: years of
// 1..4 digits (default 2), days of 1..6 digits (default 2), and 0..9
// fractional second digits (default 6).
const (
	MinYearPrecision        = 1
	MaxYearPrecision        = 4
	DefaultYearPrecision    = 2
	MinDayPrecision         = 1
	MaxDayPrecision         = 6
	DefaultDayPrecision     = 2
	MaxFractionalPrecision  = 9
	DefaultFractionalDigits = 6
)

// intervalFields are the first and last field of each resolution.
var intervalFields = [...][2]string{
	ResYear: {"YEAR", "YEAR"}, ResYearToMonth: {"YEAR", "MONTH"}, ResMonth: {"MONTH", "MONTH"},
	ResDay: {"DAY", "DAY"}, ResDayToHour: {"DAY", "HOUR"}, ResDayToMinute: {"DAY", "MINUTE"},
	ResDayToSecond: {"DAY", "SECOND"}, ResHour: {"HOUR", "HOUR"}, ResHourToMinute: {"HOUR", "MINUTE"},
	ResHourToSecond: {"HOUR", "SECOND"}, ResMinute: {"MINUTE", "MINUTE"}, ResMinuteToSecond: {"MINUTE", "SECOND"},
	ResSecond: {"SECOND", "SECOND"},
}

// YearMonthIntervalType returns INTERVAL YEAR(p), INTERVAL YEAR(p) TO
// MONTH or INTERVAL MONTH (res picks which; p is ignored for MONTH).
func YearMonthIntervalType(res IntervalRes, p int) Type {
	if res == ResMonth {
		p = DefaultYearPrecision
	}
	return Type{ID: IntervalYM, Res: res, Precision: p}
}

// DayTimeIntervalType returns the day-time interval of resolution res
// with day precision dp and fractional precision fp. As in Flink, the
// day precision is kept only where the type starts with DAY, and the
// fractional precision only where it ends with SECOND; elsewhere they
// take their defaults.
func DayTimeIntervalType(res IntervalRes, dp, fp int) Type {
	f := intervalFields[res]
	if f[0] != "DAY" {
		dp = DefaultDayPrecision
	}
	if f[1] != "SECOND" {
		fp = DefaultFractionalDigits
	}
	return Type{ID: Interval, Res: res, Precision: dp, Scale: fp}
}

// IntervalUnits returns the first and last field of an interval type:
// "DAY", "SECOND" for INTERVAL DAY(2) TO SECOND(3).
func (t Type) IntervalUnits() (first, last string) {
	if int(t.Res) >= len(intervalFields) || t.Res == ResNone {
		return "", ""
	}
	f := intervalFields[t.Res]
	return f[0], f[1]
}

// IsSingleFieldInterval reports whether t is an interval of one field
// (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND): the intervals Flink casts
// to and from exact numbers.
func (t Type) IsSingleFieldInterval() bool {
	first, last := t.IntervalUnits()
	return (t.ID == Interval || t.ID == IntervalYM) && first != "" && first == last
}

// intervalString writes an interval type as Flink's LogicalType does.
func (t Type) intervalString() string {
	first, last := t.IntervalUnits()
	if first == "" {
		return t.ID.String()
	}
	var sb strings.Builder
	sb.WriteString("INTERVAL ")
	sb.WriteString(first)
	if first == "YEAR" || first == "DAY" {
		fmt.Fprintf(&sb, "(%d)", t.Precision)
	}
	if first != last {
		sb.WriteString(" TO ")
		sb.WriteString(last)
	}
	if last == "SECOND" {
		fmt.Fprintf(&sb, "(%d)", t.Scale)
	}
	return sb.String()
}

// parseInterval reads the rest of an INTERVAL type after the word
// INTERVAL, as Flink's Data Types page writes them:
//
//	INTERVAL YEAR[(p)] [TO MONTH] | INTERVAL MONTH
//	INTERVAL DAY[(p1)] [TO HOUR | TO MINUTE | TO SECOND[(p2)]]
//	INTERVAL HOUR [TO MINUTE | TO SECOND[(p2)]]
//	INTERVAL MINUTE [TO SECOND[(p2)]]
//	INTERVAL SECOND[(p2)]
func (p *typeParser) parseInterval() (Type, error) {
	first := strings.ToUpper(p.peek(0))
	switch first {
	case "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND":
		p.i++
	default:
		found := first
		if found == "" {
			found = "the end"
		}
		return Type{}, fmt.Errorf("malformed type %q: INTERVAL needs YEAR, MONTH, DAY, HOUR, MINUTE or SECOND, found %s", strings.TrimSpace(p.src), found)
	}
	lead, err := p.intervalPrecision(first)
	if err != nil {
		return Type{}, err
	}
	last := first
	var frac []int
	if p.accept("TO") {
		last = strings.ToUpper(p.peek(0))
		if last == "" {
			return Type{}, fmt.Errorf("malformed type %q: expected a field after TO", strings.TrimSpace(p.src))
		}
		p.i++
		if frac, err = p.intervalPrecision(last); err != nil {
			return Type{}, err
		}
	} else if first == "SECOND" {
		frac, lead = lead, nil
	}
	res, ok := intervalResolution(first, last)
	if !ok {
		return Type{}, fmt.Errorf("INTERVAL %s TO %s is not an interval type: the fields must run from a larger to a smaller one within YEAR TO MONTH or DAY TO SECOND", first, last)
	}
	if res <= ResMonth {
		yp := DefaultYearPrecision
		if len(lead) > 0 {
			yp = lead[0]
		}
		if yp < MinYearPrecision || yp > MaxYearPrecision {
			return Type{}, fmt.Errorf("INTERVAL YEAR(%d): the year precision must be %d..%d", yp, MinYearPrecision, MaxYearPrecision)
		}
		return YearMonthIntervalType(res, yp), nil
	}
	dp, fp := DefaultDayPrecision, DefaultFractionalDigits
	if len(lead) > 0 {
		dp = lead[0]
	}
	if len(frac) > 0 {
		fp = frac[0]
	}
	if dp < MinDayPrecision || dp > MaxDayPrecision {
		return Type{}, fmt.Errorf("INTERVAL DAY(%d): the day precision must be %d..%d", dp, MinDayPrecision, MaxDayPrecision)
	}
	if fp < 0 || fp > MaxFractionalPrecision {
		written := "INTERVAL "
		if first != last {
			written += first + " TO "
		}
		return Type{}, fmt.Errorf("%sSECOND(%d): the fractional precision must be 0..%d", written, fp, MaxFractionalPrecision)
	}
	return DayTimeIntervalType(res, dp, fp), nil
}

// intervalPrecision reads the optional (p) after an interval field:
// YEAR and DAY take one as the first field, SECOND as the last; the other
// fields take none, as in Flink.
func (p *typeParser) intervalPrecision(field string) ([]int, error) {
	if !p.is("(") {
		return nil, nil
	}
	nums, err := p.numbers()
	if err != nil {
		return nil, err
	}
	if len(nums) != 1 || field != "YEAR" && field != "DAY" && field != "SECOND" {
		return nil, fmt.Errorf("malformed type %q: only YEAR(p), DAY(p) and SECOND(p) take a precision in an INTERVAL type", strings.TrimSpace(p.src))
	}
	return nums, nil
}

func intervalResolution(first, last string) (IntervalRes, bool) {
	for r := ResYear; r <= ResSecond; r++ {
		if f := intervalFields[r]; f[0] == first && f[1] == last {
			return r, true
		}
	}
	return ResNone, false
}

// fieldOrder ranks interval fields from the largest.
var fieldOrder = map[string]int{"YEAR": 0, "MONTH": 1, "DAY": 2, "HOUR": 3, "MINUTE": 4, "SECOND": 5}

// CommonInterval is the least interval type holding two intervals of the
// same kind, as Calcite's least restrictive type of two intervals: the
// fields from the larger first field to the smaller last one, and the
// larger precisions. Values need no conversion (the representation does
// not depend on the resolution).
func CommonInterval(a, b Type) Type {
	af, al := a.IntervalUnits()
	bf, bl := b.IntervalUnits()
	first, last := af, al
	if fieldOrder[bf] < fieldOrder[first] {
		first = bf
	}
	if fieldOrder[bl] > fieldOrder[last] {
		last = bl
	}
	res, ok := intervalResolution(first, last)
	if !ok || a.ID != b.ID {
		return a
	}
	if a.ID == IntervalYM {
		return YearMonthIntervalType(res, max(a.Precision, b.Precision))
	}
	dp := func(t Type, f string) int { // a day precision only counts where the type starts with DAY
		if f == "DAY" {
			return t.Precision
		}
		return 0
	}
	fp := func(t Type, l string) int {
		if l == "SECOND" {
			return t.Scale
		}
		return 0
	}
	d := max(dp(a, af), dp(b, bf), MinDayPrecision)
	if af != "DAY" && bf != "DAY" {
		d = DefaultDayPrecision
	}
	f := max(fp(a, al), fp(b, bl))
	if al != "SECOND" && bl != "SECOND" {
		f = DefaultFractionalDigits
	}
	return DayTimeIntervalType(res, d, f)
}
