package engine

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/parser"
)

// HELP lists every registered connector (kafka, upsert-kafka, mysql and
// nexmark were missing from the hand-written list).
func TestHelpListsEveryConnector(t *testing.T) {
	st, err := parser.Parse("HELP;")
	if err != nil {
		t.Fatal(err)
	}
	res, err := NewSession(io.Discard).Execute(context.Background(), st[0])
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(res.Text, "Connectors: ")
	if i < 0 {
		t.Fatalf("HELP has no connector list:\n%s", res.Text)
	}
	line := res.Text[i:]
	for _, want := range []string{"blackhole", "datagen", "filesystem", "kafka", "mysql", "nexmark", "print", "upsert-kafka", "values"} {
		if !strings.Contains(line, want) {
			t.Errorf("HELP's connector list lacks %s: %s", want, line)
		}
	}
}
