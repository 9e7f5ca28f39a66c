package engine

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/parser"
)

// jobsExec runs each statement of sql and returns the last result.
func jobsExec(t *testing.T, s *Session, sql string) *Result {
	t.Helper()
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	var r *Result
	for _, st := range stmts {
		if r, err = s.Execute(context.Background(), st); err != nil {
			t.Fatalf("%s: %v", st.Text, err)
		}
	}
	return r
}

func jobsExecErr(s *Session, sql string) error {
	stmts, err := parser.Parse(sql)
	if err != nil {
		return err
	}
	_, err = s.Execute(context.Background(), stmts[0])
	return err
}

// waitFor polls cond for up to 30 s: the machine may be slow.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const unboundedJob = `CREATE TABLE gen (k INT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5000');
CREATE TABLE sink (k INT, v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT k, v FROM gen WHERE k IS NOT NULL;`

func TestShowJobsAndStopJob(t *testing.T) {
	s := NewSession(io.Discard)
	r := jobsExec(t, s, unboundedJob)
	if r.Job == nil || r.Job.ID != "job-1" || r.Job.Bounded {
		t.Fatalf("INSERT result %+v", r)
	}
	j := r.Job
	if j.SQL != "INSERT INTO sink SELECT k, v FROM gen WHERE k IS NOT NULL" {
		t.Errorf("job SQL %q", j.SQL)
	}
	waitFor(t, "records to reach the sink", func() bool { _, out := j.Records(); return out > 0 })

	show := jobsExec(t, s, "SHOW JOBS")
	if strings.Join(show.Header, "|") != "id|name|status|start time|records in|records out|last checkpoint|ckpt duration" {
		t.Fatalf("SHOW JOBS header %q", show.Header)
	}
	if len(show.Rows) != 1 {
		t.Fatalf("SHOW JOBS rows %q", show.Rows)
	}
	row := show.Rows[0]
	if row[0] != "job-1" || row[1] != "insert-into-sink" || row[2] != "RUNNING" || row[4] == "0" || row[5] == "0" || row[6] != "n/a" || row[7] != "n/a" {
		t.Fatalf("SHOW JOBS row %q", row)
	}
	if _, err := time.ParseInLocation(time.DateTime, row[3], time.Local); err != nil {
		t.Errorf("start time %q: %v", row[3], err)
	}
	if _, ok := j.EndTime(); ok {
		t.Error("a running job has an end time")
	}

	if err := jobsExecErr(s, "STOP JOB 'job-1' WITH SAVEPOINT"); !errors.Is(err, ErrSavepointUnavailable) ||
		!strings.Contains(err.Error(), "needs checkpointing, and this job runs without it") {
		t.Fatalf("WITH SAVEPOINT: %v", err)
	}
	if j.Status() != StatusRunning {
		t.Fatal("a refused savepoint must leave the job running")
	}
	if err := jobsExecErr(s, "STOP JOB 'job-9'"); err == nil || !strings.Contains(err.Error(), "no job with id 'job-9'") {
		t.Fatalf("unknown job: %v", err)
	}
	if msg := jobsExec(t, s, "STOP JOB 'job-1'").Message; msg != "Job 'job-1' stopped" {
		t.Fatalf("STOP JOB: %q", msg)
	}
	if j.Status() != StatusCanceled || j.Err() != nil {
		t.Fatalf("after STOP JOB: %s, %v", j.Status(), j.Err())
	}
	waitFor(t, "the end time", func() bool { _, ok := j.EndTime(); return ok })
	if msg := jobsExec(t, s, "STOP JOB 'job-1'").Message; msg != "Job 'job-1' is already CANCELED" {
		t.Fatalf("second STOP JOB: %q", msg)
	}
	if row := jobsExec(t, s, "SHOW JOBS").Rows[0]; row[2] != "CANCELED" {
		t.Fatalf("after STOP: %q", row)
	}
}

func TestJobInfo(t *testing.T) {
	s := NewSession(io.Discard)
	r := jobsExec(t, s, `CREATE TABLE gen (k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'number-of-rows' = '3000', 'rows-per-second' = '0');
CREATE TABLE sink (k INT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT k FROM gen;`)
	j := r.Job
	if !j.Bounded {
		t.Fatal("a job over number-of-rows should be bounded")
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	info := j.Info()
	if info.Status != StatusFinished || info.EndTime == nil || info.Error != "" {
		t.Fatalf("info %+v", info)
	}
	if info.RecordsIn != 3000 || info.RecordsOut != 3000 {
		t.Fatalf("records in %d out %d, want 3000", info.RecordsIn, info.RecordsOut)
	}
	if info.Checkpoints == nil || len(info.Checkpoints) != 0 || info.LastCheckpoint != nil {
		t.Fatalf("checkpoints %v, last %v", info.Checkpoints, info.LastCheckpoint)
	}
	var names []string
	var src, sink *OperatorInfo
	for i, op := range info.Operators {
		names = append(names, op.Name)
		switch {
		case strings.HasPrefix(op.Name, "TableSourceScan"):
			src = &info.Operators[i]
		case strings.HasPrefix(op.Name, "Sink"):
			sink = &info.Operators[i]
		}
	}
	if src == nil || sink == nil || src.RecordsOut != 3000 || sink.RecordsIn != 3000 {
		t.Fatalf("operators %q: source %+v sink %+v", names, src, sink)
	}
	if sink.WatermarkTime != "end of input" || sink.Watermark != nil {
		t.Errorf("a finished job's sink watermark: %+v", sink)
	}
	if row := info.Row(); row[2] != "FINISHED" || row[4] != "3000" || row[5] != "3000" {
		t.Errorf("row %q", row)
	}
}

func TestFailedJobKeepsItsError(t *testing.T) {
	s := NewSession(io.Discard)
	r := jobsExec(t, s, `CREATE TABLE src (s STRING) WITH ('connector' = 'values');
INSERT INTO src VALUES ('1'), ('abc');
CREATE TABLE sink (a INT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT CAST(s AS INT) FROM src;`)
	if err := r.Job.Wait(); err == nil {
		t.Fatal("CAST('abc' AS INT) should fail the job")
	}
	info := r.Job.Info()
	if info.Status != StatusFailed || !strings.Contains(info.Error, "cannot cast 'abc' to INT") || r.Job.Err() == nil {
		t.Fatalf("info %+v", info)
	}
}

func TestQueryUpsertKey(t *testing.T) {
	s := NewSession(io.Discard)
	jobsExec(t, s, "CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'values')")
	if q := jobsExec(t, s, "SELECT v, k, SUM(v) FROM t GROUP BY k, v").Query; len(q.UpsertKey) != 2 {
		t.Errorf("GROUP BY k, v: upsert key %v", q.UpsertKey)
	}
	if q := jobsExec(t, s, "SELECT k FROM t").Query; q.UpsertKey != nil {
		t.Errorf("a plain scan has no upsert key, got %v", q.UpsertKey)
	}
}

// With checkpointing, SHOW JOBS shows the last checkpoint, and STOP JOB
// ... WITH SAVEPOINT leaves a savepoint a new job resumes from.
func TestCheckpointsInShowJobsAndStopWithSavepoint(t *testing.T) {
	dir := t.TempDir()
	s := NewSession(io.Discard)
	jobsExec(t, s, "SET 'execution.checkpointing.interval' = '100 ms'; SET 'state.checkpoints.dir' = '"+dir+"'")
	j := jobsExec(t, s, unboundedJob).Job
	waitFor(t, "a completed checkpoint", func() bool { return len(j.Checkpoints()) == 1 })
	info := j.Info()
	if !info.Checkpointing || info.CheckpointsCompleted < 1 || info.LastCheckpoint == nil || info.LastCheckpoint.ID < 1 {
		t.Fatalf("info %+v", info)
	}
	row := jobsExec(t, s, "SHOW JOBS").Rows[0]
	if !strings.HasPrefix(row[6], "#") || !strings.Contains(row[6], " at ") || !strings.HasSuffix(row[7], " ms") {
		t.Fatalf("SHOW JOBS row %q", row)
	}

	msg := jobsExec(t, s, "STOP JOB 'job-1' WITH SAVEPOINT").Message
	sp := msg[strings.Index(msg, "savepoint in ")+len("savepoint in ") : strings.Index(msg, ";")]
	if !strings.HasPrefix(msg, "Job 'job-1' stopped with a savepoint in "+dir) || !strings.Contains(msg, "SET 'execution.savepoint.path' = '"+sp+"'") {
		t.Fatalf("STOP JOB WITH SAVEPOINT: %q", msg)
	}
	if j.Status() != StatusCanceled {
		t.Fatalf("after the savepoint the job is %s", j.Status())
	}
	if err := jobsExecErr(s, "STOP JOB 'job-1' WITH SAVEPOINT"); err == nil || !strings.Contains(err.Error(), "already CANCELED") {
		t.Fatalf("a savepoint of a stopped job: %v", err)
	}
	// A new job resumes from it.
	jobsExec(t, s, "SET 'execution.savepoint.path' = '"+sp+"'")
	j2 := jobsExec(t, s, "INSERT INTO sink SELECT k, v FROM gen WHERE k IS NOT NULL").Job
	if got := j2.Info().RestoredFrom; got != sp {
		t.Fatalf("the new job restored from %q, want %q", got, sp)
	}
	jobsExec(t, s, "STOP JOB 'job-2'")
}

// Two running jobs under one name would share checkpoints: the second is
// refused, naming the option that tells them apart.
func TestDuplicateRunningNameRefused(t *testing.T) {
	s := NewSession(io.Discard)
	dir := t.TempDir()
	stmts, err := parser.Parse(`SET 'execution.checkpointing.interval' = '1 s';
SET 'state.checkpoints.dir' = '` + dir + `';
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE out_t (k BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out_t SELECT k FROM gen;
INSERT INTO out_t SELECT k + 1 FROM gen;`)
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			last = err
			continue
		}
		if r.Job != nil {
			defer func() { r.Job.Cancel(); _ = r.Job.Wait() }()
		}
	}
	if last == nil || !strings.Contains(last.Error(), "pipeline.name") || !strings.Contains(last.Error(), "insert-into-out_t") {
		t.Fatalf("second job: %v, want a refusal naming the job name and 'pipeline.name'", last)
	}
}
