package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestDocsAreGenerated(t *testing.T) {
	got, err := os.ReadFile("../docs/options.md")
	if err != nil {
		t.Fatal(err)
	}
	// The file goes on with the connectors' options (cmd/streamsql tests
	// the whole of it).
	if !strings.HasPrefix(string(got), Markdown()) {
		t.Fatal("docs/options.md is stale: run `go run ./cmd/streamsql options > docs/options.md`")
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"10 s": 10 * time.Second, "500 ms": 500 * time.Millisecond, "1 min": time.Minute,
		"2 h": 2 * time.Hour, "1 d": 24 * time.Hour, "250": 250 * time.Millisecond, "1m30s": 90 * time.Second,
	} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ten s", "5 parsecs", "-3 s"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestSetChecksKeysAndValues(t *testing.T) {
	c := New()
	if err := c.Set("parallelism.default", "4"); err != nil || c.Int("parallelism.default") != 4 {
		t.Fatalf("set parallelism: %v", err)
	}
	for _, bad := range [][2]string{
		{"parallelism.default", "0"}, {"parallelism.default", "x"}, {"nope", "1"},
		{"sql-client.execution.result-mode", "pretty"}, {"table.exec.mini-batch.enabled", "yes"},
		{"table.exec.mini-batch.size", "-1"}, {"table.exec.mini-batch.allow-latency", "soon"},
	} {
		if err := c.Set(bad[0], bad[1]); err == nil {
			t.Errorf("Set(%q, %q) accepted", bad[0], bad[1])
		}
	}
	note, err := c.SetNote("sql-client.display.show-line-numbers", "true")
	if err != nil || note == "" {
		t.Fatalf("a pending option must say it has no effect yet: %q %v", note, err)
	}
	if err := c.Reset(""); err != nil || c.Int("parallelism.default") != 1 {
		t.Fatalf("reset: %v", err)
	}
}

// The options Flink scripts set are accepted: enums in any case, as in
// Flink, and those that change nothing here say so.
func TestFlinkScriptOptions(t *testing.T) {
	c := New()
	if err := c.Set("sql-client.execution.result-mode", "TABLEAU"); err != nil || c.Get("sql-client.execution.result-mode") != "tableau" {
		t.Fatalf("result-mode TABLEAU: %v, %q", err, c.Get("sql-client.execution.result-mode"))
	}
	for _, kv := range [][2]string{
		{"execution.runtime-mode", "batch"}, {"execution.attached", "true"},
		{"sql-client.verbose", "true"}, {"sql-client.display.print-time-cost", "true"},
	} {
		note, err := c.SetNote(kv[0], kv[1])
		if err != nil || note == "" {
			t.Errorf("SET %s = %s: note %q, err %v; want a note that it changes nothing", kv[0], kv[1], note, err)
		}
	}
	if note, err := c.SetNote("execution.runtime-mode", "STREAMING"); err != nil || note != "" {
		t.Errorf("runtime-mode streaming: note %q, err %v", note, err)
	}
	if note, err := c.SetNote("table.dml-sync", "true"); err != nil || note != "" || !c.Bool("table.dml-sync") {
		t.Errorf("table.dml-sync is honoured: note %q, err %v", note, err)
	}
	if err := c.Set("table.sql-dialect", "hive"); err == nil {
		t.Errorf("the hive dialect was accepted")
	}
}

// ParseBool is the one boolean parser: Flink reads 'TRUE' and ' false '
// as booleans; before it, SET and the values connector refused 'TRUE'
// while the formats took it.
func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{"true": true, "TRUE": true, "True": true, " false ": false, "FALSE": false} {
		got, err := ParseBool(in)
		if err != nil || got != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yes", "1", "t"} {
		if _, err := ParseBool(bad); err == nil {
			t.Errorf("ParseBool(%q) accepted", bad)
		}
	}
	c := New()
	if err := c.Set("state.checkpoints.start-fresh", "TRUE"); err != nil || !c.Bool("state.checkpoints.start-fresh") {
		t.Fatalf("SET 'TRUE': %v, read back %v", err, c.Bool("state.checkpoints.start-fresh"))
	}
	if err := c.Set("state.checkpoints.start-fresh", "on"); err == nil {
		t.Fatal("SET 'on' accepted")
	}
}

// table.local-time-zone takes Flink's zone ids and refuses anything else
// with an error naming the option; the value is the session zone.
func TestLocalTimeZone(t *testing.T) {
	c := New()
	if c.Location() != time.Local {
		t.Fatalf("'default' is the system zone, got %v", c.Location())
	}
	for in, off := range map[string]int{"UTC": 0, "Asia/Shanghai": 8 * 3600, "GMT+08:00": 8 * 3600, "UTC-8": -8 * 3600, "+05:30": 5*3600 + 1800, "GMT-0930": -(9*3600 + 1800)} {
		if err := c.Set("table.local-time-zone", in); err != nil {
			t.Fatalf("SET %s: %v", in, err)
		}
		_, got := time.Date(2021, 1, 15, 0, 0, 0, 0, c.Location()).Zone()
		if got != off {
			t.Errorf("%s: offset %d in January, want %d", in, got, off)
		}
	}
	for _, bad := range []string{"Mars/Base", "PST", "CST", "Local", "", "GMT+19", "+8:7", "asia/shanghai x"} {
		err := c.Set("table.local-time-zone", bad)
		if err == nil || !strings.Contains(err.Error(), "'table.local-time-zone'") {
			t.Errorf("SET table.local-time-zone = %q: %v, want an error naming the option", bad, err)
		}
	}
}
