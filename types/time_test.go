package types

import "testing"

// TIME(p) and INTERVAL YEAR TO MONTH: parsing, printing and the key
// encoding. Expected texts are worked out by hand: 45296789 ms is
// 12 h 34 min 56.789 s; 18 months are 1 year 6 months.
func TestTimeAndYearMonthInterval(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"TIME", "TIME(0)"},
		{"time(3)", "TIME(3)"},
		{"TIME(9) WITHOUT TIME ZONE", "TIME(9)"},
		{"TIME(3) NOT NULL", "TIME(3) NOT NULL"},
		{"ROW<t TIME(3)>", "ROW<`t` TIME(3)>"},
	} {
		got, err := ParseType(c.in)
		if err != nil || got.String() != c.want {
			t.Errorf("ParseType(%q) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"TIME(10)", "TIME WITH TIME ZONE"} {
		if _, err := ParseType(bad); err == nil {
			t.Errorf("ParseType(%q) accepted", bad)
		}
	}
	tm := NewTime(45296789 * 1e6)
	for p, want := range map[int]string{0: "12:34:56", 3: "12:34:56.789", 6: "12:34:56.789000"} {
		if got := Format(tm, TimeType(p)); got != want {
			t.Errorf("TIME(%d) = %s, want %s", p, got, want)
		}
	}
	if got := Format(NewTime(5e9), TimeType(0)); got != "00:00:05" {
		t.Errorf("5 s after midnight = %s", got)
	}
	if got := Format(NewTime(NanosPerDay-1), TimeType(9)); got != "23:59:59.999999999" {
		t.Errorf("the last nanosecond = %s", got)
	}
	for m, want := range map[int64]string{18: "+1-06", 1: "+0-01", 24: "+2-00", -13: "-1-01", 0: "+0-00", 1234: "+102-10"} {
		if got := Format(NewIntervalYM(m), TypeIntervalYM); got != want {
			t.Errorf("%d months = %s, want %s", m, got, want)
		}
	}
	// Order and round trip through the row codec, as state and keys.
	row := Row{NewTime(1e9), NewIntervalYM(-3), NewTime(0), NewIntervalYM(7)}
	back, err := DecodeRow(EncodeRow(nil, row))
	if err != nil || !RowsEqual(back, row) {
		t.Fatalf("round trip: %v %v", back, err)
	}
	if back[0].Kind() != KindTime || back[1].Kind() != KindIntervalYM || back[1].Months() != -3 {
		t.Errorf("kinds after decoding: %v", back)
	}
	lo, hi := string(AppendValue(nil, NewTime(0))), string(AppendValue(nil, NewTime(1e9)))
	if !(lo < hi) || Compare(NewTime(0), NewTime(1e9)) != -1 {
		t.Error("TIME order")
	}
	neg, pos := string(AppendValue(nil, NewIntervalYM(-3))), string(AppendValue(nil, NewIntervalYM(7)))
	if !(neg < pos) || Compare(NewIntervalYM(-3), NewIntervalYM(7)) != -1 {
		t.Error("INTERVAL YEAR TO MONTH order")
	}
	if Hash64(Row{NewTime(1e9)}, nil) == Hash64(Row{NewInterval(1e9)}, nil) {
		t.Error("a TIME hashes as the day-time interval of the same nanoseconds")
	}
	bad := AppendValue(nil, NewTime(0))
	bad[1] ^= 0x7f // far outside a day
	if _, err := DecodeRow(bad); err == nil {
		t.Error("a TIME outside a day decoded")
	}
}

func TestParseTimeOfDay(t *testing.T) {
	for _, c := range []struct {
		in   string
		ns   int64
		frac int
	}{
		{"12:34:56.789", 45296789e6, 3},
		{" 1:02 ", 3720e9, 0},
		{"23:59:59.999999999", NanosPerDay - 1, 9},
		{"00:00:00", 0, 0},
		{"08:00:00.5", 28800e9 + 5e8, 1},
	} {
		ns, frac, ok := ParseTimeOfDay(c.in)
		if !ok || ns != c.ns || frac != c.frac {
			t.Errorf("ParseTimeOfDay(%q) = %d, %d, %v; want %d, %d", c.in, ns, frac, ok, c.ns, c.frac)
		}
	}
	for _, bad := range []string{"24:00:00", "12:60", "12:3", "12:00:60", "12:00:00.", "12:00:00.1234567890", "12", "12:00:00Z", "-01:00:00", ""} {
		if _, _, ok := ParseTimeOfDay(bad); ok {
			t.Errorf("ParseTimeOfDay(%q) accepted", bad)
		}
	}
}
