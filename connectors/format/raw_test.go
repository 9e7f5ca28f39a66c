package format

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

// The raw format's bytes for each type, worked out by hand from the
// type mapping of Flink's raw format: numbers in two's complement or
// IEEE 754, big-endian unless 'raw.endianness' says otherwise; text in
// 'raw.charset'.
func TestRawCodec(t *testing.T) {
	cases := []struct {
		typ   types.Type
		opts  map[string]string
		val   types.Value
		bytes []byte
	}{
		{types.TypeInt, nil, types.NewInt(1), []byte{0, 0, 0, 1}},
		{types.TypeInt, map[string]string{"raw.endianness": "little-endian"}, types.NewInt(1), []byte{1, 0, 0, 0}},
		{types.TypeInt, nil, types.NewInt(-2), []byte{0xff, 0xff, 0xff, 0xfe}},
		{types.TypeBigInt, nil, types.NewInt(258), []byte{0, 0, 0, 0, 0, 0, 1, 2}},
		{types.TypeBigInt, map[string]string{"raw.endianness": "LITTLE-ENDIAN"}, types.NewInt(258), []byte{2, 1, 0, 0, 0, 0, 0, 0}},
		{types.TypeDouble, nil, types.NewFloat(1.5), []byte{0x3f, 0xf8, 0, 0, 0, 0, 0, 0}},
		{types.TypeBoolean, nil, types.NewBool(true), []byte{1}},
		{types.TypeBoolean, nil, types.NewBool(false), []byte{0}},
		{types.TypeString, nil, types.NewString("héllo"), []byte("h\xc3\xa9llo")},
		{types.TypeString, map[string]string{"raw.charset": "ISO-8859-1"}, types.NewString("héllo"), []byte("h\xe9llo")},
		{types.TypeBytes, nil, types.NewBytes([]byte{0, 10, 255}), []byte{0, 10, 255}},
	}
	for _, c := range cases {
		cs := []connectors.Column{{Name: "v", Type: c.typ}}
		o, err := ParseRawOptions(c.opts, cs)
		if err != nil {
			t.Fatal(err)
		}
		r := NewRawCodec(cs, o)
		if got := r.Append(nil, types.Row{c.val}); !bytes.Equal(got, c.bytes) {
			t.Errorf("%s %v: wrote % x, want % x", c.typ, c.opts, got, c.bytes)
		}
		row := make(types.Row, 1)
		if err := r.Decode(c.bytes, row); err != nil {
			t.Fatalf("%s: %v", c.typ, err)
		}
		if types.Compare(row[0], c.val) != 0 {
			t.Errorf("%s %v: read %v, want %v", c.typ, c.opts, row[0], c.val)
		}
	}
}

// Text that is not valid in the charset reads with U+FFFD per bad byte,
// and a character the charset cannot hold is written as '?', as Java's
// charsets do; a number of the wrong length is a malformed record.
func TestRawCodecEdges(t *testing.T) {
	str := []connectors.Column{{Name: "s", Type: types.TypeString}}
	o, _ := ParseRawOptions(nil, str)
	row := make(types.Row, 1)
	if err := NewRawCodec(str, o).Decode([]byte("a\xffb"), row); err != nil || row[0].Str() != "a\ufffdb" {
		t.Errorf("invalid UTF-8: %v %q", err, row[0].Str())
	}
	ascii, _ := ParseRawOptions(map[string]string{"raw.charset": "US-ASCII"}, str)
	if got := string(NewRawCodec(str, ascii).Append(nil, types.Row{types.NewString("aé")})); got != "a?" {
		t.Errorf("US-ASCII wrote %q", got)
	}
	in := []connectors.Column{{Name: "n", Type: types.TypeInt}}
	o, _ = ParseRawOptions(nil, in)
	if err := NewRawCodec(in, o).Decode([]byte{1, 2}, row); err == nil || !strings.Contains(err.Error(), "from 4 bytes, the record has 2") {
		t.Errorf("short INT: %v", err)
	}
	for _, bad := range []struct {
		cs   []connectors.Column
		opts map[string]string
		msg  string
	}{
		{append(str, str...), nil, "exactly one physical column, the table has 2"},
		{[]connectors.Column{{Name: "d", Type: types.TypeDate}}, nil, "not DATE"},
		{str, map[string]string{"raw.charset": "UTF-16"}, "charset 'UTF-16' is not supported"},
		{str, map[string]string{"raw.endianness": "middle"}, "'big-endian' or 'little-endian'"},
	} {
		if _, err := ParseRawOptions(bad.opts, bad.cs); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%v %v: %v, want %q", bad.cs, bad.opts, err, bad.msg)
		}
	}
}
