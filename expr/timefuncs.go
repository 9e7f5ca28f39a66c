package expr

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/internal/civil"
	"github.com/streamsql/streamsql/types"
)

// nowFunc is the clock of NOW() and friends; tests replace it.
var nowFunc = time.Now

func registerTimeFuncs(r map[string]funcDef) {
	for name, d := range map[string]funcDef{
		"date_format":           {2, 2, buildDateFormat},
		"extract":               {2, 2, buildExtract},
		"year":                  {1, 1, buildField},
		"quarter":               {1, 1, buildField},
		"month":                 {1, 1, buildField},
		"week":                  {1, 1, buildField},
		"weekofyear":            {1, 1, buildField},
		"dayofyear":             {1, 1, buildField},
		"dayofmonth":            {1, 1, buildField},
		"day":                   {1, 1, buildField},
		"dayofweek":             {1, 1, buildField},
		"hour":                  {1, 1, buildField},
		"minute":                {1, 1, buildField},
		"second":                {1, 1, buildField},
		"timestampdiff":         {3, 3, buildTimestampDiff},
		"timestampadd":          {3, 3, buildTimestampAdd},
		"date_add":              {3, 3, buildDateAdd},
		"adddate":               {3, 3, buildDateAdd},
		"date_sub":              {3, 3, buildDateAdd},
		"subdate":               {3, 3, buildDateAdd},
		"datediff":              {2, 2, buildDateDiff},
		"date":                  {1, 1, buildDateFunc},
		FuncFloorTo:             {2, 2, buildFloorTo},
		FuncCeilTo:              {2, 2, buildFloorTo},
		FuncInterval:            {2, 2, buildInterval},
		"to_timestamp":          {1, 2, buildToTimestamp},
		"to_date":               {1, 2, buildToTimestamp},
		"unix_timestamp":        {0, 2, buildUnixTimestamp},
		"from_unixtime":         {1, 2, buildFromUnixtime},
		"to_timestamp_ltz":      {1, 3, buildToTimestampLTZ},
		"current_timestamp":     {0, 1, buildNow},
		"now":                   {0, 1, buildNow},
		"localtimestamp":        {0, 1, buildNow},
		"sysdate":               {0, 1, buildNow},
		"utc_timestamp":         {0, 1, buildNow},
		"proctime":              {0, 0, buildNow},
		"current_date":          {0, 0, buildNow},
		"current_row_timestamp": {0, 0, buildNow},
		"current_database":      {0, 0, buildCurrentDatabase},
		"convert_tz":            {3, 3, buildConvertTZ},
		FuncExtract:             {2, 2, buildExtract},
		FuncTimestampAdd:        {3, 3, buildTimestampAdd},
		FuncTimestampDiff:       {3, 3, buildTimestampDiff},
		FuncOverlaps:            {4, 4, buildOverlaps},
		"curdate":               {0, 0, buildNow},
		"current_time":          {0, 1, buildCurrentTime}, // timeofday.go
		"localtime":             {0, 1, buildCurrentTime},
		"curtime":               {0, 1, buildCurrentTime},
		"utc_date":              {0, 0, buildNow},
	} {
		r[name] = d
	}
}

// temporalLiteralNode binds TIMESTAMP '...' and DATE '...'.
func (b *binder) temporalLiteralNode(x *ast.FuncCallExpr) (Expr, error) {
	e, err := b.bind(x.Args[0])
	if err != nil {
		return nil, err
	}
	s, ok := constString(e)
	isDate := x.FnName.L == ast.DateLiteral
	kw := "TIMESTAMP"
	if isDate {
		kw = "DATE"
	}
	if !ok {
		return nil, b.errf(x, "%s literal expects a string", kw)
	}
	days, tod, frac, hasTime, ok := parseDateTime(s)
	if !ok || (isDate && hasTime) {
		return nil, b.errf(x, "invalid %s literal '%s'", kw, s)
	}
	if isDate {
		return NewLiteral(types.NewDate(days), types.TypeDate), nil
	}
	ns, ok := tsFromDaysNanos(days, tod)
	if !ok {
		return nil, b.errf(x, "%s literal '%s' is out of range", kw, s)
	}
	return NewLiteral(types.NewTimestamp(ns), types.TimestampType(frac)), nil
}

// timeArg binds a DATE/TIMESTAMP argument; a string literal is converted.
func (b *binder) timeArg(x *ast.FuncCallExpr, name string, i int, e Expr) (Expr, error) {
	t := e.Type()
	if t.ID == types.String {
		if _, ok := e.(*literal); ok {
			c, err := temporalLiteral(e, types.TypeDate)
			if err != nil {
				return nil, b.errf(x.Args[i], "%s: %s", name, err)
			}
			return c, nil
		}
	}
	if !isTemporalType(t) {
		return nil, b.argErr(x.Args[i], name, i, len(x.Args), e, wantTime)
	}
	if t.ID == types.Null {
		return NewLiteral(types.NullValue, types.TimestampType(0)), nil
	}
	return e, nil
}

// fieldsOf splits a DATE or TIMESTAMP value.
func fieldsOf(v types.Value) tsFields {
	if v.Kind() == types.KindDate {
		y, m, d := civil.CivilFromDays(v.Date())
		return tsFields{y: y, mo: m, d: d, days: v.Date()}
	}
	return splitTS(v.Raw())
}

// nanosOf returns a DATE or TIMESTAMP as TIMESTAMP nanoseconds, and a
// TIME as nanoseconds since midnight.
func nanosOf(v types.Value) (int64, bool) {
	if v.Kind() == types.KindDate {
		return tsFromDaysNanos(v.Date(), 0)
	}
	if v.Kind() == types.KindTime {
		return v.TimeOfDay(), true
	}
	return v.Raw(), true
}

var errTimeRange = errors.New("TIMESTAMP out of range")

// ---------------------------------------------------------------------------
// DATE_FORMAT

func buildDateFormat(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	ts := args[0]
	if ts.Type().ID != types.String {
		if ts, err = b.timeArg(x, name, 0, ts); err != nil {
			return nil, err
		}
	}
	if err := b.expect(x, name, 1, args[1], isStringType, wantString); err != nil {
		return nil, err
	}
	var fixed dateFmt
	if s, ok := constString(args[1]); ok {
		if fixed, err = compileDateFormat(s); err != nil {
			return nil, b.errf(x.Args[1], "%s: %s", name, err)
		}
	}
	fromString := ts.Type().ID == types.String
	t := strictType(types.TypeString, ts, args[1])
	if fromString {
		t.NotNull = false
	}
	return &call{name: name, args: []Expr{ts, args[1]}, typ: t, strict: true,
		f2: func(v, p types.Value) (types.Value, error) {
			f := fixed
			if f == nil {
				var err error
				if f, err = compileDateFormat(p.Str()); err != nil {
					return types.NullValue, err
				}
			}
			var tf tsFields
			if v.Kind() == types.KindString {
				ns, _, ok := parseTimestampText(v.Str())
				if !ok {
					return types.NullValue, nil
				}
				tf = splitTS(ns)
			} else {
				tf = fieldsOf(v)
			}
			var buf [32]byte
			return types.NewString(string(f.format(buf[:0], tf))), nil
		}}, nil
}

// ---------------------------------------------------------------------------
// EXTRACT and field functions

// extractUnit returns a field extractor for unit.
func extractUnit(unit string) (func(tsFields) int64, bool) {
	switch unit {
	case "YEAR":
		return func(t tsFields) int64 { return t.y }, true
	case "QUARTER":
		return func(t tsFields) int64 { return (t.mo-1)/3 + 1 }, true
	case "MONTH":
		return func(t tsFields) int64 { return t.mo }, true
	case "WEEK", "WEEKOFYEAR":
		return func(t tsFields) int64 {
			_, w := time.Unix(t.days*86400, 0).UTC().ISOWeek()
			return int64(w)
		}, true
	case "DAY", "DAYOFMONTH":
		return func(t tsFields) int64 { return t.d }, true
	case "DAYOFYEAR", "DOY":
		return func(t tsFields) int64 { return t.days - civil.DaysFromCivil(t.y, 1, 1) + 1 }, true
	case "DAYOFWEEK", "DOW":
		return func(t tsFields) int64 { return civil.FloorMod(t.days+4, 7) + 1 }, true
	case "HOUR":
		return func(t tsFields) int64 { return t.h }, true
	case "MINUTE":
		return func(t tsFields) int64 { return t.mi }, true
	case "SECOND":
		return func(t tsFields) int64 { return t.s }, true
	case "MILLISECOND":
		return func(t tsFields) int64 { return t.ns / 1e6 }, true
	case "MICROSECOND":
		return func(t tsFields) int64 { return t.ns / 1e3 }, true
	case "NANOSECOND":
		return func(t tsFields) int64 { return t.ns }, true
	case "EPOCH":
		return func(t tsFields) int64 { return t.days*86400 + t.h*3600 + t.mi*60 + t.s }, true
	case "ISODOW": // 1 = Monday
		return func(t tsFields) int64 { return civil.FloorMod(t.days+3, 7) + 1 }, true
	case "ISOYEAR":
		return func(t tsFields) int64 {
			y, _ := time.Unix(t.days*86400, 0).UTC().ISOWeek()
			return int64(y)
		}, true
	case "DECADE": // Java's division: toward zero
		return func(t tsFields) int64 { return t.y / 10 }, true
	case "CENTURY":
		return func(t tsFields) int64 {
			if t.y > 0 {
				return (t.y + 99) / 100
			}
			return (t.y - 99) / 100
		}, true
	case "MILLENNIUM":
		return func(t tsFields) int64 {
			if t.y > 0 {
				return (t.y + 999) / 1000
			}
			return (t.y - 999) / 1000
		}, true
	}
	return nil, false
}

func newField(name string, unit string, arg Expr, render func([]Expr) string) Expr {
	f, _ := extractUnit(unit)
	return &call{name: name, args: []Expr{arg}, typ: strictType(types.TypeBigInt, arg), strict: true,
		render: render,
		f1:     func(v types.Value) (types.Value, error) { return types.NewInt(f(fieldsOf(v))), nil }}
}

// buildExtract binds EXTRACT(unit FROM t), which the pre-lexer writes
// __extract('UNIT', t) (TiDB's own form carries a TimeUnitExpr). A DATE
// is midnight: its HOUR is 0.
func buildExtract(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	name = "EXTRACT"
	unit, err := b.unitArg(x, name, 0)
	if err != nil {
		return nil, err
	}
	if _, ok := extractUnit(unit); !ok || unit == "DAYOFMONTH" || unit == "DAYOFYEAR" || unit == "DAYOFWEEK" || unit == "WEEKOFYEAR" {
		return nil, b.errf(x.Args[0], "EXTRACT: unsupported unit %s", unit)
	}
	e, err := b.bind(x.Args[1])
	if err != nil {
		return nil, err
	}
	render := func(a []Expr) string {
		return "EXTRACT(" + unit + " FROM " + a[0].String() + ")"
	}
	if e.Type().ID == types.Time {
		return b.newTimeField(x.Args[0], name, unit, e, render)
	}
	if e, err = b.timeArg(x, name, 1, e); err != nil {
		return nil, err
	}
	return newField(name, unit, e, render), nil
}

// unitArg reads the time unit argument i: a TiDB TimeUnitExpr, or the
// string literal the pre-lexer writes for units TiDB does not parse. The
// unit comes back normalized: upper case, singular, SQL_TSI_ prefix and
// FRAC_SECOND (Calcite's MICROSECOND) resolved.
func (b *binder) unitArg(x *ast.FuncCallExpr, name string, i int) (string, error) {
	if u, ok := x.Args[i].(*ast.TimeUnitExpr); ok {
		return u.Unit.String(), nil
	}
	e, err := b.bind(x.Args[i])
	if err != nil {
		return "", err
	}
	s, ok := constString(e)
	if !ok {
		return "", b.errf(x.Args[i], "%s expects a time unit", name)
	}
	u := normUnit(strings.TrimPrefix(strings.ToUpper(s), "SQL_TSI_"))
	if u == "FRAC_SECOND" {
		u = "MICROSECOND"
	}
	return u, nil
}

func buildField(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	e, err := b.bind(x.Args[0])
	if err != nil {
		return nil, err
	}
	if e.Type().ID == types.Time {
		return b.newTimeField(x.Args[0], name, name, e, nil)
	}
	if e, err = b.timeArg(x, name, 0, e); err != nil {
		return nil, err
	}
	return newField(name, name, e, nil), nil
}

// ---------------------------------------------------------------------------
// Units and intervals

// ivl is an interval: a year-month part and a day-time part.
type ivl struct {
	months int64
	nanos  int64
}

// unitSize returns the size of one single unit.
func unitSize(unit string) (ivl, bool) {
	switch unit {
	case "NANOSECOND":
		return ivl{nanos: 1}, true
	case "MICROSECOND":
		return ivl{nanos: 1e3}, true
	case "MILLISECOND":
		return ivl{nanos: 1e6}, true
	case "SECOND":
		return ivl{nanos: nsPerSec}, true
	case "MINUTE":
		return ivl{nanos: nsPerMin}, true
	case "HOUR":
		return ivl{nanos: nsPerHour}, true
	case "DAY":
		return ivl{nanos: nsPerDay}, true
	case "WEEK":
		return ivl{nanos: 7 * nsPerDay}, true
	case "MONTH":
		return ivl{months: 1}, true
	case "QUARTER":
		return ivl{months: 3}, true
	case "YEAR":
		return ivl{months: 12}, true
	}
	return ivl{}, false
}

// compositeUnits lists the fields of MySQL's compound units.
var compositeUnits = map[string][]string{
	"SECOND_MICROSECOND": {"SECOND", "MICROSECOND"},
	"MINUTE_MICROSECOND": {"MINUTE", "SECOND", "MICROSECOND"},
	"MINUTE_SECOND":      {"MINUTE", "SECOND"},
	"HOUR_MICROSECOND":   {"HOUR", "MINUTE", "SECOND", "MICROSECOND"},
	"HOUR_SECOND":        {"HOUR", "MINUTE", "SECOND"},
	"HOUR_MINUTE":        {"HOUR", "MINUTE"},
	"DAY_MICROSECOND":    {"DAY", "HOUR", "MINUTE", "SECOND", "MICROSECOND"},
	"DAY_SECOND":         {"DAY", "HOUR", "MINUTE", "SECOND"},
	"DAY_MINUTE":         {"DAY", "HOUR", "MINUTE"},
	"DAY_HOUR":           {"DAY", "HOUR"},
	"YEAR_MONTH":         {"YEAR", "MONTH"},
}

// normUnit normalizes a unit name: "day to second" -> "DAY_SECOND",
// plural forms accepted.
func normUnit(s string) string {
	u := strings.ToUpper(strings.TrimSpace(s))
	u = strings.Join(strings.Fields(u), " ")
	u = strings.ReplaceAll(u, " TO ", "_")
	if _, ok := unitSize(u); !ok && strings.HasSuffix(u, "S") {
		if _, ok := unitSize(u[:len(u)-1]); ok {
			return u[:len(u)-1]
		}
	}
	return u
}

func unitFields(unit string) ([]string, bool) {
	if f, ok := compositeUnits[unit]; ok {
		return f, true
	}
	if _, ok := unitSize(unit); ok {
		return []string{unit}, true
	}
	return nil, false
}

func mulAdd(acc, n, size int64) (int64, bool) {
	if size != 0 && (n > math.MaxInt64/size || n < math.MinInt64/size) {
		return 0, false
	}
	p := n * size
	s := acc + p
	if (p > 0 && s < acc) || (p < 0 && s > acc) {
		return 0, false
	}
	return s, true
}

// intervalOfInt is n units.
func intervalOfInt(n int64, unit string) (ivl, error) {
	fields, ok := unitFields(unit)
	if !ok {
		return ivl{}, fmt.Errorf("unsupported interval unit %s", unit)
	}
	sz, _ := unitSize(fields[len(fields)-1])
	var r ivl
	if r.months, ok = mulAdd(0, n, sz.months); !ok {
		return r, errors.New("INTERVAL overflow")
	}
	if r.nanos, ok = mulAdd(0, n, sz.nanos); !ok {
		return r, errors.New("INTERVAL overflow")
	}
	return r, nil
}

// parseInterval parses interval text for unit: '5', '-1.5' (SECOND),
// '1:30' (MINUTE_SECOND), '1 02:03:04.5' (DAY_SECOND). Fields are right
// aligned, as MySQL does. It returns the number of fraction digits.
func parseInterval(text, unit string) (ivl, int, error) {
	fields, ok := unitFields(unit)
	if !ok {
		return ivl{}, 0, fmt.Errorf("unsupported interval unit %s", unit)
	}
	bad := fmt.Errorf("invalid INTERVAL '%s' %s", text, strings.ReplaceAll(unit, "_", " TO "))
	s := strings.TrimSpace(text)
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, strings.TrimSpace(s[1:])
	} else if strings.HasPrefix(s, "+") {
		s = strings.TrimSpace(s[1:])
	}
	var groups []string
	var seps []byte
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i {
			return ivl{}, 0, bad
		}
		groups = append(groups, s[i:j])
		if j < len(s) {
			seps = append(seps, s[j])
			j++
			if j == len(s) {
				return ivl{}, 0, bad
			}
		}
		i = j
	}
	if len(groups) == 0 {
		return ivl{}, 0, bad
	}
	// A fraction of seconds: the last group after a '.' when the unit ends
	// with SECOND.
	frac := ""
	if fields[len(fields)-1] == "SECOND" && len(seps) > 0 && seps[len(seps)-1] == '.' {
		frac = groups[len(groups)-1]
		groups = groups[:len(groups)-1]
		if len(frac) > 9 {
			return ivl{}, 0, bad
		}
	}
	if len(groups) > len(fields) {
		return ivl{}, 0, bad
	}
	var r ivl
	off := len(fields) - len(groups)
	for i, g := range groups {
		var n int64
		for _, c := range g {
			if n > (math.MaxInt64-9)/10 {
				return ivl{}, 0, errors.New("INTERVAL overflow")
			}
			n = n*10 + int64(c-'0')
		}
		sz, _ := unitSize(fields[off+i])
		if r.months, ok = mulAdd(r.months, n, sz.months); !ok {
			return ivl{}, 0, errors.New("INTERVAL overflow")
		}
		if r.nanos, ok = mulAdd(r.nanos, n, sz.nanos); !ok {
			return ivl{}, 0, errors.New("INTERVAL overflow")
		}
	}
	if frac != "" {
		var f int64
		for _, c := range frac {
			f = f*10 + int64(c-'0')
		}
		f *= civil.Pow10[9-len(frac)]
		if r.nanos, ok = mulAdd(r.nanos, f, 1); !ok {
			return ivl{}, 0, errors.New("INTERVAL overflow")
		}
	}
	if neg {
		r.months, r.nanos = -r.months, -r.nanos
	}
	return r, len(frac), nil
}

// intervalOfValue converts a run-time interval amount.
func intervalOfValue(v types.Value, t types.Type, unit string) (ivl, error) {
	switch v.Kind() {
	case types.KindInterval: // an INTERVAL value, whatever the unit
		return ivl{nanos: v.Raw()}, nil
	case types.KindIntervalYM:
		return ivl{months: v.Raw()}, nil
	case types.KindInt:
		return intervalOfInt(v.Int(), unit)
	case types.KindString:
		r, _, err := parseInterval(v.Str(), unit)
		return r, err
	}
	r, _, err := parseInterval(types.Format(v, t), unit)
	return r, err
}

// fixedOrIntervalOf is the interval a time shift moves by: fixed when
// the amount was a constant the binder read, else the run-time amount v
// (of type t, in unit) converted.
func fixedOrIntervalOf(fixed *ivl, v types.Value, t types.Type, unit string) (ivl, error) {
	if fixed != nil {
		return *fixed, nil
	}
	return intervalOfValue(v, t, unit)
}

// addIvl adds sign * iv to a TIMESTAMP.
func addIvl(ns int64, iv ivl, sign int64) (int64, bool) {
	if iv.months != 0 {
		m := sign * iv.months
		if m > 12*100000 || m < -12*100000 {
			return 0, false
		}
		days := civil.FloorDiv(ns, nsPerDay)
		tod := ns - days*nsPerDay
		var ok bool
		if ns, ok = tsFromDaysNanos(addMonths(days, m), tod); !ok {
			return 0, false
		}
	}
	d := iv.nanos
	if sign < 0 {
		if d == math.MinInt64 {
			return 0, false
		}
		d = -d
	}
	return mulAdd(ns, d, 1)
}

// unitPrecision is the TIMESTAMP precision an interval of unit needs.
func unitPrecision(unit string) int {
	switch {
	case strings.HasSuffix(unit, "MICROSECOND"):
		return 6
	case unit == "MILLISECOND":
		return 3
	case unit == "NANOSECOND":
		return 9
	}
	return 0
}

func dateUnit(unit string) bool {
	switch unit {
	case "DAY", "WEEK", "MONTH", "QUARTER", "YEAR", "YEAR_MONTH":
		return true
	}
	return false
}

// newDateArith builds DATE_ADD(e, INTERVAL n unit) with sign +1 or -1.
// fixed is the interval when n is constant.
func newDateArith(name string, e, n Expr, unit string, sign int64, fixed *ivl, frac int, render func([]Expr) string) Expr {
	et := e.Type()
	var t types.Type
	switch {
	case et.ID == types.Date && dateUnit(unit) && (fixed == nil || fixed.nanos%nsPerDay == 0):
		t = types.TypeDate
	case et.ID == types.Date:
		t = types.TimestampType(max(unitPrecision(unit), frac))
	default:
		t = types.TimestampType(max(et.Precision, unitPrecision(unit), frac))
	}
	t = strictType(t, e, n)
	if fixed != nil && fixed.months == 0 && et.ID == types.Timestamp {
		return newTsShift(name, e, n, sign*fixed.nanos, t, render)
	}
	isDate := t.ID == types.Date
	nt := n.Type()
	return &call{name: name, args: []Expr{e, n}, typ: t, strict: true, render: render,
		f2: func(v, amount types.Value) (types.Value, error) {
			iv, err := fixedOrIntervalOf(fixed, amount, nt, unit)
			if err != nil {
				return types.NullValue, err
			}
			if isDate {
				days := v.Date()
				if iv.months != 0 {
					days = addMonths(days, sign*iv.months)
				}
				return types.NewDate(days + sign*iv.nanos/nsPerDay), nil
			}
			ns, ok := nanosOf(v)
			if ok {
				ns, ok = addIvl(ns, iv, sign)
			}
			if !ok {
				return types.NullValue, errTimeRange
			}
			return types.NewTimestamp(ns), nil
		}}
}

// tsShift adds a constant number of nanoseconds to a TIMESTAMP: the hot
// WATERMARK form ts - INTERVAL '5' SECOND.
type tsShift struct {
	name   string
	e, n   Expr // n is the (literal) interval amount, kept for rendering
	ie     intExpr
	delta  int64
	typ    types.Type
	render func([]Expr) string
}

func newTsShift(name string, e, n Expr, delta int64, t types.Type, render func([]Expr) string) *tsShift {
	return &tsShift{name: name, e: e, n: n, ie: asIntExpr(e), delta: delta, typ: t, render: render}
}

func (x *tsShift) Type() types.Type { return x.typ }
func (x *tsShift) String() string   { return x.render([]Expr{x.e, x.n}) }
func (x *tsShift) children() []Expr { return []Expr{x.e, x.n} }
func (x *tsShift) withChildren(k []Expr) Expr {
	return newTsShift(x.name, k[0], k[1], x.delta, x.typ, x.render)
}
func (x *tsShift) evalInt(row types.Row) (int64, bool, error) {
	var ts int64
	if x.ie != nil {
		v, null, err := x.ie.evalInt(row)
		if err != nil || null {
			return 0, true, err
		}
		ts = v
	} else {
		v, err := x.e.Eval(row)
		if err != nil || v.IsNull() {
			return 0, true, err
		}
		ts = v.Raw()
	}
	r := ts + x.delta
	if (x.delta > 0 && r < ts) || (x.delta < 0 && r > ts) {
		return 0, true, evalErr(x, "%s", errTimeRange)
	}
	return r, false, nil
}
func (x *tsShift) Eval(row types.Row) (types.Value, error) {
	v, null, err := x.evalInt(row)
	if err != nil || null {
		return types.NullValue, err
	}
	return types.NewTimestamp(v), nil
}

// intervalAmount checks an interval amount and evaluates it when constant.
func (b *binder) intervalAmount(node ast.Node, n Expr, unit string) (*ivl, int, error) {
	if _, ok := unitFields(unit); !ok {
		return nil, 0, b.errf(node, "unsupported interval unit %s", unit)
	}
	t := n.Type()
	if lit, ok := n.(*literal); ok && !lit.v.IsNull() {
		var iv ivl
		var frac int
		var err error
		if lit.v.Kind() == types.KindInt {
			iv, err = intervalOfInt(lit.v.Int(), unit)
		} else if lit.v.Kind() == types.KindString {
			iv, frac, err = parseInterval(lit.v.Str(), unit)
		} else if t.IsNumeric() {
			iv, frac, err = parseInterval(types.Format(lit.v, t), unit)
		} else {
			err = fmt.Errorf("INTERVAL expects a number or a string, got %s", typeName(t))
		}
		if err != nil {
			return nil, 0, b.errf(node, "%s", err)
		}
		return &iv, frac, nil
	}
	if !(t.IsNumeric() || t.ID == types.String || t.ID == types.Null) {
		return nil, 0, b.errf(node, "INTERVAL expects a number or a string, got %s", typeName(t))
	}
	return nil, 0, nil
}

func renderInterval(n Expr, unit string) string {
	return "INTERVAL " + n.String() + " " + unit
}

func buildDateAdd(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	u, ok := x.Args[2].(*ast.TimeUnitExpr)
	if !ok {
		return nil, b.errf(x, "%s expects INTERVAL n unit", name)
	}
	unit := u.Unit.String()
	e, err := b.bind(x.Args[0])
	if err != nil {
		return nil, err
	}
	if id := e.Type().ID; id == types.Interval || id == types.IntervalYM {
		// INTERVAL ... ± INTERVAL ..., which TiDB reads as a DATE_ADD.
		n, err := b.bind(x.Args[1])
		if err != nil {
			return nil, err
		}
		iv, err := b.intervalValue(x, x.Args[1], n, unit)
		if err != nil {
			return nil, err
		}
		sym := "+"
		if name == "DATE_SUB" || name == "SUBDATE" {
			sym = "-"
		}
		return b.arith(x, sym, e, iv)
	}
	if e.Type().ID != types.TimestampLTZ && e.Type().ID != types.Time {
		if e, err = b.timeArg(x, name, 0, e); err != nil {
			return nil, err
		}
	}
	n, err := b.bind(x.Args[1])
	if err != nil {
		return nil, err
	}
	fixed, frac, err := b.intervalAmount(x.Args[1], n, unit)
	if err != nil {
		return nil, err
	}
	sign := int64(1)
	if name == "DATE_SUB" || name == "SUBDATE" {
		sign = -1
	}
	render := func(a []Expr) string {
		return name + "(" + a[0].String() + ", " + renderInterval(a[1], unit) + ")"
	}
	if e.Type().ID == types.Time { // time ± INTERVAL, as TiDB hands it over
		return b.timeArith(x, name, e, n, unit, sign, fixed, render)
	}
	return b.dateArith(name, e, n, unit, sign, fixed, frac, render), nil
}

// dateArith is newDateArith, also for a TIMESTAMP_LTZ: a fixed amount
// of days and smaller units moves the instant (ts_ltz - INTERVAL '5'
// SECOND, a watermark); months and amounts known only at run time move
// its wall clock in the session zone, and the result is the instant that
// clock shows there.
func (b *binder) dateArith(name string, e, n Expr, unit string, sign int64, fixed *ivl, frac int, render func([]Expr) string) Expr {
	et := e.Type()
	if et.ID != types.TimestampLTZ {
		return newDateArith(name, e, n, unit, sign, fixed, frac, render)
	}
	p := max(et.Precision, unitPrecision(unit), frac)
	if fixed != nil && fixed.months == 0 {
		return newTsShift(name, e, n, sign*fixed.nanos, strictType(types.TimestampLTZType(p), e, n), render)
	}
	local := &castExpr{e: e, to: types.TimestampType(et.Precision).WithNotNull(et.NotNull), loc: b.loc}
	r := newDateArith(name, local, n, unit, sign, fixed, frac, render)
	return &castExpr{e: r, to: types.TimestampLTZType(p).WithNotNull(r.Type().NotNull), loc: b.loc}
}

func buildTimestampAdd(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	name = "TIMESTAMPADD"
	unit, err := b.unitArg(x, name, 0)
	if err != nil {
		return nil, err
	}
	if _, ok := unitSize(unit); !ok {
		return nil, b.errf(x.Args[0], "%s: unsupported unit %s", name, unit)
	}
	n, err := b.bind(x.Args[1])
	if err != nil {
		return nil, err
	}
	if err := b.expect(x, name, 1, n, isIntegerType, wantInteger); err != nil {
		return nil, err
	}
	e, err := b.bind(x.Args[2])
	if err != nil {
		return nil, err
	}
	if e.Type().ID != types.TimestampLTZ && e.Type().ID != types.Time {
		if e, err = b.timeArg(x, name, 2, e); err != nil {
			return nil, err
		}
	}
	fixed, frac, err := b.intervalAmount(x.Args[1], n, unit)
	if err != nil {
		return nil, err
	}
	render := func(a []Expr) string {
		return name + "(" + unit + ", " + a[1].String() + ", " + a[0].String() + ")"
	}
	if e.Type().ID == types.Time {
		return b.timeArith(x, name, e, n, unit, 1, fixed, render)
	}
	return b.dateArith(name, e, n, unit, 1, fixed, frac, render), nil
}

func buildTimestampDiff(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	name = "TIMESTAMPDIFF"
	unit, err := b.unitArg(x, name, 0)
	if err != nil {
		return nil, err
	}
	sz, ok := unitSize(unit)
	if !ok {
		return nil, b.errf(x.Args[0], "%s: unsupported unit %s", name, unit)
	}
	var args []Expr
	for i := 1; i <= 2; i++ {
		e, err := b.bind(x.Args[i])
		if err != nil {
			return nil, err
		}
		if e, err = b.timeArg(x, name, i, e); err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	return &call{name: name, args: args, typ: strictType(types.TypeInt, args...), strict: true,
		render: func(a []Expr) string {
			return name + "(" + unit + ", " + a[0].String() + ", " + a[1].String() + ")"
		},
		f2: func(a, c types.Value) (types.Value, error) {
			var n int64
			if sz.months != 0 {
				fa, fb := fieldsOf(a), fieldsOf(c)
				months := (fb.y-fa.y)*12 + (fb.mo - fa.mo)
				ra := fa.d*nsPerDay + fa.h*nsPerHour + fa.mi*nsPerMin + fa.s*nsPerSec + fa.ns
				rb := fb.d*nsPerDay + fb.h*nsPerHour + fb.mi*nsPerMin + fb.s*nsPerSec + fb.ns
				if months > 0 && rb < ra {
					months--
				} else if months < 0 && rb > ra {
					months++
				}
				n = months / sz.months
			} else {
				x, ok1 := nanosOf(a)
				y, ok2 := nanosOf(c)
				d := y - x
				if !ok1 || !ok2 || (x < 0 && y > 0 && d < 0) || (x > 0 && y < 0 && d > 0) {
					return types.NullValue, errTimeRange
				}
				n = d / sz.nanos
			}
			if n < math.MinInt32 || n > math.MaxInt32 {
				return types.NullValue, fmt.Errorf("INT overflow (%d %s)", n, unit)
			}
			return types.NewInt(n), nil
		}}, nil
}

func buildDateDiff(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	var args []Expr
	for i := 0; i < 2; i++ {
		e, err := b.bind(x.Args[i])
		if err != nil {
			return nil, err
		}
		if e, err = b.timeArg(x, name, i, e); err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	return &call{name: name, args: args, typ: strictType(types.TypeInt, args...), strict: true,
		f2: func(a, c types.Value) (types.Value, error) {
			n := fieldsOf(a).days - fieldsOf(c).days
			if n < math.MinInt32 || n > math.MaxInt32 {
				return types.NullValue, fmt.Errorf("INT overflow (%d days)", n)
			}
			return types.NewInt(n), nil
		}}, nil
}

// buildDateFunc binds DATE(x): the date part of a TIMESTAMP, DATE or
// date/time text (NULL if the text does not parse, as MySQL).
func buildDateFunc(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	e, err := b.bind(x.Args[0])
	if err != nil {
		return nil, err
	}
	if e.Type().ID != types.String {
		if e, err = b.timeArg(x, name, 0, e); err != nil {
			return nil, err
		}
	}
	t := strictType(types.TypeDate, e)
	if e.Type().ID == types.String {
		t.NotNull = false
	}
	return &call{name: name, args: []Expr{e}, typ: t, strict: true,
		f1: func(v types.Value) (types.Value, error) {
			switch v.Kind() {
			case types.KindDate:
				return v, nil
			case types.KindString:
				d, ok := parseDateText(v.Str())
				if !ok {
					return types.NullValue, nil
				}
				return types.NewDate(d), nil
			}
			return types.NewDate(civil.FloorDiv(v.Raw(), nsPerDay)), nil
		}}, nil
}

// ---------------------------------------------------------------------------
// FLOOR(ts TO unit), CEIL(ts TO unit)

// floorTime floors TIMESTAMP nanoseconds to unit. Weeks start on Sunday,
// as in Calcite.
func floorTime(ns int64, unit string) int64 {
	switch unit {
	case "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY":
		sz, _ := unitSize(unit)
		return civil.FloorDiv(ns, sz.nanos) * sz.nanos
	}
	days := civil.FloorDiv(ns, nsPerDay)
	return floorDays(days, unit) * nsPerDay
}

func floorDays(days int64, unit string) int64 {
	switch unit {
	case "WEEK":
		return days - civil.FloorMod(days+4, 7)
	case "MONTH", "QUARTER", "YEAR":
		y, m, _ := civil.CivilFromDays(days)
		switch unit {
		case "QUARTER":
			m = (m-1)/3*3 + 1
		case "YEAR":
			m = 1
		}
		return civil.DaysFromCivil(y, m, 1)
	}
	return days
}

func buildFloorTo(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	fname := "FLOOR"
	if x.FnName.L == FuncCeilTo {
		fname = "CEIL"
	}
	e, err := b.bind(x.Args[0])
	if err != nil {
		return nil, err
	}
	if e.Type().ID == types.Time {
		return buildFloorTime(b, x, fname, e)
	}
	if e, err = b.timeArg(x, fname, 0, e); err != nil {
		return nil, err
	}
	ue, unit, us, ok, err := floorUnit(b, x, "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, b.errf(x.Args[1], "%s: unsupported unit %s", fname, us)
	}
	ceil := fname == "CEIL"
	var step int64 // the unit in nanoseconds, for units of fixed length
	switch unit {
	case "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY":
		sz, _ := unitSize(unit)
		step = sz.nanos
	}
	return &call{name: fname, args: []Expr{e, ue}, typ: e.Type(), strict: true,
		render: func(a []Expr) string { return fname + "(" + a[0].String() + " TO " + unit + ")" },
		f2: func(v, _ types.Value) (types.Value, error) {
			if v.Kind() == types.KindDate {
				d := v.Date()
				f := floorDays(d, unit)
				if ceil && f != d {
					switch unit {
					case "WEEK":
						f += 7
					case "MONTH":
						f = addMonths(f, 1)
					case "QUARTER":
						f = addMonths(f, 3)
					case "YEAR":
						f = addMonths(f, 12)
					}
				}
				return types.NewDate(f), nil
			}
			ns := v.Timestamp()
			if step != 0 {
				f := civil.FloorDiv(ns, step) * step
				if ceil && f != ns {
					var ok bool
					if f, ok = mulAdd(f, 1, step); !ok {
						return types.NullValue, errTimeRange
					}
				}
				return types.NewTimestamp(f), nil
			}
			f := floorTime(ns, unit)
			if ceil && f != ns {
				var ok bool
				switch unit {
				case "MONTH":
					f, ok = addIvl(f, ivl{months: 1}, 1)
				case "QUARTER":
					f, ok = addIvl(f, ivl{months: 3}, 1)
				case "YEAR":
					f, ok = addIvl(f, ivl{months: 12}, 1)
				default:
					sz, _ := unitSize(unit)
					f, ok = mulAdd(f, 1, sz.nanos)
				}
				if !ok {
					return types.NullValue, errTimeRange
				}
			}
			return types.NewTimestamp(f), nil
		}}, nil
}

// floorUnit binds FLOOR/CEIL's unit argument: the bound argument, the
// unit normalized, its text as written, and whether it is a constant
// among allowed.
func floorUnit(b *binder, x *ast.FuncCallExpr, allowed ...string) (ue Expr, unit, text string, ok bool, err error) {
	if ue, err = b.bind(x.Args[1]); err != nil {
		return nil, "", "", false, err
	}
	text, ok = constString(ue)
	unit = normUnit(text)
	return ue, unit, text, ok && slices.Contains(allowed, unit), nil
}

// buildFloorTime binds FLOOR/CEIL(time TO unit) for a TIME: the time of
// day rounded to MILLISECOND, SECOND, MINUTE or HOUR, as Flink's
// FLOOR(TIME '12:44:31' TO MINUTE) = 12:44:00; CEIL past 23:00 TO HOUR
// wraps to 00:00, as a TIME holds no day.
func buildFloorTime(b *binder, x *ast.FuncCallExpr, fname string, e Expr) (Expr, error) {
	ue, unit, us, ok, err := floorUnit(b, x, "MILLISECOND", "SECOND", "MINUTE", "HOUR")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, b.errf(x.Args[1], "%s: a TIME rounds to MILLISECOND, SECOND, MINUTE or HOUR, not %s", fname, us)
	}
	sz, _ := unitSize(unit)
	step := sz.nanos
	ceil := fname == "CEIL"
	return &call{name: fname, args: []Expr{e, ue}, typ: e.Type(), strict: true,
		render: func(a []Expr) string { return fname + "(" + a[0].String() + " TO " + unit + ")" },
		f2: func(v, _ types.Value) (types.Value, error) {
			ns := v.TimeOfDay()
			f := civil.FloorDiv(ns, step) * step
			if ceil && f != ns {
				f = civil.FloorMod(f+step, nsPerDay)
			}
			return types.NewTime(f), nil
		}}, nil
}

// buildInterval binds __interval(amount, 'UNIT'): a day-time INTERVAL.
func buildInterval(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	n, err := b.bind(x.Args[0])
	if err != nil {
		return nil, err
	}
	ue, err := b.bind(x.Args[1])
	if err != nil {
		return nil, err
	}
	us, ok := constString(ue)
	if !ok {
		return nil, b.errf(x.Args[1], "INTERVAL expects a unit name")
	}
	unit := normUnit(us)
	if _, ok := unitFields(unit); !ok {
		return nil, b.errf(x.Args[1], "unsupported interval unit %s", us)
	}
	return b.intervalValue(x, x.Args[0], n, unit)
}

// intervalValue is INTERVAL n unit as a value; x is the whole interval,
// arg its amount.
func (b *binder) intervalValue(x, arg ast.Node, n Expr, unit string) (Expr, error) {
	fields, _ := unitFields(unit)
	// YEAR, QUARTER, MONTH and YEAR TO MONTH make an INTERVAL YEAR TO
	// MONTH; the other units a day-time INTERVAL. No unit mixes the two.
	sz, _ := unitSize(fields[0])
	yearMonth := sz.months != 0
	display := strings.ReplaceAll(unit, "_", " TO ")
	if unit == "YEAR_MONTH" {
		if err := checkYearToMonth(n); err != nil {
			return nil, b.errf(x, "%s", err)
		}
	}
	fixed, _, err := b.intervalAmount(arg, n, unit)
	if err != nil {
		return nil, err
	}
	t := literalIntervalType(unit, yearMonth) // interval_cast.go
	if fixed != nil {
		if yearMonth {
			return NewLiteral(types.NewIntervalYM(fixed.months), t.WithNotNull(true)), nil
		}
		return NewLiteral(types.NewInterval(time.Duration(fixed.nanos)), t), nil
	}
	nt := n.Type()
	return &call{name: "INTERVAL", args: []Expr{n}, typ: strictType(t, n), strict: true,
		render: func(a []Expr) string { return "INTERVAL " + a[0].String() + " " + display },
		f1: func(v types.Value) (types.Value, error) {
			iv, err := intervalOfValue(v, nt, unit)
			if err != nil {
				return types.NullValue, err
			}
			if yearMonth {
				return types.NewIntervalYM(iv.months), nil
			}
			return types.NewInterval(time.Duration(iv.nanos)), nil
		}}, nil
}

// ---------------------------------------------------------------------------
// Conversions to and from text and epoch numbers

const defaultTimeFormat = "yyyy-MM-dd HH:mm:ss"

// formatArg compiles an optional literal pattern argument i.
func (b *binder) formatArg(x *ast.FuncCallExpr, name string, args []Expr, i int) (dateFmt, error) {
	if i >= len(args) {
		return nil, nil
	}
	if err := b.expect(x, name, i, args[i], isStringType, wantString); err != nil {
		return nil, err
	}
	if s, ok := constString(args[i]); ok {
		f, err := compileDateFormat(s)
		if err != nil {
			return nil, b.errf(x.Args[i], "%s: %s", name, err)
		}
		return f, nil
	}
	return nil, nil
}

// parseWith parses text with a fixed or run-time pattern, or flexibly.
func parseWith(fixed dateFmt, s string, p *types.Value) (int64, bool, error) {
	f := fixed
	if f == nil && p != nil {
		var err error
		if f, err = compileDateFormat(p.Str()); err != nil {
			return 0, false, err
		}
	}
	if f == nil {
		ns, _, ok := parseTimestampText(s)
		return ns, ok, nil
	}
	ns, ok := f.parse(s)
	return ns, ok, nil
}

// formatCall is the call of a text function whose second argument, a
// format, may be left out: conv gets that argument by pointer, nil when
// the call has one argument only. The format conv uses when it is a
// literal is compiled once by the caller (see formatArg).
func formatCall(name string, args []Expr, t types.Type, conv func(v types.Value, format *types.Value) (types.Value, error)) *call {
	c := &call{name: name, args: args, typ: t, strict: true}
	if len(args) == 2 {
		c.f2 = func(v, p types.Value) (types.Value, error) { return conv(v, &p) }
	} else {
		c.f1 = func(v types.Value) (types.Value, error) { return conv(v, nil) }
	}
	return c
}

func buildToTimestamp(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	if err := b.expect(x, name, 0, args[0], isStringType, wantString); err != nil {
		return nil, err
	}
	fixed, err := b.formatArg(x, name, args, 1)
	if err != nil {
		return nil, err
	}
	toDate := name == "TO_DATE"
	t := types.TimestampType(3)
	if toDate {
		t = types.TypeDate
	}
	conv := func(s types.Value, p *types.Value) (types.Value, error) {
		ns, ok, err := parseWith(fixed, s.Str(), p)
		if err != nil || !ok {
			return types.NullValue, err
		}
		if toDate {
			return types.NewDate(civil.FloorDiv(ns, nsPerDay)), nil
		}
		return types.NewTimestamp(truncNanos(ns, 3)), nil
	}
	return formatCall(name, args, t, conv), nil
}

func buildUnixTimestamp(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		return &call{name: name, typ: types.Type{ID: types.BigInt, NotNull: true}, nondet: true,
			f0: func() (types.Value, error) { return types.NewInt(nowFunc().Unix()), nil }}, nil
	}
	a := args[0]
	if a.Type().ID != types.String || len(args) == 2 {
		if len(args) == 2 && a.Type().ID != types.String {
			return nil, b.argErr(x.Args[0], name, 0, 2, a, wantString)
		}
		if a.Type().ID == types.TimestampLTZ { // an instant: its epoch seconds
			return &call{name: name, args: []Expr{a}, typ: strictType(types.TypeBigInt, a), strict: true,
				f1: func(v types.Value) (types.Value, error) {
					return types.NewInt(civil.FloorDiv(v.Timestamp(), nsPerSec)), nil
				}}, nil
		}
		if a.Type().ID != types.String {
			if a, err = b.timeArg(x, name, 0, a); err != nil {
				return nil, err
			}
			return &call{name: name, args: []Expr{a}, typ: strictType(types.TypeBigInt, a), strict: true,
				f1: func(v types.Value) (types.Value, error) {
					if v.Kind() == types.KindDate {
						return types.NewInt(v.Date() * 86400), nil
					}
					return types.NewInt(civil.FloorDiv(v.Timestamp(), nsPerSec)), nil
				}}, nil
		}
	}
	fixed, err := b.formatArg(x, name, args, 1)
	if err != nil {
		return nil, err
	}
	loc := b.loc
	conv := func(s types.Value, p *types.Value) (types.Value, error) {
		ns, ok, err := parseWith(fixed, s.Str(), p)
		if err != nil {
			return types.NullValue, err
		}
		if !ok { // Flink's value for text that does not parse
			return types.NewInt(math.MinInt64), nil
		}
		// The text is a wall clock in the session zone, as in Flink.
		return types.NewInt(civil.FloorDiv(types.InstantNanos(ns, loc), nsPerSec)), nil
	}
	return formatCall(name, args, strictType(types.TypeBigInt, args...), conv), nil
}

func buildFromUnixtime(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	if err := b.expect(x, name, 0, args[0], isNumericType, wantNumber); err != nil {
		return nil, err
	}
	fixed, err := b.formatArg(x, name, args, 1)
	if err != nil {
		return nil, err
	}
	if len(args) == 1 {
		fixed, _ = compileDateFormat(defaultTimeFormat)
	}
	loc := b.loc
	conv := func(n types.Value, p *types.Value) (types.Value, error) {
		var secs float64
		if n.Kind() == types.KindInt {
			secs = float64(n.Int())
		} else {
			secs = math.Floor(types.ToFloat(n))
		}
		if secs > float64(math.MaxInt64/nsPerSec) || secs < float64(math.MinInt64/nsPerSec) || math.IsNaN(secs) {
			return types.NullValue, errTimeRange
		}
		f := fixed
		if f == nil {
			var err error
			if f, err = compileDateFormat(p.Str()); err != nil {
				return types.NullValue, err
			}
		}
		var buf [32]byte
		// The instant's wall clock in the session zone, as in Flink.
		return types.NewString(string(f.format(buf[:0], splitTS(types.LocalNanos(int64(secs)*nsPerSec, loc))))), nil
	}
	return formatCall(name, args, strictType(types.TypeString, args...), conv), nil
}

// buildToTimestampLTZ binds TO_TIMESTAMP_LTZ(epoch[, precision]), the
// epoch counted in units of 10^-precision seconds (0..9, default 3), and
// TO_TIMESTAMP_LTZ(text[, format[, zone]]), the text read in the zone
// (default UTC, as Flink's). The result is the instant, TIMESTAMP_LTZ(3),
// or TIMESTAMP_LTZ(p) for a precision or a literal format's fraction
// digits above 3.
func buildToTimestampLTZ(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	if args[0].Type().ID == types.String {
		return b.toTimestampLTZText(x, name, args)
	}
	if err := b.expect(x, name, 0, args[0], isNumericType, wantNumber); err != nil {
		return nil, err
	}
	if len(args) == 1 {
		args = append(args, NewLiteral(types.NewInt(3), types.TypeInt.WithNotNull(true)))
	} else if err := b.expect(x, name, 1, args[1], isIntegerType, wantInteger); err != nil {
		return nil, err
	}
	outP := 3
	if p, ok := constInt(args[1]); ok {
		if p < 0 || p > 9 {
			return nil, b.errf(x.Args[1], "%s expects a precision from 0 to 9, got %d", name, p)
		}
		outP = max(3, int(p))
	}
	return &call{name: name, args: args, typ: strictType(types.TimestampLTZType(outP), args...), strict: true,
		f2: func(v, pv types.Value) (types.Value, error) {
			p := pv.Int()
			if p < 0 || p > 9 {
				return types.NullValue, fmt.Errorf("precision must be from 0 to 9, got %d", p)
			}
			unit := civil.Pow10[9-p] // nanoseconds per unit of the value
			var ns int64
			var ok bool
			switch v.Kind() {
			case types.KindInt:
				ns, ok = mulAdd(0, v.Int(), unit)
			case types.KindDecimal: // whole units, as Flink truncates a DECIMAL
				var n int64
				if n, ok = decimalToInt64(v.Decimal()); ok {
					ns, ok = mulAdd(0, n, unit)
				}
			default:
				f := v.Float() * float64(unit)
				ok = !math.IsNaN(f) && f < math.MaxInt64 && f > math.MinInt64
				ns = int64(f)
			}
			if !ok {
				return types.NullValue, errTimeRange
			}
			return types.NewTimestamp(truncNanos(ns, outP)), nil
		}}, nil
}

func (b *binder) toTimestampLTZText(x *ast.FuncCallExpr, name string, args []Expr) (Expr, error) {
	for i := 1; i < len(args); i++ {
		if err := b.expect(x, name, i, args[i], isStringType, wantString); err != nil {
			return nil, err
		}
	}
	fixed, err := b.formatArg(x, name, args, 1)
	if err != nil {
		return nil, err
	}
	if len(args) == 1 {
		fixed, _ = compileDateFormat(defaultTimeFormat)
	}
	outP := 3
	if fixed != nil {
		for _, it := range fixed {
			if it.kind == fkFrac {
				outP = max(outP, min(it.n, 9))
			}
		}
	}
	var zone *time.Location = time.UTC
	if len(args) == 3 {
		if zone, err = b.zoneArg(x, name, 2, args[2]); err != nil {
			return nil, err
		}
	}
	return &call{name: name, args: args, typ: types.TimestampLTZType(outP), strict: true,
		fn: func(vs []types.Value) (types.Value, error) {
			var pat *types.Value
			if len(vs) > 1 {
				pat = &vs[1]
			}
			ns, ok, err := parseWith(fixed, vs[0].Str(), pat)
			if err != nil || !ok {
				return types.NullValue, err
			}
			z := zone
			if z == nil {
				if z, err = javaZone(vs[2].Str()); err != nil {
					return types.NullValue, err
				}
			}
			if z != time.UTC { // the wall clock ns in zone z, as a UTC instant
				f := splitTS(ns)
				t := time.Date(int(f.y), time.Month(f.mo), int(f.d), int(f.h), int(f.mi), int(f.s), int(f.ns), z)
				ns = t.UnixNano()
			}
			return types.NewTimestamp(truncNanos(ns, outP)), nil
		}}, nil
}

// clockPrecision is the precision argument of a clock function (NOW(p),
// CURRENT_TIME(p), ...): a constant 0..9, or def when there is none.
func clockPrecision(b *binder, x *ast.FuncCallExpr, name string, def int) (int, error) {
	if len(x.Args) != 1 {
		return def, nil
	}
	e, err := b.bind(x.Args[0])
	if err != nil {
		return 0, err
	}
	v, ok := constInt(e)
	if !ok || v < 0 || v > 9 {
		return 0, b.errf(x.Args[0], "%s expects a precision 0..9", name)
	}
	return int(v), nil
}

func buildNow(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	p, err := clockPrecision(b, x, name, 3)
	if err != nil {
		return nil, err
	}
	// As in Flink: CURRENT_TIMESTAMP, NOW(), CURRENT_ROW_TIMESTAMP() and
	// PROCTIME() are the instant, TIMESTAMP_LTZ(3); LOCALTIMESTAMP and
	// CURRENT_DATE are the wall clock and date in the session zone.
	// (UTC_TIMESTAMP, UTC_DATE and SYSDATE are MySQL's: UTC wall clock.)
	loc := b.loc
	switch name {
	case "CURRENT_DATE", "CURDATE", "UTC_DATE":
		if name == "UTC_DATE" {
			loc = time.UTC
		}
		return &call{name: name, typ: types.Type{ID: types.Date, NotNull: true}, nondet: true,
			render: func([]Expr) string { return name },
			f0: func() (types.Value, error) {
				return types.NewDate(civil.FloorDiv(types.LocalNanos(nowFunc().UnixNano(), loc), nsPerDay)), nil
			}}, nil
	}
	render := func([]Expr) string { return name + "()" }
	if name == "CURRENT_TIMESTAMP" || name == "LOCALTIMESTAMP" || name == "LOCALTIME" {
		render = func([]Expr) string { return name }
	}
	switch name {
	case "CURRENT_TIMESTAMP", "NOW", "CURRENT_ROW_TIMESTAMP", "PROCTIME":
		return &call{name: name, typ: types.Type{ID: types.TimestampLTZ, Precision: p, NotNull: true}, nondet: true,
			render: render,
			f0: func() (types.Value, error) {
				return types.NewTimestamp(truncNanos(nowFunc().UnixNano(), p)), nil
			}}, nil
	case "UTC_TIMESTAMP", "SYSDATE":
		loc = time.UTC
	}
	return &call{name: name, typ: types.Type{ID: types.Timestamp, Precision: p, NotNull: true}, nondet: true,
		render: render,
		f0: func() (types.Value, error) {
			return types.NewTimestamp(truncNanos(types.LocalNanos(nowFunc().UnixNano(), loc), p)), nil
		}}, nil
}
