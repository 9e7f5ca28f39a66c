package kafka

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// decodeAll runs a decoder over values and formats the changes.
func decodeAll(t *testing.T, tbl *connectors.Table, values ...string) ([]string, []error) {
	t.Helper()
	newDec, _, err := newValueDecoder(tbl, tbl.Options["format"])
	if err != nil {
		t.Fatal(err)
	}
	d := newDec()
	b := newChunkBuilder(len(tbl.Columns), 8)
	var errs []error
	for _, v := range values {
		if b.full() {
			t.Fatal("test chunk full")
		}
		if err := d.decode([]byte(v), b); err != nil {
			errs = append(errs, err)
		}
	}
	var out []string
	for _, ch := range b.take().Changes {
		out = append(out, dyntable.FormatChange(ch, tbl.Types()))
	}
	return out, errs
}

func fmtTable(format string, opts ...string) *connectors.Table {
	o := map[string]string{"format": format}
	for i := 0; i+1 < len(opts); i += 2 {
		o[opts[i]] = opts[i+1]
	}
	return &connectors.Table{Name: "t", Options: o, Columns: []connectors.Column{
		{Name: "id", Type: types.TypeBigInt}, {Name: "name", Type: types.TypeString}}}
}

// TestDebeziumJSON: Flink's mapping, c/r → +I, u → -U before then +U
// after, d → -D before; a failed event adds nothing.
func TestDebeziumJSON(t *testing.T) {
	tbl := fmtTable("debezium-json")
	got, errs := decodeAll(t, tbl,
		`{"before": null, "after": {"id": 1, "name": "a"}, "op": "c", "source": {"db": "x"}, "ts_ms": 1}`,
		`{"before": null, "after": {"id": 2, "name": "b"}, "op": "r"}`,
		`{"before": {"id": 1, "name": "a"}, "after": {"id": 1, "name": "A"}, "op": "u"}`,
		`{"before": {"id": 2, "name": "b"}, "after": null, "op": "d"}`,
		`{"before": {"id": 1, "name": "a"}, "after": {"id": "x"}, "op": "u"}`, // bad after: nothing
		`{"before": null, "after": {"id": 3}, "op": "u"}`,                     // update without before
		`{"after": {"id": 3}, "op": "t"}`,                                     // unknown op
	)
	want := []string{"+I[1, a]", "+I[2, b]", "-U[1, a]", "+U[1, A]", "-D[2, b]"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if len(errs) != 3 || !strings.Contains(errs[1].Error(), "REPLICA IDENTITY") || !strings.Contains(errs[2].Error(), "unknown 'op'") {
		t.Fatalf("errors: %v", errs)
	}
	// With the schema envelope.
	tbl = fmtTable("debezium-json", "debezium-json.schema-include", "true")
	got, errs = decodeAll(t, tbl, `{"schema": {"type": "struct"}, "payload": {"before": null, "after": {"id": 7, "name": "s"}, "op": "c"}}`)
	if len(errs) != 0 || strings.Join(got, " ") != "+I[7, s]" {
		t.Fatalf("schema-include: %q %v", got, errs)
	}
	// Without the option, a schema envelope is explained.
	_, errs = decodeAll(t, fmtTable("debezium-json"), `{"schema": {}, "payload": {"op": "c", "after": {"id": 1}}}`)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "debezium-json.schema-include") {
		t.Fatalf("schema without the option: %v", errs)
	}
	if m := (&scan{cmode: newDebeziumDecoder(nil, false).mode()}).ChangelogMode(); m != dyntable.Retract {
		t.Fatalf("debezium-json mode %v", m)
	}
}

// TestCSVValues: a record value is one CSV record; a record whose quote
// is not closed is malformed (it cannot continue in the next record).
func TestCSVValues(t *testing.T) {
	got, errs := decodeAll(t, fmtTable("csv"), `1,a`, `2,"b,c"`, `3,"open`, `x,y`)
	if strings.Join(got, " ") != `+I[1, a] +I[2, b,c]` || len(errs) != 2 || !strings.Contains(errs[0].Error(), "not closed") {
		t.Fatalf("got %q, errors %v", got, errs)
	}
	if _, _, err := newValueDecoder(fmtTable("json", "csv.field-delimiter", ";"), "json"); err == nil {
		t.Fatal("a csv option was accepted with format json")
	}
}
