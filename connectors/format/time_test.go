package format

import (
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

// TIME columns in json and csv: read as HH:mm:ss[.f] (cut to the
// column's precision, as CAST does), written with the column's digits,
// and read back the same. 12:34:56.789 is 45296789 ms after midnight.
func TestTimeColumns(t *testing.T) {
	cs := []connectors.Column{{Name: "id", Type: types.TypeInt}, {Name: "t", Type: types.TimeType(3)}, {Name: "t0", Type: types.TimeType(0)}}
	if !Readable(types.TimeType(3), false) || !Readable(types.TimeType(3), true) || !Readable(types.TypeIntervalYM, true) || !Readable(types.TypeInterval, false) {
		t.Fatal("Readable: TIME and the INTERVAL types yes")
	}
	const ns = 45296789 * int64(1e6)
	row := types.Row{types.NewInt(1), types.NewTime(ns), types.NewTime(ns / 1e9 * 1e9)}

	js := string(NewJSONEncoder(cs).Append(nil, row))
	if js != `{"id":1,"t":"12:34:56.789","t0":"12:34:56"}` {
		t.Errorf("json: %s", js)
	}
	got := make(types.Row, 3)
	if err := NewJSONDecoder(cs, nil, JSONOptions{}).Decode([]byte(`{"id":1,"t":"12:34:56.7891","t0":"12:34:56.9"}`), got); err != nil {
		t.Fatal(err)
	}
	if !types.RowsEqual(got, row) {
		t.Errorf("json read %v, want %v", got, row)
	}

	csv := string(NewCSVEncoder(cs, DefaultCSVOptions()).Append(nil, row))
	if csv != `1,12:34:56.789,12:34:56` {
		t.Errorf("csv: %s", csv)
	}
	got = make(types.Row, 3)
	if err := NewCSVDecoder(cs, nil, DefaultCSVOptions()).Decode([]byte(csv), got); err != nil {
		t.Fatal(err)
	}
	if !types.RowsEqual(got, row) {
		t.Errorf("csv read %v, want %v", got, row)
	}

	got = make(types.Row, 3)
	if err := NewJSONDecoder(cs, nil, JSONOptions{}).Decode([]byte(`{"id":1,"t":"25:00:00"}`), got); err == nil {
		t.Error("25:00:00 read as a TIME")
	}
}
