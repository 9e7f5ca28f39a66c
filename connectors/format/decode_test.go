package format

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/types"
)

var oracleCols = []connectors.Column{
	{Name: "a", Type: types.TypeString}, {Name: "b", Type: types.TypeString},
	{Name: "ab", Type: types.TypeString}, {Name: "é", Type: types.TypeString},
}

// oracle decodes line with encoding/json as the JSON decoder should, all
// columns being STRING: a string's value, any other scalar's or nested
// value's text, NULL for null or a missing field.
func oracle(line []byte) ([]string, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil || !bytes.HasPrefix(bytes.TrimLeft(line, " \t\r\n"), []byte("{")) {
		return nil, false
	}
	out := make([]string, len(oracleCols))
	for i, c := range oracleCols {
		raw, ok := m[c.Name]
		switch {
		case !ok || string(raw) == "null":
			out[i] = "NULL"
		case raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				panic(err)
			}
			out[i] = "'" + s + "'"
		default:
			out[i] = "'" + string(raw) + "'"
		}
	}
	return out, true
}

func decodeStrings(d *jsonDecoder, line []byte) ([]string, error) {
	row := make(types.Row, len(oracleCols))
	if err := d.Decode(line, row); err != nil {
		return nil, err
	}
	out := make([]string, len(row))
	for i, v := range row {
		if v.IsNull() {
			out[i] = "NULL"
		} else {
			out[i] = "'" + v.Str() + "'"
		}
	}
	return out, nil
}

var jsonSeeds = []string{
	`{"a":"x","b":1,"ab":true,"é":null}`,
	`  {"b" : -0.5e+10 , "a" : "q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00" }  `,
	`{"a":"\ud83d","b":"\ude00x","ab":"\ud83d\u0041","é":"\uD83D\uDE00"}`,
	`{"a":{"x":[1,{"y":"}"}],"z":null},"b":[],"ab":{},"c":[[[]]]}`,
	`{"a":"x","a":"y","\u0061b":"escaped key","\u00e9":"e"}`,
	"{\"a\":\"bad utf8 \xff\xfe\",\"\xff\":1}",
	`{"a":"x",}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":nul}`,
	`{"a":"x"} x`, `{"a":"x"`, `{"a" "x"}`, `{a:1}`, `[1]`, `null`, `"s"`, `{}`, ``, `{"a":"ctl` + "\x01" + `"}`,
	`{"a":"\x"}`, `{"a":"\u12"}`, `{"c":{"d":[1,2,}}`, `{"c":[1 2]}`, `{"c":{"d" 1}}`, `{"c":"\q"}`,
	`{"b":12345678901234567890123,"a":-0,"ab":0.0e-0}`,
}

func TestJSONDecoderAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range jsonSeeds {
		checkAgainstOracle(t, []byte(s))
	}
}

func FuzzJSONDecoder(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkAgainstOracle(t, line) })
}

func checkAgainstOracle(t *testing.T, line []byte) {
	t.Helper()
	checkDecoder(t, NewJSONDecoder(oracleCols, nil, JSONOptions{}), line)
}

func checkDecoder(t *testing.T, d *jsonDecoder, line []byte) {
	t.Helper()
	want, ok := oracle(line)
	got, err := decodeStrings(d, line)
	if ok != (err == nil) {
		t.Fatalf("%q: encoding/json ok=%v, decoder err=%v", line, ok, err)
	}
	if ok && strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%q:\n got %q\nwant %q", line, got, want)
	}
}

// One decoder reads lines whose fields come in different orders (it
// remembers the column of each field position): each line still decodes
// as encoding/json decodes it.
func TestJSONDecoderFieldOrderChanges(t *testing.T) {
	d := NewJSONDecoder(oracleCols, nil, JSONOptions{})
	lines := append([]string{
		`{"a":"1","b":"2","ab":"3","é":"4"}`, `{"b":"2","a":"1","é":"4","ab":"3"}`,
		`{"a":"1","b":"2","ab":"3","é":"4"}`, `{"x":0,"a":"1","b":"2"}`, `{"a":"1","bb":"2","ab":"3"}`,
		`{"a":"1","b":"2","ab":"3","é":"4","a":"5"}`, `{"ab":"3"}`, `{"a":"1","b":"2","ab":"3","é":"4"}`,
	}, jsonSeeds...)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		for _, l := range lines {
			checkDecoder(t, d, []byte(l))
		}
		rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	}
}

// The decoder is reused for many lines: state from a line must not leak.
func TestJSONDecoderReuse(t *testing.T) {
	d := NewJSONDecoder(oracleCols, nil, JSONOptions{FailOnMissingField: true})
	if _, err := decodeStrings(d, []byte(`{"a":"\u00e91","b":"2","ab":"3","é":"4"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeStrings(d, []byte(`{"a":"1","b":"2","ab":"3"}`)); err == nil || err.Error() != "field 'é' is missing (json.fail-on-missing-field)" {
		t.Fatalf("err = %v", err)
	}
	got, err := decodeStrings(d, []byte(`{"é":"\u00e9","ab":"\u00e9x","b":"2","a":"1"}`))
	if err != nil || strings.Join(got, ",") != "'1','2','éx','é'" {
		t.Fatalf("%v %v", got, err)
	}
}

var textTypes = []types.Type{
	types.TypeBoolean, types.TypeInt, types.TypeBigInt, types.TypeDouble, types.DecimalType(10, 3),
	types.TypeString, types.VarcharType(2), types.TypeDate, types.TimestampType(0), types.TimestampType(3),
	types.TimestampType(9), types.TimeType(0), types.TimeType(3),
}

var textSeeds = []string{
	"1", "-1", "+7", " 42 ", "2147483648", "-2147483648", "9223372036854775807", "9223372036854775808",
	"123456789012345678", "1.5", "1e3", "-inf", "NaN", "1_000", "0x10", "true", "FALSE", "yes", "",
	"2024-01-01 00:00:01.123456789", "2024-01-01T00:00:01", "2024-02-30 00:00:00", "2024-1-1 1:2:3",
	"2024-01-01 24:00:00", "2024-01-01 00:00:00.", "2024-01-01 00:00:00.1234567890", "1969-12-31 23:59:59.5",
	"2262-04-12 00:00:00", "2199-12-31 23:59:59.999999999", "2024-01-01", "héllo", "12.3456",
	"12:34:56.789", "23:59:59.999999999", "24:00:00", "7:05", " 08:00:00 ",
}

func TestFromTextIsCast(t *testing.T) {
	for _, s := range textSeeds {
		checkFromText(t, s)
	}
}

func FuzzFromText(f *testing.F) {
	for _, s := range textSeeds {
		f.Add(s)
	}
	f.Fuzz(checkFromText)
}

func checkFromText(t *testing.T, s string) {
	for _, ty := range textTypes {
		c := makeColumns([]connectors.Column{{Name: "c", Type: ty}})[0]
		got, err := fromText([]byte(s), &c)
		want, werr := expr.CastValue(types.NewString(s), types.TypeString, ty)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q as %s: fromText err %v, CAST err %v", s, ty, err, werr)
		}
		if err == nil && (got.Kind() != want.Kind() || types.Format(got, ty) != types.Format(want, ty) || types.Compare(got, want) != 0) {
			t.Fatalf("%q as %s: fromText %s, CAST %s", s, ty, types.Format(got, ty), types.Format(want, ty))
		}
		if err != nil && !strings.HasSuffix(err.Error(), werr.Error()) {
			t.Fatalf("%q as %s: fromText err %q, CAST err %q", s, ty, err, werr)
		}
	}
}

func TestEpochMillis(t *testing.T) {
	for _, c := range []struct {
		ms   string
		p    int
		want string
	}{
		{"0", 3, "1970-01-01 00:00:00.000"},
		{"1704067201123", 3, "2024-01-01 00:00:01.123"},
		{"1704067201123", 0, "2024-01-01 00:00:01"},
		{"-1", 3, "1969-12-31 23:59:59.999"},
		{"-1", 0, "1969-12-31 23:59:59"},
		{"-1", 1, "1969-12-31 23:59:59.9"},
	} {
		col := makeColumns([]connectors.Column{{Name: "ts", Type: types.TimestampType(c.p)}})[0]
		v, err := epochMillis([]byte(c.ms), &col)
		if err != nil || types.Format(v, col.t) != c.want {
			t.Errorf("%s ms as TIMESTAMP(%d) = %v %v, want %s", c.ms, c.p, types.Format(v, col.t), err, c.want)
		}
	}
	col := makeColumns([]connectors.Column{{Name: "ts", Type: types.TimestampType(3)}})[0]
	if _, err := epochMillis([]byte("9223372036854776"), &col); err == nil {
		t.Error("an out-of-range epoch was accepted")
	}
}

// JSON objects and arrays read into ROW, ARRAY and MAP columns and are
// written back in the same shape; the expected values are read off the
// input by hand.
func TestJSONNested(t *testing.T) {
	pt, err := types.ParseType("ROW<id BIGINT, name STRING, tags ARRAY<STRING>, at ROW<x INT>>")
	if err != nil {
		t.Fatal(err)
	}
	mt, _ := types.ParseType("MAP<STRING, INT>")
	cols := []connectors.Column{{Name: "p", Type: pt}, {Name: "m", Type: mt}, {Name: "n", Type: types.TypeInt}}
	d := NewJSONDecoder(cols, nil, JSONOptions{})
	line := `{"p": {"name": "ann", "id": "7", "extra": [1, {"q": 2}], "tags": ["a", null], "at": null}, "m": {"k": 1, "j": "2", "k": 3}, "n": 5}`
	row := make(types.Row, 3)
	if err := d.Decode([]byte(line), row); err != nil {
		t.Fatal(err)
	}
	if got, want := types.FormatRow(row, []types.Type{pt, mt, types.TypeInt}, " | "), "(7, ann, [a, NULL], NULL) | {k=3, j=2} | 5"; got != want {
		t.Fatalf("decoded %s, want %s", got, want)
	}
	out := string(NewJSONEncoder(cols).Append(nil, row))
	if want := `{"p":{"id":7,"name":"ann","tags":["a",null],"at":null},"m":{"k":3,"j":2},"n":5}`; out != want {
		t.Fatalf("encoded %s, want %s", out, want)
	}
	// A missing field of a ROW is NULL; a wrong shape is an error naming the column.
	row = make(types.Row, 3)
	if err := d.Decode([]byte(`{"p": {"at": {"x": 1}}}`), row); err != nil || types.Format(row[0], pt) != "(NULL, NULL, NULL, (1))" {
		t.Fatalf("got %v, %v", types.Format(row[0], pt), err)
	}
	for _, bad := range []string{`{"p": [1]}`, `{"m": {"k": "x"}}`, `{"p": {"tags": {"a": 1}}}`, `{"p": {"id": 1,}}`} {
		if err := d.Decode([]byte(bad), make(types.Row, 3)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// special8 finds every quote, backslash and control character of a word
// (and every byte from 0x80 on when asked), and reports nothing in a
// word that has none.
func TestSpecial8(t *testing.T) {
	interesting := []byte{0, 1, 0x1f, 0x20, 0x21, '"', 0x23, '\\', 0x5b, 0x5d, 'a', 0x7f, 0x80, 0xa2, 0xdc, 0xff}
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 200_000; n++ {
		var w [8]byte
		for i := range w {
			if rng.IntN(2) == 0 {
				w[i] = interesting[rng.IntN(len(interesting))]
			} else {
				w[i] = byte(rng.IntN(256))
			}
		}
		for _, nonASCII := range []bool{false, true} {
			want := false
			for _, c := range w {
				want = want || c == '"' || c == '\\' || c < 0x20 || (nonASCII && c >= 0x80)
			}
			if got := special8(binary.LittleEndian.Uint64(w[:]), nonASCII); got != want {
				t.Fatalf("special8(% x, %v) = %v, want %v", w, nonASCII, got, want)
			}
		}
	}
}

// Strings longer than a word, with an escape, a control character,
// non-ASCII or the closing quote at every offset, decode as encoding/json
// decodes them, and fields skipped over them leave the rest intact.
func TestJSONDecoderLongStrings(t *testing.T) {
	for _, mid := range []string{`\"`, `\\`, `\u00e9`, "\x01", "\x1f", "é", "\xff", "\x7f", ``} {
		for pre := 0; pre < 20; pre++ {
			for post := 0; post < 12; post += 5 {
				s := strings.Repeat("p", pre) + mid + strings.Repeat("q", post)
				checkAgainstOracle(t, []byte(`{"a":"`+s+`","x":"`+s+`","b":"`+s+`"}`))
			}
		}
	}
}
