package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/types"
)

// INTERVAL columns in the json and csv formats, as Flink's converters
// have them: an interval is the number underneath it in Flink, a
// year-month interval an INT of months and a day-time interval a BIGINT
// of milliseconds, written as a JSON number or a CSV field and read back
// from a number or from text holding one (surrounding spaces allowed, as
// Flink trims them). Sub-millisecond digits of a day-time interval are
// dropped on writing, toward zero, as Flink keeps none.

// intervalFromText reads the months or milliseconds of an interval
// column.
func intervalFromText(s []byte, c *column) (types.Value, error) {
	text := strings.TrimSpace(string(s))
	if c.t.ID == types.IntervalYM {
		n, err := strconv.ParseInt(text, 10, 32)
		if err != nil {
			return types.NullValue, fieldError(c, fmt.Errorf("'%s' is not a number of months (an INT) for %s", s, c.t))
		}
		return types.NewIntervalYM(n), nil
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n > math.MaxInt64/1_000_000 || n < math.MinInt64/1_000_000 {
		return types.NullValue, fieldError(c, fmt.Errorf("'%s' is not a number of milliseconds (a BIGINT) in the range of %s", s, c.t))
	}
	return types.NewInterval(time.Duration(n) * time.Millisecond), nil
}

// appendIntervalNumber writes an interval as its months or milliseconds.
func appendIntervalNumber(dst []byte, v types.Value) []byte {
	if v.Kind() == types.KindIntervalYM {
		return strconv.AppendInt(dst, v.Months(), 10)
	}
	return strconv.AppendInt(dst, int64(v.Interval()/time.Millisecond), 10)
}
