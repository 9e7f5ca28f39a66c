package window

import (
	"testing"

	"github.com/streamsql/streamsql/operators"
)

// Rows are (k, window_start, window_end, v); the join keys are k,
// window_start and window_end.
func wjSpec(jt operators.JoinType) WindowJoinSpec {
	return WindowJoinSpec{
		Join:    operators.JoinSpec{Type: jt, LeftKeys: []int{0, 1, 2}, RightKeys: []int{0, 1, 2}, LeftWidth: 4, RightWidth: 4},
		LeftEnd: 2, RightEnd: 2,
	}
}

// TestWindowJoin: windows [0, 10) and [10, 20) s. A window fires when the
// watermark reaches window_end - 1 ms; rows of a fired window are late.
func TestWindowJoin(t *testing.T) {
	for _, tc := range []struct {
		jt            operators.JoinType
		first, second []string
	}{
		{operators.InnerJoin,
			[]string{"+I[1, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, l1, 1, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, r1]"},
			nil},
		{operators.FullJoin,
			[]string{
				"+I[1, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, l1, 1, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, r1]",
				"+I[2, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, l2, NULL, NULL, NULL, NULL]",
				"+I[NULL, NULL, NULL, NULL, 3, 1970-01-01 00:00:00.000, 1970-01-01 00:00:10.000, r3]"},
			[]string{"+I[NULL, NULL, NULL, NULL, 1, 1970-01-01 00:00:10.000, 1970-01-01 00:00:20.000, r1b]"}},
	} {
		op := NewWindowJoin(wjSpec(tc.jt))
		c, _ := tjOpen(t, op)
		tjPush(t, op, c, 0, joinRow(1, tjTS(0), tjTS(10), "l1"), joinRow(2, tjTS(0), tjTS(10), "l2"))
		tjPush(t, op, c, 1, joinRow(1, tjTS(0), tjTS(10), "r1"), joinRow(3, tjTS(0), tjTS(10), "r3"),
			joinRow(1, tjTS(10), tjTS(20), "r1b"))
		// 9.998 < 10 - 0.001: nothing fires yet.
		tjExpect(t, tc.jt.String()+" wm 9.998", tjWM(t, op, c, 9.998))
		// Window [0, 10) fires at 9.999: keys 1, 2, 3 in key order.
		tjExpect(t, tc.jt.String()+" wm 9.999", tjWM(t, op, c, 9.999), tc.first...)
		// A row of the fired window is late and dropped.
		tjPush(t, op, c, 0, joinRow(3, tjTS(0), tjTS(10), "late"))
		tjExpect(t, tc.jt.String()+" wm 30", tjWM(t, op, c, 30), tc.second...)
	}
}
