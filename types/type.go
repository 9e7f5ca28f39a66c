package types

import (
	"fmt"
	"strings"
)

// TypeID names a SQL type family.
type TypeID uint8

// The SQL types streamsql supports. INT and BIGINT share the int64
// representation; INT arithmetic is checked against the 32-bit range.
const (
	Null TypeID = iota // the type of a bare NULL literal
	Boolean
	Int
	BigInt
	Double
	Decimal
	String // VARCHAR(n) and STRING
	Date
	Timestamp // TIMESTAMP(p), without time zone
	Interval  // a day-time interval
	RowT      // ROW<name type, ...>: Type.Fields (Row is the name of a row of values)
	Array     // ARRAY<T>: Type.Fields[0].Type is T
	Map       // MAP<K, V>: Type.Fields[0].Type is K, Fields[1].Type is V
	Bytes     // BYTES, VARBINARY(n), BINARY(n): a KindString value holding the bytes
	// TimestampLTZ is TIMESTAMP_LTZ(p), Flink's TIMESTAMP(p) WITH LOCAL
	// TIME ZONE: an instant, held as a KindTimestamp value of nanoseconds
	// since 1970-01-01 00:00:00 UTC. It has no zone of its own: it is
	// shown, cast and taken apart in the session's table.local-time-zone,
	// which the binder hands to every expression that needs it.
	TimestampLTZ
	// Time is TIME(p), a time of day without a zone: a KindTime value of
	// nanoseconds since midnight, 0 .. 86399999999999.
	Time
	// IntervalYM is Flink's INTERVAL YEAR TO MONTH: a KindIntervalYM
	// value of a signed number of months. Interval is the day-time kind.
	IntervalYM
	// Multiset is MULTISET<T>, a bag, as Flink holds it: a KindMap value
	// from each distinct element to its INT count (above 0), the entries
	// in Compare order of their elements (NewMultiset), so that equal bags
	// are equal values. Type.Fields[0].Type is T, Fields[1].Type the
	// count's INT NOT NULL, so that it formats, encodes and hashes as the
	// MAP<T, INT> it is underneath.
	Multiset
)

var typeNames = [...]string{
	Null: "NULL", Boolean: "BOOLEAN", Int: "INT", BigInt: "BIGINT", Double: "DOUBLE",
	Decimal: "DECIMAL", String: "STRING", Date: "DATE", Timestamp: "TIMESTAMP", Interval: "INTERVAL",
	RowT: "ROW", Array: "ARRAY", Map: "MAP", Bytes: "BYTES", TimestampLTZ: "TIMESTAMP_LTZ",
	Time: "TIME", IntervalYM: "INTERVAL YEAR TO MONTH", Multiset: "MULTISET",
}

func (id TypeID) String() string {
	if int(id) < len(typeNames) {
		return typeNames[id]
	}
	return fmt.Sprintf("TypeID(%d)", id)
}

// MaxStringLength is the length of STRING, as in Flink (VARCHAR(2147483647)).
const MaxStringLength = 2147483647

// MaxDecimalPrecision is the largest DECIMAL precision accepted, as in Flink.
const MaxDecimalPrecision = 38

// LiteralPrecisionMessage is the error for a numeric literal with more
// digits than MaxDecimalPrecision, wherever it is found.
func LiteralPrecisionMessage(text string) string {
	return fmt.Sprintf("numeric literal %s exceeds the maximum DECIMAL precision %d", text, MaxDecimalPrecision)
}

// Type is a complete SQL type: family, parameters and nullability.
type Type struct {
	ID TypeID
	// Precision is the DECIMAL precision, the TIMESTAMP or TIME
	// fractional-second precision (0..9), the VARCHAR length, the
	// VARBINARY length, or an interval's year or day precision.
	Precision int
	// Scale is the DECIMAL scale, or a day-time interval's fractional
	// second precision.
	Scale int
	// Res is an interval's resolution (interval.go); ResNone for every
	// other type.
	Res IntervalRes
	// NotNull is set for columns declared NOT NULL and for expressions
	// that can never be NULL.
	NotNull bool
	// Fields are a ROW's fields, an ARRAY's element type (one field, no
	// name) or a MAP's key and value types (two fields, no names); nil for
	// every other type. Shared between copies: never modify it in place.
	Fields []Field
}

// Field is a field of a ROW type.
type Field struct {
	Name string
	Type Type
}

// RowType returns ROW<fields>.
func RowType(fields []Field) Type { return Type{ID: RowT, Fields: fields} }

// ArrayType returns ARRAY<elem>.
func ArrayType(elem Type) Type { return Type{ID: Array, Fields: []Field{{Type: elem}}} }

// MapType returns MAP<key, val>.
func MapType(key, val Type) Type { return Type{ID: Map, Fields: []Field{{Type: key}, {Type: val}}} }

// MultisetType returns MULTISET<elem>.
func MultisetType(elem Type) Type {
	return Type{ID: Multiset, Fields: []Field{{Type: elem}, {Type: TypeInt.WithNotNull(true)}}}
}

// Elem is the element type of an ARRAY or MULTISET, the key type of a MAP.
func (t Type) Elem() Type { return t.fieldType(0) }

// MapValue is the value type of a MAP.
func (t Type) MapValue() Type { return t.fieldType(1) }

// IsComposite reports whether t is a ROW, ARRAY, MAP or MULTISET.
func (t Type) IsComposite() bool {
	return t.ID == RowT || t.ID == Array || t.ID == Map || t.ID == Multiset
}

// FieldIndex returns the index of the ROW field named name: an exact
// match first, else the only case-insensitive one; -1 if there is none.
func (t Type) FieldIndex(name string) int {
	if t.ID != RowT {
		return -1
	}
	for i, f := range t.Fields {
		if f.Name == name {
			return i
		}
	}
	found := -1
	for i, f := range t.Fields {
		if strings.EqualFold(f.Name, name) {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

func (t Type) fieldType(i int) Type {
	if i < len(t.Fields) {
		return t.Fields[i].Type
	}
	return Type{}
}

// Convenience constructors for the common types, all nullable.
var (
	TypeNull      = Type{ID: Null}
	TypeBoolean   = Type{ID: Boolean}
	TypeInt       = Type{ID: Int}
	TypeBigInt    = Type{ID: BigInt}
	TypeDouble    = Type{ID: Double}
	TypeString    = Type{ID: String, Precision: MaxStringLength}
	TypeDate      = Type{ID: Date}
	TypeTimestamp = Type{ID: Timestamp, Precision: 3}
	// TypeInterval is INTERVAL DAY(2) TO SECOND(3), the type of a
	// day-time interval computed at run time (Flink's default interval
	// of milliseconds).
	TypeInterval = DayTimeIntervalType(ResDayToSecond, DefaultDayPrecision, 3)
	// TypeIntervalYM is INTERVAL YEAR(2) TO MONTH.
	TypeIntervalYM = YearMonthIntervalType(ResYearToMonth, DefaultYearPrecision)
	TypeBytes      = Type{ID: Bytes, Precision: MaxStringLength}
)

// VarbinaryType returns VARBINARY(n); BYTES is VARBINARY(2147483647).
func VarbinaryType(n int) Type { return Type{ID: Bytes, Precision: n} }

// DecimalType returns DECIMAL(p, s).
func DecimalType(p, s int) Type { return Type{ID: Decimal, Precision: p, Scale: s} }

// TimestampType returns TIMESTAMP(p).
func TimestampType(p int) Type { return Type{ID: Timestamp, Precision: p} }

// TimeType returns TIME(p).
func TimeType(p int) Type { return Type{ID: Time, Precision: p} }

// TimestampLTZType returns TIMESTAMP_LTZ(p).
func TimestampLTZType(p int) Type { return Type{ID: TimestampLTZ, Precision: p} }

// IsTimestamp reports whether t is TIMESTAMP(p) or TIMESTAMP_LTZ(p): the
// types whose values are KindTimestamp.
func (t Type) IsTimestamp() bool { return t.ID == Timestamp || t.ID == TimestampLTZ }

// VarcharType returns VARCHAR(n).
func VarcharType(n int) Type { return Type{ID: String, Precision: n} }

// Nullable returns t with NotNull cleared.
func (t Type) Nullable() Type { t.NotNull = false; return t }

// WithNotNull returns t with NotNull set to nn.
func (t Type) WithNotNull(nn bool) Type { t.NotNull = nn; return t }

// IsNumeric reports whether t is INT, BIGINT, DOUBLE or DECIMAL.
func (t Type) IsNumeric() bool {
	switch t.ID {
	case Int, BigInt, Double, Decimal:
		return true
	}
	return false
}

// IsInteger reports whether t is INT or BIGINT.
func (t Type) IsInteger() bool { return t.ID == Int || t.ID == BigInt }

// Equal reports whether two types are the same, ignoring nullability
// (at the top level; the fields of a ROW, ARRAY or MAP must agree on it
// too, and ROW field names must be equal).
func (t Type) Equal(o Type) bool {
	if t.ID != o.ID || t.Precision != o.Precision || t.Scale != o.Scale || t.Res != o.Res || len(t.Fields) != len(o.Fields) {
		return false
	}
	for i, f := range t.Fields {
		g := o.Fields[i]
		if f.Name != g.Name || f.Type.NotNull != g.Type.NotNull || !f.Type.Equal(g.Type) {
			return false
		}
	}
	return true
}

// String renders the type as Flink writes it, e.g. "DECIMAL(10, 2)",
// "TIMESTAMP(3)", "STRING", "BIGINT NOT NULL".
func (t Type) String() string {
	var s string
	switch t.ID {
	case Decimal:
		s = fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case Timestamp:
		s = fmt.Sprintf("TIMESTAMP(%d)", t.Precision)
	case TimestampLTZ:
		s = fmt.Sprintf("TIMESTAMP_LTZ(%d)", t.Precision)
	case Time:
		s = fmt.Sprintf("TIME(%d)", t.Precision)
	case String:
		if t.Precision == MaxStringLength || t.Precision == 0 {
			s = "STRING"
		} else {
			s = fmt.Sprintf("VARCHAR(%d)", t.Precision)
		}
	case Bytes:
		if t.Precision == MaxStringLength || t.Precision == 0 {
			s = "BYTES"
		} else {
			s = fmt.Sprintf("VARBINARY(%d)", t.Precision)
		}
	case RowT:
		var sb strings.Builder
		sb.WriteString("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("`" + strings.ReplaceAll(f.Name, "`", "``") + "` " + f.Type.String())
		}
		sb.WriteString(">")
		s = sb.String()
	case Interval, IntervalYM:
		s = t.intervalString()
	case Array:
		s = "ARRAY<" + t.Elem().String() + ">"
	case Map:
		s = "MAP<" + t.Elem().String() + ", " + t.MapValue().String() + ">"
	case Multiset:
		s = "MULTISET<" + t.Elem().String() + ">"
	default:
		s = t.ID.String()
	}
	if t.NotNull {
		s += " NOT NULL"
	}
	return s
}

// ParseType parses a Flink type name such as "BIGINT", "DECIMAL(10,2)",
// "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)", "VARCHAR(20)", "STRING",
// "ROW<a INT, b STRING>", "ROW(a INT, b STRING)", "ARRAY<INT>",
// "INT ARRAY", "MAP<STRING, BIGINT>", "MULTISET<INT>", "INT MULTISET" or
// "INTERVAL DAY(2) TO SECOND(3)" (interval.go), with NOT NULL where Flink allows
// it. Type names are case-insensitive; ROW field names keep their case
// (`quoted` ones may hold any character). It reads CAST targets and the
// column types the pre-lexer hands over as text.
func ParseType(s string) (Type, error) {
	p := &typeParser{src: s, toks: lexType(s)}
	t, err := p.parse()
	if err != nil {
		return Type{}, err
	}
	if p.i < len(p.toks) {
		return Type{}, fmt.Errorf("malformed type %q", strings.TrimSpace(s))
	}
	return t, nil
}

// lexType splits type text into words, numbers, `quoted` names and single
// punctuation characters.
func lexType(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '`':
			j := i + 1
			for j < len(s) {
				if s[j] == '`' {
					if j+1 < len(s) && s[j+1] == '`' {
						j += 2
						continue
					}
					break
				}
				j++
			}
			toks = append(toks, s[i:min(j+1, len(s))])
			i = j + 1
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80 || c == '$':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9' || s[j] >= 0x80 || s[j] == '$') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		case c == '\'':
			j := i + 1
			for j < len(s) && !(s[j] == '\'' && (j+1 >= len(s) || s[j+1] != '\'')) {
				if s[j] == '\'' {
					j++
				}
				j++
			}
			toks = append(toks, s[i:min(j+1, len(s))])
			i = j + 1
		default:
			toks = append(toks, s[i:i+1])
			i++
		}
	}
	return toks
}

type typeParser struct {
	src  string
	toks []string
	i    int
}

func (p *typeParser) peek(k int) string {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return ""
}

func (p *typeParser) is(kw string) bool { return strings.EqualFold(p.peek(0), kw) }

func (p *typeParser) accept(kw string) bool {
	if p.is(kw) {
		p.i++
		return true
	}
	return false
}

func (p *typeParser) expect(kw string) error {
	if !p.accept(kw) {
		found := p.peek(0)
		if found == "" {
			found = "the end"
		}
		return fmt.Errorf("malformed type %q: expected '%s', found %s", strings.TrimSpace(p.src), kw, found)
	}
	return nil
}

// parse reads a type with its NOT NULL and postfix ARRAY suffixes.
func (p *typeParser) parse() (Type, error) {
	t, err := p.parseBase()
	if err != nil {
		return Type{}, err
	}
	for {
		switch {
		case p.is("NOT") && strings.EqualFold(p.peek(1), "NULL"):
			p.i += 2
			t.NotNull = true
		case p.is("NULL"):
			p.i++
			t.NotNull = false
		case p.is("ARRAY"):
			p.i++
			t = ArrayType(t)
		case p.is("MULTISET"):
			p.i++
			t = MultisetType(t)
		default:
			return t, nil
		}
	}
}

// numbers reads an optional (n[, n]) after a type name.
func (p *typeParser) numbers() ([]int, error) {
	if !p.accept("(") {
		return nil, nil
	}
	var nums []int
	for {
		var n int
		if _, err := fmt.Sscanf(p.peek(0), "%d", &n); err != nil {
			return nil, fmt.Errorf("malformed type %q", strings.TrimSpace(p.src))
		}
		p.i++
		nums = append(nums, n)
		if p.accept(")") {
			return nums, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

func (p *typeParser) parseBase() (Type, error) {
	word := strings.ToUpper(p.peek(0))
	if word == "" {
		return Type{}, fmt.Errorf("missing type")
	}
	p.i++
	switch word {
	case "ROW":
		return p.parseRow()
	case "ARRAY":
		if err := p.expect("<"); err != nil {
			return Type{}, err
		}
		el, err := p.parse()
		if err != nil {
			return Type{}, err
		}
		return ArrayType(el), p.expect(">")
	case "MAP":
		if err := p.expect("<"); err != nil {
			return Type{}, err
		}
		k, err := p.parse()
		if err != nil {
			return Type{}, err
		}
		if err := p.expect(","); err != nil {
			return Type{}, err
		}
		v, err := p.parse()
		if err != nil {
			return Type{}, err
		}
		return MapType(k, v), p.expect(">")
	case "MULTISET":
		if err := p.expect("<"); err != nil {
			return Type{}, err
		}
		el, err := p.parse()
		if err != nil {
			return Type{}, err
		}
		return MultisetType(el), p.expect(">")
	case "INTERVAL":
		return p.parseInterval()
	case "RAW":
		return Type{}, fmt.Errorf("RAW types are not supported")
	case "DOUBLE":
		p.accept("PRECISION")
	case "CHARACTER":
		if p.accept("VARYING") {
			word = "VARCHAR"
		} else {
			word = "CHAR"
		}
	}
	nums, err := p.numbers()
	if err != nil {
		return Type{}, err
	}
	arg := func(i, def int) int {
		if i < len(nums) {
			return nums[i]
		}
		return def
	}
	switch word {
	case "BOOLEAN", "BOOL":
		return TypeBoolean, nil
	case "INT", "INTEGER", "TINYINT", "SMALLINT":
		return TypeInt, nil
	case "BIGINT", "SIGNED":
		return TypeBigInt, nil
	case "DOUBLE", "FLOAT", "REAL":
		return TypeDouble, nil
	case "DECIMAL", "NUMERIC", "DEC":
		pr, sc := arg(0, 10), arg(1, 0)
		if pr < 1 || pr > MaxDecimalPrecision || sc < 0 || sc > pr {
			return Type{}, fmt.Errorf("DECIMAL(%d, %d): precision must be 1..%d and scale 0..precision", pr, sc, MaxDecimalPrecision)
		}
		return DecimalType(pr, sc), nil
	case "STRING", "TEXT", "CHAR", "VARCHAR":
		// VARCHAR without a length is STRING, as in Flink. CHAR(n) is read
		// as VARCHAR(n) and CHAR alone as STRING: streamsql has no
		// fixed-length, blank-padded strings.
		return VarcharType(arg(0, MaxStringLength)), nil
	case "BINARY", "VARBINARY", "BYTES":
		// BINARY(n) is read as VARBINARY(n) and BINARY alone as BYTES, as
		// CHAR is read as VARCHAR: no fixed-length, zero-padded bytes.
		n := arg(0, MaxStringLength)
		if n < 1 {
			return Type{}, fmt.Errorf("%s(%d): the length must be at least 1", word, n)
		}
		return VarbinaryType(n), nil
	case "DATE":
		return TypeDate, nil
	case "TIME":
		// TIME(p), default TIME(0), as Flink's Data Types page has it.
		pr := arg(0, 0)
		if pr < 0 || pr > 9 {
			return Type{}, fmt.Errorf("TIME(%d): precision must be 0..9", pr)
		}
		switch {
		case p.is("WITHOUT") && strings.EqualFold(p.peek(1), "TIME") && strings.EqualFold(p.peek(2), "ZONE"):
			p.i += 3
		case p.is("WITH"):
			return Type{}, fmt.Errorf("TIME WITH TIME ZONE is not supported (Flink has none either)")
		}
		return TimeType(pr), nil
	case "TIMESTAMP", "TIMESTAMP_LTZ", "DATETIME":
		pr := arg(0, 6)
		if word == "DATETIME" && len(nums) == 0 {
			pr = 0
		}
		if pr < 0 || pr > 9 {
			return Type{}, fmt.Errorf("TIMESTAMP(%d): precision must be 0..9", pr)
		}
		if word == "TIMESTAMP_LTZ" {
			return TimestampLTZType(pr), nil
		}
		switch {
		case p.is("WITHOUT") && strings.EqualFold(p.peek(1), "TIME") && strings.EqualFold(p.peek(2), "ZONE"):
			p.i += 3
		case p.is("WITH") && strings.EqualFold(p.peek(1), "LOCAL") && strings.EqualFold(p.peek(2), "TIME") && strings.EqualFold(p.peek(3), "ZONE"):
			p.i += 4
			return TimestampLTZType(pr), nil
		case p.is("WITH") && strings.EqualFold(p.peek(1), "TIME") && strings.EqualFold(p.peek(2), "ZONE"):
			return Type{}, fmt.Errorf("TIMESTAMP WITH TIME ZONE is not supported (Flink has none either): use TIMESTAMP_LTZ")
		}
		return TimestampType(pr), nil
	}
	return Type{}, fmt.Errorf("unsupported type %s", strings.TrimSpace(p.src))
}

// parseRow reads the fields of ROW<name type, ...> or ROW(name type, ...)
// after the word ROW. A field may end with a COMMENT 'text', which is
// dropped.
func (p *typeParser) parseRow() (Type, error) {
	closer := ">"
	if p.accept("(") {
		closer = ")"
	} else if err := p.expect("<"); err != nil {
		return Type{}, err
	}
	var fields []Field
	if p.accept(closer) {
		return RowType(fields), nil
	}
	seen := map[string]bool{}
	for {
		name := p.peek(0)
		if name == "" || strings.ContainsAny(name[:1], "<>(),'") {
			return Type{}, fmt.Errorf("malformed type %q: expected a field name, found %q", strings.TrimSpace(p.src), name)
		}
		p.i++
		if name[0] == '`' {
			name = strings.ReplaceAll(strings.TrimSuffix(name[1:], "`"), "``", "`")
		}
		if seen[strings.ToLower(name)] {
			return Type{}, fmt.Errorf("ROW field %s is declared twice", name)
		}
		seen[strings.ToLower(name)] = true
		ft, err := p.parse()
		if err != nil {
			return Type{}, err
		}
		if p.accept("COMMENT") {
			if !strings.HasPrefix(p.peek(0), "'") {
				return Type{}, fmt.Errorf("malformed type %q: COMMENT needs a string", strings.TrimSpace(p.src))
			}
			p.i++
		}
		fields = append(fields, Field{Name: name, Type: ft})
		if p.accept(closer) {
			return RowType(fields), nil
		}
		if !p.accept(",") {
			found := p.peek(0)
			if found == "" {
				found = "the end"
			}
			return Type{}, fmt.Errorf("malformed type %q: expected ',' or '%s' after field %s, found %s", strings.TrimSpace(p.src), closer, name, found)
		}
	}
}
