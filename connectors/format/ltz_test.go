package format

import (
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

// A TIMESTAMP_LTZ field is an instant: the wall clock with 'Z' or an
// offset, or without either read in UTC, as Flink's json and csv formats
// read it. Each text's instant is worked out by hand (epoch seconds of
// 2024-01-01 00:00:00 UTC are 1704067200).
func TestTimestampLTZText(t *testing.T) {
	col := makeColumns([]connectors.Column{{Name: "t", Type: types.TimestampLTZType(3)}})[0]
	const base = int64(1704067200) * 1e9
	for in, want := range map[string]int64{
		"2024-01-01 00:00:00":            base,
		"2024-01-01 00:00:00Z":           base,
		"2024-01-01T00:00:00.000Z":       base,
		"2024-01-01T08:00:00+08:00":      base,
		"2024-01-01 08:00:00+0800":       base,
		"2023-12-31T19:00:00.123-05:00":  base + 123e6,
		"2024-01-01T05:30:00.1239+05:30": base + 123e6, // truncated to 3 digits
	} {
		v, err := fromText([]byte(in), &col)
		if err != nil || v.Timestamp() != want {
			t.Errorf("%q = %v %v, want instant %d", in, v, err, want)
		}
	}
	for _, bad := range []string{"2024-01-01 00:00:00+8", "2024-01-01 00:00:00+25:00", "2024-01-01 00:00:00 PST", "yesterday"} {
		if v, err := fromText([]byte(bad), &col); err == nil {
			t.Errorf("%q was read as %v", bad, v)
		}
	}
	// Written in UTC with its 'Z' by both formats, whatever the session zone.
	cs := []connectors.Column{{Name: "t", Type: types.TimestampLTZType(3)}}
	row := types.Row{types.NewTimestamp(base + 5e8)}
	if got := string(NewJSONEncoder(cs).Append(nil, row)); got != `{"t":"2024-01-01 00:00:00.500Z"}` {
		t.Errorf("json: %s", got)
	}
	if got := string(NewCSVEncoder(cs, DefaultCSVOptions()).Append(nil, row)); got != `2024-01-01 00:00:00.500Z` {
		t.Errorf("csv: %s", got)
	}
}
