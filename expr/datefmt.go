package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/internal/civil"
)

type fmtKind uint8

const (
	fkLit fmtKind = iota
	fkYear
	fkYear2
	fkMonth
	fkMonthAbbr
	fkMonthName
	fkDay
	fkDaySuffix
	fkHour24
	fkHour12
	fkMinute
	fkSecond
	fkFrac
	fkAmPm
	fkDayAbbr
	fkDayName
	fkDoy
	fkWeekday
	// Java's DateTimeFormatter letters beyond SimpleDateFormat's core,
	// for formatting only (parsing a pattern with them gives NULL). Week
	// fields follow the en-US locale: weeks start on Sunday and week 1 of
	// a year is the week holding January 1st.
	fkWeekYear     // Y: the year the week belongs to
	fkWeekOfYear   // w
	fkWeekOfMonth  // W
	fkLocalDow     // e, c: day of week, Sunday = 1
	fkQuarter      // Q, q: 1..4
	fkQuarterShort // QQQ: Q1..Q4
	fkQuarterLong  // QQQQ: 1st quarter ...
	fkHour1to24    // k
	fkHour0to11    // K
	fkEra          // G: AD
	fkNanoOfSecond // n
	fkMilliOfDay   // A
	fkNanoOfDay    // N
	fkMonthNarrow  // MMMMM: J
	fkDayNarrow    // EEEEE: T
	fkEraLong      // GGGG: Anno Domini
)

type fmtItem struct {
	kind fmtKind
	n    int // zero padding width (fraction: digit count)
	lit  string
}

// dateFmt is a compiled DATE_FORMAT / TO_TIMESTAMP pattern.
type dateFmt []fmtItem

// compileDateFormat compiles a MySQL pattern (one containing '%', e.g.
// '%Y-%m-%d %H:%i:%s') or else a Java pattern ('yyyy-MM-dd HH:mm:ss.SSS').
func compileDateFormat(p string) (dateFmt, error) {
	if strings.ContainsRune(p, '%') {
		return compileMySQLFormat(p), nil
	}
	return compileJavaFormat(p)
}

func (f *dateFmt) lit(s string) {
	if n := len(*f); n > 0 && (*f)[n-1].kind == fkLit {
		(*f)[n-1].lit += s
		return
	}
	*f = append(*f, fmtItem{kind: fkLit, lit: s})
}

// add appends items to f, merging a leading literal into f's last.
func (f *dateFmt) add(items dateFmt) {
	for _, it := range items {
		if it.kind == fkLit {
			f.lit(it.lit)
		} else {
			*f = append(*f, it)
		}
	}
}

// mysqlAsJava are the MySQL specifiers that mean a Java pattern: %Y is
// yyyy, %T is HH:mm:ss. %D (day with an English suffix) and %w (day of
// week, Sunday = 0) have no Java letter; see mysqlSpecifiers.
var mysqlAsJava = map[byte]string{
	'Y': "yyyy", 'y': "yy", // year
	'm': "MM", 'c': "M", 'M': "MMMM", 'b': "MMM", // month
	'd': "dd", 'e': "d", 'j': "DDD", // day of month, of year
	'W': "EEEE", 'a': "EEE", // day of week
	'H': "HH", 'k': "H", 'h': "hh", 'I': "hh", 'l': "h", 'p': "a", // hour
	'i': "mm", 's': "ss", 'S': "ss", 'f': "SSSSSS", // minute, second, microseconds
	'T': "HH:mm:ss", 'r': "hh:mm:ss a",
}

// mysqlSpecifiers are the items each MySQL specifier compiles to.
var mysqlSpecifiers = func() map[byte]dateFmt {
	m := map[byte]dateFmt{
		'D': {{kind: fkDaySuffix}},
		'w': {{kind: fkWeekday, n: 1}},
	}
	for c, java := range mysqlAsJava {
		f, err := compileJavaFormat(java)
		if err != nil {
			panic(fmt.Sprintf("expr: MySQL specifier %%%c as %q: %v", c, java, err))
		}
		m[c] = f
	}
	return m
}()

func compileMySQLFormat(p string) dateFmt {
	var f dateFmt
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '%' || i+1 >= len(p) {
			f.lit(string(c))
			continue
		}
		i++
		if items, ok := mysqlSpecifiers[p[i]]; ok {
			f.add(items)
		} else { // %% and unknown specifiers print the character
			f.lit(string(p[i]))
		}
	}
	return f
}

// javaNumbers are the Java pattern letters that print a number,
// zero-padded to the letter's count.
var javaNumbers = map[byte]fmtKind{
	'd': fkDay, 'D': fkDoy, 'H': fkHour24, 'h': fkHour12, 'k': fkHour1to24, 'K': fkHour0to11,
	'm': fkMinute, 's': fkSecond, 'n': fkNanoOfSecond, 'A': fkMilliOfDay, 'N': fkNanoOfDay,
	'Y': fkWeekYear, 'w': fkWeekOfYear, 'W': fkWeekOfMonth,
}

// textLetter is a Java pattern letter whose count picks its form: one or
// two letters a number (none if num is fkLit: then up to three letters
// are the short text), three the short text, four the full text, five
// or more the narrow one.
type textLetter struct{ num, short, full, narrow fmtKind }

func (t textLetter) item(n int) fmtItem {
	switch {
	case n <= 2 && t.num != fkLit:
		return fmtItem{kind: t.num, n: n}
	case n <= 3:
		return fmtItem{kind: t.short}
	case n == 4:
		return fmtItem{kind: t.full}
	}
	return fmtItem{kind: t.narrow}
}

var (
	monthLetter   = textLetter{fkMonth, fkMonthAbbr, fkMonthName, fkMonthNarrow}
	dowLetter     = textLetter{fkLocalDow, fkDayAbbr, fkDayName, fkDayNarrow}
	quarterLetter = textLetter{fkQuarter, fkQuarterShort, fkQuarterLong, fkQuarterLong}
	javaTexts     = map[byte]textLetter{
		'M': monthLetter, 'L': monthLetter,
		'e': dowLetter, 'c': dowLetter,
		'Q': quarterLetter, 'q': quarterLetter,
		'E': {fkLit, fkDayAbbr, fkDayName, fkDayNarrow},
	}
)

func compileJavaFormat(p string) (dateFmt, error) {
	var f dateFmt
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\'' {
			j := i + 1
			var sb strings.Builder
			for {
				if j >= len(p) {
					return nil, fmt.Errorf("unterminated quote in date pattern %q", p)
				}
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						sb.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				sb.WriteByte(p[j])
				j++
			}
			if j == i+1 {
				f.lit("'") // '' is a quote
			} else {
				f.lit(sb.String())
			}
			i = j + 1
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			f.lit(string(c))
			i++
			continue
		}
		n := 1
		for i+n < len(p) && p[i+n] == c {
			n++
		}
		i += n
		if k, ok := javaNumbers[c]; ok {
			f = append(f, fmtItem{kind: k, n: n})
			continue
		}
		if t, ok := javaTexts[c]; ok {
			f = append(f, t.item(n))
			continue
		}
		switch c {
		case 'y', 'u':
			if n == 2 {
				f = append(f, fmtItem{kind: fkYear2, n: 2})
			} else {
				f = append(f, fmtItem{kind: fkYear, n: n})
			}
		case 'G':
			if n == 4 {
				f = append(f, fmtItem{kind: fkEraLong})
			} else {
				f = append(f, fmtItem{kind: fkEra, n: n})
			}
		case 'S':
			if n > 9 {
				return nil, fmt.Errorf("too many fraction digits in date pattern %q", p)
			}
			f = append(f, fmtItem{kind: fkFrac, n: n})
		case 'a':
			f = append(f, fmtItem{kind: fkAmPm})
		case 'z', 'Z', 'X', 'x', 'O', 'V', 'v':
			return nil, fmt.Errorf("pattern letter '%c' in %q needs a time zone, which TIMESTAMP does not have", c, p)
		default:
			return nil, fmt.Errorf("unsupported letter '%c' in date pattern %q", c, p)
		}
	}
	return f, nil
}

func appendPadded(dst []byte, v int64, n int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var buf [20]byte
	s := strconv.AppendInt(buf[:0], v, 10)
	for i := len(s); i < n; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

func daySuffix(d int64) string {
	if d/10%10 == 1 {
		return "th"
	}
	switch d % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

// format appends the formatted time to dst.
func (f dateFmt) format(dst []byte, t tsFields) []byte {
	for _, it := range f {
		switch it.kind {
		case fkLit:
			dst = append(dst, it.lit...)
		case fkYear:
			dst = appendPadded(dst, t.y, it.n)
		case fkYear2:
			dst = appendPadded(dst, civil.FloorMod(t.y, 100), 2)
		case fkMonth:
			dst = appendPadded(dst, t.mo, it.n)
		case fkMonthAbbr:
			dst = append(dst, time.Month(t.mo).String()[:3]...)
		case fkMonthName:
			dst = append(dst, time.Month(t.mo).String()...)
		case fkDay:
			dst = appendPadded(dst, t.d, it.n)
		case fkDaySuffix:
			dst = strconv.AppendInt(dst, t.d, 10)
			dst = append(dst, daySuffix(t.d)...)
		case fkHour24:
			dst = appendPadded(dst, t.h, it.n)
		case fkHour12:
			h := t.h % 12
			if h == 0 {
				h = 12
			}
			dst = appendPadded(dst, h, it.n)
		case fkMinute:
			dst = appendPadded(dst, t.mi, it.n)
		case fkSecond:
			dst = appendPadded(dst, t.s, it.n)
		case fkFrac:
			dst = appendPadded(dst, t.ns/civil.Pow10[9-it.n], it.n)
		case fkAmPm:
			if t.h < 12 {
				dst = append(dst, "AM"...)
			} else {
				dst = append(dst, "PM"...)
			}
		case fkDayAbbr:
			dst = append(dst, time.Weekday(civil.FloorMod(t.days+4, 7)).String()[:3]...)
		case fkDayName:
			dst = append(dst, time.Weekday(civil.FloorMod(t.days+4, 7)).String()...)
		case fkDoy:
			dst = appendPadded(dst, t.days-civil.DaysFromCivil(t.y, 1, 1)+1, it.n)
		case fkWeekday:
			dst = strconv.AppendInt(dst, civil.FloorMod(t.days+4, 7), 10)
		case fkWeekYear:
			y := usWeekYear(t.days)
			if it.n == 2 {
				dst = appendPadded(dst, civil.FloorMod(y, 100), 2)
			} else {
				dst = appendPadded(dst, y, it.n)
			}
		case fkWeekOfYear:
			dst = appendPadded(dst, usWeekOfYear(t.days), it.n)
		case fkWeekOfMonth:
			first := civil.DaysFromCivil(t.y, t.mo, 1)
			dst = appendPadded(dst, (t.d-1+civil.FloorMod(first+4, 7))/7+1, it.n)
		case fkLocalDow:
			dst = appendPadded(dst, civil.FloorMod(t.days+4, 7)+1, it.n)
		case fkQuarter:
			dst = appendPadded(dst, (t.mo-1)/3+1, it.n)
		case fkQuarterShort:
			dst = append(dst, 'Q')
			dst = strconv.AppendInt(dst, (t.mo-1)/3+1, 10)
		case fkQuarterLong:
			q := (t.mo-1)/3 + 1
			dst = strconv.AppendInt(dst, q, 10)
			dst = append(dst, daySuffix(q)...)
			dst = append(dst, " quarter"...)
		case fkHour1to24:
			h := t.h
			if h == 0 {
				h = 24
			}
			dst = appendPadded(dst, h, it.n)
		case fkHour0to11:
			dst = appendPadded(dst, t.h%12, it.n)
		case fkEra:
			era := "AD"
			if t.y <= 0 {
				era = "BC"
			}
			if it.n == 5 { // narrow
				era = era[:1]
			}
			dst = append(dst, era...)
		case fkEraLong:
			if t.y > 0 {
				dst = append(dst, "Anno Domini"...)
			} else {
				dst = append(dst, "Before Christ"...)
			}
		case fkNanoOfSecond:
			dst = appendPadded(dst, t.ns, it.n)
		case fkMilliOfDay:
			dst = appendPadded(dst, (t.h*3600+t.mi*60+t.s)*1000+t.ns/1e6, it.n)
		case fkNanoOfDay:
			dst = appendPadded(dst, (t.h*3600+t.mi*60+t.s)*nsPerSec+t.ns, it.n)
		case fkMonthNarrow:
			dst = append(dst, time.Month(t.mo).String()[0])
		case fkDayNarrow:
			dst = append(dst, time.Weekday(civil.FloorMod(t.days+4, 7)).String()[0])
		}
	}
	return dst
}

// usWeekYear is the week-based year of a day under the en-US week rules
// (weeks run Sunday to Saturday; week 1 holds January 1st): the year of
// the Saturday ending the day's week.
func usWeekYear(days int64) int64 {
	y, _, _ := civil.CivilFromDays(days + 6 - civil.FloorMod(days+4, 7))
	return y
}

// usWeekOfYear is the week of the week-based year under the same rules.
func usWeekOfYear(days int64) int64 {
	jan1 := civil.DaysFromCivil(usWeekYear(days), 1, 1)
	start := jan1 - civil.FloorMod(jan1+4, 7) // the Sunday on or before January 1st
	return (days-start)/7 + 1
}

// matchName matches one of names (or its 3-letter abbreviation when
// abbr) case-insensitively at the start of s; it returns the 1-based index
// and the length consumed.
func matchName(s string, names func(i int) string, count int, abbr bool) (int, int) {
	for i := 1; i <= count; i++ {
		n := names(i)
		if abbr {
			n = n[:3]
		}
		if len(s) >= len(n) && strings.EqualFold(s[:len(n)], n) {
			return i, len(n)
		}
	}
	return 0, 0
}

// parse parses s with the pattern into a TIMESTAMP.
func (f dateFmt) parse(s string) (int64, bool) {
	y, mo, d, h, mi, sec, ns := int64(1970), int64(1), int64(1), int64(0), int64(0), int64(0), int64(0)
	pm, h12, doy := -1, false, int64(-1)
	sc := &scanner{s: s}
	for _, it := range f {
		switch it.kind {
		case fkLit:
			if !strings.HasPrefix(sc.s[sc.i:], it.lit) {
				return 0, false
			}
			sc.i += len(it.lit)
			continue
		case fkMonthAbbr, fkMonthName:
			m, n := matchName(sc.s[sc.i:], func(i int) string { return time.Month(i).String() }, 12, it.kind == fkMonthAbbr)
			if n == 0 {
				return 0, false
			}
			mo, sc.i = int64(m), sc.i+n
			continue
		case fkDayAbbr, fkDayName:
			_, n := matchName(sc.s[sc.i:], func(i int) string { return time.Weekday(i - 1).String() }, 7, it.kind == fkDayAbbr)
			if n == 0 {
				return 0, false
			}
			sc.i += n
			continue
		case fkAmPm:
			rest := strings.ToUpper(sc.s[sc.i:min(len(sc.s), sc.i+2)])
			switch rest {
			case "AM":
				pm = 0
			case "PM":
				pm = 1
			default:
				return 0, false
			}
			sc.i += 2
			continue
		case fkDaySuffix:
			v, _, ok := sc.digits(2)
			if !ok || len(sc.s)-sc.i < 2 {
				return 0, false
			}
			d, sc.i = v, sc.i+2
			continue
		}
		switch it.kind {
		case fkWeekYear, fkWeekOfYear, fkWeekOfMonth, fkLocalDow, fkQuarter, fkQuarterShort, fkQuarterLong,
			fkHour1to24, fkHour0to11, fkEra, fkEraLong, fkNanoOfSecond, fkMilliOfDay, fkNanoOfDay, fkMonthNarrow, fkDayNarrow:
			return 0, false // formatting only
		}
		maxN := 2
		switch it.kind {
		case fkYear:
			maxN = max(4, it.n)
		case fkFrac:
			maxN = it.n
		case fkDoy:
			maxN = 3
		}
		v, n, ok := sc.digits(maxN)
		if !ok {
			return 0, false
		}
		switch it.kind {
		case fkYear:
			y = v
		case fkYear2:
			if v < 70 {
				y = 2000 + v
			} else {
				y = 1900 + v
			}
		case fkMonth:
			mo = v
		case fkDay:
			d = v
		case fkHour24:
			h = v
		case fkHour12:
			h, h12 = v, true
		case fkMinute:
			mi = v
		case fkSecond:
			sec = v
		case fkFrac:
			ns = v * civil.Pow10[9-n]
		case fkDoy:
			doy = v
		}
	}
	if !sc.eof() {
		return 0, false
	}
	if h12 || pm >= 0 {
		if h < 1 || h > 12 {
			if h12 {
				return 0, false
			}
		}
		if pm == 1 && h < 12 {
			h += 12
		} else if pm == 0 && h == 12 {
			h = 0
		}
	}
	if mo < 1 || mo > 12 || d < 1 || d > civil.DaysInMonth(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	days := civil.DaysFromCivil(y, mo, d)
	if doy > 0 {
		days = civil.DaysFromCivil(y, 1, 1) + doy - 1
	}
	return tsFromDaysNanos(days, h*nsPerHour+mi*nsPerMin+sec*nsPerSec+ns)
}
