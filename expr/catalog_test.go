package expr

import (
	"os"
	"strings"
	"testing"
)

func TestFunctionsDocIsGenerated(t *testing.T) {
	got, err := os.ReadFile("../docs/functions.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != FunctionsMarkdown() {
		t.Fatal("docs/functions.md is stale: run `go run ./cmd/streamsql functions > docs/functions.md`")
	}
}

// TestCatalogIsWellFormed: every entry has a known category, a signature,
// a description and an example; names are unique per kind; no function is
// both in the catalog and among the unsupported ones.
func TestCatalogIsWellFormed(t *testing.T) {
	cats := map[string]bool{}
	for _, c := range categoryOrder {
		cats[c] = true
	}
	seen := map[string]bool{}
	for _, f := range catalog {
		if !cats[f.Category] || f.Sig == "" || f.Doc == "" || f.Example == "" {
			t.Errorf("%s: incomplete entry %+v", f.Name, f)
		}
		key := f.Kind.String() + " " + f.Name
		if seen[key] {
			t.Errorf("%s listed twice", key)
		}
		seen[key] = true
		if _, ok := Unsupported(f.Name); ok && f.Kind != OperatorForm {
			t.Errorf("%s is both a function and unsupported", f.Name)
		}
		if strings.Contains(f.Doc, "\n") || strings.Contains(f.Note, "\n") {
			t.Errorf("%s: the description must be one line", f.Name)
		}
	}
	for _, n := range UnsupportedNames() {
		if _, ok := registry[strings.ToLower(n)]; ok {
			t.Errorf("%s is unsupported but the binder resolves it", n)
		}
	}
}
