package connectors_test

import (
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	_ "github.com/streamsql/streamsql/connectors/all"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/types"
)

type fakeConnector struct{}

func (fakeConnector) Name() string { return "fake" }
func (fakeConnector) Options() []connectors.OptionDef {
	return []connectors.OptionDef{
		{Key: "flag", Kind: config.Bool, Default: "false"},
		{Key: "wait", Kind: config.Duration, Default: "1 s"},
		{Key: "n", Kind: config.Int, Min: 1},
		{Key: "mode", Kind: config.Enum, Enum: []string{"a", "b"}},
		{Key: "f.#.d", Prefix: true, Kind: config.Duration},
	}
}

// CheckOptions validates each value against its declared kind, with the
// shared parsers.
func TestCheckOptionsByKind(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		err  string // "" for valid
	}{
		{map[string]string{"flag": "TRUE"}, ""},
		{map[string]string{"flag": "False"}, ""},
		{map[string]string{"flag": "yes"}, "option 'flag' must be 'true' or 'false', got 'yes'"},
		{map[string]string{"wait": "1500"}, ""},
		{map[string]string{"wait": "2 min"}, ""},
		{map[string]string{"wait": "soon"}, "option 'wait': 'soon' is not a duration"},
		{map[string]string{"n": "3"}, ""},
		{map[string]string{"n": "0"}, "option 'n' must be a positive integer, got '0'"},
		{map[string]string{"mode": "B"}, ""},
		{map[string]string{"mode": "c"}, "option 'mode' must be 'a' or 'b', got 'c'"},
		{map[string]string{"f.x.d": "10"}, ""},
		{map[string]string{"f.x.d": "x"}, "option 'f.x.d': 'x' is not a duration"},
	} {
		err := connectors.CheckOptions(fakeConnector{}, c.opts)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.opts, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: got %v, want %q", c.opts, err, c.err)
		}
	}
}

// The typed readers: a bare number of a duration is milliseconds (Flink's
// rule; the mysql connector read it as seconds before), booleans ignore
// case (values and lookup refused 'TRUE' before), absent gives the default.
func TestTypedReaders(t *testing.T) {
	o := map[string]string{"d": "1500", "b": "TRUE", "i": "7"}
	if d, err := connectors.Duration(o, "d", 0); err != nil || d != 1500*time.Millisecond {
		t.Errorf("Duration = %v, %v; want 1.5s", d, err)
	}
	if d, _ := connectors.Duration(o, "absent", time.Second); d != time.Second {
		t.Errorf("Duration default = %v", d)
	}
	if b, err := connectors.Bool(o, "b", false); err != nil || !b {
		t.Errorf("Bool = %v, %v", b, err)
	}
	if b, _ := connectors.Bool(o, "absent", true); !b {
		t.Error("Bool default lost")
	}
	if n, err := connectors.Int(o, "i", 0, 1); err != nil || n != 7 {
		t.Errorf("Int = %v, %v", n, err)
	}
	if _, err := connectors.Int(map[string]string{"i": "-1"}, "i", 0, 0); err == nil || !strings.Contains(err.Error(), "non-negative") {
		t.Errorf("Int(-1, min 0) = %v", err)
	}
}

// Every built-in connector's declared default is a valid value of its
// declared kind, so the docs and the code cannot disagree on it.
func TestDeclaredDefaultsParse(t *testing.T) {
	for _, name := range connectors.Names() {
		c, _ := connectors.Lookup(name)
		for _, d := range c.Options() {
			if d.Default == "" || d.Prefix {
				continue
			}
			if err := connectors.CheckOptions(onlyOption{d}, map[string]string{d.Key: d.Default}); err != nil {
				t.Errorf("%s: default of '%s': %v", name, d.Key, err)
			}
		}
	}
}

type onlyOption struct{ d connectors.OptionDef }

func (o onlyOption) Name() string                    { return "one" }
func (o onlyOption) Options() []connectors.OptionDef { return []connectors.OptionDef{o.d} }

// The connectors that parsed by hand before take the shared forms now:
// the values connector refused 'TRUE', lookup refused 'FALSE', datagen's
// max-past refused Flink's '5 s', Kafka's transaction timeout took only a
// bare number.
func TestConnectorsTakeSharedForms(t *testing.T) {
	env := &connectors.Env{Session: dataflow.NewShared()}
	tbl := func(opts map[string]string) *connectors.Table {
		return &connectors.Table{Name: "t", Columns: []connectors.Column{{Name: "ts", Type: types.TypeTimestamp}}, Options: opts}
	}
	values, _ := connectors.Lookup("values")
	if _, err := values.(connectors.SinkConnector).NewSink(tbl(map[string]string{"connector": "values", "sink-insert-only": "TRUE"}), env); err != nil {
		t.Errorf("values 'sink-insert-only' = 'TRUE': %v", err)
	}
	if _, err := values.(connectors.SourceConnector).NewScan(tbl(map[string]string{"connector": "values", "bounded": "FALSE"}), env); err == nil || !strings.Contains(err.Error(), "values tables are bounded") {
		t.Errorf("values 'bounded' = 'FALSE': %v", err)
	}
	lo, err := connectors.ParseLookupOptions(map[string]string{"lookup.cache": "PARTIAL", "lookup.partial-cache.cache-missing-key": "FALSE", "lookup.partial-cache.expire-after-write": "90000"})
	if err != nil || lo.CacheMissingKey || lo.ExpireAfterWrite != 90*time.Second {
		t.Errorf("lookup options: %+v, %v", lo, err)
	}
	datagen, _ := connectors.Lookup("datagen")
	for _, v := range []string{"5 s", "5000", "5s"} {
		if _, err := datagen.(connectors.SourceConnector).NewScan(tbl(map[string]string{"connector": "datagen", "fields.ts.max-past": v}), env); err != nil {
			t.Errorf("datagen max-past '%s': %v", v, err)
		}
	}
	kafka, _ := connectors.Lookup("kafka")
	for v, ok := range map[string]bool{"60 s": true, "60000": true, "0": false, "soon": false} {
		_, err := kafka.(connectors.SinkConnector).NewSink(&connectors.Table{Name: "k", Columns: []connectors.Column{{Name: "a", Type: types.TypeInt}}, Options: map[string]string{
			"connector": "kafka", "topic": "t", "properties.bootstrap.servers": "127.0.0.1:1", "format": "json", "properties.transaction.timeout.ms": v}}, env)
		if (err == nil) != ok {
			t.Errorf("kafka transaction timeout '%s': %v", v, err)
		}
	}
}
