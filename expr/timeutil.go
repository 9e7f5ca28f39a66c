package expr

import (
	"math"
	"strings"
	"time"

	"github.com/streamsql/streamsql/internal/civil"
)

const (
	nsPerSec  = int64(1e9)
	nsPerMin  = 60 * nsPerSec
	nsPerHour = 60 * nsPerMin
	nsPerDay  = 24 * nsPerHour
)

// tsFields splits a TIMESTAMP into its civil fields.
type tsFields struct {
	y, mo, d, h, mi, s, ns int64
	days                   int64 // days since epoch
}

func splitTS(ns int64) tsFields {
	days := civil.FloorDiv(ns, nsPerDay)
	tod := ns - days*nsPerDay
	y, mo, d := civil.CivilFromDays(days)
	return tsFields{
		y: y, mo: mo, d: d,
		h: tod / nsPerHour, mi: tod / nsPerMin % 60, s: tod / nsPerSec % 60, ns: tod % nsPerSec,
		days: days,
	}
}

// tsFromDaysNanos combines days and nanoseconds of day, reporting false
// when the result does not fit int64 nanoseconds.
func tsFromDaysNanos(days, tod int64) (int64, bool) {
	const maxDays = math.MaxInt64 / nsPerDay
	if days > maxDays || days < -maxDays-1 {
		return 0, false
	}
	r := days * nsPerDay
	s := r + tod
	if (tod > 0 && s < r) || (tod < 0 && s > r) {
		return 0, false
	}
	return s, true
}

// truncNanos truncates a TIMESTAMP to precision p (0..9) toward -inf.
func truncNanos(ns int64, p int) int64 {
	if p >= 9 || p < 0 {
		return ns
	}
	u := civil.Pow10[9-p]
	return civil.FloorDiv(ns, u) * u
}

// scanner helps parse date/time text.
type scanner struct {
	s string
	i int
}

func (sc *scanner) eof() bool { return sc.i >= len(sc.s) }

// digits reads 1..max decimal digits.
func (sc *scanner) digits(maxN int) (int64, int, bool) {
	var v int64
	n := 0
	for sc.i < len(sc.s) && n < maxN {
		c := sc.s[sc.i]
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int64(c-'0')
		sc.i++
		n++
	}
	return v, n, n > 0
}

func (sc *scanner) byte(c byte) bool {
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// parseDateTime parses 'yyyy-M-d', optionally followed by ' ' or 'T' and
// 'H:m[:s[.fffffffff]]'. It returns days, nanoseconds of day, the number
// of fraction digits written, and whether a time part was present.
func parseDateTime(text string) (days, tod int64, frac int, hasTime, ok bool) {
	sc := &scanner{s: strings.TrimSpace(text)}
	y, n, ok1 := sc.digits(4)
	if !ok1 || n != 4 {
		return 0, 0, 0, false, false
	}
	if !sc.byte('-') {
		return 0, 0, 0, false, false
	}
	mo, _, ok2 := sc.digits(2)
	if !ok2 || !sc.byte('-') {
		return 0, 0, 0, false, false
	}
	d, _, ok3 := sc.digits(2)
	if !ok3 || mo < 1 || mo > 12 || d < 1 || d > civil.DaysInMonth(y, mo) {
		return 0, 0, 0, false, false
	}
	days = civil.DaysFromCivil(y, mo, d)
	if sc.eof() {
		return days, 0, 0, false, true
	}
	if !sc.byte(' ') && !sc.byte('T') {
		return 0, 0, 0, false, false
	}
	for sc.byte(' ') {
	}
	h, _, okh := sc.digits(2)
	if !okh || !sc.byte(':') {
		return 0, 0, 0, false, false
	}
	mi, _, okm := sc.digits(2)
	if !okm || h > 23 || mi > 59 {
		return 0, 0, 0, false, false
	}
	var s, ns int64
	if sc.byte(':') {
		var oks bool
		s, _, oks = sc.digits(2)
		if !oks || s > 59 {
			return 0, 0, 0, false, false
		}
		if sc.byte('.') {
			start := sc.i
			f, nf, okf := sc.digits(9)
			if !okf {
				return 0, 0, 0, false, false
			}
			if !sc.eof() && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
				return 0, 0, 0, false, false // more than 9 fraction digits
			}
			frac = sc.i - start
			ns = f * civil.Pow10[9-nf]
		}
	}
	if !sc.eof() {
		return 0, 0, 0, false, false
	}
	return days, h*nsPerHour + mi*nsPerMin + s*nsPerSec + ns, frac, true, true
}

// parseTimestampText parses TIMESTAMP text; a date alone means midnight.
func parseTimestampText(text string) (ns int64, frac int, ok bool) {
	days, tod, frac, _, ok := parseDateTime(text)
	if !ok {
		return 0, 0, false
	}
	ns, ok = tsFromDaysNanos(days, tod)
	return ns, frac, ok
}

// parseDateText parses DATE text. A time part is accepted and dropped.
func parseDateText(text string) (int64, bool) {
	days, _, _, _, ok := parseDateTime(text)
	return days, ok
}

// addMonths adds n months to a civil date, clamping the day to the end of
// the resulting month (Jan 31 + 1 month = Feb 28/29), as MySQL and Flink do.
func addMonths(days int64, n int64) int64 {
	y, m, d := civil.CivilFromDays(days)
	t := y*12 + (m - 1) + n
	ny, nm := civil.FloorDiv(t, 12), civil.FloorMod(t, 12)+1
	if dim := civil.DaysInMonth(ny, nm); d > dim {
		d = dim
	}
	return civil.DaysFromCivil(ny, nm, d)
}

func timeDuration(ns int64) time.Duration { return time.Duration(ns) }
