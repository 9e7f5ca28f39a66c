package format

import (
	"encoding/base64"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

// Encoder turns a row into one record, without a line break. Sinks
// (filesystem part files, Kafka record values and keys) use it; what it
// writes, the matching Decoder reads back as the same row.
type Encoder interface {
	// Append appends row's record to dst.
	Append(dst []byte, row types.Row) []byte
}

// JSONEncoder writes a row as one JSON object with a field per column,
// named as the column, in column order, as Flink's json format does:
// NULL is null, BOOLEAN true/false, numbers (DECIMAL included) as JSON
// numbers, strings escaped as encoding/json would (without its HTML
// escaping), DATE and TIMESTAMP as strings in SQL form ('2024-01-02',
// '2024-01-02 03:04:05.678'). A DOUBLE that is NaN or infinite, which
// JSON cannot hold, is written as a string ("NaN", "Infinity").
type JSONEncoder struct {
	names [][]byte // `"name":` per column, with the separating comma
	types []types.Type
}

// NewJSONEncoder returns the encoder of rows with columns cs.
func NewJSONEncoder(cs []connectors.Column) *JSONEncoder {
	e := &JSONEncoder{}
	for i, c := range cs {
		var b []byte
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, c.Name)
		b = append(b, ':')
		e.names = append(e.names, b)
		e.types = append(e.types, c.Type)
	}
	return e
}

// Append implements Encoder.
func (e *JSONEncoder) Append(dst []byte, row types.Row) []byte {
	dst = append(dst, '{')
	for i, v := range row {
		dst = append(dst, e.names[i]...)
		dst = appendJSONValue(dst, v, e.types[i])
	}
	return append(dst, '}')
}

// appendJSONValue appends one value of type t: a ROW as an object of its
// fields, an ARRAY as an array, a MAP as an object whose keys are the
// keys' text.
func appendJSONValue(dst []byte, v types.Value, t types.Type) []byte {
	switch v.Kind() {
	case types.KindNull:
		return append(dst, "null"...)
	case types.KindBool, types.KindInt, types.KindDecimal:
		return types.AppendFormat(dst, v, t)
	case types.KindInterval, types.KindIntervalYM:
		return appendIntervalNumber(dst, v) // interval.go
	case types.KindFloat:
		f := v.Float()
		switch {
		case math.IsNaN(f):
			return append(dst, `"NaN"`...)
		case math.IsInf(f, 1):
			return append(dst, `"Infinity"`...)
		case math.IsInf(f, -1):
			return append(dst, `"-Infinity"`...)
		}
		return types.AppendFormat(dst, v, t)
	case types.KindString:
		if t.ID == types.Bytes { // base64, as Flink's json format
			return appendJSONString(dst, base64.StdEncoding.EncodeToString([]byte(v.Str())))
		}
		return appendJSONString(dst, v.Str())
	case types.KindRow:
		dst = append(dst, '{')
		for i, f := range v.Elems() {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ft types.Type
			name := fmt.Sprintf("f%d", i)
			if i < len(t.Fields) {
				ft, name = t.Fields[i].Type, t.Fields[i].Name
			}
			dst = appendJSONString(dst, name)
			dst = append(dst, ':')
			dst = appendJSONValue(dst, f, ft)
		}
		return append(dst, '}')
	case types.KindArray:
		dst = append(dst, '[')
		for i, x := range v.Elems() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONValue(dst, x, t.Elem())
		}
		return append(dst, ']')
	case types.KindMap:
		dst = append(dst, '{')
		es := v.Elems()
		for i := 0; i+1 < len(es); i += 2 {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, types.Format(es[i], t.Elem()))
			dst = append(dst, ':')
			dst = appendJSONValue(dst, es[i+1], t.MapValue())
		}
		return append(dst, '}')
	}
	dst = append(dst, '"')
	dst = types.AppendFormat(dst, v, t)
	if t.ID == types.TimestampLTZ {
		// An instant in UTC with its 'Z', as Flink's json format writes a
		// TIMESTAMP_LTZ: readable back whatever the session zone.
		dst = append(dst, 'Z')
	}
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped; invalid UTF-8 replaced by U+FFFD, as
// encoding/json does.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// CSVEncoder writes a row as one CSV record, fields in column order,
// as Flink's csv format does: the field delimiter and quote character of
// CSVOptions; a field is quoted when it holds the delimiter, the quote
// character, a line break or leading/trailing space, with the quote
// character doubled inside; NULL is the null literal if one is set, else
// an empty field. A ROW or ARRAY is one field of its elements joined by
// the element delimiter (csv_nested.go).
type CSVEncoder struct {
	o     CSVOptions
	types []types.Type
}

// NewCSVEncoder returns the encoder of rows with columns cs.
func NewCSVEncoder(cs []connectors.Column, o CSVOptions) *CSVEncoder {
	e := &CSVEncoder{o: o}
	for _, c := range cs {
		e.types = append(e.types, c.Type)
	}
	return e
}

// DefaultCSVOptions are Flink's csv defaults: ',' and '"'.
// and ';' between ARRAY elements and ROW fields.
func DefaultCSVOptions() CSVOptions {
	return CSVOptions{delim: ',', quote: '"', quoted: true, elems: ";"}
}

// Append implements Encoder.
func (e *CSVEncoder) Append(dst []byte, row types.Row) []byte {
	var field []byte
	for i, v := range row {
		if i > 0 {
			dst = append(dst, e.o.delim)
		}
		if v.IsNull() {
			if e.o.hasNull {
				dst = append(dst, e.o.null...)
			}
			continue
		}
		if e.types[i].IsComposite() {
			field = e.appendNested(field[:0], v, e.types[i])
		} else {
			field = appendCSVScalar(field[:0], v, e.types[i])
		}
		dst = e.appendField(dst, field)
	}
	return dst
}

// appendCSVScalar appends the text of a non-NULL scalar v of type t.
func appendCSVScalar(dst []byte, v types.Value, t types.Type) []byte {
	if t.ID == types.Bytes { // base64, as Flink's csv format
		return base64.StdEncoding.AppendEncode(dst, []byte(v.Str()))
	}
	if k := v.Kind(); k == types.KindInterval || k == types.KindIntervalYM {
		return appendIntervalNumber(dst, v) // interval.go
	}
	dst = types.AppendFormat(dst, v, t)
	if t.ID == types.TimestampLTZ {
		dst = append(dst, 'Z') // in UTC, as Flink's csv format
	}
	return dst
}

func (e *CSVEncoder) appendField(dst, f []byte) []byte {
	need := len(f) > 0 && (f[0] == ' ' || f[len(f)-1] == ' ')
	if e.o.hasNull && string(f) == e.o.null {
		need = true // a string equal to the null literal must stay a string
	}
	for _, c := range f {
		if c == e.o.delim || c == '\n' || c == '\r' || (e.o.quoted && c == e.o.quote) || (e.o.escaped && c == e.o.escape) {
			need = true
			break
		}
	}
	if !need {
		return append(dst, f...)
	}
	if !e.o.quoted {
		// Without quoting, escape the special characters if an escape
		// character is set; otherwise the record cannot be written
		// faithfully, which NewCSVEncoder's caller rejects up front.
		for _, c := range f {
			if e.o.escaped && (c == e.o.delim || c == e.o.escape || c == '\n' || c == '\r') {
				dst = append(dst, e.o.escape)
			}
			dst = append(dst, c)
		}
		return dst
	}
	dst = append(dst, e.o.quote)
	for _, c := range f {
		if c == e.o.quote || (e.o.escaped && c == e.o.escape) {
			if e.o.escaped {
				dst = append(dst, e.o.escape)
			} else {
				dst = append(dst, e.o.quote)
			}
		}
		dst = append(dst, c)
	}
	return append(dst, e.o.quote)
}
