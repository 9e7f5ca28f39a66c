package types

import (
	"strings"
	"testing"
)

// The INTERVAL types of Flink's Data Types page: each form parses to the
// type Flink's YearMonthIntervalType / DayTimeIntervalType would hold,
// writes itself as those classes do, and reads back from what it writes.
func TestIntervalTypes(t *testing.T) {
	for in, want := range map[string]string{
		"INTERVAL YEAR":                            "INTERVAL YEAR(2)",
		"interval year(4)":                         "INTERVAL YEAR(4)",
		"INTERVAL YEAR TO MONTH":                   "INTERVAL YEAR(2) TO MONTH",
		"INTERVAL YEAR(1) TO MONTH NOT NULL":       "INTERVAL YEAR(1) TO MONTH NOT NULL",
		"INTERVAL MONTH":                           "INTERVAL MONTH",
		"INTERVAL DAY":                             "INTERVAL DAY(2)",
		"INTERVAL DAY(6)":                          "INTERVAL DAY(6)",
		"INTERVAL DAY TO HOUR":                     "INTERVAL DAY(2) TO HOUR",
		"INTERVAL DAY(3) TO MINUTE":                "INTERVAL DAY(3) TO MINUTE",
		"INTERVAL DAY TO SECOND":                   "INTERVAL DAY(2) TO SECOND(6)",
		"INTERVAL DAY(1) TO SECOND(0)":             "INTERVAL DAY(1) TO SECOND(0)",
		"INTERVAL HOUR":                            "INTERVAL HOUR",
		"INTERVAL HOUR TO MINUTE":                  "INTERVAL HOUR TO MINUTE",
		"INTERVAL HOUR TO SECOND(9)":               "INTERVAL HOUR TO SECOND(9)",
		"INTERVAL MINUTE":                          "INTERVAL MINUTE",
		"INTERVAL MINUTE TO SECOND":                "INTERVAL MINUTE TO SECOND(6)",
		"INTERVAL SECOND":                          "INTERVAL SECOND(6)",
		"INTERVAL SECOND(3)":                       "INTERVAL SECOND(3)",
		"ARRAY<INTERVAL DAY TO HOUR NOT NULL>":     "ARRAY<INTERVAL DAY(2) TO HOUR NOT NULL>",
		"ROW<d INTERVAL MINUTE, m INTERVAL MONTH>": "ROW<`d` INTERVAL MINUTE, `m` INTERVAL MONTH>",
	} {
		ty, err := ParseType(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := ty.String(); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
		back, err := ParseType(ty.String())
		if err != nil || !back.Equal(ty) || back.NotNull != ty.NotNull {
			t.Errorf("%s: %s reads back as %v (%v)", in, ty, back, err)
		}
	}
	if TypeInterval.IsSingleFieldInterval() || TypeInterval.String() != "INTERVAL DAY(2) TO SECOND(3)" {
		t.Errorf("TypeInterval is %s", TypeInterval)
	}
	for _, s := range []string{"INTERVAL YEAR", "INTERVAL MONTH", "INTERVAL DAY", "INTERVAL HOUR", "INTERVAL MINUTE", "INTERVAL SECOND(0)"} {
		if ty, _ := ParseType(s); !ty.IsSingleFieldInterval() {
			t.Errorf("%s is a single field", s)
		}
	}
	for _, s := range []string{"INTERVAL YEAR TO MONTH", "INTERVAL DAY TO HOUR", "INTERVAL MINUTE TO SECOND", "BIGINT"} {
		if ty, _ := ParseType(s); ty.IsSingleFieldInterval() {
			t.Errorf("%s is no single field", s)
		}
	}
	for in, msg := range map[string]string{
		"INTERVAL YEAR(0)":           "the year precision must be 1..4",
		"INTERVAL YEAR(5) TO MONTH":  "the year precision must be 1..4",
		"INTERVAL DAY(7)":            "the day precision must be 1..6",
		"INTERVAL DAY TO SECOND(10)": "INTERVAL DAY TO SECOND(10): the fractional precision must be 0..9",
		"INTERVAL SECOND(10)":        "INTERVAL SECOND(10): the fractional precision",
		"INTERVAL MONTH(2)":          "only YEAR(p), DAY(p) and SECOND(p) take a precision",
		"INTERVAL HOUR(2) TO MINUTE": "only YEAR(p), DAY(p) and SECOND(p)",
		"INTERVAL YEAR TO MONTH(2)":  "only YEAR(p), DAY(p) and SECOND(p)",
		"INTERVAL SECOND TO MINUTE":  "is not an interval type",
		"INTERVAL YEAR TO DAY":       "is not an interval type",
		"INTERVAL DAY TO":            "expected a field after TO",
		"INTERVAL WEEK":              "INTERVAL needs YEAR, MONTH, DAY, HOUR, MINUTE or SECOND",
		"INTERVAL SECOND(1, 2)":      "only YEAR(p), DAY(p) and SECOND(p)",
	} {
		if _, err := ParseType(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want %q", in, err, msg)
		}
	}
}

// The common type of two intervals spans both: DAY and HOUR make DAY TO
// HOUR; MINUTE TO SECOND(3) and HOUR make HOUR TO SECOND(3); YEAR(3) and
// MONTH make YEAR(3) TO MONTH.
func TestCommonInterval(t *testing.T) {
	for _, c := range [][3]string{
		{"INTERVAL DAY", "INTERVAL HOUR", "INTERVAL DAY(2) TO HOUR"},
		{"INTERVAL MINUTE TO SECOND(3)", "INTERVAL HOUR", "INTERVAL HOUR TO SECOND(3)"},
		{"INTERVAL DAY(4)", "INTERVAL SECOND(1)", "INTERVAL DAY(4) TO SECOND(1)"},
		{"INTERVAL YEAR(3)", "INTERVAL MONTH", "INTERVAL YEAR(3) TO MONTH"},
		{"INTERVAL HOUR", "INTERVAL HOUR", "INTERVAL HOUR"},
	} {
		a, _ := ParseType(c[0])
		b, _ := ParseType(c[1])
		if got := CommonInterval(a, b).String(); got != c[2] {
			t.Errorf("%s, %s: %s, want %s", c[0], c[1], got, c[2])
		}
		if got := CommonInterval(b, a).String(); got != c[2] {
			t.Errorf("%s, %s: %s, want %s", c[1], c[0], got, c[2])
		}
	}
}
