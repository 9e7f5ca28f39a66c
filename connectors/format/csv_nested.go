package format

import (
	"fmt"
	"strconv"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

// ROW and ARRAY columns in the csv format, as Flink's csv format has
// them: the value is one CSV field (quoted like any other when it needs
// to be) whose text is the ARRAY's elements, or the ROW's fields in
// order, separated by 'csv.array-element-delimiter' (';' by default).
// Elements are scalars (Flink's csv format nests one level and has no
// MAP; CheckCSVColumns refuses the rest). Inside the field:
//
//   - An element equal to 'csv.null-literal' is NULL; an empty element is
//     the empty string for a STRING element and NULL for any other type,
//     as for a whole field. Otherwise it reads as CAST(<text> AS <type>).
//   - With 'csv.escape-character', the escape makes the next character
//     literal, so an element can hold the element delimiter (written
//     escaped). That is a second level of escaping: the field itself is
//     escaped or quoted around it as usual. An escaped element is never
//     the null literal. Without an escape character, an element that
//     holds the delimiter is written as is and reads back split.
//   - A ROW needs exactly one element per field; more or fewer is a
//     malformed record, as is an element that does not convert.
//   - An empty field is NULL when no null literal is set. With one set
//     (NULL then has its own text), an empty field is an empty ARRAY, or
//     a ROW whose text is empty (one empty element).

// CheckCSVColumns reports the first column of cs whose type the csv
// format cannot read or write, by name and type: MULTISET types, MAP,
// and ROW or ARRAY with a composite element.
func CheckCSVColumns(cs []connectors.Column) error {
	for _, c := range cs {
		t := c.Type
		switch t.ID {
		case types.Map, types.Multiset:
			return fmt.Errorf("column '%s': type %s is not supported by the csv format (as in Flink, whose csv format has no %s); use 'json'", c.Name, t, t.ID)
		case types.RowT, types.Array:
			for _, f := range t.Fields {
				if f.Type.IsComposite() {
					return fmt.Errorf("column '%s': type %s is not supported by the csv format: the fields of a ROW and the elements of an ARRAY must be scalar types (Flink's csv format nests one level); use 'json'", c.Name, t)
				}
				if !Readable(f.Type, false) {
					return fmt.Errorf("column '%s': type %s is not supported by the csv format (element type %s)", c.Name, t, f.Type)
				}
			}
		default:
			if !Readable(t, false) {
				return fmt.Errorf("column '%s': type %s is not supported by the csv format", c.Name, t)
			}
		}
	}
	return nil
}

// nested reads the text of a ROW or ARRAY field of column c.
func (d *csvDecoder) nested(b []byte, c *column) (types.Value, error) {
	var vals []types.Value
	if len(b) > 0 || c.t.ID == types.RowT {
		for i := 0; ; {
			el, escaped, next, err := d.element(b, i)
			if err != nil {
				return types.NullValue, fieldError(c, err)
			}
			n := len(vals)
			if c.t.ID == types.RowT && n >= len(c.fields) {
				return types.NullValue, d.rowArity(b, c)
			}
			ec := &c.fields[0]
			if c.t.ID == types.RowT {
				ec = &c.fields[n]
			}
			v, err := d.elementValue(el, escaped, ec)
			if err != nil {
				return types.NullValue, err
			}
			vals = append(vals, v)
			if next < 0 {
				break
			}
			i = next
		}
	}
	if c.t.ID == types.RowT {
		if len(vals) != len(c.fields) {
			return types.NullValue, d.rowArity(b, c)
		}
		return types.NewRow(vals), nil
	}
	return types.NewArray(vals), nil
}

func (d *csvDecoder) rowArity(b []byte, c *column) error {
	n := 1
	for i := 0; ; n++ {
		_, _, next, err := d.element(b, i)
		if err != nil || next < 0 {
			break
		}
		i = next
	}
	return fmt.Errorf("column '%s': %s needs %d fields separated by %s, found %d in %s", c.name, c.t, len(c.fields), strconv.Quote(d.o.elems), n, strconv.Quote(string(b)))
}

// element reads the element of b that starts at i: its text (escapes
// resolved, in d.elem when there were any), whether it had an escape,
// and the start of the next element (-1 at the end).
func (d *csvDecoder) element(b []byte, i int) ([]byte, bool, int, error) {
	delim := d.o.elems
	start := i
	escaped := false
	out := d.elem[:0]
	for i < len(b) {
		if d.o.escaped && b[i] == d.o.escape {
			if !escaped {
				out, escaped = append(out, b[start:i]...), true
			}
			i++
			if i >= len(b) {
				return nil, false, -1, fmt.Errorf("escape character at the end of an element")
			}
			out = append(out, b[i])
			i++
			continue
		}
		if b[i] == delim[0] && len(b)-i >= len(delim) && string(b[i:i+len(delim)]) == delim {
			return d.done(b[start:i], out, escaped), escaped, i + len(delim), nil
		}
		if escaped {
			out = append(out, b[i])
		}
		i++
	}
	return d.done(b[start:], out, escaped), escaped, -1, nil
}

func (d *csvDecoder) done(plain, out []byte, escaped bool) []byte {
	if !escaped {
		return plain
	}
	d.elem = out[:0]
	return out
}

// elementValue converts one element's text to the type of c.
func (d *csvDecoder) elementValue(el []byte, escaped bool, c *column) (types.Value, error) {
	if !escaped && d.o.hasNull && string(el) == d.o.null {
		return types.NullValue, nil
	}
	if len(el) == 0 && c.t.ID != types.String {
		return types.NullValue, nil
	}
	return fromText(el, c)
}

// appendNested appends the text of a non-NULL ROW or ARRAY v of type t.
func (e *CSVEncoder) appendNested(dst []byte, v types.Value, t types.Type) []byte {
	for i, x := range v.Elems() {
		if i > 0 {
			dst = append(dst, e.o.elems...)
		}
		if x.IsNull() {
			if e.o.hasNull {
				dst = append(dst, e.o.null...)
			}
			continue
		}
		et := t.Elem()
		if t.ID == types.RowT {
			et = types.Type{ID: types.String}
			if i < len(t.Fields) {
				et = t.Fields[i].Type
			}
		}
		start := len(dst)
		dst = appendCSVScalar(dst, x, et)
		if e.o.escaped {
			dst = e.escapeElement(dst, start)
		}
	}
	return dst
}

// escapeElement escapes, in dst[start:], the escape character and the
// element delimiter; an element equal to the null literal gets its first
// character escaped, so that it reads back as text.
func (e *CSVEncoder) escapeElement(dst []byte, start int) []byte {
	el := dst[start:]
	need := e.o.hasNull && len(el) > 0 && string(el) == e.o.null
	for i := range el {
		if el[i] == e.o.escape || el[i] == e.o.elems[0] {
			need = true
			break
		}
	}
	if !need {
		return dst
	}
	s := string(el)
	dst = dst[:start]
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == e.o.escape, i == 0 && e.o.hasNull && s == e.o.null:
			dst = append(dst, e.o.escape)
		case c == e.o.elems[0] && len(s)-i >= len(e.o.elems) && s[i:i+len(e.o.elems)] == e.o.elems:
			dst = append(dst, e.o.escape)
		}
		dst = append(dst, c)
	}
	return dst
}
