package expr

import (
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// BYTES functions: ENCODE(string, charset) and DECODE(bytes, charset),
// with the charsets Flink names (Java's standard ones).

func registerBytesFuncs(r map[string]funcDef) {
	r["encode"] = funcDef{2, 2, buildEncode}
	r["decode"] = funcDef{2, 2, buildEncode}
	r["unhex"] = funcDef{1, 1, buildUnhex}
	r["is_valid_utf8"] = funcDef{1, 1, buildUTF8Check}
	r["make_valid_utf8"] = funcDef{1, 1, buildUTF8Check}
}

// buildUnhex binds UNHEX(string): the bytes the hexadecimal digits stand
// for (either case), as Flink's; an odd number of digits reads as if
// led by a 0; NULL if a character is not a hex digit.
func buildUnhex(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: types.TypeBytes, strict: true,
		f1: func(v types.Value) (types.Value, error) {
			s := v.Str()
			out := make([]byte, (len(s)+1)/2)
			i, j := 0, 0
			if len(s)%2 == 1 {
				d, ok := hexDigit(s[0])
				if !ok {
					return types.NullValue, nil
				}
				out[0], i, j = d, 1, 1
			}
			for ; i < len(s); i, j = i+2, j+1 {
				hi, ok1 := hexDigit(s[i])
				lo, ok2 := hexDigit(s[i+1])
				if !ok1 || !ok2 {
					return types.NullValue, nil
				}
				out[j] = hi<<4 | lo
			}
			return types.NewBytes(out), nil
		}}, nil
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// buildUTF8Check binds IS_VALID_UTF8(bytes), whether the bytes are
// well-formed UTF-8 (no truncated or overlong sequences, surrogates or
// code points past U+10FFFF), and MAKE_VALID_UTF8(bytes), the bytes as a
// STRING with each ill-formed sequence replaced by U+FFFD (ValidUTF8).
func buildUTF8Check(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isBytesType, wantBytes)
	if err != nil {
		return nil, err
	}
	if name == "IS_VALID_UTF8" {
		return &call{name: name, args: args, typ: strictType(types.TypeBoolean, args...), strict: true,
			f1: func(v types.Value) (types.Value, error) { return types.NewBool(utf8.ValidString(v.Str())), nil }}, nil
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
		f1: func(v types.Value) (types.Value, error) { return types.NewString(ValidUTF8(v.Str())), nil }}, nil
}

// ValidUTF8 returns s with each ill-formed UTF-8 sequence replaced by one
// U+FFFD, a sequence being the longest start of a well-formed one (one
// byte if none), as Java's decoders and the Unicode standard's
// "maximal subpart" practice replace them: "\xe2\x82" (a truncated
// three-byte sequence) is one U+FFFD, "\xff\xff" two.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || n > 1 {
			sb.WriteString(s[i : i+n])
			i += n
			continue
		}
		sb.WriteRune(utf8.RuneError)
		i += maximalSubpart(s[i:])
	}
	return sb.String()
}

// utf8Leads are the lead bytes of well-formed UTF-8 (Unicode's Table
// 3-7): a range of them, the length of their sequences, and the range the
// second byte must be in (the bytes after it are all 0x80..0xBF).
var utf8Leads = [...]struct {
	first, last byte
	n           int
	lo, hi      byte
}{
	{0xc2, 0xdf, 2, 0x80, 0xbf},
	{0xe0, 0xe0, 3, 0xa0, 0xbf},
	{0xe1, 0xec, 3, 0x80, 0xbf},
	{0xed, 0xed, 3, 0x80, 0x9f},
	{0xee, 0xef, 3, 0x80, 0xbf},
	{0xf0, 0xf0, 4, 0x90, 0xbf},
	{0xf1, 0xf3, 4, 0x80, 0xbf},
	{0xf4, 0xf4, 4, 0x80, 0x8f},
}

// maximalSubpart is the length of the ill-formed sequence at the start
// of s: its lead byte and the continuation bytes that may follow it.
func maximalSubpart(s string) int {
	c := s[0]
	n := 0
	var lo, hi byte // the second byte's range
	for _, l := range utf8Leads {
		if c >= l.first && c <= l.last {
			n, lo, hi = l.n, l.lo, l.hi
			break
		}
	}
	if n == 0 {
		return 1
	}
	k := 1
	for ; k < n && k < len(s); k++ {
		if s[k] < lo || s[k] > hi {
			break
		}
		lo, hi = 0x80, 0xbf
	}
	return k
}

func isBytesType(t types.Type) bool { return t.ID == types.Bytes || t.ID == types.Null }

const wantBytes = "BYTES"

var argBytes = argType{isBytesType, wantBytes}

// charsets are the charsets of ENCODE and DECODE: Java's standard ones,
// as Flink takes them.
var charsets = map[string]bool{"US-ASCII": true, "ISO-8859-1": true, "UTF-8": true, "UTF-16BE": true, "UTF-16LE": true, "UTF-16": true}

// buildEncode binds ENCODE(string, charset), the string's bytes in the
// charset, and DECODE(bytes, charset), the bytes read in it. As Java's
// String.getBytes and new String(bytes, charset): a character the charset
// cannot hold encodes as '?', a malformed sequence decodes as U+FFFD;
// UTF-16 writes a big-endian byte-order mark and reads one if present
// (big-endian without).
func buildEncode(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	first, typ := argString, types.TypeBytes
	if name == "DECODE" {
		first, typ = argBytes, types.TypeString
	}
	args, err := b.bindArgsAs(x, name, first, argString)
	if err != nil {
		return nil, err
	}

	if cs, ok := constString(args[1]); ok && !charsets[strings.ToUpper(cs)] {
		return nil, b.errf(x.Args[1], "%s: unsupported charset '%s'; supported: US-ASCII, ISO-8859-1, UTF-8, UTF-16BE, UTF-16LE, UTF-16", name, cs)
	}
	return &call{name: name, args: args, typ: strictType(typ, args...), strict: true,
		f2: func(v, cs types.Value) (types.Value, error) {
			c := strings.ToUpper(cs.Str())
			if !charsets[c] {
				return types.NullValue, fmt.Errorf("%s: unsupported charset '%s'", name, cs.Str())
			}
			if name == "ENCODE" {
				return types.NewBytes(encodeCharset(v.Str(), c)), nil
			}
			return types.NewString(decodeCharset(v.Str(), c)), nil
		}}, nil
}

func encodeCharset(s, cs string) []byte {
	switch cs {
	case "UTF-8":
		return []byte(strings.ToValidUTF8(s, "?"))
	case "US-ASCII", "ISO-8859-1":
		limit := rune(0x7F)
		if cs == "ISO-8859-1" {
			limit = 0xFF
		}
		out := make([]byte, 0, len(s))
		for _, r := range s {
			if r > limit || r == utf8.RuneError {
				r = '?'
			}
			out = append(out, byte(r))
		}
		return out
	}
	units := utf16.Encode([]rune(s))
	var order binary.AppendByteOrder = binary.BigEndian
	var out []byte
	switch cs {
	case "UTF-16LE":
		order = binary.LittleEndian
	case "UTF-16":
		out = append(out, 0xFE, 0xFF)
	}
	for _, u := range units {
		out = order.AppendUint16(out, u)
	}
	return out
}

func decodeCharset(b, cs string) string {
	switch cs {
	case "UTF-8":
		return ValidUTF8(b)
	case "US-ASCII", "ISO-8859-1":
		var sb strings.Builder
		for i := 0; i < len(b); i++ {
			r := rune(b[i])
			if cs == "US-ASCII" && r > 0x7F {
				r = '\uFFFD'
			}
			sb.WriteRune(r)
		}
		return sb.String()
	}
	var order binary.ByteOrder = binary.BigEndian
	switch {
	case cs == "UTF-16LE":
		order = binary.LittleEndian
	case cs == "UTF-16" && len(b) >= 2 && b[0] == 0xFE && b[1] == 0xFF:
		b = b[2:]
	case cs == "UTF-16" && len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE:
		b, order = b[2:], binary.LittleEndian
	}
	units := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		units = append(units, order.Uint16([]byte(b[i:i+2])))
	}
	s := string(utf16.Decode(units))
	if len(b)%2 == 1 {
		s += "\uFFFD" // a dangling byte
	}
	return s
}
