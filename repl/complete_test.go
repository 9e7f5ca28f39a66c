package repl

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

func TestComplete(t *testing.T) {
	for _, c := range []struct {
		sql            string
		complete, emty bool
	}{
		{"SELECT 1;", true, false},
		{"SELECT 1", false, false},
		{"SELECT ';'", false, false},
		{"SELECT ';';", true, false},
		{"SELECT 1; -- done", true, false},
		{"SELECT 1 -- ;", false, false},
		{"SELECT /* ; */ 1", false, false},
		{"SELECT /* ; */ 1;", true, false},
		{"SELECT /* ;", false, false},
		{"SELECT 'it\\'s;'", false, false},
		{"SELECT `a;b`;", true, false},
		{"CREATE TABLE t (\n  a INT\n) WITH ('connector' = 'values');\n", true, false},
		{"SELECT 1 - -1;", true, false},
		{"SELECT 1 -\n-1;", true, false},
		{"SELECT 1; --", true, false},
		{"SELECT 1; /", false, false},
		{"SELECT 'a\nb;\n';", true, false},
		{"SELECT 'a\nb;", false, false},
		{"SELECT 1; # done", true, false},
		{"/* x */;", true, false},
		{"", false, true},
		{"  \n -- a comment\n/* another */ ", false, true},
	} {
		if Complete(c.sql) != c.complete || blank(c.sql) != c.emty {
			t.Errorf("%q: complete %v, blank %v; want %v, %v", c.sql, Complete(c.sql), blank(c.sql), c.complete, c.emty)
		}
		// Fed line by line, as the REPL feeds it, the same answers.
		var sc stmtScanner
		for i, l := range strings.Split(c.sql, "\n") {
			if i > 0 {
				sc.feed("\n")
			}
			sc.feed(l)
		}
		if sc.complete() != c.complete || sc.blank() != c.emty {
			t.Errorf("%q fed by lines: complete %v, blank %v", c.sql, sc.complete(), sc.blank())
		}
	}
}

func newSession(t *testing.T, sql string) *engine.Session {
	t.Helper()
	s := engine.NewSession(io.Discard)
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		if _, err := s.Execute(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func completions(c completer, line string) []string {
	cands, _ := c.Do([]rune(line), len([]rune(line)))
	var out []string
	for _, r := range cands {
		out = append(out, string(r))
	}
	return out
}

func TestCompleter(t *testing.T) {
	s := newSession(t, "CREATE TABLE bids (auction BIGINT, price BIGINT) WITH ('connector' = 'values');")
	c := completer{s: s}
	for _, tc := range []struct {
		line string
		want []string // each must be among the candidates
		not  []string
	}{
		{"SEL", []string{"ECT "}, nil},
		{"SELECT json_va", []string{"lue "}, nil}, // function names come from expr's catalog
		{"SHOW FUNC", []string{"TIONS "}, nil},
		{"sel", []string{"ect "}, []string{"ECT "}},
		{"SELECT * FROM bi", []string{"ds"}, nil},
		{"SELECT auc", []string{"tion"}, nil},
		{"SELECT pr", []string{"ice", "imary "}, nil},
		{"SET 'sql-client.ex", []string{"ecution.result-mode'"}, nil},
		{"SET 'parallelism.", []string{"default'"}, nil},
		{"RESET 'table.display", []string{".max-column-width'"}, nil},
		{"SET 'sql-client.execution.result-mode' = 'ta", []string{"bleau';", "ble';"}, []string{"changelog';"}},
		{"SET 'sql-client.execution.result-mode' = '", []string{"tableau';", "changelog';", "table';"}, nil},
	} {
		got := completions(c, tc.line)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: %q not among %q", tc.line, w, got)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("%q: %q must not be among %q", tc.line, w, got)
			}
		}
	}
	// Inside WITH ( the keys, values and connector names come from the
	// connectors registry.
	for _, tc := range []struct {
		typed, line string
		want, not   []string
	}{
		{"", "CREATE TABLE k (a INT) WITH ('connector' = 'ka", []string{"fka'"}, nil},
		{"", "CREATE TABLE k (a INT) WITH ('connector' = '", []string{"kafka'", "upsert-kafka'", "mysql'", "nexmark'", "datagen'"}, nil},
		{"", "CREATE TABLE k (a INT) WITH ('connector' = 'kafka', 'scan.st", []string{"artup.mode' = '"}, nil},
		{"", "CREATE TABLE k (a INT) WITH ('connector' = 'datagen', 'rows", []string{"-per-second' = '"}, []string{"artup.mode' = '"}},
		{"", "CREATE TABLE k (a INT) WITH ('connector' = 'datagen', 's", []string{"can.parallelism' = '"}, []string{"ink.parallelism' = '"}},
		// A key typed on a later line of the statement.
		{"CREATE TABLE k (a INT) WITH (\n  'connector' = 'mysql',", "  'sink.sem", []string{"antic' = '"}, nil},
		// Values of boolean and enum options.
		{"", "CREATE TABLE k (a INT) WITH ('connector' = 'values', 'bounded' = '", []string{"true'", "false'"}, nil},
		{"", "CREATE TABLE k (a INT) WITH ('connector' = 'kafka', 'sink.delivery-guarantee' = 'ex", []string{"actly-once'"}, nil},
		// Without a connector yet, 'connector' itself and every connector's keys.
		{"", "CREATE TABLE k (a INT) WITH ('conn", []string{"ector' = '"}, nil},
		// A parenthesis inside a value does not close the list.
		{"", "CREATE TABLE k (a INT) WITH ('connector' = 'mysql', 'url' = 'u:p@tcp(h:1)/db', 'table-", []string{"name' = '"}, nil},
		// After the list is closed, the usual completion.
		{"", "CREATE TABLE k (a INT) WITH ('connector' = 'values') SEL", nil, []string{"ector' = '"}},
	} {
		cc := completer{s: s, typed: func() string { return tc.typed }}
		got := completions(cc, tc.line)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: %q not among %q", tc.line, w, got)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("%q: %q must not be among %q", tc.line, w, got)
			}
		}
	}
	// SET ' lists every option key.
	got := completions(c, "SET '")
	if len(got) < 10 || !slices.Contains(got, "sql-client.execution.result-mode'") {
		t.Errorf("SET ' offers %q", got)
	}
	if got := completions(c, "SELECT 1 "); len(got) != 0 {
		t.Errorf("an empty word offers %q", got)
	}
	if got := completions(c, "SELECT zz"); len(got) != 0 {
		t.Errorf("an unknown word offers %q", got)
	}
}
