package format

import (
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

// INTERVAL columns in json and csv, as Flink's converters have them: a
// year-month interval is an INT of months, a day-time interval a BIGINT
// of milliseconds. 1 day 2 h 3 min 4.5 s is 93784500 ms; -1 year 6
// months is -18 months; 1.5 ms written is 1 (sub-milliseconds dropped).
func TestIntervalColumns(t *testing.T) {
	dt := types.DayTimeIntervalType(types.ResDayToSecond, 2, 3)
	ym := types.YearMonthIntervalType(types.ResYearToMonth, 2)
	arr := types.ArrayType(types.YearMonthIntervalType(types.ResMonth, 2))
	cs := []connectors.Column{{Name: "d", Type: dt}, {Name: "m", Type: ym}, {Name: "a", Type: arr}}
	d := 26*time.Hour + 3*time.Minute + 4500*time.Millisecond
	row := types.Row{types.NewInterval(d), types.NewIntervalYM(-18), types.NewArray([]types.Value{types.NewIntervalYM(3), types.NullValue})}

	js := string(NewJSONEncoder(cs).Append(nil, row))
	if js != `{"d":93784500,"m":-18,"a":[3,null]}` {
		t.Errorf("json: %s", js)
	}
	got := make(types.Row, 3)
	if err := NewJSONDecoder(cs, nil, JSONOptions{}).Decode([]byte(js), got); err != nil {
		t.Fatal(err)
	}
	if !types.RowsEqual(got, row) {
		t.Errorf("json read %v, want %v", got, row)
	}
	// Text holding a number reads too, spaces trimmed, as Flink's
	// Long.parseLong(text.trim()).
	got = make(types.Row, 3)
	if err := NewJSONDecoder(cs, nil, JSONOptions{}).Decode([]byte(`{"d":" 93784500 ","m":"-18","a":["3",null]}`), got); err != nil {
		t.Fatal(err)
	}
	if !types.RowsEqual(got, row) {
		t.Errorf("json read text %v, want %v", got, row)
	}

	csv := string(NewCSVEncoder(cs, DefaultCSVOptions()).Append(nil, row))
	if csv != `93784500,-18,3;` {
		t.Errorf("csv: %s", csv)
	}
	got = make(types.Row, 3)
	if err := NewCSVDecoder(cs, nil, DefaultCSVOptions()).Decode([]byte(csv), got); err != nil {
		t.Fatal(err)
	}
	if !types.RowsEqual(got, row) {
		t.Errorf("csv read %v, want %v", got, row)
	}
	if err := CheckCSVColumns(cs); err != nil {
		t.Errorf("CheckCSVColumns: %v", err)
	}

	sub := types.Row{types.NewInterval(1500 * time.Microsecond), types.NewIntervalYM(0), types.NullValue}
	if js := string(NewJSONEncoder(cs).Append(nil, sub)); js != `{"d":1,"m":0,"a":null}` {
		t.Errorf("json of 1.5 ms: %s", js)
	}

	// Not a number: an error naming the column and the type; months past
	// the INT range are refused, as Flink's Integer.parseInt does.
	for _, rec := range []string{`{"d":"+1 02:03:04.500"}`, `{"d":1.5}`, `{"m":2147483648}`} {
		got = make(types.Row, 3)
		err := NewJSONDecoder(cs, nil, JSONOptions{}).Decode([]byte(rec), got)
		if err == nil || !strings.Contains(err.Error(), "column '") || !strings.Contains(err.Error(), "INTERVAL") {
			t.Errorf("%s: error %v", rec, err)
		}
	}
}
