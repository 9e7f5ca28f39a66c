package format

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

func nestedCols(t *testing.T) ([]connectors.Column, []types.Type) {
	var cs []connectors.Column
	var ts []types.Type
	for i, s := range []string{"INT", "ARRAY<INT>", "ROW<name STRING, n INT, at DATE>", "ARRAY<STRING>"} {
		ty, err := types.ParseType(s)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, connectors.Column{Name: string(rune('a' + i)), Type: ty})
		ts = append(ts, ty)
	}
	return cs, ts
}

func csvOpts(t *testing.T, kv ...string) CSVOptions {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	o, err := ParseCSVOptions(m)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Records and the rows they read as, worked out by hand from the rules
// in csv_nested.go; each row, written back, is the record of the want
// column ("" when the record itself comes back).
func TestCSVNestedDecodeEncode(t *testing.T) {
	cs, ts := nestedCols(t)
	cases := []struct {
		opts     []string
		rec, row string
		back     string
	}{
		// ';' between elements; an empty element of INT is NULL, of STRING ''.
		{nil, `1,1;2;;4,ann;7;2024-01-02,x;;y`, `1 | [1, 2, NULL, 4] | (ann, 7, 2024-01-02) | [x, , y]`, ""},
		// Without a null literal an empty field is NULL, even for ARRAY<STRING>.
		{nil, `2,,,`, `2 | NULL | NULL | NULL`, ""},
		// A quoted field holds the field delimiter; elements split inside it.
		{nil, `3,5,"a,b;1;",one`, `3 | [5] | (a,b, 1, NULL) | [one]`, ""},
		// Another element delimiter, of two characters.
		{[]string{"csv.array-element-delimiter", "||"}, `4,1||2,b||3||2024-01-02,p;q||r`, `4 | [1, 2] | (b, 3, 2024-01-02) | [p;q, r]`, ""},
		// The null literal: a whole field, or an element; an empty field is
		// then an empty ARRAY.
		{[]string{"csv.null-literal", "N"}, `5,N;3,N;N;N,`, `5 | [NULL, 3] | (NULL, NULL, NULL) | []`, ""},
		{[]string{"csv.null-literal", "N"}, `6,,N,N`, `6 | [] | NULL | NULL`, ""},
		// The escape character makes ';' literal inside an element; it is
		// itself escaped (doubled) in the field when written, so the
		// field is quoted.
		{[]string{"csv.escape-character", `\`}, `7,1,a\\;b;2;,x\\\\y`, `7 | [1] | (a;b, 2, NULL) | [x\y]`, `7,1,"a\\;b;2;","x\\\\y"`},
		// An escaped element equal to the null literal is text.
		{[]string{"csv.escape-character", `\`, "csv.null-literal", "N"}, `8,N,N;1;N,\\N;N`, `8 | NULL | (NULL, 1, NULL) | [N, NULL]`, `8,N,N;1;N,"\\N;N"`},
		// No quote character: the escape works at both levels.
		{[]string{"csv.escape-character", `\`, "csv.disable-quote-character", "true"}, `9,1,a\,b;2;,x\\;y`, `9 | [1] | (a,b, 2, NULL) | [x;y]`, `9,1,a\,b;2;,x\\;y`},
	}
	for _, c := range cases {
		o := csvOpts(t, c.opts...)
		row := make(types.Row, len(cs))
		if err := NewCSVDecoder(cs, nil, o).Decode([]byte(c.rec), row); err != nil {
			t.Errorf("%s: %v", c.rec, err)
			continue
		}
		if got := types.FormatRow(row, ts, " | "); got != c.row {
			t.Errorf("%s read as %s, want %s", c.rec, got, c.row)
		}
		want := c.back
		if want == "" {
			want = c.rec
		}
		if got := string(NewCSVEncoder(cs, o).Append(nil, row)); got != want {
			t.Errorf("%s written back as %s, want %s", c.rec, got, want)
		}
	}
}

// Bad nested values are errors naming the column, never a panic.
func TestCSVNestedMalformed(t *testing.T) {
	cs, _ := nestedCols(t)
	for _, c := range []struct {
		opts []string
		rec  string
		want string
	}{
		{nil, `1,1,ann;7,x`, "column 'c': ROW<`name` STRING, `n` INT, `at` DATE> needs 3 fields separated by \";\", found 2 in \"ann;7\""},
		{nil, `1,1,ann;7;2024-01-02;9,x`, "column 'c': ROW<`name` STRING, `n` INT, `at` DATE> needs 3 fields separated by \";\", found 4"},
		{nil, `1,1;zz,,x`, `column 'b'`},
		{nil, `1,,a;3;2024-13-01,x`, `column 'c.at'`},
		{[]string{"csv.null-literal", "N"}, `1,N,,x`, `needs 3 fields`},
		{[]string{"csv.escape-character", `\`}, `1,"1;2\\",,x`, `column 'b': escape character at the end of an element`},
	} {
		err := NewCSVDecoder(cs, nil, csvOpts(t, c.opts...)).Decode([]byte(c.rec), make(types.Row, len(cs)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.rec, err, c.want)
		}
	}
}

// With a projection, an unprojected nested field is not parsed at all.
func TestCSVNestedProjected(t *testing.T) {
	cs, ts := nestedCols(t)
	row := make(types.Row, 1)
	if err := NewCSVDecoder(cs, []int{1}, DefaultCSVOptions()).Decode([]byte(`1,3;4,bad,x`), row); err != nil {
		t.Fatal(err)
	}
	if got := types.Format(row[0], ts[1]); got != "[3, 4]" {
		t.Fatalf("got %s", got)
	}
}

// Random rows of the nested columns, without the values the format
// cannot tell apart (an ARRAY of one NULL or one empty STRING), read back as themselves.
func TestCSVNestedRoundTrip(t *testing.T) {
	cs, ts := nestedCols(t)
	words := []string{"", "a", "with,comma", `q"uote`, "semi;colon", `back\slash`, "N", " pad "}
	r := rand.New(rand.NewSource(2))
	o := csvOpts(t, "csv.escape-character", `\`, "csv.null-literal", "N")
	e, d := NewCSVEncoder(cs, o), NewCSVDecoder(cs, nil, o)
	for i := 0; i < 3000; i++ {
		pick := func() types.Value {
			if r.Intn(5) == 0 {
				return types.NullValue
			}
			return types.NewString(words[r.Intn(len(words))])
		}
		var ints, strs []types.Value
		for j := r.Intn(4); j > 0; j-- {
			ints = append(ints, types.NewInt(int64(r.Intn(200)-100)))
			strs = append(strs, pick())
		}
		if r.Intn(4) == 0 && len(ints) > 1 { // [NULL] would be the null literal
			ints[0] = types.NullValue
		}
		row := types.Row{types.NewInt(int64(i)), types.NewArray(ints), types.NewRow([]types.Value{pick(), types.NewInt(1), types.NewDate(19000)}), types.NewArray(strs)}
		if len(strs) == 1 && (strs[0].IsNull() || strs[0].Str() == "") {
			continue // [''] is written as an empty field, which reads as [], and [NULL] as the null literal, which reads as NULL
		}
		if r.Intn(6) == 0 {
			row[1+r.Intn(3)] = types.NullValue
		}
		rec := e.Append(nil, row)
		got := make(types.Row, len(cs))
		if err := d.Decode(rec, got); err != nil {
			t.Fatalf("%q: %v", rec, err)
		}
		if a, b := types.FormatRow(row, ts, " | "), types.FormatRow(got, ts, " | "); a != b {
			t.Fatalf("%s written as %q read back as %s", a, rec, b)
		}
	}
}

// The csv format refuses, by column and type, what Flink's refuses.
func TestCheckCSVColumns(t *testing.T) {
	for s, want := range map[string]string{
		"MAP<STRING, INT>":      "no MAP",
		"ARRAY<ARRAY<INT>>":     "nests one level",
		"ARRAY<ROW<x INT>>":     "nests one level",
		"ROW<x ROW<y INT>>":     "nests one level",
		"ROW<x MAP<INT, INT>>":  "nests one level",
		"INTERVAL DAY":          "", // Flink's csv converters read INT months and BIGINT milliseconds
		"ARRAY<INTERVAL MONTH>": "",
		"ARRAY<TIMESTAMP(3)>":   "",
		"ROW<a BYTES, b TIME>":  "",
	} {
		ty, err := types.ParseType(s)
		if err != nil {
			t.Logf("%s: %v (skipped)", s, err)
			continue
		}
		err = CheckCSVColumns([]connectors.Column{{Name: "ok", Type: types.TypeInt}, {Name: "col", Type: ty}})
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", s, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "column 'col'")):
			t.Errorf("%s: got %v, want an error on column 'col' with %q", s, err, want)
		}
	}
}

func TestCSVElementDelimiterOption(t *testing.T) {
	for _, bad := range [][]string{
		{"csv.array-element-delimiter", ""},
		{"csv.array-element-delimiter", "a\nb"},
		{"csv.array-element-delimiter", `\|`, "csv.escape-character", `\`},
	} {
		m := map[string]string{}
		for i := 0; i+1 < len(bad); i += 2 {
			m[bad[i]] = bad[i+1]
		}
		if _, err := ParseCSVOptions(m); err == nil || !strings.Contains(err.Error(), "csv.array-element-delimiter") {
			t.Errorf("%q: got %v", bad, err)
		}
	}
	if o := csvOpts(t, "csv.array-element-delimiter", `\t`); o.elems != "\t" {
		t.Errorf(`'\t' is %q`, o.elems)
	}
}
