package filesystem_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/engine/enginetest"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// The raw format reads each line of a file as the one column's value
// (an empty line is an empty string, not skipped) and writes one line per
// row, in 'raw.charset'. The file is written here by hand; the expected
// rows and bytes follow from it.
func TestRawFormatFiles(t *testing.T) {
	in := t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "log.txt"), []byte("GET /a 200\n\nPOST /b, \"x\" 500\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	s := engine.NewSession(&bytes.Buffer{})
	jobs := enginetest.Exec(t, s, fmt.Sprintf(`
CREATE TABLE logs (line STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'raw');
CREATE TABLE latin (line STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'raw', 'raw.charset' = 'ISO-8859-1');
INSERT INTO latin SELECT CONCAT(line, ' é') FROM logs;
`, in, out))
	if err := jobs[len(jobs)-1].Wait(); err != nil {
		t.Fatal(err)
	}
	var written []byte
	files, _ := filepath.Glob(filepath.Join(out, "part-*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, b...)
	}
	lines := strings.Split(strings.TrimSuffix(string(written), "\n"), "\n")
	sort.Strings(lines)
	want := []string{" \xe9", "GET /a 200 \xe9", "POST /b, \"x\" 500 \xe9"}
	if fmt.Sprintf("%q", lines) != fmt.Sprintf("%q", want) {
		t.Fatalf("wrote %q, want %q", lines, want)
	}
	// Read back in the same charset, the rows are the strings written.
	stmts, err := parser.Parse("SELECT line, CHAR_LENGTH(line) FROM latin")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Execute(context.Background(), stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	var q []string
	ts := []types.Type{types.TypeString, types.TypeInt}
	err = r.Query.Run(context.Background(), func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			q = append(q, types.FormatRow(ch.Row, ts, "|"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(q)
	if w := `[ é|2 GET /a 200 é|12 POST /b, "x" 500 é|18]`; fmt.Sprint(q) != w {
		t.Fatalf("read back %v, want %s", q, w)
	}
}

// A query that reads no column of a raw table (COUNT(*)) still counts
// every line, the empty one too: the source's projection is empty.
func TestRawFormatCountsWithoutColumns(t *testing.T) {
	in := t.TempDir()
	if err := os.WriteFile(filepath.Join(in, "log.txt"), []byte("a\n\nb b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := engine.NewSession(&bytes.Buffer{})
	enginetest.Exec(t, s, fmt.Sprintf(`CREATE TABLE logs (line STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'raw');`, in))
	stmts, err := parser.Parse("SELECT COUNT(*) FROM logs")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Execute(context.Background(), stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	var last string
	err = r.Query.Run(context.Background(), func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			if ch.Kind == dyntable.Insert || ch.Kind == dyntable.UpdateAfter {
				last = types.FormatRow(ch.Row, []types.Type{types.TypeBigInt}, "|")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if last != "3" {
		t.Fatalf("COUNT(*) = %s, want 3 (two lines and an empty one)", last)
	}
}

// A raw table has one physical column, and NULL cannot be a line.
func TestRawFormatFileErrors(t *testing.T) {
	dir := t.TempDir()
	s := engine.NewSession(&bytes.Buffer{})
	stmts, err := parser.Parse(fmt.Sprintf(`CREATE TABLE two (a STRING, b STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'raw')`, dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Execute(context.Background(), stmts[0]); err == nil || !strings.Contains(err.Error(), "exactly one physical column, the table has 2") {
		t.Fatalf("two columns: %v", err)
	}
	jobs := enginetest.Exec(t, s, fmt.Sprintf(`
CREATE TABLE src (v STRING) WITH ('connector' = 'values');
INSERT INTO src VALUES ('a'), (CAST(NULL AS STRING));
CREATE TABLE dst (v STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'raw');
INSERT INTO dst SELECT v FROM src;
`, dir))
	if err := jobs[len(jobs)-1].Wait(); err == nil || !strings.Contains(err.Error(), "the 'raw' format cannot write a NULL v to a file") {
		t.Fatalf("NULL: %v", err)
	}
}
