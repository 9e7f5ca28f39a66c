package numcmp

import (
	"math"
	"testing"
)

func TestOrder(t *testing.T) {
	if Int(1, 2) != -1 || Int(2, 1) != 1 || Int(math.MinInt64, math.MinInt64) != 0 {
		t.Error("Int")
	}
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		a, b float64
		want int
	}{{1, 2, -1}, {2, 1, 1}, {0, math.Copysign(0, -1), 0}, {nan, inf, 1}, {inf, nan, -1}, {nan, nan, 0}, {-inf, nan, -1}} {
		if got := Float(c.a, c.b); got != c.want {
			t.Errorf("Float(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
