package kafka_test

import (
	"io"
	"strings"
	"testing"

	_ "github.com/streamsql/streamsql/connectors/all"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/engine/enginetest"
)

// A table declared only to be written needs no consumer group: declaring
// it succeeds, and reading it names the missing option.
func TestSinkOnlyTableNeedsNoGroup(t *testing.T) {
	s := engine.NewSession(io.Discard)
	enginetest.Exec(t, s, `CREATE TABLE out_t (a BIGINT) WITH ('connector' = 'kafka', 'topic' = 't',
  'properties.bootstrap.servers' = 'localhost:1', 'format' = 'json')`)
	_, err := enginetest.TryExec(s, "SELECT * FROM out_t")
	if err == nil || !strings.Contains(err.Error(), "'properties.group.id' is required") {
		t.Fatalf("reading a table without a group: %v, want the missing-group error", err)
	}
}
