// Package bench measures end-to-end throughput of SQL jobs. Run with
//
//	go test -run=NONE -bench=. -cpu=1 ./bench
//
// and see BENCHMARKS.md for recorded figures.
package bench

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

func runScript(b *testing.B, sql string) {
	b.Helper()
	s := engine.NewSession(io.Discard)
	stmts, err := parser.Parse(sql)
	if err != nil {
		b.Fatal(err)
	}
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			b.Fatal(err)
		}
		if r.Job != nil {
			if err := r.Job.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkAggPipeline is datagen -> calc -> group aggregate (10,000
// keys; COUNT, SUM, MAX) -> blackhole at parallelism 1, state behind the
// keyed-state interface. One op is one row.
func BenchmarkAggPipeline(b *testing.B) {
	rows := max(b.N, 1)
	sql := fmt.Sprintf(`
CREATE TABLE src (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '%d',
  'rows-per-second' = '0', 'fields.k.min' = '0', 'fields.k.max' = '9999', 'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE snk (k BIGINT, c BIGINT, s BIGINT, m BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT k, COUNT(*), SUM(v), MAX(v) FROM src WHERE v >= 0 GROUP BY k;`, rows)
	b.ResetTimer()
	runScript(b, sql)
	b.StopTimer()
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
