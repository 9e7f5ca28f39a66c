package expr

import "github.com/streamsql/streamsql/types"

// decimalOf returns the DECIMAL type an exact numeric type converts to
// without loss: INT -> DECIMAL(10, 0), BIGINT -> DECIMAL(19, 0).
func decimalOf(t types.Type) (p, s int) {
	switch t.ID {
	case types.Int:
		return 10, 0
	case types.BigInt:
		return 19, 0
	case types.Decimal:
		return t.Precision, t.Scale
	}
	return 38, 0
}

// adjustDecimal caps a derived DECIMAL(p, s) at precision 38, as Flink's
// LogicalTypeMerging.adjustPrecisionScale does.
func adjustDecimal(p, s int) types.Type {
	if p <= types.MaxDecimalPrecision {
		if p < 1 {
			p = 1
		}
		return types.DecimalType(p, s)
	}
	intDigits := p - s
	minScale := min(s, 6)
	s = max(types.MaxDecimalPrecision-intDigits, minScale)
	return types.DecimalType(types.MaxDecimalPrecision, s)
}

// decimalArithType derives the DECIMAL result type of l op r.
func decimalArithType(op byte, l, r types.Type) types.Type {
	p1, s1 := decimalOf(l)
	p2, s2 := decimalOf(r)
	switch op {
	case opAdd, opSub:
		s := max(s1, s2)
		return adjustDecimal(max(p1-s1, p2-s2)+s+1, s)
	case opMul:
		return adjustDecimal(p1+p2+1, s1+s2)
	case opDiv:
		s := max(6, s1+p2+1)
		return adjustDecimal(p1-s1+s2+s, s)
	default: // mod
		s := max(s1, s2)
		return adjustDecimal(min(p1-s1, p2-s2)+s, s)
	}
}

// CommonType returns the type both a and b convert to implicitly: the
// result type of UNION, COALESCE, CASE branches and comparisons. It
// reports false if there is none. The result is NOT NULL only if both
// are.
func CommonType(a, b types.Type) (types.Type, bool) {
	t, ok := commonType(a, b)
	t.NotNull = a.NotNull && b.NotNull
	return t, ok
}

func commonType(a, b types.Type) (types.Type, bool) {
	if a.ID == types.Null {
		return b, true
	}
	if b.ID == types.Null {
		return a, true
	}
	if a.ID == b.ID {
		switch a.ID {
		case types.RowT, types.Array, types.Map, types.Multiset:
			return commonComposite(a, b) // composite.go
		case types.Decimal:
			return mergeDecimal(a, b), true
		case types.String:
			return types.VarcharType(max(a.Precision, b.Precision)), true
		case types.Bytes:
			return types.VarbinaryType(max(a.Precision, b.Precision)), true
		case types.Timestamp:
			return types.TimestampType(max(a.Precision, b.Precision)), true
		case types.TimestampLTZ:
			return types.TimestampLTZType(max(a.Precision, b.Precision)), true
		case types.Time:
			return types.TimeType(max(a.Precision, b.Precision)), true
		case types.Interval, types.IntervalYM:
			return types.CommonInterval(a, b), true
		}
		return a, true
	}
	switch {
	case a.IsNumeric() && b.IsNumeric():
		switch {
		case a.ID == types.Double || b.ID == types.Double:
			return types.TypeDouble, true
		case a.ID == types.Decimal || b.ID == types.Decimal:
			return mergeDecimal(a, b), true
		default: // INT and BIGINT
			return types.TypeBigInt, true
		}
	case a.ID == types.Date && b.ID == types.Timestamp:
		return b, true
	case a.ID == types.Timestamp && b.ID == types.Date:
		return a, true
	}
	return types.Type{}, false
}

// mergeDecimal is the least DECIMAL holding both exact types.
func mergeDecimal(a, b types.Type) types.Type {
	p1, s1 := decimalOf(a)
	p2, s2 := decimalOf(b)
	s := max(s1, s2)
	intDigits := max(p1-s1, p2-s2)
	p := intDigits + s
	if p > types.MaxDecimalPrecision {
		p = types.MaxDecimalPrecision
		s = max(p-intDigits, 0)
	}
	return types.DecimalType(p, s)
}

// isTemporal reports DATE or TIMESTAMP.
func isTemporal(t types.Type) bool { return t.ID == types.Date || t.ID == types.Timestamp }

func isStringType(t types.Type) bool { return t.ID == types.String || t.ID == types.Null }

func isBoolType(t types.Type) bool { return t.ID == types.Boolean || t.ID == types.Null }

func isIntegerType(t types.Type) bool { return t.IsInteger() || t.ID == types.Null }

func isNumericType(t types.Type) bool { return t.IsNumeric() || t.ID == types.Null }

func isTemporalType(t types.Type) bool { return isTemporal(t) || t.ID == types.Null }
