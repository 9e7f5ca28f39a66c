package planner

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/parser"
)

// EXPLAIN shows a hinted table's options, but never a secret's value.
func TestExplainHintsMasksSecrets(t *testing.T) {
	e := &TableEntry{Name: "orders", hints: []parser.Option{{Key: "password", Value: "hunter2"}, {Key: "sink.max-retries", Value: "5"}}}
	got := e.explainHints()
	if want := ", dynamic options: {password=******, sink.max-retries=5}"; got != want {
		t.Errorf("explainHints() = %q, want %q", got, want)
	}
	if strings.Contains(got, "hunter2") {
		t.Errorf("the secret shows: %q", got)
	}
}
