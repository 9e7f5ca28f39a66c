package format

import (
	"encoding/binary"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

type JSONOptions struct {
	FailOnMissingField bool // json.fail-on-missing-field
}

// jsonDecoder reads JSON lines: each line is one JSON object (RFC 8259),
// whitespace around it allowed. It is a hand-written scanner for speed;
// it accepts exactly the objects encoding/json accepts, and decodes
// strings as it does (escapes, surrogate pairs, invalid UTF-8 and lone
// surrogates as U+FFFD).
//
// Fields are matched to columns by name, case-sensitively; the last of
// duplicate fields wins. Fields that name no column are skipped, whatever
// they hold, after checking their syntax. A column without a field, or
// whose field is null, is NULL (an error with 'json.fail-on-missing-field').
//
// Values: a JSON string or any other scalar (number, true, false) is read
// as CAST(<its text> AS <column type>), so {"n": "42"} and {"n": 42} both
// give INT 42, and {"ok": "yes"} gives BOOLEAN TRUE. The exception is a
// JSON number for a TIMESTAMP column: it is epoch milliseconds. An object
// is read into a ROW column by field name (as the top level is) or into a
// MAP column (its keys converted to the key type), an array into an ARRAY
// column, element by element with these same rules. An object or array
// for a STRING column is its JSON text, as written; for any other type it
// is an error.
type jsonDecoder struct {
	cols    []column
	index   map[string]int
	order   []fieldSlot // by position of a field in the top-level object
	opts    JSONOptions
	seen    []uint32 // the row generation in which each column was set
	gen     uint32
	scratch []byte // unescaped strings
}

// NewJSONDecoder returns a decoder of rows of the columns cs, or, when
// fields is not nil, of the columns fields of cs (indexes, in row order):
// the fields of the other columns are then skipped as extra fields are.
func NewJSONDecoder(cs []connectors.Column, fields []int, o JSONOptions) *jsonDecoder {
	cs = project(cs, fields)
	d := &jsonDecoder{cols: makeColumns(cs), index: map[string]int{}, opts: o, seen: make([]uint32, len(cs))}
	for i, c := range cs {
		d.index[c.Name] = i
	}
	return d
}

func (d *jsonDecoder) Skip(line []byte) bool {
	for _, c := range line {
		if !isJSONSpace(c) {
			return false
		}
	}
	return true
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return i
}

// syntaxError is invalid JSON at byte i (reported 1-based, as a column).
func syntaxError(b []byte, i int, what string) error {
	if i >= len(b) {
		return fmt.Errorf("invalid JSON: %s, found the end of the line", what)
	}
	return fmt.Errorf("invalid JSON at column %d: %s, found %s", i+1, what, quoteByte(b[i]))
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("'%c'", c)
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// fieldSlot is the name of the field last seen at a position of the
// object and its column (-1: none).
type fieldSlot struct {
	key []byte
	col int
}

// maxOrder bounds the field positions whose name lookupAt remembers.
const maxOrder = 256

// lookupAt returns the column of field key, the k-th field of the
// object, or -1. Lines written by one program list their fields in one
// order, so the answer for each position is remembered, and checked by
// comparing the name, which costs less than a map lookup.
func (d *jsonDecoder) lookupAt(k int, key []byte) int {
	if k < len(d.order) {
		if s := &d.order[k]; string(s.key) == string(key) {
			return s.col
		}
	} else if k < maxOrder { // k == len(d.order): fields come one by one
		d.order = append(d.order, fieldSlot{})
	}
	col, ok := d.index[string(key)]
	if !ok {
		col = -1
	}
	if k < len(d.order) {
		s := &d.order[k]
		s.key, s.col = append(s.key[:0], key...), col
	}
	return col
}

func (d *jsonDecoder) Decode(b []byte, row types.Row) error {
	d.gen++
	if d.gen == 0 { // wrapped: forget every generation
		clear(d.seen)
		d.gen = 1
	}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return syntaxError(b, i, "expected a JSON object '{'")
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for k := 0; ; k++ {
			if i >= len(b) || b[i] != '"' {
				return syntaxError(b, i, "expected a field name")
			}
			key, j, err := d.readString(b, i)
			if err != nil {
				return err
			}
			i = skipWS(b, j)
			if i >= len(b) || b[i] != ':' {
				return syntaxError(b, i, "expected ':' after a field name")
			}
			i = skipWS(b, i+1)
			// key may live in d.scratch: look it up before reading the value.
			if col := d.lookupAt(k, key); col >= 0 {
				d.seen[col] = d.gen
				v, j, err := d.readValue(b, i, &d.cols[col])
				if err != nil {
					return err
				}
				row[col] = v
				i = j
			} else {
				j, err := skipValue(b, i, 0)
				if err != nil {
					return err
				}
				i = j
			}
			i = skipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			return syntaxError(b, i, "expected ',' or '}' after a field value")
		}
	}
	if i = skipWS(b, i); i < len(b) {
		return syntaxError(b, i, "expected the end of the line after the object")
	}
	if d.opts.FailOnMissingField {
		for c := range d.cols {
			if d.seen[c] != d.gen {
				return fmt.Errorf("field '%s' is missing (json.fail-on-missing-field)", d.cols[c].name)
			}
		}
	}
	return nil
}

// readValue reads the value at b[i] for column c.
func (d *jsonDecoder) readValue(b []byte, i int, c *column) (types.Value, int, error) {
	if i >= len(b) {
		return types.NullValue, i, syntaxError(b, i, "expected a value")
	}
	switch ch := b[i]; {
	case ch == '"':
		s, j, err := d.readString(b, i)
		if err != nil {
			return types.NullValue, j, err
		}
		v, err := fromText(s, c)
		return v, j, err
	case ch == '-' || (ch >= '0' && ch <= '9'):
		j, isInt, err := scanNumber(b, i)
		if err != nil {
			return types.NullValue, j, err
		}
		if c.t.IsTimestamp() {
			if !isInt {
				return types.NullValue, j, fieldError(c, fmt.Errorf("JSON number %s is not epoch milliseconds", b[i:j]))
			}
			v, err := epochMillis(b[i:j], c)
			return v, j, err
		}
		v, err := fromText(b[i:j], c)
		return v, j, err
	case ch == 't' || ch == 'f':
		j, err := scanLiteral(b, i)
		if err != nil {
			return types.NullValue, j, err
		}
		v, err := fromText(b[i:j], c)
		return v, j, err
	case ch == 'n':
		j, err := scanLiteral(b, i)
		return types.NullValue, j, err
	case ch == '{' && (c.t.ID == types.RowT || c.t.ID == types.Map || c.t.ID == types.Multiset), ch == '[' && c.t.ID == types.Array:
		return d.readComposite(b, i, c)
	case ch == '{' || ch == '[':
		j, err := skipValue(b, i, 0)
		if err != nil {
			return types.NullValue, j, err
		}
		if c.t.ID != types.String {
			kind := "an object"
			if ch == '[' {
				kind = "an array"
			}
			return types.NullValue, j, fieldError(c, fmt.Errorf("JSON %s cannot be read as %s", kind, c.t))
		}
		v, err := fromText(b[i:j], c)
		return v, j, err
	}
	return types.NullValue, i, syntaxError(b, i, "expected a value")
}

// readComposite reads the object or array at b[i] into a ROW, MAP,
// MULTISET (an object of element to count, as Flink's json format
// writes one) or ARRAY.
func (d *jsonDecoder) readComposite(b []byte, i int, c *column) (types.Value, int, error) {
	closer := byte('}')
	if b[i] == '[' {
		closer = ']'
	}
	var vals []types.Value
	if c.t.ID == types.RowT {
		vals = make([]types.Value, len(c.fields))
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == closer {
		i++
	} else {
		for {
			var fc *column // the column of the next value; nil: skip it
			switch c.t.ID {
			case types.Array:
				fc = &c.fields[0]
			default:
				if i >= len(b) || b[i] != '"' {
					return types.NullValue, i, syntaxError(b, i, "expected a field name")
				}
				key, j, err := d.readString(b, i)
				if err != nil {
					return types.NullValue, j, err
				}
				i = skipWS(b, j)
				if i >= len(b) || b[i] != ':' {
					return types.NullValue, i, syntaxError(b, i, "expected ':' after a field name")
				}
				i = skipWS(b, i+1)
				if c.t.ID == types.Map || c.t.ID == types.Multiset {
					k, err := fromText(key, &c.fields[0])
					if err != nil {
						return types.NullValue, i, err
					}
					vals = append(vals, k)
					fc = &c.fields[1]
				} else if f := c.t.FieldIndex(string(key)); f >= 0 {
					v, j, err := d.readValue(b, i, &c.fields[f])
					if err != nil {
						return types.NullValue, j, err
					}
					vals[f], i = v, j
				} else {
					j, err := skipValue(b, i, 0)
					if err != nil {
						return types.NullValue, j, err
					}
					i = j
				}
			}
			if fc != nil {
				v, j, err := d.readValue(b, i, fc)
				if err != nil {
					return types.NullValue, j, err
				}
				vals, i = append(vals, v), j
			}
			i = skipWS(b, i)
			if i < len(b) && b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if i < len(b) && b[i] == closer {
				i++
				break
			}
			return types.NullValue, i, syntaxError(b, i, "expected ',' or "+quoteByte(closer)+" after a value")
		}
	}
	switch c.t.ID {
	case types.RowT:
		return types.NewRow(vals), i, nil
	case types.Array:
		return types.NewArray(vals), i, nil
	case types.Multiset:
		v, err := multisetOf(lastKeyWins(vals), c)
		return v, i, err
	}
	return types.NewMap(lastKeyWins(vals)), i, nil
}

// multisetOf makes a MULTISET of the element, count pairs of a JSON
// object; a count must be above 0.
func multisetOf(kv []types.Value, c *column) (types.Value, error) {
	elems := make([]types.Value, 0, len(kv)/2)
	counts := make([]int64, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1].IsNull() || kv[i+1].Int() <= 0 {
			return types.NullValue, fieldError(c, fmt.Errorf("the count of element %s of a MULTISET must be above 0, got %s", types.Format(kv[i], c.fields[0].t), types.Format(kv[i+1], types.TypeInt)))
		}
		elems, counts = append(elems, kv[i]), append(counts, kv[i+1].Int())
	}
	return types.NewMultiset(elems, counts), nil
}

// lastKeyWins keeps the last value of each repeated key of a JSON object
// read as a MAP, as for the fields of a row.
func lastKeyWins(kv []types.Value) []types.Value {
	out := kv[:0:0]
	for i := 0; i+1 < len(kv); i += 2 {
		dup := false
		for j := 0; j < len(out); j += 2 {
			if types.Equal(out[j], kv[i]) {
				out[j+1], dup = kv[i+1], true
				break
			}
		}
		if !dup {
			out = append(out, kv[i], kv[i+1])
		}
	}
	return out
}

// readString reads the string starting with the quote at b[i]. The result
// aliases b, or d.scratch when the string holds escapes or non-ASCII.
func (d *jsonDecoder) readString(b []byte, i int) ([]byte, int, error) {
	j := i + 1
	for j+8 <= len(b) && !special8(binary.LittleEndian.Uint64(b[j:]), true) {
		j += 8
	}
	for ; j < len(b); j++ {
		c := b[j]
		if c == '"' {
			return b[i+1 : j], j + 1, nil
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return d.readStringSlow(b, i+1, j)
		}
	}
	return nil, len(b), syntaxError(b, len(b), "unterminated string")
}

func (d *jsonDecoder) readStringSlow(b []byte, start, j int) ([]byte, int, error) {
	out := append(d.scratch[:0], b[start:j]...)
	defer func() { d.scratch = out[:0] }()
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			return out, j + 1, nil
		case c == '\\':
			if j+1 >= len(b) {
				return nil, j, syntaxError(b, len(b), "unterminated string")
			}
			switch e := b[j+1]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(b, j+2)
				if r < 0 {
					return nil, j, syntaxError(b, j, "invalid \\u escape")
				}
				j += 6
				if utf16.IsSurrogate(r) {
					if j+1 < len(b) && b[j] == '\\' && b[j+1] == 'u' {
						if r2 := hex4(b, j+2); r2 >= 0 {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								out = utf8.AppendRune(out, dec)
								j += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return nil, j, syntaxError(b, j+1, "invalid escape in string")
			}
			j += 2
		case c < 0x20:
			return nil, j, syntaxError(b, j, "control character in string")
		case c < 0x80:
			out = append(out, c)
			j++
		default:
			r, n := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && n == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, b[j:j+n]...)
			}
			j += n
		}
	}
	return nil, len(b), syntaxError(b, len(b), "unterminated string")
}

// special8 reports whether one of the 8 bytes of w (little-endian) may
// end a string's plain run: a quote, a backslash, a control character
// or, when nonASCII, a byte from 0x80 on. It may report true for a byte
// that is none of them after one that is (a borrow carries into the next
// byte), never false for one that is, so a caller skips 8 bytes only on
// false and otherwise looks at them one by one.
func special8(w uint64, nonASCII bool) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ ('"' * ones)
	bs := w ^ ('\\' * ones)
	x := (q - ones) &^ q
	x |= (bs - ones) &^ bs
	x |= (w - 0x20*ones) &^ w
	if nonASCII {
		x |= w
	}
	return x&highs != 0
}

// hex4 decodes the 4 hex digits at b[i:], or returns -1.
func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// scanNumber scans a JSON number at b[i] and reports whether it is an
// integer (no fraction, no exponent).
func scanNumber(b []byte, i int) (int, bool, error) {
	j := i
	if b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	default:
		return j, false, syntaxError(b, j, "expected a digit in a number")
	}
	isInt := true
	if j < len(b) && b[j] == '.' {
		isInt = false
		j++
		if j >= len(b) || b[j] < '0' || b[j] > '9' {
			return j, false, syntaxError(b, j, "expected a digit after the decimal point")
		}
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		isInt = false
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || b[j] < '0' || b[j] > '9' {
			return j, false, syntaxError(b, j, "expected a digit in the exponent")
		}
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	}
	return j, isInt, nil
}

// scanLiteral scans true, false or null at b[i].
func scanLiteral(b []byte, i int) (int, error) {
	var lit string
	switch b[i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	default:
		lit = "null"
	}
	for k := 0; k < len(lit); k++ {
		if i+k >= len(b) || b[i+k] != lit[k] {
			return i + k, syntaxError(b, i+k, "invalid literal (true, false or null)")
		}
	}
	return i + len(lit), nil
}

// maxDepth bounds the nesting of skipped values, as encoding/json does.
const maxDepth = 10000

// skipValue checks the syntax of the value at b[i] and returns its end.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, syntaxError(b, i, "expected a value")
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '-' || (c >= '0' && c <= '9'):
		j, _, err := scanNumber(b, i)
		return j, err
	case c == 't' || c == 'f' || c == 'n':
		return scanLiteral(b, i)
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, syntaxError(b, i, "nesting too deep")
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == end {
			return i + 1, nil
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return i, syntaxError(b, i, "expected a field name")
				}
				j, err := skipString(b, i)
				if err != nil {
					return j, err
				}
				i = skipWS(b, j)
				if i >= len(b) || b[i] != ':' {
					return i, syntaxError(b, i, "expected ':' after a field name")
				}
				i = skipWS(b, i+1)
			}
			j, err := skipValue(b, i, depth+1)
			if err != nil {
				return j, err
			}
			i = skipWS(b, j)
			if i < len(b) && b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if i < len(b) && b[i] == end {
				return i + 1, nil
			}
			return i, syntaxError(b, i, fmt.Sprintf("expected ',' or '%c'", end))
		}
	}
	return i, syntaxError(b, i, "expected a value")
}

// skipString checks the string starting at b[i] and returns its end.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for j+8 <= len(b) && !special8(binary.LittleEndian.Uint64(b[j:]), false) {
		j += 8
	}
	for ; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, nil
		case c == '\\':
			if j+1 >= len(b) {
				return len(b), syntaxError(b, len(b), "unterminated string")
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if hex4(b, j+2) < 0 {
					return j, syntaxError(b, j, "invalid \\u escape")
				}
				j += 5
			default:
				return j + 1, syntaxError(b, j+1, "invalid escape in string")
			}
		case c < 0x20:
			return j, syntaxError(b, j, "control character in string")
		}
	}
	return len(b), syntaxError(b, len(b), "unterminated string")
}
