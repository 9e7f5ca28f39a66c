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
	Interval  // a day-time interval, only as a function argument
)

var typeNames = [...]string{
	Null: "NULL", Boolean: "BOOLEAN", Int: "INT", BigInt: "BIGINT", Double: "DOUBLE",
	Decimal: "DECIMAL", String: "STRING", Date: "DATE", Timestamp: "TIMESTAMP", Interval: "INTERVAL",
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
	// Precision is the DECIMAL precision, the TIMESTAMP fractional-second
	// precision (0..9), or the VARCHAR length.
	Precision int
	// Scale is the DECIMAL scale.
	Scale int
	// NotNull is set for columns declared NOT NULL and for expressions
	// that can never be NULL.
	NotNull bool
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
	TypeInterval  = Type{ID: Interval}
)

// DecimalType returns DECIMAL(p, s).
func DecimalType(p, s int) Type { return Type{ID: Decimal, Precision: p, Scale: s} }

// TimestampType returns TIMESTAMP(p).
func TimestampType(p int) Type { return Type{ID: Timestamp, Precision: p} }

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

// Equal reports whether two types are the same, ignoring nullability.
func (t Type) Equal(o Type) bool {
	return t.ID == o.ID && t.Precision == o.Precision && t.Scale == o.Scale
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
	case String:
		if t.Precision == MaxStringLength || t.Precision == 0 {
			s = "STRING"
		} else {
			s = fmt.Sprintf("VARCHAR(%d)", t.Precision)
		}
	default:
		s = t.ID.String()
	}
	if t.NotNull {
		s += " NOT NULL"
	}
	return s
}

// ParseType parses a Flink type name such as "BIGINT", "DECIMAL(10,2)",
// "TIMESTAMP(3)", "TIMESTAMP_LTZ(3)", "VARCHAR(20)" or "STRING".
// It is used for CAST targets, which reach the planner as text.
func ParseType(s string) (Type, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	name, args := u, ""
	if i := strings.IndexByte(u, '('); i >= 0 {
		if !strings.HasSuffix(u, ")") {
			return Type{}, fmt.Errorf("malformed type %q", s)
		}
		name, args = strings.TrimSpace(u[:i]), u[i+1:len(u)-1]
	}
	nums := []int{}
	if args != "" {
		for _, a := range strings.Split(args, ",") {
			var n int
			if _, err := fmt.Sscanf(strings.TrimSpace(a), "%d", &n); err != nil {
				return Type{}, fmt.Errorf("malformed type %q", s)
			}
			nums = append(nums, n)
		}
	}
	arg := func(i, def int) int {
		if i < len(nums) {
			return nums[i]
		}
		return def
	}
	switch name {
	case "BOOLEAN", "BOOL":
		return TypeBoolean, nil
	case "INT", "INTEGER", "TINYINT", "SMALLINT":
		return TypeInt, nil
	case "BIGINT", "SIGNED":
		return TypeBigInt, nil
	case "DOUBLE", "FLOAT", "REAL", "DOUBLE PRECISION":
		return TypeDouble, nil
	case "DECIMAL", "NUMERIC", "DEC":
		p, sc := arg(0, 10), arg(1, 0)
		if p < 1 || p > MaxDecimalPrecision || sc < 0 || sc > p {
			return Type{}, fmt.Errorf("DECIMAL(%d, %d): precision must be 1..%d and scale 0..precision", p, sc, MaxDecimalPrecision)
		}
		return DecimalType(p, sc), nil
	case "STRING", "TEXT", "CHAR", "VARCHAR", "CHARACTER VARYING":
		n := arg(0, MaxStringLength)
		if name == "CHAR" && len(nums) == 0 {
			n = MaxStringLength
		}
		return VarcharType(n), nil
	case "DATE":
		return TypeDate, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ", "DATETIME":
		p := arg(0, 6)
		if name == "DATETIME" && len(nums) == 0 {
			p = 0
		}
		if p < 0 || p > 9 {
			return Type{}, fmt.Errorf("TIMESTAMP(%d): precision must be 0..9", p)
		}
		return TimestampType(p), nil
	}
	return Type{}, fmt.Errorf("unsupported type %s", strings.TrimSpace(s))
}
