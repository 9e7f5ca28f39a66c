package expr

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// PRINTF(format, args...) formats as Flink does, with java.util.Formatter
// and Locale.US: %[index$][flags][width][.precision]conversion with the
// conversions b s c d o x e f g % n (and their upper-case forms), the
// flags - # + space 0 , ( and argument indexes n$ and <. A NULL argument
// prints "null" (false for %b). A format that does not fit its argument
// is a run-time error naming it, as Flink fails the job.

func buildPrintf(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argString)
	if err != nil {
		return nil, err
	}

	argTypes := make([]types.Type, len(args)-1)
	for i, a := range args[1:] {
		argTypes[i] = a.Type()
		if a.Type().ID == types.Interval {
			return nil, b.argErr(x.Args[i+1], name, i+1, len(args), a, "a value that is not an INTERVAL")
		}
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args[0]),
		fn: func(vs []types.Value) (types.Value, error) {
			if vs[0].IsNull() {
				return types.NullValue, nil
			}
			s, err := javaFormat(vs[0].Str(), vs[1:], argTypes)
			if err != nil {
				return types.NullValue, err
			}
			return types.NewString(s), nil
		}}, nil
}

type fmtSpec struct {
	flags     string
	width     int // -1: none
	prec      int // -1: none
	conv      byte
	upper     bool
	leftAlign bool
}

func (s *fmtSpec) has(f byte) bool { return strings.IndexByte(s.flags, f) >= 0 }

// javaFormat is java.util.Formatter.format(Locale.US, f, args...).
func javaFormat(f string, args []types.Value, ts []types.Type) (string, error) {
	var sb strings.Builder
	next, last := 0, -1 // ordinary index and the last argument used
	for i := 0; i < len(f); {
		c := f[i]
		if c != '%' {
			sb.WriteByte(c)
			i++
			continue
		}
		j := i + 1
		// argument index: n$ or <
		argIdx := -2
		if j < len(f) && f[j] == '<' {
			argIdx, j = last, j+1
			if last < 0 {
				return "", fmt.Errorf("missing format argument for %q", f[i:j])
			}
		} else if k := j; k < len(f) && f[k] >= '1' && f[k] <= '9' {
			for k < len(f) && f[k] >= '0' && f[k] <= '9' {
				k++
			}
			if k < len(f) && f[k] == '$' {
				n, _ := strconv.Atoi(f[j:k])
				argIdx, j = n-1, k+1
			}
		}
		sp := fmtSpec{width: -1, prec: -1}
		for j < len(f) && strings.IndexByte("-#+ 0,(", f[j]) >= 0 {
			if sp.has(f[j]) {
				return "", fmt.Errorf("duplicate flag '%c' in format %q", f[j], f)
			}
			sp.flags += string(f[j])
			j++
		}
		if k := j; k < len(f) && f[k] >= '1' && f[k] <= '9' {
			for k < len(f) && f[k] >= '0' && f[k] <= '9' {
				k++
			}
			sp.width, _ = strconv.Atoi(f[j:k])
			j = k
		}
		if j < len(f) && f[j] == '.' {
			k := j + 1
			for k < len(f) && f[k] >= '0' && f[k] <= '9' {
				k++
			}
			if k == j+1 {
				return "", fmt.Errorf("invalid precision in format %q", f)
			}
			sp.prec, _ = strconv.Atoi(f[j+1 : k])
			j = k
		}
		if j >= len(f) {
			return "", fmt.Errorf("unterminated format specifier %q", f[i:])
		}
		sp.conv = f[j]
		if strings.IndexByte("BSCXEG", sp.conv) >= 0 { // Java's upper-case variants
			sp.upper, sp.conv = true, sp.conv+('a'-'A')
		}
		sp.leftAlign = sp.has('-')
		spec := f[i : j+1]
		i = j + 1
		if (sp.leftAlign || sp.has('0')) && sp.width < 0 {
			return "", fmt.Errorf("missing width in format specifier %q", spec)
		}
		switch sp.conv {
		case '%':
			sb.WriteString(pad("%", sp))
			continue
		case 'n':
			sb.WriteByte('\n')
			continue
		}
		if argIdx == -2 {
			argIdx = next
			next++
		}
		if argIdx < 0 || argIdx >= len(args) {
			return "", fmt.Errorf("missing format argument for %q", spec)
		}
		last = argIdx
		out, err := formatArg(sp, args[argIdx], ts[argIdx])
		if err != nil {
			return "", fmt.Errorf("%s for %q", err, spec)
		}
		sb.WriteString(out)
	}
	return sb.String(), nil
}

var errFmtConversion = errors.New("format does not fit the argument")

func formatArg(sp fmtSpec, v types.Value, t types.Type) (string, error) {
	var s string
	switch sp.conv {
	case 'b':
		s = "true"
		if v.IsNull() || (v.Kind() == types.KindBool && !v.Bool()) {
			s = "false"
		}
		s = precise(s, sp.prec)
	case 's':
		s = precise(javaString(v, t), sp.prec)
	case 'c':
		switch v.Kind() {
		case types.KindNull:
			s = "null"
		case types.KindInt:
			if v.Int() < 0 || v.Int() > utf8.MaxRune {
				return "", errFmtConversion
			}
			s = string(rune(v.Int()))
		case types.KindString:
			if utf8.RuneCountInString(v.Str()) != 1 {
				return "", errFmtConversion
			}
			s = v.Str()
		default:
			return "", errFmtConversion
		}
	case 'd', 'o', 'x':
		if v.IsNull() {
			s = "null"
			break
		}
		if v.Kind() != types.KindInt {
			return "", errFmtConversion
		}
		s = formatInteger(sp, v.Int(), t.ID == types.Int)
		return pad(caseOf(s, sp.upper), sp), nil
	case 'e', 'f', 'g':
		if v.IsNull() {
			s = "null"
			break
		}
		var d *apd.Decimal
		switch v.Kind() {
		case types.KindFloat:
			x := v.Float()
			if math.IsNaN(x) || math.IsInf(x, 0) {
				s = "NaN"
				if math.IsInf(x, 1) {
					s = "Infinity"
					if sp.has('+') {
						s = "+Infinity"
					}
				} else if math.IsInf(x, -1) {
					s = "-Infinity"
					if sp.has('(') {
						s = "(Infinity)"
					}
				}
				return pad(caseOf(s, sp.upper), sp), nil
			}
			// Java formats the shortest decimal that reads back as x
			// (Double.toString's digits), not x's exact binary value.
			d, _, _ = apd.NewFromString(strconv.FormatFloat(x, 'e', -1, 64))
		case types.KindDecimal:
			d = v.Decimal()
		default:
			return "", errFmtConversion
		}
		body, neg, err := formatDecimal(sp, d)
		if err != nil {
			return "", err
		}
		return pad(caseOf(signed(sp, body, neg), sp.upper), sp), nil
	default:
		return "", fmt.Errorf("unsupported conversion '%c'", sp.conv)
	}
	return pad(caseOf(s, sp.upper), sp), nil
}

func caseOf(s string, upper bool) string {
	if upper {
		return strings.ToUpper(s)
	}
	return s
}

func precise(s string, prec int) string {
	if prec >= 0 && utf8.RuneCountInString(s) > prec {
		return string([]rune(s)[:prec])
	}
	return s
}

// pad pads s to the spec's width: on the left, or on the right with '-'.
// Zero padding is done by the numeric conversions themselves.
func pad(s string, sp fmtSpec) string {
	n := utf8.RuneCountInString(s)
	if sp.width <= n {
		return s
	}
	fill := strings.Repeat(" ", sp.width-n)
	if sp.leftAlign {
		return s + fill
	}
	return fill + s
}

// formatInteger formats %d, %o and %x. Octal and hex print negative
// numbers as two's complement of the argument's width (32 bits for INT,
// 64 for BIGINT), as Java does for Integer and Long.
func formatInteger(sp fmtSpec, n int64, is32 bool) string {
	if sp.conv != 'd' {
		u := uint64(n)
		if is32 {
			u = uint64(uint32(int32(n)))
		}
		base, prefix := 8, "0"
		if sp.conv == 'x' {
			base, prefix = 16, "0x"
		}
		s := strconv.FormatUint(u, base)
		if sp.has('#') {
			s = prefix + s
		}
		return zeroPad(sp, s, "")
	}
	neg := n < 0
	digits := strconv.FormatUint(absU(n), 10)
	if sp.has(',') {
		digits = group(digits)
	}
	return signed(sp, digits, neg)
}

func absU(n int64) uint64 {
	if n < 0 {
		return uint64(-(n + 1)) + 1
	}
	return uint64(n)
}

// signed adds the sign (or parentheses) to a magnitude and zero-pads it.
func signed(sp fmtSpec, mag string, neg bool) string {
	prefix, suffix := "", ""
	switch {
	case neg && sp.has('('):
		prefix, suffix = "(", ")"
	case neg:
		prefix = "-"
	case sp.has('+'):
		prefix = "+"
	case sp.has(' '):
		prefix = " "
	}
	return zeroPad(sp, mag, prefix) + suffix
}

func zeroPad(sp fmtSpec, mag, prefix string) string {
	if sp.has('0') && sp.width > 0 {
		n := sp.width - len(prefix) - len(mag)
		if sp.has('(') {
			n--
		}
		if n > 0 {
			mag = strings.Repeat("0", n) + mag
		}
	}
	return prefix + mag
}

// group inserts ',' every three digits of an integer part.
func group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var sb strings.Builder
	first := len(digits) % 3
	if first > 0 {
		sb.WriteString(digits[:first])
	}
	for i := first; i < len(digits); i += 3 {
		if sb.Len() > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(digits[i : i+3])
	}
	return sb.String()
}

// formatDecimal formats the magnitude of d for %e, %f and %g, rounding
// HALF_UP as Java does; it reports whether d is negative.
func formatDecimal(sp fmtSpec, d *apd.Decimal) (string, bool, error) {
	neg := d.Negative && !d.IsZero()
	m := new(apd.Decimal).Abs(d)
	prec := sp.prec
	if prec < 0 {
		prec = 6
	}
	ctx := apd.BaseContext.WithPrecision(1000)
	ctx.Rounding = apd.RoundHalfUp
	fixed := func(p int) string {
		q := new(apd.Decimal)
		_, _ = ctx.Quantize(q, m, -int32(p))
		s := q.Text('f')
		if sp.has(',') {
			ip, fp, _ := strings.Cut(s, ".")
			s = group(ip)
			if fp != "" || p > 0 {
				s += "." + fp
			}
		}
		if p == 0 && sp.has('#') {
			s += "."
		}
		return s
	}
	sci := func(p int) string {
		if m.IsZero() {
			s := "0"
			if p > 0 {
				s += "." + strings.Repeat("0", p)
			}
			return s + "e+00"
		}
		// exponent of the leading digit after rounding to p+1 digits
		r := new(apd.Decimal)
		rc := apd.BaseContext.WithPrecision(uint32(p + 1))
		rc.Rounding = apd.RoundHalfUp
		_, _ = rc.Round(r, m)
		exp := int(r.Exponent) + int(r.NumDigits()) - 1
		digits := r.Coeff.String()
		for len(digits) < p+1 {
			digits += "0"
		}
		s := digits[:1]
		if p > 0 {
			s += "." + digits[1:p+1]
		} else if sp.has('#') {
			s += "."
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", s, sign, exp)
	}
	switch sp.conv {
	case 'f':
		return fixed(prec), neg, nil
	case 'e':
		if sp.has(',') {
			return "", false, errFmtConversion
		}
		return sci(prec), neg, nil
	}
	// %g: after rounding to prec significant digits, plain notation for
	// 10^-4 <= x < 10^prec, scientific otherwise.
	if prec == 0 {
		prec = 1
	}
	if m.IsZero() {
		return fixed(prec - 1), neg, nil
	}
	r := new(apd.Decimal)
	rc := apd.BaseContext.WithPrecision(uint32(prec))
	rc.Rounding = apd.RoundHalfUp
	_, _ = rc.Round(r, m)
	exp := int(r.Exponent) + int(r.NumDigits()) - 1
	if exp >= -4 && exp < prec {
		return fixed(prec - 1 - exp), neg, nil
	}
	return sci(prec - 1), neg, nil
}

// javaString renders a value as Java's toString of Flink's value would.
func javaString(v types.Value, t types.Type) string {
	switch v.Kind() {
	case types.KindNull:
		return "null"
	case types.KindFloat:
		return javaDouble(v.Float())
	case types.KindTimestamp:
		tm := time.Unix(0, v.Timestamp()).UTC()
		s := tm.Format("2006-01-02T15:04")
		if tm.Second() != 0 || tm.Nanosecond() != 0 {
			s += tm.Format(":05")
		}
		if ns := tm.Nanosecond(); ns != 0 {
			switch {
			case ns%1e6 == 0:
				s += fmt.Sprintf(".%03d", ns/1e6)
			case ns%1e3 == 0:
				s += fmt.Sprintf(".%06d", ns/1e3)
			default:
				s += fmt.Sprintf(".%09d", ns)
			}
		}
		return s
	}
	return types.Format(v, t)
}

// javaDouble is Java's Double.toString: plain with at least one fraction
// digit for 10^-3 <= |x| < 10^7, else d.dddE[-]n.
func javaDouble(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "Infinity"
	case math.IsInf(x, -1):
		return "-Infinity"
	case x == 0:
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(x)
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(x, 'e', -1, 64) // 1.5e+07
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
