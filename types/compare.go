package types

import (
	"math"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/internal/numcmp"
)

// Compare orders two non-NULL values of the same kind, or of two numeric
// kinds (INT, DOUBLE, DECIMAL are compared by numeric value). NULL sorts
// before everything else, as in Flink's default NULLS FIRST for ASC.
// It returns -1, 0 or +1.
func Compare(a, b Value) int {
	if a.k == KindNull || b.k == KindNull {
		switch {
		case a.k == b.k:
			return 0
		case a.k == KindNull:
			return -1
		default:
			return 1
		}
	}
	if a.k == b.k {
		switch a.k {
		case KindBool, KindInt, KindDate, KindTimestamp, KindInterval, KindTime, KindIntervalYM:
			return numcmp.Int(a.i, b.i)
		case KindFloat:
			return numcmp.Float(a.Float(), b.Float())
		case KindString:
			return strings.Compare(a.s, b.s)
		case KindDecimal:
			return a.dec().Cmp(b.dec())
		case KindRow, KindArray, KindMap:
			return CompareRows(a.Elems(), b.Elems())
		}
	}
	// Mixed numeric kinds.
	switch {
	case a.k == KindFloat || b.k == KindFloat:
		return numcmp.Float(ToFloat(a), ToFloat(b))
	case a.k == KindDecimal || b.k == KindDecimal:
		return ToDecimal(a).Cmp(ToDecimal(b))
	}
	// Different kinds that the planner should never compare: order by kind
	// so that sorting is still total and deterministic.
	return numcmp.Int(int64(a.k), int64(b.k))
}

// Equal reports whether two values are equal for grouping and joining:
// NULL equals NULL here (it is the SQL "not distinct" relation).
func Equal(a, b Value) bool { return Compare(a, b) == 0 }

// ToFloat converts a numeric value to float64.
func ToFloat(v Value) float64 {
	switch v.k {
	case KindInt:
		return float64(v.i)
	case KindFloat:
		return v.Float()
	case KindDecimal:
		f, _ := v.dec().Float64()
		return f
	}
	return math.NaN()
}

// ToDecimal converts an INT or DECIMAL value to an apd.Decimal.
// The result must not be modified when v is a DECIMAL.
func ToDecimal(v Value) *apd.Decimal {
	switch v.k {
	case KindInt:
		return apd.New(v.i, 0)
	case KindDecimal:
		return v.dec()
	case KindFloat:
		d := new(apd.Decimal)
		_, _ = d.SetFloat64(v.Float())
		return d
	}
	return apd.New(0, 0)
}

// CompareRows compares rows column by column, a shorter prefix first
// (also the order of ROW, ARRAY and MAP values, element by element).
func CompareRows(a, b Row) int {
	for i := range a {
		if i >= len(b) {
			return 1
		}
		if c := Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	if len(a) < len(b) {
		return -1
	}
	return 0
}

// RowsEqual reports whether two rows are equal, NULLs equal.
func RowsEqual(a, b Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.k != y.k {
			return false
		}
		switch x.k {
		case KindNull:
		case KindBool, KindInt, KindDate, KindTimestamp, KindInterval, KindTime, KindIntervalYM:
			if x.i != y.i {
				return false
			}
		case KindString:
			if x.s != y.s {
				return false
			}
		default:
			if Compare(*x, *y) != 0 {
				return false
			}
		}
	}
	return true
}

// Hash64 hashes the given columns of a row. Equal keys (by Equal, within
// one kind) hash equally. It is stable across processes and versions, so
// it can pick key groups that a savepoint remembers.
func Hash64(r Row, cols []int) uint64 {
	var buf [64]byte
	b := EncodeKey(buf[:0], r, cols)
	return xxhash.Sum64(b)
}
