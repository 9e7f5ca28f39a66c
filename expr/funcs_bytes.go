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
}

func isBytesType(t types.Type) bool { return t.ID == types.Bytes || t.ID == types.Null }

const wantBytes = "BYTES"

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
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	first, want, typ := isStringType, wantString, types.TypeBytes
	if name == "DECODE" {
		first, want, typ = isBytesType, wantBytes, types.TypeString
	}
	if err := b.expect(x, name, 0, args[0], first, want); err != nil {
		return nil, err
	}
	if err := b.expect(x, name, 1, args[1], isStringType, wantString); err != nil {
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
		return strings.ToValidUTF8(b, "\uFFFD")
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
