package types

import "strings"

// ParseTimeOfDay reads TIME text: H:mm, H:mm:ss or H:mm:ss.f with up to
// nine fraction digits, hours 0..23, blanks around it allowed. It
// returns nanoseconds since midnight and the number of fraction digits
// written. CAST, the formats and the database sources read TIME text
// with it, so they agree on what a TIME looks like.
func ParseTimeOfDay(text string) (nanos int64, frac int, ok bool) {
	s := strings.TrimSpace(text)
	i := 0
	num := func(maxN int) (int64, int) {
		var v int64
		n := 0
		for i < len(s) && n < maxN && s[i] >= '0' && s[i] <= '9' {
			v = v*10 + int64(s[i]-'0')
			i++
			n++
		}
		return v, n
	}
	colon := func() bool {
		if i < len(s) && s[i] == ':' {
			i++
			return true
		}
		return false
	}
	h, n := num(2)
	if n == 0 || h > 23 || !colon() {
		return 0, 0, false
	}
	m, n := num(2)
	if n != 2 || m > 59 {
		return 0, 0, false
	}
	var sec, ns int64
	if colon() {
		if sec, n = num(2); n != 2 || sec > 59 {
			return 0, 0, false
		}
		if i < len(s) && s[i] == '.' {
			i++
			f, nf := num(9)
			if nf == 0 || i < len(s) && s[i] >= '0' && s[i] <= '9' {
				return 0, 0, false
			}
			for k := nf; k < 9; k++ {
				f *= 10
			}
			frac, ns = nf, f
		}
	}
	if i != len(s) {
		return 0, 0, false
	}
	return (h*3600+m*60+sec)*1e9 + ns, frac, true
}
