package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A small JSON model for the JSON functions: objects keep their keys in
// document order, and values print the way Flink's Jackson prints what
// its JSON path library parsed (compact, integers as written, other
// numbers as Java doubles).

type jsonKind uint8

const (
	jNull jsonKind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
	jDecimal // a SQL DECIMAL: printed as formatted (1.50 stays 1.50, as Jackson prints a BigDecimal)
)

type jsonVal struct {
	kind jsonKind
	b    bool
	s    string // string value, or a number's text as written
	arr  []*jsonVal
	keys []string // object keys, in order
	vals []*jsonVal
}

func (v *jsonVal) get(key string) (*jsonVal, bool) {
	for i, k := range v.keys {
		if k == key {
			return v.vals[i], true
		}
	}
	return nil, false
}

func (v *jsonVal) isScalar() bool { return v.kind != jArray && v.kind != jObject }

var errJSONTrailing = errors.New("unexpected data after the JSON value")

// parseJSON parses one JSON document; anything after it is an error.
func parseJSON(s string) (*jsonVal, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := decodeJSON(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errJSONTrailing
	}
	return v, nil
}

func decodeJSON(dec *json.Decoder) (*jsonVal, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &jsonVal{kind: jNull}, nil
	case bool:
		return &jsonVal{kind: jBool, b: t}, nil
	case json.Number:
		return &jsonVal{kind: jNumber, s: string(t)}, nil
	case string:
		return &jsonVal{kind: jString, s: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := &jsonVal{kind: jArray, arr: []*jsonVal{}}
			for dec.More() {
				e, err := decodeJSON(dec)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, e)
			}
			_, err := dec.Token() // ]
			return v, err
		case '{':
			v := &jsonVal{kind: jObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				e, err := decodeJSON(dec)
				if err != nil {
					return nil, err
				}
				if i := indexOf(v.keys, k); i >= 0 { // the last duplicate wins, as in Jackson
					v.vals[i] = e
					continue
				}
				v.keys = append(v.keys, k)
				v.vals = append(v.vals, e)
			}
			_, err := dec.Token() // }
			return v, err
		}
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

func indexOf(ss []string, s string) int {
	for i, x := range ss {
		if x == s {
			return i
		}
	}
	return -1
}

// appendJSON appends v in compact form.
func appendJSON(dst []byte, v *jsonVal) []byte {
	switch v.kind {
	case jNull:
		return append(dst, "null"...)
	case jBool:
		return strconv.AppendBool(dst, v.b)
	case jNumber:
		return append(dst, javaNumber(v.s)...)
	case jDecimal:
		return append(dst, v.s...)
	case jString:
		return appendJSONString(dst, v.s)
	case jArray:
		dst = append(dst, '[')
		for i, e := range v.arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, k := range v.keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		dst = appendJSON(dst, v.vals[i])
	}
	return append(dst, '}')
}

func jsonText(v *jsonVal) string { return string(appendJSON(nil, v)) }

// javaNumber is how a parsed JSON number prints again: an integer as
// written (json-smart reads it as an Integer, Long or BigInteger), any
// other number as the Java double it becomes.
func javaNumber(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		if n, ok := new(big.Int).SetString(s, 10); ok {
			return n.String()
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return s
	}
	return javaDouble(f)
}

// appendJSONString quotes s as Jackson does: ", \ and control characters
// escaped, everything else as is.
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			if c < 0x20 {
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// ---------------------------------------------------------------------------
// SQL/JSON paths, as Flink evaluates them (Calcite's mode prefix over
// Jayway JsonPath): [lax|strict] $ followed by .name, ['name'], ["name"],
// .*, [*], [n] (negative from the end), [n, m], [from:to] and ..name. In
// lax mode (the default) a missing member or element is empty; in strict
// mode it is an error. A path with a wildcard, a list, a slice or a deep
// scan is indefinite: it yields an array of what it found, skipping what
// is missing.

type jpKind uint8

const (
	jpField jpKind = iota
	jpWildcard
	jpIndexes
	jpSlice
	jpDeep
)

type jpStep struct {
	kind     jpKind
	names    []string // jpField (several: ['a','b']), jpDeep
	idx      []int
	from, to *int // jpSlice
}

type jsonPath struct {
	strict     bool
	steps      []jpStep
	indefinite bool
}

func parseJSONPath(spec string) (*jsonPath, error) {
	p := &jsonPath{}
	s := strings.TrimSpace(spec)
	low := strings.ToLower(s)
	switch {
	case strings.HasPrefix(low, "strict ") || strings.HasPrefix(low, "strict\t"):
		p.strict, s = true, strings.TrimSpace(s[6:])
	case strings.HasPrefix(low, "lax ") || strings.HasPrefix(low, "lax\t"):
		s = strings.TrimSpace(s[3:])
	}
	bad := func(why string) error { return fmt.Errorf("invalid JSON path '%s': %s", spec, why) }
	if !strings.HasPrefix(s, "$") {
		return nil, bad("it must start with $")
	}
	i := 1
	for i < len(s) {
		switch {
		case strings.HasPrefix(s[i:], ".."):
			i += 2
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			if j == i {
				return nil, bad("'..' needs a member name")
			}
			p.steps = append(p.steps, jpStep{kind: jpDeep, names: []string{s[i:j]}})
			p.indefinite = true
			i = j
		case s[i] == '.' && i+1 < len(s) && s[i+1] == '[':
			i++ // $.['a b'], as Flink's documentation writes it
		case s[i] == '.':
			i++
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			name := strings.TrimSpace(s[i:j])
			switch {
			case name == "":
				return nil, bad("'.' needs a member name")
			case name == "*":
				p.steps = append(p.steps, jpStep{kind: jpWildcard})
				p.indefinite = true
			default:
				p.steps = append(p.steps, jpStep{kind: jpField, names: []string{name}})
			}
			i = j
		case s[i] == '[':
			end := strings.IndexByte(s[i:], ']')
			// a quoted name may contain ']'
			if q := strings.IndexAny(s[i:], `'"`); q > 0 && (end < 0 || q < end) {
				end = closingBracket(s[i:])
			}
			if end < 0 {
				return nil, bad("unclosed '['")
			}
			st, err := parseBracket(strings.TrimSpace(s[i+1 : i+end]))
			if err != nil {
				return nil, bad(err.Error())
			}
			if st.kind != jpField && !(st.kind == jpIndexes && len(st.idx) == 1) || st.kind == jpField && len(st.names) > 1 {
				p.indefinite = true
			}
			p.steps = append(p.steps, st)
			i += end + 1
		case s[i] == ' ' || s[i] == '\t':
			i++
		default:
			return nil, bad(fmt.Sprintf("unexpected '%c'", s[i]))
		}
	}
	return p, nil
}

// closingBracket finds the ']' closing s[0] == '[', skipping quoted names.
func closingBracket(s string) int { return indexOutsideQuotes(s, 1, ']') }

// indexOutsideQuotes returns the index of the first c at or after from in
// s that is not inside a '...' or "..." name (where a backslash escapes
// the next byte), or -1; from must not be inside a quote.
func indexOutsideQuotes(s string, from int, c byte) int {
	var q byte
	for i := from; i < len(s); i++ {
		switch {
		case q != 0 && s[i] == '\\':
			i++
		case q != 0 && s[i] == q:
			q = 0
		case q == 0 && (s[i] == '\'' || s[i] == '"'):
			q = s[i]
		case q == 0 && s[i] == c:
			return i
		}
	}
	return -1
}

func parseBracket(in string) (jpStep, error) {
	if in == "*" {
		return jpStep{kind: jpWildcard}, nil
	}
	if in != "" && (in[0] == '\'' || in[0] == '"') {
		var names []string
		for _, part := range splitOutsideQuotes(in) {
			part = strings.TrimSpace(part)
			if len(part) < 2 || (part[0] != '\'' && part[0] != '"') || part[len(part)-1] != part[0] {
				return jpStep{}, fmt.Errorf("bad member name %s", part)
			}
			names = append(names, strings.ReplaceAll(part[1:len(part)-1], `\`+string(part[0]), string(part[0])))
		}
		return jpStep{kind: jpField, names: names}, nil
	}
	if a, b, ok := strings.Cut(in, ":"); ok {
		st := jpStep{kind: jpSlice}
		for k, t := range []string{a, b} {
			t = strings.TrimSpace(t)
			if t == "" {
				continue
			}
			n, err := strconv.Atoi(t)
			if err != nil {
				return jpStep{}, fmt.Errorf("bad slice bound %s", t)
			}
			if k == 0 {
				st.from = &n
			} else {
				st.to = &n
			}
		}
		return st, nil
	}
	st := jpStep{kind: jpIndexes}
	for _, t := range strings.Split(in, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil {
			return jpStep{}, fmt.Errorf("bad array index %s", t)
		}
		st.idx = append(st.idx, n)
	}
	return st, nil
}

// splitOutsideQuotes splits s at the commas outside quoted names.
func splitOutsideQuotes(s string) []string {
	var parts []string
	start := 0
	for i := indexOutsideQuotes(s, 0, ','); i >= 0; i = indexOutsideQuotes(s, start, ',') {
		parts = append(parts, s[start:i])
		start = i + 1
	}
	return append(parts, s[start:])
}

var errJSONPathMissing = errors.New("no such JSON member or element")

// eval applies the path to root. A definite path yields one value or nil
// (nothing there, lax); an indefinite one yields an array of the values
// found. In strict mode a missing definite step is an error.
func (p *jsonPath) eval(root *jsonVal) (*jsonVal, error) {
	cur := []*jsonVal{root}
	for _, st := range p.steps {
		var next []*jsonVal
		for _, v := range cur {
			found, err := p.step(st, v)
			if err != nil {
				return nil, err
			}
			next = append(next, found...)
		}
		cur = next
	}
	if p.indefinite {
		if cur == nil {
			cur = []*jsonVal{}
		}
		return &jsonVal{kind: jArray, arr: cur}, nil
	}
	if len(cur) == 0 {
		return nil, nil
	}
	return cur[0], nil
}

func (p *jsonPath) step(st jpStep, v *jsonVal) ([]*jsonVal, error) {
	missing := func() ([]*jsonVal, error) {
		if p.strict && !p.indefinite {
			return nil, errJSONPathMissing
		}
		return nil, nil
	}
	switch st.kind {
	case jpField:
		if v.kind != jObject {
			return missing()
		}
		var out []*jsonVal
		for _, n := range st.names {
			if e, ok := v.get(n); ok {
				out = append(out, e)
			} else if len(st.names) == 1 {
				return missing()
			}
		}
		return out, nil
	case jpWildcard:
		switch v.kind {
		case jArray:
			return v.arr, nil
		case jObject:
			return v.vals, nil
		}
		return nil, nil
	case jpIndexes:
		if v.kind != jArray {
			return missing()
		}
		var out []*jsonVal
		for _, i := range st.idx {
			if i < 0 {
				i += len(v.arr)
			}
			if i < 0 || i >= len(v.arr) {
				if len(st.idx) == 1 {
					return missing()
				}
				continue
			}
			out = append(out, v.arr[i])
		}
		return out, nil
	case jpSlice:
		if v.kind != jArray {
			return nil, nil
		}
		from, to := 0, len(v.arr)
		if st.from != nil {
			from = *st.from
			if from < 0 {
				from = max(0, len(v.arr)+from)
			}
		}
		if st.to != nil {
			to = *st.to
			if to < 0 {
				to += len(v.arr)
			}
		}
		to = min(to, len(v.arr))
		if from >= to {
			return nil, nil
		}
		return v.arr[from:to], nil
	}
	// jpDeep: every member of that name at any depth, in document order.
	var out []*jsonVal
	var walk func(x *jsonVal)
	walk = func(x *jsonVal) {
		switch x.kind {
		case jObject:
			for i, k := range x.keys {
				if k == st.names[0] {
					out = append(out, x.vals[i])
				}
				walk(x.vals[i])
			}
		case jArray:
			for _, e := range x.arr {
				walk(e)
			}
		}
	}
	walk(v)
	return out, nil
}

// ---------------------------------------------------------------------------
// JSON_QUOTE and JSON_UNQUOTE

// jsonQuote is Flink's JSON_QUOTE: ", \, /, \b, \f, \n, \r, \t escaped,
// characters above U+007F written as \uXXXX (UTF-16 units, lower case).
func jsonQuote(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '/':
			sb.WriteString(`\/`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		default:
			if r <= 127 {
				sb.WriteRune(r)
				continue
			}
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&sb, `\u%04x`, u)
			}
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// jsonUnquote is Flink's JSON_UNQUOTE: a valid JSON string literal comes
// back unescaped, anything else unchanged.
func jsonUnquote(s string) string {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return s
	}
	var out string
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	if err := dec.Decode(&out); err != nil || dec.InputOffset() != int64(len(s)) || !utf8.ValidString(out) {
		return s
	}
	return out
}
