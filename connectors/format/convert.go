// Package format holds the row formats shared by connectors: decoders
// that turn a JSON line or a CSV record into a row (the filesystem and
// Kafka sources) and encoders that turn a row back into one (the
// filesystem and Kafka sinks).
package format

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/internal/civil"
	"github.com/streamsql/streamsql/types"
)

// Decoder turns one record into a row.
type Decoder interface {
	// Skip reports whether a line (without its line break) is no record:
	// blank lines, and comments where the format allows them.
	Skip(line []byte) bool
	// Decode parses rec (without its final line break) into row, whose
	// values are NULL on entry. It returns ErrIncomplete when the record
	// goes on with the next line.
	Decode(rec []byte, row types.Row) error
}

// ErrIncomplete asks for the next line of the record.
var ErrIncomplete = errors.New("record continues on the next line")

// column is what decoders know of a column.
type column struct {
	name string
	t    types.Type
	// plain: a STRING without a length limit, taken as is
	plain bool
	// fields are a ROW's fields, an ARRAY's element (one), a MAP's key
	// and value (two), as columns of their own.
	fields []column
}

// Readable reports whether a decoder of the format reads columns of type
// t: every scalar type (TIME as HH:mm:ss[.f], as CAST reads it; the
// INTERVAL types as numbers, see interval.go); ROW, ARRAY and MAP (of
// readable types) only from JSON. The csv format checks its columns with
// CheckCSVColumns instead (ROW and ARRAY of scalars).
func Readable(t types.Type, json bool) bool {
	switch t.ID {
	case types.Boolean, types.Int, types.BigInt, types.Double, types.Decimal, types.String, types.Date, types.Time, types.Timestamp, types.TimestampLTZ, types.Bytes,
		types.Interval, types.IntervalYM:
		return true
	case types.RowT, types.Array, types.Map, types.Multiset:
		for _, f := range t.Fields {
			if !json || !Readable(f.Type, json) {
				return false
			}
		}
		return json
	}
	return false
}

// project returns the columns fields of cs, or cs when fields is nil.
func project(cs []connectors.Column, fields []int) []connectors.Column {
	if fields == nil {
		return cs
	}
	out := make([]connectors.Column, len(fields))
	for i, f := range fields {
		out[i] = cs[f]
	}
	return out
}

func makeColumns(cs []connectors.Column) []column {
	out := make([]column, len(cs))
	for i, c := range cs {
		out[i] = makeColumn(c.Name, c.Type)
	}
	return out
}

func makeColumn(name string, t types.Type) column {
	t = t.Nullable()
	c := column{name: name, t: t,
		plain: t.ID == types.String && (t.Precision <= 0 || t.Precision >= types.MaxStringLength)}
	for _, f := range t.Fields {
		fname := name + "." + f.Name
		if t.ID != types.RowT {
			fname = name
		}
		c.fields = append(c.fields, makeColumn(fname, f.Type))
	}
	return c
}

// fieldError is a value that does not convert to its column's type.
func fieldError(c *column, err error) error {
	return fmt.Errorf("column '%s': %v", c.name, err)
}

// fromText converts text to c's type as CAST(text AS type) does. Common
// forms take a fast path; anything else, and every error, goes through
// expr.CastValue, so the rules are exactly CAST's.
func fromText(s []byte, c *column) (types.Value, error) {
	switch c.t.ID {
	case types.String:
		if c.plain {
			return types.NewString(string(s)), nil
		}
	case types.Int, types.BigInt:
		if i, ok := parseInt(s); ok && (c.t.ID == types.BigInt || (i >= math.MinInt32 && i <= math.MaxInt32)) {
			return types.NewInt(i), nil
		}
	case types.Double:
		if len(s) > 0 && !isSpace(s[0]) && !isSpace(s[len(s)-1]) {
			if f, err := strconv.ParseFloat(string(s), 64); err == nil {
				return types.NewFloat(f), nil
			}
		}
	case types.Boolean:
		switch string(s) {
		case "true":
			return types.NewBool(true), nil
		case "false":
			return types.NewBool(false), nil
		}
	case types.Timestamp:
		if ns, ok := parseTimestamp(s, c.t.Precision); ok {
			return types.NewTimestamp(ns), nil
		}
	case types.TimestampLTZ:
		// An instant: the wall clock followed by 'Z' or an offset
		// (+08:00, +0800, +08), or without either read in UTC, as Flink's
		// json and csv formats read a TIMESTAMP_LTZ.
		body, off, ok := splitOffset(s)
		if ok {
			if ns, ok := parseTimestamp(body, 9); ok {
				ns -= off
				if p := c.t.Precision; p < 9 {
					ns -= ((ns % civil.Pow10[9-p]) + civil.Pow10[9-p]) % civil.Pow10[9-p]
				}
				return types.NewTimestamp(ns), nil
			}
		}
		return types.NullValue, fieldError(c, fmt.Errorf("'%s' is not a TIMESTAMP_LTZ: write it as 2024-01-01 08:00:00Z, 2024-01-01T08:00:00.000+08:00, or a UTC wall clock", s))
	case types.Interval, types.IntervalYM:
		return intervalFromText(s, c) // interval.go
	case types.Bytes: // base64, as Flink's json and csv formats write them
		b, err := base64.StdEncoding.AppendDecode(nil, s)
		if err != nil {
			return types.NullValue, fieldError(c, fmt.Errorf("'%s' is not base64", s))
		}
		return types.NewBytes(b), nil
	}
	v, err := expr.CastValue(types.NewString(string(s)), types.TypeString, c.t)
	if err != nil {
		return types.NullValue, fieldError(c, err)
	}
	return v, nil
}

// splitOffset splits a timestamp text into its wall clock and the
// offset of its zone suffix, in nanoseconds ('Z': 0, '+08:00': 8 h; no
// suffix: 0). ok is false for a malformed suffix.
func splitOffset(s []byte) (body []byte, off int64, ok bool) {
	n := len(s)
	if n > 0 && (s[n-1] == 'Z' || s[n-1] == 'z') {
		return s[:n-1], 0, true
	}
	if n <= 19 {
		return s, 0, true // no room for a suffix after yyyy-MM-dd HH:mm:ss
	}
	i := 19
	for i < n && s[i] != '+' && s[i] != '-' {
		i++
	}
	if i == n {
		return s, 0, true
	}
	digits := make([]byte, 0, 4)
	for _, c := range s[i+1:] {
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
		case c == ':' && len(digits) == 2:
		default:
			return nil, 0, false
		}
	}
	if len(digits) != 2 && len(digits) != 4 {
		return nil, 0, false
	}
	h := int64(digits[0]-'0')*10 + int64(digits[1]-'0')
	var m int64
	if len(digits) == 4 {
		m = int64(digits[2]-'0')*10 + int64(digits[3]-'0')
	}
	if h > 18 || m > 59 {
		return nil, 0, false
	}
	off = (h*3600 + m*60) * 1e9
	if s[i] == '-' {
		off = -off
	}
	return s[:i], off, true
}

// isSpace is what strings.TrimSpace trims, for ASCII.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c >= 0x80
}

// parseInt parses [+-]digits of at most 18 digits (which cannot overflow).
func parseInt(s []byte) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// parseTimestamp parses exactly 'yyyy-mm-dd hh:mm:ss[.f{1,9}]' (or with
// 'T' for the space), years 1970..2199, truncated to precision p as CAST
// does. Other forms report false and take CAST's general path.
func parseTimestamp(s []byte, p int) (int64, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	d2 := func(i int) int64 {
		a, b := s[i]-'0', s[i+1]-'0'
		if a > 9 || b > 9 {
			return -1
		}
		return int64(a)*10 + int64(b)
	}
	y1, y2 := d2(0), d2(2)
	mo, d, h, mi, sec := d2(5), d2(8), d2(11), d2(14), d2(17)
	if y1 < 0 || y2 < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return 0, false
	}
	y := y1*100 + y2
	if y < 1970 || y > 2199 || d > civil.DaysInMonth(y, mo) {
		return 0, false
	}
	var frac int64
	if len(s) > 19 {
		if s[19] != '.' || len(s) == 20 || len(s) > 29 {
			return 0, false
		}
		scale := int64(1e9)
		for _, c := range s[20:] {
			if c < '0' || c > '9' {
				return 0, false
			}
			scale /= 10
			frac += int64(c-'0') * scale
		}
	}
	ns := (civil.DaysFromCivil(y, mo, d)*86400+h*3600+mi*60+sec)*1e9 + frac
	if p >= 0 && p < 9 {
		u := civil.Pow10[9-p]
		ns -= ns % u // ns >= 0 here, so this is CAST's floor
	}
	return ns, true
}

// epochMillis converts a JSON integer of epoch milliseconds to a
// TIMESTAMP(p), truncating toward -inf as CAST does.
func epochMillis(s []byte, c *column) (types.Value, error) {
	ms, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil || ms > math.MaxInt64/1_000_000 || ms < math.MinInt64/1_000_000 {
		return types.NullValue, fieldError(c, fmt.Errorf("JSON number %s is not epoch milliseconds in the range of %s", s, c.t))
	}
	ns := ms * 1e6
	if p := c.t.Precision; p >= 0 && p < 9 {
		u := civil.Pow10[9-p]
		q := ns / u
		if ns%u < 0 {
			q--
		}
		ns = q * u
	}
	return types.NewTimestamp(ns), nil
}
