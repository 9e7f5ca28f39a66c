package postgres_test

// SQL jobs through the engine into PostgreSQL. They live in the
// external test package because the engine imports every connector.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors/postgres/pgtest"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

func run(t testing.TB, s *engine.Session, script string) *engine.Job {
	t.Helper()
	stmts, err := parser.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	var job *engine.Job
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			t.Fatalf("%s: %v", st.Text, err)
		}
		if r.Job != nil {
			job = r.Job
		}
	}
	if job == nil {
		t.Fatal("the script started no job")
	}
	return job
}

// aggJob: the sequence 1..rows, grouped by k % 97 with COUNT and SUM,
// into a PostgreSQL table keyed by the group, exactly once.
const aggJob = `
SET 'pipeline.name' = '%[1]s';
SET 'execution.checkpointing.interval' = '100 ms';
SET 'state.checkpoints.dir' = '%[2]s';
SET 'parallelism.default' = '2';
CREATE TABLE seq (k BIGINT) WITH ('connector' = 'datagen', 'scan.parallelism' = '1', 'rows-per-second' = '%[3]d',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '%[4]d');
CREATE TABLE res (g BIGINT, n BIGINT, s BIGINT, PRIMARY KEY (g) NOT ENFORCED) WITH ('connector' = 'jdbc',
  'url' = '%[5]s', 'table-name' = '%[6]s', 'sink.semantic' = 'exactly-once', 'sink.parallelism' = '%[7]d');
INSERT INTO res SELECT k %% 97, COUNT(*), SUM(k) FROM seq GROUP BY k %% 97;
`

// reference computes the expected table straight from the input: group
// g = k mod 97 has count and sum over k in 1..rows with that remainder.
func reference(rows int) []string {
	n := map[int64]int64{}
	s := map[int64]int64{}
	for k := int64(1); k <= int64(rows); k++ {
		n[k%97]++
		s[k%97] += k
	}
	var out []string
	for g := range n {
		out = append(out, fmt.Sprintf("%d|%d|%d", g, n[g], s[g]))
	}
	sort.Strings(out)
	return out
}

func resTable(t *testing.T, s *pgtest.Server, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s_%d", prefix, os.Getpid())
	c := s.Conn(t)
	s.Exec(t, c, "DROP TABLE IF EXISTS "+name, "CREATE TABLE "+name+" (g BIGINT PRIMARY KEY, n BIGINT NOT NULL, s BIGINT NOT NULL)")
	t.Cleanup(func() { _, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+name) })
	return name
}

func prepared(t *testing.T, s *pgtest.Server, job string) []string {
	t.Helper()
	return pgtest.Rows(t, s.Conn(t), "SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'streamsql:"+job+":%'")
}

// A bounded job through the exactly-once sink at parallelism 2 ends with
// the reference table and nothing left prepared.
func TestExactlyOnceJob(t *testing.T) {
	s := pgtest.Shared(t)
	table := resTable(t, s, "eo_job")
	job := fmt.Sprintf("pgeo_%d", os.Getpid())
	rollbackPrepared(t, s, job)
	j := run(t, engine.NewSession(&bytes.Buffer{}), fmt.Sprintf(aggJob, job, t.TempDir(), 20000, 5000, s.JDBC(), table, 2))
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := pgtest.Rows(t, s.Conn(t), "SELECT g, n, s FROM "+table), reference(5000); !reflect.DeepEqual(got, want) {
		t.Fatalf("final table:\n got %v\nwant %v", got, want)
	}
	if p := prepared(t, s, job); len(p) != 0 {
		t.Fatalf("transactions left prepared: %v", p)
	}
}

// The worst moment of two-phase commit: a checkpoint has completed, its
// transactions are prepared, and the process dies before committing them
// (the session option test.crash.before-commit makes the framework exit
// right there). The restarted job commits what the checkpoint holds, rolls
// back what was prepared after it, and ends with the reference table and
// nothing prepared.
func TestCrashBetweenPrepareAndCommit(t *testing.T) {
	if os.Getenv("STREAMSQL_PG_CRASH_CHILD") == "1" {
		j := run(t, engine.NewSession(&bytes.Buffer{}), "SET 'test.crash.before-commit' = '4';\n"+fmt.Sprintf(aggJob, os.Getenv("CRASH_JOB"), os.Getenv("CRASH_DIR"), 10000, crashRows,
			os.Getenv("CRASH_URL"), os.Getenv("CRASH_TABLE"), 2))
		_ = j.Wait()
		t.Fatal("the crash hook did not fire")
	}
	s := pgtest.Shared(t)
	table := resTable(t, s, "eo_crash")
	job := fmt.Sprintf("pgcrash_%d", os.Getpid())
	rollbackPrepared(t, s, job)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashBetweenPrepareAndCommit$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STREAMSQL_PG_CRASH_CHILD=1",
		"CRASH_JOB="+job, "CRASH_DIR="+dir, "CRASH_URL="+s.JDBC(), "CRASH_TABLE="+table)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 137 {
		t.Fatalf("the child did not die in the hook (%v):\n%s", err, out)
	}
	if p := prepared(t, s, job); len(p) == 0 {
		t.Fatal("no prepared transaction survived the crash")
	}
	// Mid-flight, each group's row is a prefix of the group's own
	// numbers (g, g+97, g+2*97, ..., or 97, 194, ... for g = 0): its
	// count n and sum n*first + 97*n(n-1)/2. The two sink subtasks may
	// stand at different checkpoints (the hook fires on one of them),
	// so the table as a whole need not be a prefix of the input.
	for _, row := range pgtest.Rows(t, s.Conn(t), "SELECT g, n, s FROM "+table) {
		var g, n, sum int64
		fmt.Sscanf(strings.ReplaceAll(row, "|", " "), "%d %d %d", &g, &n, &sum)
		first := g
		if g == 0 {
			first = 97
		}
		if sum != n*first+97*n*(n-1)/2 {
			t.Fatalf("after the crash, group %d is not a prefix of its numbers: count %d, sum %d", g, n, sum)
		}
	}
	j := run(t, engine.NewSession(&bytes.Buffer{}), fmt.Sprintf(aggJob, job, dir, 0, crashRows, s.JDBC(), table, 2))
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := pgtest.Rows(t, s.Conn(t), "SELECT g, n, s FROM "+table), reference(crashRows); !reflect.DeepEqual(got, want) {
		t.Fatalf("final table:\n got %v\nwant %v", got, want)
	}
	if p := prepared(t, s, job); len(p) != 0 {
		t.Fatalf("transactions left prepared: %v", p)
	}
}

const crashRows = 20000

// rollbackPrepared rolls back, when the test ends, what job left
// prepared: a failed test must not leave locks behind for the table's
// DROP.
func rollbackPrepared(t *testing.T, s *pgtest.Server, job string) {
	t.Cleanup(func() {
		c := s.Conn(t)
		for _, gid := range prepared(t, s, job) {
			if _, err := c.Exec(context.Background(), "ROLLBACK PREPARED '"+gid+"'"); err != nil {
				t.Errorf("rolling back %s: %v", gid, err)
			}
		}
	})
}
