package parser

import (
	"strings"
	"testing"
)

// A decimal literal of any length parses, or fails with the planner's
// precision error, never with TiDB's panic ("internal error").
func TestLongNumericLiterals(t *testing.T) {
	for n := 1; n <= 200; n++ {
		digits := strings.Repeat("7", n)
		for _, lit := range []string{digits, "0." + digits, digits + ".5", strings.Repeat("1", n/2+1) + "." + strings.Repeat("2", n-n/2)} {
			_, err := Parse("SELECT " + lit)
			if err == nil {
				continue
			}
			if !strings.Contains(err.Error(), "numeric literal "+lit+" exceeds the maximum DECIMAL precision 38") {
				t.Fatalf("%d digits, %s:\n%v", n, lit, err)
			}
		}
	}
	// Leading zeros of the integer part are not digits of precision.
	if _, err := Parse("SELECT " + strings.Repeat("0", 100) + "1"); err != nil {
		t.Fatal(err)
	}
}
