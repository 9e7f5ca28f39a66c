package mysql

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

// A TIME column: a MySQL TIME holds it, and the driver's text reads as a
// time of day. MySQL's TIME also holds spans beyond a day and negative
// ones (-838:59:59 to 838:59:59), which are no time of day: refused.
func TestTimeColumn(t *testing.T) {
	if err := compatible(types.TimeType(3), mysqlColumn{dataType: "time", columnType: "time(3)"}); err != nil {
		t.Error(err)
	}
	if err := compatible(types.TimeType(3), mysqlColumn{dataType: "datetime", columnType: "datetime"}); err == nil {
		t.Error("a DATETIME column accepted for a TIME")
	}
	v, err := fromMySQL([]byte("12:34:56.789000"), types.TimeType(3))
	if err != nil || v.TimeOfDay() != 45296789*1e6 {
		t.Errorf("12:34:56.789000 = %v, %v", v, err)
	}
	for _, bad := range []string{"838:59:59", "-01:00:00"} {
		if v, err := fromMySQL([]byte(bad), types.TimeType(0)); err == nil {
			t.Errorf("%s read as %v", bad, v)
		}
	}
}
