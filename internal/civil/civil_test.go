package civil

import (
	"testing"
	"time"
)

// Checked against the standard library's calendar, an independent
// implementation, over 1600..2400 (leap centuries included).
func TestDaysFromCivilMatchesTime(t *testing.T) {
	for y := int64(1600); y <= 2400; y += 7 {
		for m := int64(1); m <= 12; m++ {
			for _, d := range []int64{1, 15, DaysInMonth(y, m)} {
				want := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC).Unix() / 86400
				if got := DaysFromCivil(y, m, d); got != want {
					t.Fatalf("DaysFromCivil(%d-%d-%d) = %d, want %d", y, m, d, got, want)
				}
				if yy, mm, dd := CivilFromDays(want); yy != y || mm != m || dd != d {
					t.Fatalf("CivilFromDays(%d) = %d-%d-%d, want %d-%d-%d", want, yy, mm, dd, y, m, d)
				}
				if next := time.Date(int(y), time.Month(m), int(DaysInMonth(y, m))+1, 0, 0, 0, 0, time.UTC); next.Day() != 1 {
					t.Fatalf("DaysInMonth(%d, %d) = %d is not the month's length", y, m, DaysInMonth(y, m))
				}
			}
		}
	}
}

func TestFloorDivMod(t *testing.T) {
	for _, c := range [][4]int64{{7, 2, 3, 1}, {-7, 2, -4, 1}, {7, -2, -4, -1}, {-7, -2, 3, -1}, {-6, 3, -2, 0}} {
		if q, r := FloorDiv(c[0], c[1]), FloorMod(c[0], c[1]); q != c[2] || r != c[3] {
			t.Errorf("FloorDiv/Mod(%d, %d) = %d, %d; want %d, %d", c[0], c[1], q, r, c[2], c[3])
		}
	}
	for i, p := range Pow10 {
		want := int64(1)
		for range i {
			want *= 10
		}
		if p != want {
			t.Errorf("Pow10[%d] = %d", i, p)
		}
	}
}
