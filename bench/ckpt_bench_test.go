package bench

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

// runAgg runs the aggregation pipeline of BenchmarkAggPipeline with the
// given session settings and reports rows/s, plus checkpoint figures.
func runAgg(b *testing.B, settings string) {
	rows := max(b.N, 1)
	dir := b.TempDir()
	sql := fmt.Sprintf(settings, dir) + fmt.Sprintf(`
CREATE TABLE src (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
  'rows-per-second' = '0', 'fields.k.min' = '0', 'fields.k.max' = '9999', 'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE snk (k BIGINT, c BIGINT, s BIGINT, m BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT k, COUNT(*), SUM(v), MAX(v) FROM src WHERE v >= 0 GROUP BY k;`, rows)
	s := engine.NewSession(io.Discard)
	stmts, err := parser.Parse(sql)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var job *engine.Job
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			b.Fatal(err)
		}
		if r.Job != nil {
			job = r.Job
			if err := r.Job.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	if st, ok := job.CheckpointStats(); ok && st.Completed > 0 {
		b.ReportMetric(float64(st.Completed), "checkpoints")
		b.ReportMetric(float64(st.LastDuration)/float64(time.Millisecond), "ckpt-ms")
		b.ReportMetric(float64(st.LastTotalBytes)/1024, "ckpt-KiB")
		b.ReportMetric(float64(st.LastNewBytes)/1024, "ckpt-new-KiB")
	}
}

// BenchmarkAggPebbleNoCheckpoint keeps the aggregation's state in Pebble
// (behind the write-back cache) without taking checkpoints.
func BenchmarkAggPebbleNoCheckpoint(b *testing.B) {
	runAgg(b, "SET 'state.backend.type' = 'pebble'; -- %s\n")
}

// BenchmarkAggPebbleCheckpoint1s takes a checkpoint every second.
func BenchmarkAggPebbleCheckpoint1s(b *testing.B) {
	runAgg(b, "SET 'execution.checkpointing.interval' = '1 s'; SET 'state.checkpoints.dir' = '%s';\n")
}
