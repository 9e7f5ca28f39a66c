package postgres

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

// A TIME column: PostgreSQL's time without time zone holds it, and its
// text reads as a time of day. PostgreSQL allows 24:00:00, which is no
// time of day below midnight: refused.
func TestTimeColumn(t *testing.T) {
	if err := compatible(types.TimeType(3), pgColumn{dataType: "time without time zone"}); err != nil {
		t.Error(err)
	}
	if err := compatible(types.TimeType(3), pgColumn{dataType: "time with time zone"}); err == nil {
		t.Error("a timetz column accepted for a TIME")
	}
	v, err := fromText("07:08:09.25", types.TimeType(3))
	if err != nil || v.TimeOfDay() != (7*3600+8*60+9)*1e9+25e7 {
		t.Errorf("07:08:09.25 = %v, %v", v, err)
	}
	if v, err := fromText("24:00:00", types.TimeType(0)); err == nil {
		t.Errorf("24:00:00 read as %v", v)
	}
}
