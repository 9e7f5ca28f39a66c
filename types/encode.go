package types

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"
)

// Key encoding. EncodeKey writes values so that the byte order of two
// encodings equals Compare's order of the values, kind by kind (DECIMAL
// excepted: its bytes are its text, so it groups correctly but does not
// sort numerically). Keyed state and exchanges use it for grouping keys;
// it is also the serialization of rows in state (EncodeRow / DecodeRow).
//
// Layout: one tag byte per value (tags ordered NULL first), then
//   bool, int, date, timestamp, interval: 8 bytes big-endian, sign bit flipped
//   float: 8 bytes of sortable IEEE bits
//   string, decimal: bytes with 0x00 escaped as 0x00 0xFF, ended by 0x00 0x01

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
)

// EncodeKey appends the key encoding of r's columns cols (all columns when
// cols is nil) to dst.
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

// EncodeRow appends the encoding of a whole row.
func EncodeRow(dst []byte, r Row) []byte { return EncodeKey(dst, r, nil) }

// AppendValue appends one value's key encoding.
func AppendValue(dst []byte, v Value) []byte {
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
	case KindFloat:
		b := uint64(v.i)
		if b&(1<<63) != 0 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		return appendU64(append(dst, tagFloat), b)
	case KindString:
		return appendBytes(append(dst, tagString), v.s)
	case KindDecimal:
		return appendBytes(append(dst, tagDecimal), v.d.String())
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
	case tagString, tagDecimal:
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
				rest := b[i+2:]
				if tag == tagString {
					return NewString(string(out)), rest, nil
				}
				d, _, err := apd.NewFromString(string(out))
				if err != nil {
					return Value{}, nil, ErrCorrupt
				}
				return NewDecimal(d), rest, nil
			default:
				return Value{}, nil, ErrCorrupt
			}
		}
		return Value{}, nil, ErrCorrupt
	}
	return Value{}, nil, ErrCorrupt
}
