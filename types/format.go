package types

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
)

// Format renders v of type t in streamsql's canonical text form, the one
// print sinks and golden tests use:
//   - NULL as NULL, booleans as true / false;
//   - DOUBLE in Go's shortest form (2.5, 3);
//   - DECIMAL with its declared scale;
//   - TIMESTAMP(p) as 2024-01-01 00:00:01.000 with p fractional digits;
//   - DATE as 2024-01-01; strings raw; BYTES as x'0aff', as Flink's
//     SQL client prints them;
//   - ROW as (1, abc), ARRAY as [1, 2], MAP as {k1=1, k2=2}, as Flink's
//     SQL client shows them.
//
// A TIMESTAMP_LTZ value is shown in UTC; FormatIn shows it in a zone.
func Format(v Value, t Type) string {
	return string(appendFormat(nil, v, t, time.UTC))
}

// FormatIn is Format showing TIMESTAMP_LTZ values, at any depth, as the
// wall clock of zone loc (the session's table.local-time-zone); nil is
// UTC.
func FormatIn(v Value, t Type, loc *time.Location) string {
	return string(appendFormat(nil, v, t, loc))
}

// AppendFormat is Format appending to dst.
func AppendFormat(dst []byte, v Value, t Type) []byte {
	return appendFormat(dst, v, t, time.UTC)
}

// AppendFormatIn is FormatIn appending to dst.
func AppendFormatIn(dst []byte, v Value, t Type, loc *time.Location) []byte {
	return appendFormat(dst, v, t, loc)
}

// LocalNanos is the wall clock of instant nanos (since the epoch, UTC) in
// loc, as nanoseconds since 1970-01-01 00:00:00 of that wall clock: the
// TIMESTAMP value a TIMESTAMP_LTZ value shows as in loc.
//
// A nil loc is UTC, in LocalNanos and InstantNanos.
func LocalNanos(nanos int64, loc *time.Location) int64 {
	if loc == time.UTC || loc == nil {
		return nanos
	}
	_, off := time.Unix(0, nanos).In(loc).Zone()
	return nanos + int64(off)*1e9
}

// InstantNanos is the instant at which loc's wall clock shows local (a
// TIMESTAMP value, nanoseconds since 1970-01-01 00:00:00 of that clock),
// as nanoseconds since the epoch in UTC. As in Java's ZonedDateTime (and
// so Flink): a wall clock skipped by a daylight-saving gap is moved
// forward by the gap's length; one repeated by an overlap is the earlier
// instant.
func InstantNanos(local int64, loc *time.Location) int64 {
	if loc == time.UTC || loc == nil {
		return local
	}
	off := func(instant int64) int64 {
		_, o := time.Unix(0, instant).In(loc).Zone()
		return int64(o) * 1e9
	}
	// The offsets a day before and after bracket at most one transition
	// (no zone changes its offset twice within two days).
	const day = 86400 * int64(1e9)
	before, after := off(local-day), off(local+day)
	if before == after {
		return local - before
	}
	okBefore, okAfter := off(local-before) == before, off(local-after) == after
	switch {
	case okBefore && okAfter: // an overlap: the earlier instant
		return local - max(before, after)
	case okAfter:
		return local - after
	}
	// okBefore alone, or a gap: read with the offset before the
	// transition, which lands past the gap.
	return local - before
}

func appendFormat(dst []byte, v Value, t Type, loc *time.Location) []byte {
	switch v.k {
	case KindNull:
		return append(dst, "NULL"...)
	case KindBool:
		if v.i != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case KindInt:
		return strconv.AppendInt(dst, v.i, 10)
	case KindFloat:
		f := v.Float()
		switch {
		case math.IsInf(f, 1):
			return append(dst, "Infinity"...) // as Java prints it
		case math.IsInf(f, -1):
			return append(dst, "-Infinity"...)
		}
		return strconv.AppendFloat(dst, f, 'g', -1, 64)
	case KindDecimal:
		d := v.dec()
		if t.ID == Decimal && -d.Exponent != int32(t.Scale) {
			q := new(apd.Decimal)
			ctx := apd.BaseContext.WithPrecision(MaxDecimalPrecision + 2)
			ctx.Rounding = apd.RoundHalfUp
			if _, err := ctx.Quantize(q, d, -int32(t.Scale)); err == nil {
				d = q
			}
		}
		return append(dst, d.Text('f')...)
	case KindString:
		if t.ID == Bytes {
			return AppendBytesLiteral(dst, v.s)
		}
		return append(dst, v.s...)
	case KindDate:
		return v.Time().AppendFormat(dst, "2006-01-02")
	case KindTimestamp:
		p := 3
		if t.IsTimestamp() {
			p = t.Precision
		}
		ns := v.i
		if t.ID == TimestampLTZ {
			ns = LocalNanos(ns, loc)
		}
		return appendTimestamp(dst, ns, p)
	case KindInterval:
		return appendInterval(dst, v.i)
	case KindTime:
		p := 0
		if t.ID == Time {
			p = t.Precision
		}
		return AppendTime(dst, v.i, p)
	case KindIntervalYM:
		return appendIntervalYM(dst, v.i)
	case KindRow:
		dst = append(dst, '(')
		for i, e := range v.Elems() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendFormat(dst, e, t.fieldType(i), loc)
		}
		return append(dst, ')')
	case KindArray:
		dst = append(dst, '[')
		for i, e := range v.Elems() {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendFormat(dst, e, t.fieldType(0), loc)
		}
		return append(dst, ']')
	case KindMap:
		dst = append(dst, '{')
		es := v.Elems()
		for i := 0; i+1 < len(es); i += 2 {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendFormat(dst, es[i], t.fieldType(0), loc)
			dst = append(dst, '=')
			dst = appendFormat(dst, es[i+1], t.fieldType(1), loc)
		}
		return append(dst, '}')
	}
	return append(dst, '?')
}

// AppendBytesLiteral renders bytes as Flink prints them, x'<hex>'.
func AppendBytesLiteral(dst []byte, b string) []byte {
	const digits = "0123456789abcdef"
	dst = append(dst, "x'"...)
	for i := 0; i < len(b); i++ {
		dst = append(dst, digits[b[i]>>4], digits[b[i]&15])
	}
	return append(dst, '\'')
}

// appendInterval renders a day-time interval as Flink does:
// +1 02:03:04.500 (sign, days, then hours:minutes:seconds.millis).
func appendInterval(dst []byte, nanos int64) []byte {
	sign := byte('+')
	u := uint64(nanos)
	if nanos < 0 {
		sign, u = '-', uint64(-nanos)
	}
	ms := u / 1e6
	days, ms := ms/86400000, ms%86400000
	h, ms := ms/3600000, ms%3600000
	m, ms := ms/60000, ms%60000
	sec, ms := ms/1000, ms%1000
	dst = append(dst, sign)
	dst = strconv.AppendUint(dst, days, 10)
	dst = append(dst, ' ')
	two := func(dst []byte, n uint64) []byte {
		if n < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendUint(dst, n, 10)
	}
	dst = two(dst, h)
	dst = append(dst, ':')
	dst = two(dst, m)
	dst = append(dst, ':')
	dst = two(dst, sec)
	dst = append(dst, '.')
	frac := strconv.FormatUint(ms+1000, 10)[1:]
	return append(dst, frac...)
}

// AppendTime renders a time of day (nanoseconds since midnight) as
// HH:mm:ss with p fractional digits, as Flink shows a TIME(p).
func AppendTime(dst []byte, nanos int64, p int) []byte {
	secs, frac := nanos/1e9, nanos%1e9
	for _, n := range [3]int64{secs / 3600, secs / 60 % 60, secs % 60} {
		dst = append(dst, byte('0'+n/10), byte('0'+n%10))
		dst = append(dst, ':')
	}
	dst = dst[:len(dst)-1]
	if p > 0 {
		dst = append(dst, '.')
		dst = append(dst, strconv.FormatInt(frac+1e9, 10)[1:p+1]...)
	}
	return dst
}

// appendIntervalYM renders a year-month interval as Flink's SQL client
// and CAST to STRING do (Calcite's YEAR TO MONTH form): sign, years, '-',
// two-digit months: +1-06, -0-01.
func appendIntervalYM(dst []byte, months int64) []byte {
	sign := byte('+')
	u := uint64(months)
	if months < 0 {
		sign, u = '-', uint64(-months)
	}
	dst = append(dst, sign)
	dst = strconv.AppendUint(dst, u/12, 10)
	dst = append(dst, '-')
	if u%12 < 10 {
		dst = append(dst, '0')
	}
	return strconv.AppendUint(dst, u%12, 10)
}

func appendTimestamp(dst []byte, nanos int64, p int) []byte {
	t := time.Unix(0, nanos).UTC()
	dst = t.AppendFormat(dst, "2006-01-02 15:04:05")
	if p > 0 {
		frac := strconv.Itoa(t.Nanosecond() + 1e9)[1:] // 9 digits, zero padded
		dst = append(dst, '.')
		dst = append(dst, frac[:p]...)
	}
	return dst
}

// FormatRow renders a row as values joined by sep, TIMESTAMP_LTZ values
// in UTC.
func FormatRow(r Row, ts []Type, sep string) string { return FormatRowIn(r, ts, sep, time.UTC) }

// FormatRowIn is FormatRow showing TIMESTAMP_LTZ values in zone loc.
func FormatRowIn(r Row, ts []Type, sep string, loc *time.Location) string {
	var b strings.Builder
	var buf []byte
	for i, v := range r {
		if i > 0 {
			b.WriteString(sep)
		}
		var t Type
		if i < len(ts) {
			t = ts[i]
		}
		buf = appendFormat(buf[:0], v, t, loc)
		b.Write(buf)
	}
	return b.String()
}
