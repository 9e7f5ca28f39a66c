package types

import (
	"bytes"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
	_ "time/tzdata" // zone names resolve on any host

	"github.com/cockroachdb/apd/v3"
)

func dec(s string) Value {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return NewDecimal(d)
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		v    Value
		t    Type
		want string
	}{
		{NullValue, TypeInt, "NULL"},
		{NewBool(true), TypeBoolean, "true"},
		{NewFloat(2.5), TypeDouble, "2.5"},
		{NewFloat(3), TypeDouble, "3"},
		{dec("1.5"), DecimalType(10, 2), "1.50"},
		{dec("2.345"), DecimalType(10, 2), "2.35"},
		{NewTimestamp(1704067201000000000), TimestampType(3), "2024-01-01 00:00:01.000"},
		{NewTimestamp(1704067201123456789), TimestampType(6), "2024-01-01 00:00:01.123456"},
		{NewTimestamp(1704067201123456789), TimestampType(0), "2024-01-01 00:00:01"},
		{NewDate(19723), TypeDate, "2024-01-01"},
		{NewString("a b"), TypeString, "a b"},
		{NewInt(-7), TypeBigInt, "-7"},
	} {
		if got := Format(c.v, c.t); got != c.want {
			t.Errorf("Format(%v, %s) = %q, want %q", c.v, c.t, got, c.want)
		}
	}
}

// The key encoding must order like Compare and round-trip.
func TestKeyEncodingOrderAndRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	strs := []string{"", "a", "a\x00", "a\x00b", "ab", "b", "\xff"}
	gen := func(k Kind) Value {
		switch k {
		case KindInt:
			return NewInt(r.Int64N(2000) - 1000)
		case KindFloat:
			return NewFloat([]float64{-1e300, -2.5, -0.5, 0, 0.5, 3, math.Inf(1)}[r.IntN(7)])
		case KindString:
			return NewString(strs[r.IntN(len(strs))])
		case KindTimestamp:
			return NewTimestamp(r.Int64N(1e18) - 5e17)
		case KindBool:
			return NewBool(r.IntN(2) == 1)
		}
		return NullValue
	}
	for _, k := range []Kind{KindInt, KindFloat, KindString, KindTimestamp, KindBool} {
		var vs []Value
		for i := 0; i < 200; i++ {
			vs = append(vs, gen(k))
		}
		vs = append(vs, NullValue)
		sort.Slice(vs, func(i, j int) bool { return Compare(vs[i], vs[j]) < 0 })
		for i := 1; i < len(vs); i++ {
			a, b := EncodeRow(nil, Row{vs[i-1], NewInt(1)}), EncodeRow(nil, Row{vs[i], NewInt(0)})
			c := Compare(vs[i-1], vs[i])
			if c < 0 && bytes.Compare(a, b) >= 0 {
				t.Fatalf("kind %d: %v < %v but encodings do not sort", k, vs[i-1], vs[i])
			}
		}
		for _, v := range vs {
			row, err := DecodeRow(EncodeRow(nil, Row{v, NewString("x")}))
			if err != nil || len(row) != 2 || !RowsEqual(row, Row{v, NewString("x")}) {
				t.Fatalf("round trip of %v: %v %v", v, row, err)
			}
		}
	}
	if _, err := DecodeRow([]byte{tagString, 'a'}); err == nil {
		t.Fatal("truncated string decoded")
	}
}

func TestParseType(t *testing.T) {
	for in, want := range map[string]string{
		"STRING": "STRING", "varchar(10)": "VARCHAR(10)", "BIGINT": "BIGINT", "INT": "INT",
		"DECIMAL(10,2)": "DECIMAL(10, 2)", "TIMESTAMP(3)": "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)": "TIMESTAMP_LTZ(3)",
		"BOOLEAN": "BOOLEAN", "DOUBLE": "DOUBLE", "DATE": "DATE",
		"VARCHAR": "STRING", "char": "STRING", "INT NOT NULL": "INT NOT NULL",
		"TIMESTAMP(3) WITH LOCAL TIME ZONE":           "TIMESTAMP_LTZ(3)",
		"ROW<a INT, B STRING>":                        "ROW<`a` INT, `B` STRING>",
		"row(id BIGINT NOT NULL, `x y` VARCHAR)":      "ROW<`id` BIGINT NOT NULL, `x y` STRING>",
		"ROW<a INT COMMENT 'it''s', b ROW<c DOUBLE>>": "ROW<`a` INT, `b` ROW<`c` DOUBLE>>",
		"ARRAY<INT>": "ARRAY<INT>", "INT ARRAY": "ARRAY<INT>", "ARRAY<ARRAY<STRING>>": "ARRAY<ARRAY<STRING>>",
		"MAP<STRING, ARRAY<INT>>": "MAP<STRING, ARRAY<INT>>",
		"MULTISET<INT>":           "MULTISET<INT>", "STRING MULTISET NOT NULL": "MULTISET<STRING> NOT NULL", "INT MULTISET ARRAY": "ARRAY<MULTISET<INT>>",
		"VARBINARY": "BYTES", "BINARY(3)": "VARBINARY(3)", "BYTES NOT NULL": "BYTES NOT NULL", "ROW<b VARBINARY(2)>": "ROW<`b` VARBINARY(2)>",
	} {
		got, err := ParseType(in)
		if err != nil || got.String() != want {
			t.Errorf("ParseType(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"DECIMAL(50,2)", "TIMESTAMP(12)", "MAP<INT>", "DECIMAL(x)",
		"ROW<a INT", "ROW<a INT, a STRING>", "ROW<INT>", "ARRAY<INT", "MULTISET<INT", "MULTISET", "BINARY(0)", "INT INT"} {
		if _, err := ParseType(bad); err == nil {
			t.Errorf("ParseType(%q) accepted", bad)
		}
	}
}

func TestCompareMixedNumeric(t *testing.T) {
	if Compare(NewInt(2), NewFloat(2.5)) >= 0 || Compare(dec("2.50"), NewFloat(2.5)) != 0 || Compare(NewInt(3), dec("2.9")) <= 0 {
		t.Fatal("mixed numeric comparison is wrong")
	}
	if Compare(NullValue, NewInt(-1)) >= 0 {
		t.Fatal("NULL must sort first")
	}
}

func TestDecimalEncodingOrdersNumericallyAndIsCanonical(t *testing.T) {
	vals := []string{"-1000", "-2.5", "-2.25", "-0.001", "0", "0.00", "0.001", "1.5", "1.50", "2", "10", "123.456"}
	for i := range vals {
		for j := range vals {
			a, b := dec(vals[i]), dec(vals[j])
			ea, eb := AppendValue(nil, a), AppendValue(nil, b)
			c := Compare(a, b)
			if bc := bytes.Compare(ea, eb); (c < 0) != (bc < 0) || (c == 0) != (bc == 0) {
				t.Fatalf("%s vs %s: Compare %d but encodings compare %d", vals[i], vals[j], c, bc)
			}
		}
		v, rest, err := DecodeValue(AppendValue(nil, dec(vals[i])))
		if err != nil || len(rest) != 0 || Compare(v, dec(vals[i])) != 0 {
			t.Fatalf("round trip %s: %v %v", vals[i], v, err)
		}
	}
	if !bytes.Equal(AppendValue(nil, NewFloat(math.Copysign(0, -1))), AppendValue(nil, NewFloat(0))) {
		t.Fatal("-0 and 0 must encode alike")
	}
}

func TestExactRowEncodingKeepsScaleAndSign(t *testing.T) {
	r := Row{dec("1.50"), dec("0.00"), dec("-0.10"), NewFloat(math.Copysign(0, -1))}
	got, err := DecodeRow(EncodeRow(nil, r))
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Decimal().String() != "1.50" || got[1].Decimal().String() != "0.00" || got[2].Decimal().String() != "-0.10" || !math.Signbit(got[3].Float()) {
		t.Fatalf("exact round trip lost representation: %v", got)
	}
	if bytes.Compare(EncodeRow(nil, Row{dec("-0.1")}), EncodeRow(nil, Row{dec("0.00")})) >= 0 ||
		bytes.Compare(EncodeRow(nil, Row{dec("0.00")}), EncodeRow(nil, Row{dec("0.01")})) >= 0 {
		t.Fatal("exact encoding must still order numerically around zero")
	}
}

func TestCompositeValues(t *testing.T) {
	rt, err := ParseType("ROW<a INT, b STRING, c ARRAY<INT>, d MAP<STRING, DOUBLE>>")
	if err != nil {
		t.Fatal(err)
	}
	v := NewRow([]Value{NewInt(1), NewString("x\x00y"), NewArray([]Value{NewInt(2), NullValue}),
		NewMap([]Value{NewString("k"), NewFloat(1.5), NewString("j"), NullValue})})
	if got, want := Format(v, rt), "(1, x\x00y, [2, NULL], {k=1.5, j=NULL})"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	row, err := DecodeRow(EncodeRow(nil, Row{v, NewInt(7)}))
	if err != nil || len(row) != 2 || !RowsEqual(row, Row{v, NewInt(7)}) {
		t.Fatalf("round trip = %v, %v", row, err)
	}
	if Format(row[0], rt) != Format(v, rt) {
		t.Errorf("round trip formats as %s", Format(row[0], rt))
	}
	short := NewArray([]Value{NewInt(2)})
	long := NewArray([]Value{NewInt(2), NewInt(0)})
	if Compare(short, long) >= 0 || bytes.Compare(AppendValue(nil, short), AppendValue(nil, long)) >= 0 {
		t.Error("a shorter prefix must sort first")
	}
	if Compare(NewRow([]Value{NewInt(1)}), NewRow([]Value{NewInt(2)})) >= 0 {
		t.Error("rows compare by their fields")
	}
	if _, err := DecodeRow(AppendValue(nil, long)[:5]); err == nil {
		t.Error("truncated array decoded")
	}
	if rt.FieldIndex("B") != 1 || rt.FieldIndex("z") != -1 {
		t.Error("FieldIndex")
	}
	if Format(NewInterval(-(26*time.Hour+3*time.Minute+4500*time.Millisecond)), TypeInterval) != "-1 02:03:04.500" {
		t.Error(Format(NewInterval(-(26*time.Hour + 3*time.Minute + 4500*time.Millisecond)), TypeInterval))
	}
}

// The wall clock of an instant in a zone, and back, across Los Angeles's
// daylight-saving changes of 2021 (Flink's Timezone page uses the first):
// clocks went from 02:00 PST to 03:00 PDT on March 14 (10:00 UTC) and from
// 02:00 PDT back to 01:00 PST on November 7 (09:00 UTC). The expected
// instants are worked out by hand from those offsets (-8 h, -7 h).
func TestLocalAndInstantNanos(t *testing.T) {
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Fatal(err)
	}
	wall := func(s string) int64 {
		v, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UnixNano()
	}
	for _, c := range []struct{ local, utc string }{
		{"2021-03-14 00:00:00", "2021-03-14 08:00:00"},
		{"2021-03-14 01:59:59", "2021-03-14 09:59:59"},
		{"2021-03-14 02:30:00", "2021-03-14 10:30:00"}, // in the gap: moved on by its hour, 03:30 PDT
		{"2021-03-14 03:00:00", "2021-03-14 10:00:00"},
		{"2021-03-14 04:00:00", "2021-03-14 11:00:00"},
		{"2021-11-07 01:30:00", "2021-11-07 08:30:00"}, // in the overlap: the earlier, PDT
		{"2021-11-07 02:00:00", "2021-11-07 10:00:00"},
	} {
		if got := InstantNanos(wall(c.local), la); got != wall(c.utc) {
			t.Errorf("InstantNanos(%s) = %s, want %s UTC", c.local, time.Unix(0, got).UTC(), c.utc)
		}
	}
	for _, c := range []struct{ utc, local string }{
		{"2021-03-14 09:59:59", "2021-03-14 01:59:59"},
		{"2021-03-14 10:00:00", "2021-03-14 03:00:00"},
		{"2021-11-07 08:30:00", "2021-11-07 01:30:00"},
		{"2021-11-07 09:30:00", "2021-11-07 01:30:00"},
		{"2021-11-07 10:00:00", "2021-11-07 02:00:00"},
	} {
		if got := LocalNanos(wall(c.utc), la); got != wall(c.local) {
			t.Errorf("LocalNanos(%s UTC) = %s, want %s", c.utc, time.Unix(0, got).UTC(), c.local)
		}
	}
	if got := Format(NewTimestamp(4001e6), TimestampLTZType(3)); got != "1970-01-01 00:00:04.001" {
		t.Errorf("TIMESTAMP_LTZ 4001 ms in UTC = %s", got)
	}
	sh := time.FixedZone("+08:00", 8*3600)
	if got := FormatIn(NewRow([]Value{NewTimestamp(4001e6)}), RowType([]Field{{Name: "t", Type: TimestampLTZType(3)}}), sh); got != "(1970-01-01 08:00:04.001)" {
		t.Errorf("a ROW's TIMESTAMP_LTZ in +08:00 = %s", got)
	}
}

// A MULTISET value is sorted by element, so that the same bag built in
// two orders is one value, formats as Flink's {element=count, ...} and
// survives the value encoding.
func TestMultisetValue(t *testing.T) {
	a := NewMultiset([]Value{NewString("b"), NewString("a")}, []int64{1, 2})
	b := NewMultiset([]Value{NewString("a"), NewString("b")}, []int64{2, 1})
	if !Equal(a, b) {
		t.Fatalf("%s and %s differ", Format(a, Type{}), Format(b, Type{}))
	}
	typ := MultisetType(TypeString)
	if got := Format(a, typ); got != "{a=2, b=1}" {
		t.Errorf("Format = %s, want {a=2, b=1}", got)
	}
	if got := Format(NewMultiset(nil, nil), typ); got != "{}" {
		t.Errorf("empty Format = %s, want {}", got)
	}
	if Equal(a, NewMultiset([]Value{NewString("a"), NewString("b")}, []int64{1, 2})) {
		t.Error("bags with other counts are equal")
	}
	dec, rest, err := DecodeValue(AppendValue(nil, a))
	if err != nil || len(rest) != 0 || !Equal(dec, a) {
		t.Errorf("decode = %v, %v, %v", dec, rest, err)
	}
}
