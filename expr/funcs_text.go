package expr

import (
	"encoding/base64"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// String functions added for Flink's list: ASCII, CHR, base64, prefixes,
// BTRIM, TRANSLATE, the REGEXP_* family, ELT, URL functions, PARSE_URL,
// the IS_* predicates and IPv4 conversion. PRINTF is in printf.go.

func registerTextFuncs(r map[string]funcDef) {
	for name, d := range map[string]funcDef{
		"ascii":         {1, 1, buildASCII},
		"chr":           {1, 1, buildChr},
		"to_base64":     {1, 1, buildBase64},
		"from_base64":   {1, 1, buildBase64},
		"startswith":    {2, 2, buildAffix},
		"endswith":      {2, 2, buildAffix},
		"btrim":         {1, 2, buildTrim},
		"translate":     {3, 3, buildTranslate},
		"regexp_count":  {2, 2, buildRegexpScan},
		"regexp_instr":  {2, 2, buildRegexpScan},
		"regexp_substr": {2, 2, buildRegexpScan},
		"elt":           {2, -1, buildElt},
		"url_encode":    {1, 1, buildURLCode},
		"url_decode":    {1, 1, buildURLCode},
		"parse_url":     {2, 3, buildParseURL},
		"is_alpha":      {1, 1, buildIsKind},
		"is_digit":      {1, 1, buildIsKind},
		"is_decimal":    {1, 1, buildIsKind},
		"inet_aton":     {1, 1, buildInetAton},
		"inet_ntoa":     {1, 1, buildInetNtoa},
		"printf":        {1, -1, buildPrintf},
	} {
		r[name] = d
	}
	// LTRIM(s, chars) and RTRIM(s, chars), as Flink has them.
	r["ltrim"] = funcDef{1, 2, buildTrim}
	r["rtrim"] = funcDef{1, 2, buildTrim}
}

func buildASCII(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeInt, args...), strict: true,
		f1: func(v types.Value) (types.Value, error) {
			r, n := utf8.DecodeRuneInString(v.Str())
			if n == 0 {
				return types.NewInt(0), nil
			}
			return types.NewInt(int64(r)), nil
		}}, nil
}

// buildChr binds CHR(n): the character n modulo 256 (Flink's n & 0xFF),
// the empty string for a negative n.
func buildChr(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isIntegerType, wantInteger)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.VarcharType(1), args...), strict: true,
		f1: func(v types.Value) (types.Value, error) {
			n := v.Int()
			if n < 0 {
				return types.NewString(""), nil
			}
			return types.NewString(string(rune(n & 0xFF))), nil
		}}, nil
}

func buildBase64(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	pred, want := isStringType, wantString
	if name == "TO_BASE64" { // of a string's UTF-8 bytes, or of BYTES
		pred, want = func(t types.Type) bool { return isStringType(t) || t.ID == types.Bytes }, "STRING or BYTES"
	}
	args, err := b.bindTyped(x, name, pred, want)
	if err != nil {
		return nil, err
	}
	c := &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true}
	if name == "TO_BASE64" {
		c.f1 = func(v types.Value) (types.Value, error) {
			return types.NewString(base64.StdEncoding.EncodeToString([]byte(v.Str()))), nil
		}
		return c, nil
	}
	// Flink decodes with Java's MIME decoder, which skips characters
	// outside the alphabet (line breaks, spaces) and stops at padding.
	c.f1 = func(v types.Value) (types.Value, error) {
		var sb strings.Builder
		for i := 0; i < len(v.Str()); i++ {
			ch := v.Str()[i]
			if ch == '=' {
				break
			}
			if ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '+' || ch == '/' {
				sb.WriteByte(ch)
			}
		}
		s := sb.String()
		if len(s)%4 == 1 {
			return types.NullValue, fmt.Errorf("invalid base64 input: a final unit of a single character")
		}
		out, err := base64.RawStdEncoding.DecodeString(s)
		if err != nil {
			return types.NullValue, fmt.Errorf("invalid base64 input")
		}
		return types.NewString(strings.ToValidUTF8(string(out), "\uFFFD")), nil
	}
	return c, nil
}

func buildAffix(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	has := strings.HasPrefix
	if name == "ENDSWITH" {
		has = strings.HasSuffix
	}
	return &call{name: name, args: args, typ: strictType(types.TypeBoolean, args...), strict: true,
		f2: func(s, a types.Value) (types.Value, error) { return types.NewBool(has(s.Str(), a.Str())), nil }}, nil
}

// buildTranslate binds TRANSLATE(s, from, to) with Flink's rules: NULL s
// is NULL; a NULL or empty from leaves s as is; a NULL to is ”; each
// character of from maps to the character of to at its position, or is
// removed past to's end; the first mapping of a repeated character wins.
func buildTranslate(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args[0]),
		fn: func(vs []types.Value) (types.Value, error) {
			s, from, to := vs[0], vs[1], vs[2]
			if s.IsNull() || from.IsNull() || s.Str() == "" || from.Str() == "" {
				return s, nil
			}
			tr := []rune{}
			if !to.IsNull() {
				tr = []rune(to.Str())
			}
			dict := map[rune]string{}
			j := 0
			for _, f := range from.Str() {
				repl := ""
				if j < len(tr) {
					repl = string(tr[j])
				}
				j++
				if _, dup := dict[f]; !dup {
					dict[f] = repl
				}
			}
			var sb strings.Builder
			for _, r := range s.Str() {
				if repl, ok := dict[r]; ok {
					sb.WriteString(repl)
				} else {
					sb.WriteRune(r)
				}
			}
			return types.NewString(sb.String()), nil
		}}, nil
}

// buildRegexpScan binds REGEXP_COUNT, REGEXP_INSTR and REGEXP_SUBSTR. A
// literal pattern that does not compile is a bind error; a run-time one
// gives NULL, as in Flink.
func buildRegexpScan(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, fixed, err := b.bindPatternArgs(x, name, argString, argString)
	if err != nil {
		return nil, err
	}
	t := types.TypeInt
	if name == "REGEXP_SUBSTR" {
		t = types.TypeString
	}
	return &call{name: name, args: args, typ: t, strict: true,
		f2: func(s, p types.Value) (types.Value, error) {
			re := regexpOf(fixed, p)
			if re == nil {
				return types.NullValue, nil
			}
			str := s.Str()
			switch name {
			case "REGEXP_COUNT":
				return types.NewInt(int64(len(re.FindAllStringIndex(str, -1)))), nil
			case "REGEXP_INSTR":
				loc := re.FindStringIndex(str)
				if loc == nil {
					return types.NewInt(0), nil
				}
				return types.NewInt(int64(utf8.RuneCountInString(str[:loc[0]])) + 1), nil
			}
			loc := re.FindStringIndex(str)
			if loc == nil {
				return types.NullValue, nil
			}
			return types.NewString(str[loc[0]:loc[1]]), nil
		}}, nil
}

// javaReplacement turns a replacement string of Java's String.replaceAll
// ($1 for a group, \ escaping the next character) into Go's template
// syntax. As in Java, a group number takes as many digits as still name
// a group of the pattern.
func javaReplacement(repl string, groups int) string {
	if !strings.ContainsAny(repl, `$\`) {
		return repl
	}
	var sb strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '\\' && i+1 < len(repl):
			i++
			if repl[i] == '$' {
				sb.WriteString("$$")
			} else {
				sb.WriteByte(repl[i])
			}
		case c == '$' && i+1 < len(repl) && repl[i+1] >= '0' && repl[i+1] <= '9':
			n := int(repl[i+1] - '0')
			j := i + 2
			for j < len(repl) && repl[j] >= '0' && repl[j] <= '9' && n*10+int(repl[j]-'0') <= groups {
				n = n*10 + int(repl[j]-'0')
				j++
			}
			sb.WriteString("${" + strconv.Itoa(n) + "}")
			i = j - 1
		case c == '$' && i+1 < len(repl) && repl[i+1] == '{':
			end := strings.IndexByte(repl[i:], '}')
			if end < 0 {
				sb.WriteString("$$")
				continue
			}
			sb.WriteString(repl[i : i+end+1])
			i += end
		case c == '$':
			sb.WriteString("$$")
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// buildElt binds ELT(index, s1, s2, ...): the index-th string (1-based),
// NULL when index is NULL or out of range.
func buildElt(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argInteger)
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(args); i++ {
		if err := b.expect(x, name, i, args[i], isStringType, wantString); err != nil {
			return nil, err
		}
	}

	return &call{name: name, args: args, typ: types.TypeString,
		fn: func(vs []types.Value) (types.Value, error) {
			if vs[0].IsNull() {
				return types.NullValue, nil
			}
			i := vs[0].Int()
			if i < 1 || i >= int64(len(vs)) {
				return types.NullValue, nil
			}
			return vs[i], nil
		}}, nil
}

// buildURLCode binds URL_ENCODE and URL_DECODE: Java's URLEncoder and
// URLDecoder with UTF-8 (application/x-www-form-urlencoded). A malformed
// escape decodes to NULL, as in Flink.
func buildURLCode(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	c := &call{name: name, args: args, typ: types.TypeString, strict: true}
	if name == "URL_ENCODE" {
		c.f1 = func(v types.Value) (types.Value, error) { return types.NewString(javaURLEncode(v.Str())), nil }
	} else {
		c.f1 = func(v types.Value) (types.Value, error) {
			s, ok := javaURLDecode(v.Str())
			if !ok {
				return types.NullValue, nil
			}
			return types.NewString(s), nil
		}
	}
	return c, nil
}

func javaURLEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '*' || c == '_':
			sb.WriteByte(c)
		case c == ' ':
			sb.WriteByte('+')
		default:
			sb.WriteByte('%')
			sb.WriteByte(hexDigits[c>>4])
			sb.WriteByte(hexDigits[c&15])
		}
	}
	return sb.String()
}

func javaURLDecode(s string) (string, bool) {
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '+':
			out = append(out, ' ')
		case '%':
			if i+2 >= len(s) {
				return "", false
			}
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", false
			}
			out = append(out, byte(n))
			i += 2
		default:
			out = append(out, c)
		}
	}
	return strings.ToValidUTF8(string(out), "\uFFFD"), true
}

// buildParseURL binds PARSE_URL(url, part[, key]) with java.net.URL's view
// of a URL: parts HOST, PATH, QUERY, REF, PROTOCOL, AUTHORITY, FILE and
// USERINFO; with a key, the value of that query parameter. NULL when the
// URL does not parse, the part is unknown or absent.
func buildParseURL(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: types.TypeString, strict: true,
		fn: func(vs []types.Value) (types.Value, error) {
			u, ok := splitURL(vs[0].Str())
			if !ok {
				return types.NullValue, nil
			}
			var part string
			var present bool
			switch strings.ToUpper(vs[1].Str()) {
			case "HOST":
				part, present = u.host, true
			case "PATH":
				part, present = u.path, true
			case "QUERY":
				part, present = u.query, u.hasQuery
			case "REF":
				part, present = u.ref, u.hasRef
			case "PROTOCOL":
				part, present = u.protocol, true
			case "AUTHORITY":
				part, present = u.authority, u.hasAuthority
			case "FILE":
				part, present = u.path, true
				if u.hasQuery {
					part += "?" + u.query
				}
			case "USERINFO":
				part, present = u.userInfo, u.hasUserInfo
			}
			if !present {
				return types.NullValue, nil
			}
			if len(vs) == 3 {
				if strings.ToUpper(vs[1].Str()) != "QUERY" {
					return types.NullValue, nil
				}
				return queryParam(part, vs[2].Str()), nil
			}
			return types.NewString(part), nil
		}}, nil
}

type urlParts struct {
	protocol, authority, userInfo, host, path, query, ref string
	hasAuthority, hasUserInfo, hasQuery, hasRef           bool
}

// splitURL splits scheme:[//authority]path[?query][#ref] the way
// java.net.URL does, keeping each part as written.
func splitURL(s string) (urlParts, bool) {
	var u urlParts
	s = strings.TrimSpace(s)
	colon := strings.IndexByte(s, ':')
	if colon <= 0 {
		return u, false
	}
	for i := 0; i < colon; i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return u, false
		}
	}
	u.protocol = strings.ToLower(s[:colon])
	rest := s[colon+1:]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		u.ref, u.hasRef = rest[i+1:], true
		rest = rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		u.query, u.hasQuery = rest[i+1:], true
		rest = rest[:i]
	}
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		u.authority, u.hasAuthority = rest[:end], true
		rest = rest[end:]
		hostPort := u.authority
		if at := strings.LastIndexByte(hostPort, '@'); at >= 0 {
			u.userInfo, u.hasUserInfo = hostPort[:at], true
			hostPort = hostPort[at+1:]
		}
		if strings.HasPrefix(hostPort, "[") {
			if end := strings.IndexByte(hostPort, ']'); end >= 0 {
				u.host = hostPort[:end+1]
			}
		} else if c := strings.LastIndexByte(hostPort, ':'); c >= 0 {
			u.host = hostPort[:c]
		} else {
			u.host = hostPort
		}
	}
	u.path = rest
	return u, true
}

// queryParam returns the value of parameter key in a query string: the
// first key=value pair, as Flink's regex (&|^)key=([^&]*) finds it.
func queryParam(query, key string) types.Value {
	for _, kv := range strings.Split(query, "&") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return types.NewString(v)
		}
	}
	return types.NullValue
}

// buildIsKind binds IS_ALPHA, IS_DIGIT and IS_DECIMAL: never NULL (a NULL
// argument is FALSE, as in Flink); a number is a digit string and a
// decimal, not alphabetic.
func buildIsKind(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	a := args[0]
	if !isStringType(a.Type()) && !isNumericType(a.Type()) {
		return nil, b.argErr(x.Args[0], name, 0, 1, a, "a STRING or a number")
	}
	test := map[string]func(string) bool{
		"IS_ALPHA": func(s string) bool {
			return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
		},
		"IS_DIGIT": func(s string) bool {
			return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
		},
		"IS_DECIMAL": isDecimalText,
	}[name]
	return &call{name: name, args: args, typ: types.TypeBoolean.WithNotNull(true),
		f1: func(v types.Value) (types.Value, error) {
			switch v.Kind() {
			case types.KindNull:
				return types.NewBool(false), nil
			case types.KindString:
				return types.NewBool(test(v.Str())), nil
			}
			return types.NewBool(name != "IS_ALPHA"), nil
		}}, nil
}

var decimalTextRE = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

func isDecimalText(s string) bool { return decimalTextRE.MatchString(s) }

// buildInetAton binds INET_ATON(s): an IPv4 address as a BIGINT, with
// MySQL's short forms (a.b is a.0.0.b, a.b.c is a.b.0.c); NULL when s is
// not an address.
func buildInetAton(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: types.TypeBigInt, strict: true,
		f1: func(v types.Value) (types.Value, error) {
			parts := strings.Split(v.Str(), ".")
			if len(parts) < 2 || len(parts) > 4 {
				return types.NullValue, nil
			}
			var oct []int64
			for _, p := range parts {
				if p == "" || len(p) > 3 || strings.Trim(p, "0123456789") != "" {
					return types.NullValue, nil
				}
				n, _ := strconv.ParseInt(p, 10, 64)
				if n > 255 {
					return types.NullValue, nil
				}
				oct = append(oct, n)
			}
			switch len(oct) {
			case 2:
				oct = []int64{oct[0], 0, 0, oct[1]}
			case 3:
				oct = []int64{oct[0], oct[1], 0, oct[2]}
			}
			return types.NewInt(oct[0]<<24 | oct[1]<<16 | oct[2]<<8 | oct[3]), nil
		}}, nil
}

func buildInetNtoa(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isIntegerType, wantInteger)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: types.TypeString, strict: true,
		f1: func(v types.Value) (types.Value, error) {
			n := v.Int()
			if n < 0 || n > math.MaxUint32 {
				return types.NullValue, nil
			}
			return types.NewString(fmt.Sprintf("%d.%d.%d.%d", n>>24, n>>16&255, n>>8&255, n&255)), nil
		}}, nil
}
