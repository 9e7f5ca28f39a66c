package parser

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// fuzzSeeds are statements covering every rewrite, plus inputs that once
// broke an invariant.
var fuzzSeeds = []string{
	"SELECT a FROM t",
	"CREATE TABLE t (a STRING, ts TIMESTAMP_LTZ(3), b BYTES, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (a) NOT ENFORCED) WITH ('connector' = 'kafka')",
	"CREATE TABLE t WITH ('k'='v') AS SELECT 1",
	"SELECT CAST(a AS DECIMAL(10, 2)), TRY_CAST(b AS INT) FROM t",
	"SELECT f(INTERVAL '5' SECOND), ts - INTERVAL 5 MILLISECONDS FROM t",
	"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))",
	"SELECT * FROM TABLE(HOP(DATA => TABLE t, TIMECOL => DESCRIPTOR(ts), SLIDE => INTERVAL '1' MINUTE, SIZE => INTERVAL '5' MINUTES)) w",
	"SELECT * FROM SESSION(TABLE t PARTITION BY (a, b), DESCRIPTOR(ts), INTERVAL '1' HOUR)",
	"SELECT * FROM a FULL OUTER JOIN b ON a.k = b.k",
	"CREATE MATERIALIZED VIEW v AS SELECT 1",
	"CREATE VIEW IF NOT EXISTS v AS SELECT 1",
	"SET 'a' = 'b'; RESET; SHOW JOBS; STOP JOB 'x' WITH SAVEPOINT; HELP",
	"SELECT 'WITH (' -- FULL JOIN\n/* CAST( */ FROM t",
	"SELECT 'unterminated",
	"SELECT (",
	"SELECT )",
	"INTERVAL",
	"CAST(",
	"WITH (",
	"SELECT * FROM TUMBLE(TABLE",
	"CREATE TABLE t (WATERMARK FOR",
	"SET",
	"SET 'k' = \xff",
	"SELECT '\\",
	"SELECT `\x00`",
	"EXECUTE STATEMENT SET BEGIN INSERT INTO a.b.c SELECT * FROM x.y.z, u.v.w; INSERT INTO s SELECT 1; END; EXPLAIN STATEMENT SET BEGIN",
	"CREATE TEMPORARY VIEW IF NOT EXISTS c.d.v COMMENT 'x' AS SELECT 1; DROP TEMPORARY VIEW IF EXISTS v; ALTER VIEW v AS SELECT 2; ALTER VIEW v RENAME TO w",
	"CREATE TABLE t (a INT, b AS a + 1 COMMENT 'c', ts TIMESTAMP(3) METADATA FROM 'timestamp' VIRTUAL) PARTITIONED BY (a) WITH ('k'='v') LIKE s (INCLUDING ALL OVERWRITING OPTIONS)",
	"ALTER TABLE IF EXISTS c.d.t ADD (x INT, y AS x) AFTER a; ALTER TABLE t DROP (a, b); ALTER TABLE t RESET ('k'); ALTER TABLE t RENAME a TO b",
	"SHOW TABLES FROM c.d NOT ILIKE 'x'; SHOW CREATE CATALOG c; USE CATALOG c; CREATE CATALOG c WITH ('type'='x'); DROP DATABASE IF EXISTS c.d CASCADE; DESC EXTENDED a.b.c",
	"EXPLAIN PLAN FOR SELECT 1; EXPLAIN CHANGELOG_MODE, JSON_EXECUTION_PLAN SELECT 1; EXPLAIN ESTIMATED_COST",
	"CREATE TABLE t (a AS",
	"CREATE TABLE t (a INT METADATA FROM",
	"ALTER TABLE t ADD (",
	"CREATE TABLE t LIKE",
	"SHOW COLUMNS FROM a.b.c.d",
	"EXPLAIN JSON_EXECUTION_PLAN", // once panicked
}

// FuzzParse checks that Parse never panics and that its results hold
// together: errors are *Error within the text and never quote rewritten
// text, and every statement's offset map stays inside the statement.
//
//	go test -run=NONE -fuzz=FuzzParse -fuzztime=120s ./parser
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	// Every input of the golden file is a seed too.
	if data, err := os.ReadFile("testdata/rewrite"); err == nil {
		for _, block := range strings.Split(string(data), "\n----\n") {
			lines := strings.Split(block, "\n")
			for i, l := range lines {
				if l == "rewrite" || l == "error" {
					f.Add(strings.Join(lines[i+1:], "\n"))
					break
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		stmts, err := Parse(src)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is %T, not *Error", err, err)
			}
			if e.Line < 1 || e.Col < 1 {
				t.Fatalf("bad position %d:%d", e.Line, e.Col)
			}
			msg := strings.ToLower(e.Error())
			lsrc := strings.ToLower(src)
			for _, n := range append(internalNames, "straight_join") {
				if strings.Contains(msg, n) && !strings.Contains(lsrc, n) {
					t.Fatalf("error shows rewritten text %q:\n%s", n, e.Error())
				}
			}
		}
		for _, s := range stmts {
			if s.Text != src[s.start:s.end] || s.Text == "" {
				t.Fatalf("bad text %q for range %d-%d", s.Text, s.start, s.end)
			}
			if n := btoi(s.Node != nil) + btoi(s.Command != nil) + btoi(s.Set != nil); n != 1 {
				t.Fatalf("statement %q has node %v, command %v and set %v", s.Text, s.Node, s.Command, s.Set)
			}
			step := 1 + len(s.rewritten)/200
			for r := -1; r <= len(s.rewritten)+1; r += step {
				if o := s.offsets.toOrig(r); o < s.start || o > s.end {
					t.Fatalf("toOrig(%d) = %d outside the statement %d-%d", r, o, s.start, s.end)
				}
				_ = s.Errorf(r, "x").Error()
			}
			for _, o := range s.Options {
				_ = s.ErrorAt(o.Line, o.Col, "x").Error()
			}
			for _, w := range s.Watermarks {
				_ = s.ErrorAtNode(w.Expr, "x").Error()
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
