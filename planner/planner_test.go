package planner_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

// exec runs every statement of sql in s and renders results or errors.
func exec(s *engine.Session, sql string) string {
	stmts, err := parser.Parse(sql)
	var out []string
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		switch {
		case err != nil:
			out = append(out, "error: "+err.Error())
		case r.Job != nil:
			if err := r.Job.Wait(); err != nil {
				out = append(out, "job error: "+err.Error())
			} else {
				out = append(out, "ok")
			}
		case r.Text != "":
			out = append(out, r.Text)
		default:
			out = append(out, "ok")
		}
	}
	if err != nil {
		out = append(out, "error: "+err.Error())
	}
	return strings.Join(out, "\n") + "\n"
}

// TestExplain runs each file of testdata, one session a file: `exec`
// runs statements, `explain` prints the plan of a query (the EXPLAIN
// keyword is added). There is a case for every kind of plan node and
// every rewrite (see doc.go). Refill with -rewrite and review the diff:
// each plan's operators, changelog modes and upsert keys are meant to be
// what Flink plans for the query.
func TestExplain(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := engine.NewSession(io.Discard)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				return exec(s, d.Input)
			case "explain":
				return exec(s, "EXPLAIN "+d.Input)
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}

// FuzzPlan plans arbitrary statements against a small catalog. Planning
// must never panic: every bad input is an error.
func FuzzPlan(f *testing.F) {
	seeds := []string{
		"SELECT a, COUNT(*) FROM t GROUP BY a",
		"SELECT * FROM t JOIN u ON t.a = u.a WHERE t.b > 1",
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY a ORDER BY b DESC) AS rn FROM t) WHERE rn <= 3",
		"SELECT a FROM t UNION ALL SELECT a FROM u",
		"SELECT DISTINCT s FROM t ORDER BY s LIMIT 2",
		"EXPLAIN SELECT a, SUM(b) FROM t GROUP BY a HAVING SUM(b) > 2",
		"SELECT CAST(a AS STRING), FLOOR(ts TO HOUR) FROM t",
		"CREATE VIEW v AS SELECT a FROM t",
		"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))",
		"SELECT t.a FROM t FULL OUTER JOIN u ON t.a = u.a AND t.b < u.b",
		"WITH x AS (SELECT a FROM t) SELECT * FROM x",
	}
	// Every statement of the golden suite is a seed too.
	files, _ := filepath.Glob("../tests/sql/*.test")
	for _, fn := range files {
		data, err := os.ReadFile(fn)
		if err != nil {
			f.Fatal(err)
		}
		for _, block := range strings.Split(string(data), "\n\n") {
			lines := strings.Split(strings.TrimSpace(block), "\n")
			if len(lines) < 2 || strings.HasPrefix(lines[0], "#") {
				continue
			}
			sql, _, _ := strings.Cut(strings.Join(lines[1:], "\n"), "\n----")
			seeds = append(seeds, sql)
		}
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		s := engine.NewSession(io.Discard)
		_ = exec(s, `CREATE TABLE t (a INT, b BIGINT, s STRING, d DECIMAL(10, 2), ts TIMESTAMP(3),
			WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'values');
			CREATE TABLE u (a INT, b BIGINT, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'values', 'changelog-mode' = 'upsert');`)
		stmts, err := parser.Parse(sql)
		if err != nil {
			return
		}
		for _, st := range stmts {
			if st.Command != nil {
				continue
			}
			switch n := st.Node.(type) {
			case *ast.InsertStmt:
				continue // would start a job
			case *ast.CreateTableStmt:
				if n.Select != nil {
					continue
				}
			}
			r, err := s.Execute(context.Background(), st)
			if err == nil && r.Job != nil {
				r.Job.Cancel()
			}
		}
	})
}
