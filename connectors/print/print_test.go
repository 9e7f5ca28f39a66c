package print_test

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

func run(t *testing.T, out *bytes.Buffer, sql string) {
	t.Helper()
	s := engine.NewSession(out)
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		if r.Job != nil {
			if err := r.Job.Wait(); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestPrintsFlinkRowStrings(t *testing.T) {
	var out bytes.Buffer
	run(t, &out, `CREATE TABLE src (k STRING, v INT, d DECIMAL(5, 2)) WITH ('connector' = 'values');
INSERT INTO src VALUES ('a', 1, 1.5), ('a', 2, NULL);
CREATE TABLE p (k STRING, total INT, d DECIMAL(5, 2)) WITH ('connector' = 'print');
INSERT INTO p SELECT k, SUM(v), MAX(d) FROM src GROUP BY k;`)
	want := "+I[a, 1, 1.50]\n-U[a, 1, 1.50]\n+U[a, 3, 1.50]\n"
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestIdentifierAndSubtaskPrefixes(t *testing.T) {
	var out bytes.Buffer
	run(t, &out, `SET 'parallelism.default' = '2';
CREATE TABLE src (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '0',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '6');
CREATE TABLE p (k INT) WITH ('connector' = 'print', 'print-identifier' = 'out');
INSERT INTO p SELECT k FROM src;`)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	sort.Strings(lines)
	if len(lines) != 6 {
		t.Fatalf("lines: %q", lines)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "out:1> +I[") && !strings.HasPrefix(l, "out:2> +I[") {
			t.Fatalf("line %q lacks the identifier:subtask prefix", l)
		}
	}
}
