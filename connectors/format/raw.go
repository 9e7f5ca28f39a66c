package format

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/types"
)

// The raw format, as Flink's: a table of one physical column whose value
// is the whole record. STRING is the text in 'raw.charset'; BYTES the
// bytes themselves; BOOLEAN one byte (0 false, else true); INT four
// bytes, BIGINT eight, DOUBLE the eight bytes of its IEEE 754 form, in
// 'raw.endianness'. A NULL is a null record value (a Kafka record
// without a value), and such a record reads as a row holding NULL.
//
// streamsql's TINYINT and SMALLINT are INT and its FLOAT is DOUBLE, so
// such columns take four and eight bytes, where Flink's take one, two
// and four.

// RawOptionDefs are the options of the raw format, Flink's names.
var RawOptionDefs = []connectors.OptionDef{
	{Key: "raw.charset", Default: "UTF-8", Description: "the charset of a STRING column's text: UTF-8, ISO-8859-1 or US-ASCII"},
	{Key: "raw.endianness", Default: "big-endian", Description: "the byte order of numbers: 'big-endian' or 'little-endian'"},
}

// RawOptions are the parsed options of the raw format.
type RawOptions struct {
	charset string // "utf-8", "iso-8859-1", "us-ascii"
	order   byteOrder
}

// byteOrder is what binary.BigEndian and binary.LittleEndian both are.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// ParseRawOptions checks the raw format's options and its table's one
// column.
func ParseRawOptions(o map[string]string, cs []connectors.Column) (RawOptions, error) {
	ro := RawOptions{charset: "utf-8", order: binary.BigEndian}
	if len(cs) != 1 {
		return ro, fmt.Errorf("the 'raw' format needs exactly one physical column, the table has %d", len(cs))
	}
	switch cs[0].Type.ID {
	case types.String, types.Bytes, types.Boolean, types.Int, types.BigInt, types.Double:
	default:
		return ro, fmt.Errorf("column '%s': the 'raw' format reads and writes STRING, BYTES, BOOLEAN, INT, BIGINT and DOUBLE columns, not %s", cs[0].Name, cs[0].Type)
	}
	if v, ok := o["raw.charset"]; ok {
		switch c := strings.ToLower(v); c {
		case "utf-8", "utf8":
		case "iso-8859-1", "latin1":
			ro.charset = "iso-8859-1"
		case "us-ascii", "ascii":
			ro.charset = "us-ascii"
		default:
			return ro, fmt.Errorf("option 'raw.charset': charset '%s' is not supported (UTF-8, ISO-8859-1, US-ASCII)", v)
		}
	}
	if v, ok := o["raw.endianness"]; ok {
		switch strings.ToLower(v) {
		case "big-endian":
		case "little-endian":
			ro.order = binary.LittleEndian
		default:
			return ro, fmt.Errorf("option 'raw.endianness' must be 'big-endian' or 'little-endian', got '%s'", v)
		}
	}
	return ro, nil
}

// RawCodec is the raw format's Decoder and Encoder of one column.
type RawCodec struct {
	o RawOptions
	c connectors.Column
}

// NewRawCodec returns the codec of the table's one column; o comes from
// ParseRawOptions on the same columns.
func NewRawCodec(cs []connectors.Column, o RawOptions) *RawCodec {
	return &RawCodec{o: o, c: cs[0]}
}

// Skip implements Decoder: every record is a value, an empty one too.
func (*RawCodec) Skip([]byte) bool { return false }

// DecodeNull fills row for a null record value: NULL.
func (*RawCodec) DecodeNull(row types.Row) { row[0] = types.NullValue }

// Decode implements Decoder.
func (r *RawCodec) Decode(b []byte, row types.Row) error {
	need := func(n int) error {
		if len(b) != n {
			return fmt.Errorf("column '%s': the 'raw' format reads %s from %d bytes, the record has %d", r.c.Name, r.c.Type, n, len(b))
		}
		return nil
	}
	switch r.c.Type.ID {
	case types.String:
		row[0] = types.NewString(r.decodeText(b))
	case types.Bytes:
		row[0] = types.NewBytes(b)
	case types.Boolean:
		if err := need(1); err != nil {
			return err
		}
		row[0] = types.NewBool(b[0] != 0)
	case types.Int:
		if err := need(4); err != nil {
			return err
		}
		row[0] = types.NewInt(int64(int32(r.o.order.Uint32(b))))
	case types.BigInt:
		if err := need(8); err != nil {
			return err
		}
		row[0] = types.NewInt(int64(r.o.order.Uint64(b)))
	case types.Double:
		if err := need(8); err != nil {
			return err
		}
		row[0] = types.NewFloat(math.Float64frombits(r.o.order.Uint64(b)))
	default:
		return fmt.Errorf("internal error: raw format column of type %s", r.c.Type)
	}
	return nil
}

// decodeText reads text in the charset. Bytes that are not text in it
// become U+FFFD, as Java's decoders replace them.
func (r *RawCodec) decodeText(b []byte) string {
	switch r.o.charset {
	case "iso-8859-1":
		rs := make([]rune, len(b))
		for i, c := range b {
			rs[i] = rune(c)
		}
		return string(rs)
	case "us-ascii":
		var sb strings.Builder
		for _, c := range b {
			if c < 0x80 {
				sb.WriteByte(c)
			} else {
				sb.WriteRune(utf8.RuneError)
			}
		}
		return sb.String()
	}
	return expr.ValidUTF8(string(b))
}

// IsNull reports whether row's value is NULL, which the raw format
// writes as a null record value (where the sink has one).
func (*RawCodec) IsNull(row types.Row) bool { return row[0].IsNull() }

// Append implements Encoder. A NULL appends nothing: a sink asks IsNull
// first.
func (r *RawCodec) Append(dst []byte, row types.Row) []byte {
	v := row[0]
	if v.IsNull() {
		return dst
	}
	switch r.c.Type.ID {
	case types.String:
		return r.appendText(dst, v.Str())
	case types.Bytes:
		return append(dst, v.Str()...)
	case types.Boolean:
		if v.Bool() {
			return append(dst, 1)
		}
		return append(dst, 0)
	case types.Int:
		return r.o.order.AppendUint32(dst, uint32(int32(v.Int())))
	case types.BigInt:
		return r.o.order.AppendUint64(dst, uint64(v.Int()))
	case types.Double:
		return r.o.order.AppendUint64(dst, math.Float64bits(v.Float()))
	}
	return dst
}

// appendText writes s in the charset; a character it cannot hold is
// '?', as Java's encoders write it.
func (r *RawCodec) appendText(dst []byte, s string) []byte {
	limit := rune(0)
	switch r.o.charset {
	case "iso-8859-1":
		limit = 0xff
	case "us-ascii":
		limit = 0x7f
	default:
		return append(dst, s...)
	}
	for _, c := range s {
		if c > limit {
			c = '?'
		}
		dst = append(dst, byte(c))
	}
	return dst
}
