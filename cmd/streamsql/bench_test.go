package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/config"
)

// Every option of --profile flink-reference is a known option with a
// valid value, and the profile turns on what Flink's reference runs use.
func TestFlinkReferenceProfileOptions(t *testing.T) {
	c := config.New()
	for _, kv := range flinkReference {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("%q is not key=value", kv)
		}
		if err := c.Set(k, v); err != nil {
			t.Fatalf("%s: %v", kv, err)
		}
	}
	if c.Get("state.backend.type") != "pebble" || c.Duration("execution.checkpointing.interval") <= 0 ||
		!c.Bool("table.exec.mini-batch.enabled") || !c.Bool("table.optimizer.distinct-agg.split.enabled") {
		t.Fatalf("the profile lacks Pebble, checkpoints, mini-batch or split distinct aggregation: %v", flinkReference)
	}
}

func TestBenchUnknownProfile(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runBench([]string{"nexmark", "--query", "q1", "--profile", "fast"}, &out, &errb); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(errb.String(), `unknown profile "fast"`) {
		t.Fatalf("stderr: %s", errb.String())
	}
}
