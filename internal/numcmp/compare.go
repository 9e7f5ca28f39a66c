// Package numcmp holds the three-way comparisons of the engine's
// numbers, shared by types.Compare (sorting, keys) and the expression
// evaluator's comparison operators, so both order values the same way.
package numcmp

import "math"

// Int returns -1, 0 or +1 as a is less than, equal to or greater than b.
func Int(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Float is Int for float64, with a total order: NaN sorts after every
// number (+Inf included) and equals itself, as Flink orders DOUBLE.
func Float(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	}
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	}
	return -1
}
