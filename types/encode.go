package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"
)

// Key encoding. EncodeKey writes values so that the byte order of two
// encodings equals Compare's order of the values, kind by kind. The encoding is canonical: values equal under SQL
// comparison (1.5 and 1.50, -0 and 0) encode to the same bytes, so that
// exchanges, keyed state and key groups agree on what a key is. Keyed state and exchanges use it for grouping keys;
// it is also the serialization of rows in state (EncodeRow / DecodeRow).
//
// Layout: one tag byte per value (tags ordered NULL first), then
//   bool, int, date, timestamp, interval, time, year-month interval:
//   8 bytes big-endian, sign bit flipped
//   float: 8 bytes of sortable IEEE bits
//   string: bytes with 0x00 escaped as 0x00 0xFF, ended by 0x00 0x01
//   decimal: see appendDecimal
//   row, array, map: each field, element or key and value in turn, ended
//   by 0x00 (below every tag, so a shorter prefix sorts first)

const (
	tagNull byte = iota + 1
	tagBool
	tagInt
	tagFloat
	tagDecimal
	tagString
	tagDate
	tagTimestamp
	tagInterval
	tagRow
	tagArray
	tagMap
	// New tags go last: encoded state keeps its bytes across versions.
	tagTime
	tagIntervalYM
)

// tagEnd ends the values of a row, array or map.
const tagEnd byte = 0

// EncodeKey appends the canonical key encoding of r's columns cols (all
// columns when cols is nil) to dst.
func EncodeKey(dst []byte, r Row, cols []int) []byte {
	if cols == nil {
		for i := range r {
			dst = AppendValue(dst, r[i])
		}
		return dst
	}
	for _, c := range cols {
		dst = AppendValue(dst, r[c])
	}
	return dst
}

// EncodeRow appends the exact encoding of a whole row: unlike a key it
// keeps 1.50 apart from 1.5 and -0 apart from 0, so DecodeRow gives back
// the very row. It still orders like Compare.
func EncodeRow(dst []byte, r Row) []byte {
	for i := range r {
		dst = appendValue(dst, r[i], false)
	}
	return dst
}

// AppendValue appends one value's canonical key encoding.
func AppendValue(dst []byte, v Value) []byte { return appendValue(dst, v, true) }

func appendValue(dst []byte, v Value, canonical bool) []byte {
	switch v.k {
	case KindNull:
		return append(dst, tagNull)
	case KindBool:
		return appendU64(append(dst, tagBool), uint64(v.i)^(1<<63))
	case KindInt:
		return appendU64(append(dst, tagInt), uint64(v.i)^(1<<63))
	case KindDate:
		return appendU64(append(dst, tagDate), uint64(v.i)^(1<<63))
	case KindTimestamp:
		return appendU64(append(dst, tagTimestamp), uint64(v.i)^(1<<63))
	case KindInterval:
		return appendU64(append(dst, tagInterval), uint64(v.i)^(1<<63))
	case KindTime:
		return appendU64(append(dst, tagTime), uint64(v.i)^(1<<63))
	case KindIntervalYM:
		return appendU64(append(dst, tagIntervalYM), uint64(v.i)^(1<<63))
	case KindFloat:
		// Canonical: -0 encodes as 0 and every NaN alike, so that values
		// equal under SQL comparison group, join and hash alike.
		b := uint64(v.i)
		if canonical {
			f := math.Float64frombits(b)
			switch {
			case f == 0:
				f = 0
			case f != f:
				f = math.NaN()
			}
			b = math.Float64bits(f)
		}
		if b&(1<<63) != 0 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		return appendU64(append(dst, tagFloat), b)
	case KindString:
		return appendBytes(append(dst, tagString), v.s)
	case KindDecimal:
		return appendDecimal(append(dst, tagDecimal), v.dec(), canonical)
	case KindRow, KindArray, KindMap:
		dst = append(dst, map[Kind]byte{KindRow: tagRow, KindArray: tagArray, KindMap: tagMap}[v.k])
		for _, e := range v.Elems() {
			dst = appendValue(dst, e, canonical)
		}
		return append(dst, tagEnd)
	}
	panic(fmt.Sprintf("types: cannot encode value kind %d", v.k))
}

func appendU64(dst []byte, u uint64) []byte {
	return binary.BigEndian.AppendUint64(dst, u)
}

func appendBytes(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, s[i])
		}
	}
	return append(dst, 0, 1)
}

// ErrCorrupt is returned when encoded bytes cannot be decoded.
var ErrCorrupt = errors.New("types: corrupt encoding")

// DecodeRow decodes a row written by EncodeRow or EncodeKey.
func DecodeRow(b []byte) (Row, error) {
	var r Row
	for len(b) > 0 {
		v, rest, err := DecodeValue(b)
		if err != nil {
			return nil, err
		}
		r = append(r, v)
		b = rest
	}
	return r, nil
}

// DecodeValue decodes one value and returns the remaining bytes.
func DecodeValue(b []byte) (Value, []byte, error) {
	if len(b) == 0 {
		return Value{}, nil, ErrCorrupt
	}
	tag, b := b[0], b[1:]
	fixed := func(k Kind) (Value, []byte, error) {
		if len(b) < 8 {
			return Value{}, nil, ErrCorrupt
		}
		u := binary.BigEndian.Uint64(b)
		return Value{k: k, i: int64(u ^ (1 << 63))}, b[8:], nil
	}
	switch tag {
	case tagNull:
		return Value{}, b, nil
	case tagBool:
		return fixed(KindBool)
	case tagInt:
		return fixed(KindInt)
	case tagDate:
		return fixed(KindDate)
	case tagTimestamp:
		return fixed(KindTimestamp)
	case tagInterval:
		return fixed(KindInterval)
	case tagTime:
		v, rest, err := fixed(KindTime)
		if err == nil && (v.i < 0 || v.i >= NanosPerDay) {
			return Value{}, nil, ErrCorrupt
		}
		return v, rest, err
	case tagIntervalYM:
		return fixed(KindIntervalYM)
	case tagFloat:
		if len(b) < 8 {
			return Value{}, nil, ErrCorrupt
		}
		u := binary.BigEndian.Uint64(b)
		if u&(1<<63) != 0 {
			u &^= 1 << 63
		} else {
			u = ^u
		}
		return NewFloat(math.Float64frombits(u)), b[8:], nil
	case tagDecimal:
		return decodeDecimal(b)
	case tagRow, tagArray, tagMap:
		var vals []Value
		for {
			if len(b) == 0 {
				return Value{}, nil, ErrCorrupt
			}
			if b[0] == tagEnd {
				b = b[1:]
				break
			}
			v, rest, err := DecodeValue(b)
			if err != nil {
				return Value{}, nil, err
			}
			vals, b = append(vals, v), rest
		}
		switch tag {
		case tagRow:
			return NewRow(vals), b, nil
		case tagArray:
			return NewArray(vals), b, nil
		}
		if len(vals)%2 != 0 {
			return Value{}, nil, ErrCorrupt
		}
		return NewMap(vals), b, nil
	case tagString:
		var out []byte
		for i := 0; i < len(b); i++ {
			if b[i] != 0 {
				out = append(out, b[i])
				continue
			}
			if i+1 >= len(b) {
				return Value{}, nil, ErrCorrupt
			}
			switch b[i+1] {
			case 0xFF:
				out = append(out, 0)
				i++
			case 1:
				return NewString(string(out)), b[i+2:], nil
			default:
				return Value{}, nil, ErrCorrupt
			}
		}
		return Value{}, nil, ErrCorrupt
	}
	return Value{}, nil, ErrCorrupt
}

// appendDecimal encodes a decimal in numeric order and canonically (1.5
// and 1.50 alike): a sign byte (-Inf 0, negative 1, zero 2, positive 3,
// +Inf 4, NaN 5), then for finite non-zero values the adjusted
// (scientific) exponent as 8 sortable bytes and the coefficient digits (zero: its exponent only)
// without trailing zeros ended by 0x00 — all bit-inverted for negative
// values, so that larger magnitudes sort first among them.
//
// The exact form keeps trailing zeros in the digits, so that decoding
// gives back the scale; 1.5 then sorts just before 1.50.
func appendDecimal(dst []byte, d *apd.Decimal, canonical bool) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, 5)
	case apd.Infinite:
		if d.Negative {
			return append(dst, 0)
		}
		return append(dst, 4)
	}
	digits := d.Coeff.String()
	exp := int64(d.Exponent)
	trimmed, texp := digits, exp
	for len(trimmed) > 1 && trimmed[len(trimmed)-1] == '0' {
		trimmed = trimmed[:len(trimmed)-1]
		texp++
	}
	if trimmed == "0" {
		// Zero is followed by its exponent: 0 in the canonical form, the
		// scale in the exact one (0.00 is not 0 there).
		if canonical {
			exp = 0
		}
		return binary.BigEndian.AppendUint64(append(dst, 2), uint64(exp)^(1<<63))
	}
	adjusted := texp + int64(len(trimmed)) - 1
	if canonical {
		digits = trimmed
	}
	if d.Negative {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 3)
	}
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(adjusted)^(1<<63))
	dst = append(dst, digits...)
	dst = append(dst, 0)
	if d.Negative {
		for i := start; i < len(dst); i++ {
			dst[i] = ^dst[i]
		}
	}
	return dst
}

func decodeDecimal(b []byte) (Value, []byte, error) {
	if len(b) == 0 {
		return Value{}, nil, ErrCorrupt
	}
	sign, b := b[0], b[1:]
	d := new(apd.Decimal)
	switch sign {
	case 0, 4:
		d.Form, d.Negative = apd.Infinite, sign == 0
		return NewDecimal(d), b, nil
	case 5:
		d.Form = apd.NaN
		return NewDecimal(d), b, nil
	case 2:
		if len(b) < 8 {
			return Value{}, nil, ErrCorrupt
		}
		d.Exponent = int32(int64(binary.BigEndian.Uint64(b) ^ (1 << 63)))
		return NewDecimal(d), b[8:], nil
	case 1, 3:
	default:
		return Value{}, nil, ErrCorrupt
	}
	neg := sign == 1
	get := func(i int) byte {
		if neg {
			return ^b[i]
		}
		return b[i]
	}
	if len(b) < 9 {
		return Value{}, nil, ErrCorrupt
	}
	var eb [8]byte
	for i := range eb {
		eb[i] = get(i)
	}
	adjusted := int64(binary.BigEndian.Uint64(eb[:]) ^ (1 << 63))
	var digits []byte
	i := 8
	for ; i < len(b) && get(i) != 0; i++ {
		if c := get(i); c < '0' || c > '9' {
			return Value{}, nil, ErrCorrupt
		}
		digits = append(digits, get(i))
	}
	if i >= len(b) || len(digits) == 0 {
		return Value{}, nil, ErrCorrupt
	}
	if _, ok := d.Coeff.SetString(string(digits), 10); !ok {
		return Value{}, nil, ErrCorrupt
	}
	exp := adjusted - int64(len(digits)) + 1
	if exp < math.MinInt32 || exp > math.MaxInt32 {
		return Value{}, nil, ErrCorrupt
	}
	d.Exponent = int32(exp)
	d.Negative = neg
	return NewDecimal(d), b[i+1:], nil
}
