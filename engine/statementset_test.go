package engine

import (
	"io"
	"strings"
	"testing"
)

// A statement set reads each source once: its job has one scan of the
// table, which emits every row once, and both sinks get every row.
func TestStatementSetReadsItsSourceOnce(t *testing.T) {
	s := NewSession(io.Discard)
	jobsExec(t, s, `CREATE TABLE g (k INT, v BIGINT, w STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '100');
CREATE TABLE a (k INT) WITH ('connector' = 'blackhole');
CREATE TABLE b (v BIGINT, w STRING) WITH ('connector' = 'blackhole');`)
	for _, sql := range []string{
		"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT k FROM g; INSERT INTO b SELECT v, w FROM g WHERE v IS NOT NULL OR v IS NULL; END;",
		"BEGIN STATEMENT SET; INSERT INTO a SELECT k FROM g; INSERT INTO b SELECT v, w FROM g; END;",
	} {
		r := jobsExec(t, s, sql)
		if r.Job == nil {
			t.Fatalf("%s: no job: %+v", sql, r)
		}
		if err := r.Job.Wait(); err != nil {
			t.Fatal(err)
		}
		var scans, scanned, sunk int64
		for _, m := range r.Job.Metrics() {
			if strings.HasPrefix(m.Name, "TableSourceScan") {
				scans++
				scanned += m.RecordsOut
			}
			if strings.HasPrefix(m.Name, "Sink") {
				sunk += m.RecordsIn
			}
		}
		if scans != 1 || scanned != 100 || sunk != 200 {
			t.Errorf("%s: %d scans read %d rows, sinks got %d; want 1 scan of 100 rows, 200 rows sunk", sql, scans, scanned, sunk)
		}
		if r.Job.Sink != "a, b" {
			t.Errorf("job sinks %q", r.Job.Sink)
		}
	}
}

// The INSERTs after BEGIN STATEMENT SET wait for END: none starts a job.
func TestBeginStatementSetBuffers(t *testing.T) {
	s := NewSession(io.Discard)
	jobsExec(t, s, `CREATE TABLE g (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');
CREATE TABLE a (k INT) WITH ('connector' = 'blackhole');
BEGIN STATEMENT SET;`)
	for i := 0; i < 2; i++ {
		if r := jobsExec(t, s, "INSERT INTO a SELECT k FROM g;"); r.Job != nil || !s.InStatementSet() {
			t.Fatalf("INSERT in a statement set ran: %+v", r)
		}
	}
	if n := len(s.Jobs()); n != 0 {
		t.Fatalf("%d jobs before END", n)
	}
	r := jobsExec(t, s, "END;")
	if r.Job == nil || s.InStatementSet() {
		t.Fatalf("END: %+v", r)
	}
	if err := r.Job.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Jobs()); n != 1 {
		t.Fatalf("%d jobs after END, want 1", n)
	}
}
