package expr

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // CONVERT_TZ and TO_TIMESTAMP_LTZ resolve zone names without the host's zoneinfo

	"github.com/cockroachdb/apd/v3"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/internal/civil"
	"github.com/streamsql/streamsql/types"
)

// Internal functions the pre-lexer (package parser) writes for Flink
// syntax TiDB does not parse.
const (
	// FuncExtract is EXTRACT(unit FROM t), written __extract('UNIT', t):
	// TiDB knows only MySQL's units (no DOW, DOY, EPOCH, MILLISECOND, ...).
	FuncExtract = "__extract"
	// FuncTimestampAdd and FuncTimestampDiff are TIMESTAMPADD and
	// TIMESTAMPDIFF with the unit as a string, for the same reason.
	FuncTimestampAdd  = "__timestampadd"
	FuncTimestampDiff = "__timestampdiff"
	// FuncOverlaps is (a, b) OVERLAPS (c, d), written __overlaps(a, b, c, d).
	FuncOverlaps = "__overlaps"
)

// currentDatabase is what CURRENT_DATABASE() returns: streamsql has one
// catalog and one database, named as Flink names its defaults.
const currentDatabase = "default_database"

func buildCurrentDatabase(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	return NewLiteral(types.NewString(currentDatabase), types.TypeString.WithNotNull(true)), nil
}

// javaShortZones are the three-letter zone IDs Java's TimeZone accepts
// (ZoneId.SHORT_IDS), which Flink's CONVERT_TZ therefore accepts.
var javaShortZones = map[string]string{
	"ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
	"ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo",
	"BST": "Asia/Dhaka", "CAT": "Africa/Harare", "CNT": "America/St_Johns",
	"CST": "America/Chicago", "CTT": "Asia/Shanghai", "EAT": "Africa/Addis_Ababa",
	"ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
	"JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
	"NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix",
	"PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
	"VST": "Asia/Ho_Chi_Minh", "EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}

// javaZone resolves a time zone as Java's TimeZone.getTimeZone does: a
// region ID (America/Los_Angeles), UTC or GMT, a custom ID GMT+hh[:mm],
// or a three-letter short ID. Java maps an unknown ID to GMT; streamsql
// reports it instead.
func javaZone(id string) (*time.Location, error) {
	if z, ok := javaShortZones[id]; ok {
		id = z
	}
	if strings.HasPrefix(id, "-") || strings.HasPrefix(id, "+") {
		id = "GMT" + id
	}
	for _, p := range []string{"GMT", "UTC", "UT"} {
		rest, ok := strings.CutPrefix(id, p)
		if !ok || rest == "" || (rest[0] != '+' && rest[0] != '-') {
			continue
		}
		sign := 1
		if rest[0] == '-' {
			sign = -1
		}
		hh, mm, ok := strings.Cut(rest[1:], ":")
		if !ok && len(hh) == 4 {
			hh, mm = hh[:2], hh[2:]
		}
		var h, m int
		if _, err := fmt.Sscanf(hh, "%d", &h); err != nil || len(hh) == 0 || len(hh) > 2 || h > 23 {
			return nil, fmt.Errorf("unknown time zone '%s'", id)
		}
		if mm != "" {
			if _, err := fmt.Sscanf(mm, "%d", &m); err != nil || len(mm) != 2 || m > 59 {
				return nil, fmt.Errorf("unknown time zone '%s'", id)
			}
		}
		return time.FixedZone(id, sign*(h*3600+m*60)), nil
	}
	switch id {
	case "GMT", "UTC", "UT", "Z":
		return time.UTC, nil
	case "":
		return nil, fmt.Errorf("unknown time zone ''")
	}
	loc, err := time.LoadLocation(id)
	if err != nil || id == "Local" {
		return nil, fmt.Errorf("unknown time zone '%s'", id)
	}
	return loc, nil
}

// zoneArg checks a time zone argument; a literal is resolved at bind time.
func (b *binder) zoneArg(x *ast.FuncCallExpr, name string, i int, e Expr) (*time.Location, error) {
	if err := b.expect(x, name, i, e, isStringType, wantString); err != nil {
		return nil, err
	}
	if s, ok := constString(e); ok {
		loc, err := javaZone(s)
		if err != nil {
			return nil, b.errf(x.Args[i], "%s: %s", name, err)
		}
		return loc, nil
	}
	return nil, nil
}

func zoneOf(fixed *time.Location, v types.Value) (*time.Location, error) {
	if fixed != nil {
		return fixed, nil
	}
	return javaZone(v.Str())
}

// buildConvertTZ binds CONVERT_TZ(text, from_tz, to_tz): the wall-clock
// time 'yyyy-MM-dd HH:mm:ss' in from_tz shown in to_tz, in that format.
// Text without a time of day gives NULL; digits after the seconds are
// ignored, as Java's SimpleDateFormat ignores them.
func buildConvertTZ(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	if err := b.expect(x, name, 0, args[0], isStringType, wantString); err != nil {
		return nil, err
	}
	from, err := b.zoneArg(x, name, 1, args[1])
	if err != nil {
		return nil, err
	}
	to, err := b.zoneArg(x, name, 2, args[2])
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: types.TypeString, strict: true,
		f3: func(s, f, t types.Value) (types.Value, error) {
			days, tod, _, hasTime, ok := parseDateTime(s.Str())
			if !ok || !hasTime {
				return types.NullValue, nil
			}
			fz, err := zoneOf(from, f)
			if err != nil {
				return types.NullValue, err
			}
			tz, err := zoneOf(to, t)
			if err != nil {
				return types.NullValue, err
			}
			y, mo, d := civil.CivilFromDays(days)
			tod -= tod % nsPerSec
			in := time.Date(int(y), time.Month(mo), int(d), 0, 0, 0, 0, fz).Add(time.Duration(tod))
			return types.NewString(in.In(tz).Format("2006-01-02 15:04:05")), nil
		}}, nil
}

// buildOverlaps binds (a, b) OVERLAPS (c, d), written __overlaps(a, b, c,
// d): each pair is a period given by two time points, or a start and an
// INTERVAL; the periods, each ordered, overlap when each ends at or after
// the other starts (Calcite's rule, which Flink uses).
func buildOverlaps(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	name = "OVERLAPS"
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	// Periods of TIME values (Flink's example: (TIME '2:55:00', INTERVAL
	// '1' HOUR) OVERLAPS (TIME '3:30:00', INTERVAL '2' HOUR)) are
	// compared as nanoseconds since midnight; both periods must then be
	// TIMEs.
	if args[0].Type().ID == types.Time || args[2].Type().ID == types.Time {
		for i, a := range args {
			if id := a.Type().ID; id != types.Time && !(id == types.Interval && i%2 == 1) {
				return nil, b.argErr(x.Args[i], name, i, len(x.Args), a, "TIME (or an INTERVAL as the second of a pair), as the other period is of TIMEs")
			}
		}
	}
	for _, i := range []int{0, 2} {
		if args[i].Type().ID == types.Time {
			continue
		}
		if args[i], err = b.timeArg(x, name, i, args[i]); err != nil {
			return nil, err
		}
		if args[i+1].Type().ID != types.Interval {
			if args[i+1], err = b.timeArg(x, name, i+1, args[i+1]); err != nil {
				return nil, err
			}
		}
	}
	return &call{name: name, args: args, typ: strictType(types.TypeBoolean, args...), strict: true,
		render: func(a []Expr) string {
			return "(" + a[0].String() + ", " + a[1].String() + ") OVERLAPS (" + a[2].String() + ", " + a[3].String() + ")"
		},
		fn: func(vs []types.Value) (types.Value, error) {
			var ends [4]int64
			for p := 0; p < 2; p++ {
				s, ok := nanosOf(vs[2*p])
				if !ok {
					return types.NullValue, errTimeRange
				}
				e := vs[2*p+1]
				var en int64
				if e.Kind() == types.KindInterval {
					if en, ok = mulAdd(s, int64(e.Interval()), 1); !ok {
						return types.NullValue, errTimeRange
					}
				} else if en, ok = nanosOf(e); !ok {
					return types.NullValue, errTimeRange
				}
				ends[2*p], ends[2*p+1] = min(s, en), max(s, en)
			}
			return types.NewBool(ends[1] >= ends[2] && ends[3] >= ends[0]), nil
		}}, nil
}

// decimalToInt64 truncates d toward zero to an int64.
func decimalToInt64(d *apd.Decimal) (int64, bool) {
	c := decCtx
	c.Rounding = apd.RoundDown
	q := new(apd.Decimal)
	if _, err := c.Quantize(q, d, 0); err != nil {
		return 0, false
	}
	n, err := q.Int64()
	return n, err == nil
}
