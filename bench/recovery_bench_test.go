package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

// BenchmarkRecoveryFromSavepoint measures how long a job takes from
// submission to its first output when it restores a large keyed state.
// It builds the state first (STREAMSQL_RECOVERY_KEYS distinct GROUP BY
// keys, default 20,000,000, each with a 40-character string: over 1 GiB
// in Pebble), stops the job with a
// savepoint, then restores it once per b.N and reports the state size
// and the time to first output. Run it alone:
//
//	go test -run=NONE -bench=RecoveryFromSavepoint -benchtime=3x ./bench
func BenchmarkRecoveryFromSavepoint(b *testing.B) {
	keys := int64(20_000_000)
	if v := os.Getenv("STREAMSQL_RECOVERY_KEYS"); v != "" {
		keys, _ = strconv.ParseInt(v, 10, 64)
	}
	dir := b.TempDir()
	job := fmt.Sprintf(`
SET 'pipeline.name' = 'recovery';
SET 'execution.checkpointing.interval' = '1 h';
SET 'state.checkpoints.dir' = '%s';
CREATE TABLE src (k BIGINT, p STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '0',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '1000000000000', 'fields.p.length' = '40');
CREATE TABLE snk (k BIGINT, c BIGINT, p STRING, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT k, COUNT(*), MAX(p) FROM src GROUP BY k;`, dir)
	run := func(s *engine.Session, sql string) *engine.Job {
		stmts, err := parser.Parse(sql)
		if err != nil {
			b.Fatal(err)
		}
		var j *engine.Job
		for _, st := range stmts {
			r, err := s.Execute(context.Background(), st)
			if err != nil {
				b.Fatal(err)
			}
			if r.Job != nil {
				j = r.Job
			}
		}
		return j
	}
	// Build the state.
	s := engine.NewSession(io.Discard)
	start := time.Now()
	j := run(s, job)
	for {
		if in, _ := j.Records(); in >= keys {
			break
		}
		if err := j.Err(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	build := time.Since(start)
	r, err := s.Execute(context.Background(), mustParse(b, fmt.Sprintf("STOP JOB '%s' WITH SAVEPOINT", j.ID)))
	if err != nil {
		b.Fatal(err)
	}
	var sp string
	if _, err := fmt.Sscanf(r.Message[len("Job '"+j.ID+"' stopped with a savepoint in "):], "%s", &sp); err != nil {
		b.Fatalf("cannot find the savepoint in %q", r.Message)
	}
	sp = sp[:len(sp)-1] // the trailing ';'
	size := dirSize(sp)
	b.Logf("state of %d keys built in %s; savepoint %s holds %.2f GiB", keys, build.Round(time.Second), sp, float64(size)/(1<<30))
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		s := engine.NewSession(io.Discard)
		t0 := time.Now()
		j := run(s, fmt.Sprintf("SET 'execution.savepoint.path' = '%s';", sp)+job)
		for {
			if _, out := j.Records(); out > 0 {
				break
			}
			if err := j.Err(); err != nil {
				b.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		total += time.Since(t0)
		j.Cancel()
		_ = j.Wait()
	}
	b.ReportMetric(float64(size)/(1<<30), "state-GiB")
	b.ReportMetric(total.Seconds()/float64(b.N), "s-to-first-output")
}

func mustParse(b *testing.B, sql string) *parser.Statement {
	stmts, err := parser.Parse(sql)
	if err != nil || len(stmts) != 1 {
		b.Fatalf("%s: %v", sql, err)
	}
	return stmts[0]
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}
