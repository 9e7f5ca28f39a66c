package main

import (
	"regexp"
	"strings"
	"testing"
)

// The demo explains itself and prints its progress once a second.
func TestDemoOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo for a few seconds")
	}
	var out strings.Builder
	if code := run([]string{"-bills", "2000", "-rate", "1000", "-files"}, &out); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	text := out.String()
	for _, want := range []string{committedNote, "lost=0 duplicated=0 mismatched=0"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	progress := regexp.MustCompile(`(?m)^\s*(\d+)s  produced`).FindAllStringSubmatch(text, -1)
	if len(progress) < 2 {
		t.Fatalf("fewer than two progress lines:\n%s", text)
	}
	seen := map[string]bool{}
	for _, p := range progress {
		if seen[p[1]] {
			t.Errorf("two progress lines for second %s:\n%s", p[1], text)
		}
		seen[p[1]] = true
	}
	if !strings.Contains(mysqlNote, "creates the database streamsql_billing_demo") {
		t.Errorf("the MySQL line does not say it creates the database: %s", mysqlNote)
	}
}
