package mysql_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/mysql"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/internal/metrics"
)

// BenchmarkXASink runs SQL jobs into the exactly-once MySQL sink with a
// 1 s checkpoint interval and reports rows/s (input rows over the job's
// wall time, which includes the final commit) and the commit latency
// (a checkpoint's barrier reaching the sink, i.e. XA PREPARE done, to
// its XA COMMIT done) at p50 and p99.
//
//   - distinct: every input row is a new key, so every row is written.
//   - agg1000: GROUP BY into 1000 keys; the sink's buffer compacts a
//     checkpoint's updates to at most 1000 rows per transaction.
func BenchmarkXASink(b *testing.B) {
	dsn := mysql.DSNForTest(b)
	db := mysql.OpenForTest(b, dsn)
	for _, c := range []struct {
		name, query string
		rows        int
	}{
		{"distinct", "INSERT INTO res SELECT k, k * 2 FROM seq", 1500000},
		{"agg1000", "INSERT INTO res SELECT k % 1000, SUM(k) FROM seq GROUP BY k % 1000", 4000000},
	} {
		b.Run(c.name, func(b *testing.B) {
			table := mysql.TableForTest(b, db, "bench", "k BIGINT PRIMARY KEY, v BIGINT NOT NULL")
			commits := metrics.Snapshot(metrics.SinkCommitLatency)
			var total time.Duration
			for i := 0; i < b.N; i++ {
				if _, err := db.Exec("TRUNCATE TABLE " + table); err != nil {
					b.Fatal(err)
				}
				s := engine.NewSession(&bytes.Buffer{})
				script := fmt.Sprintf(`
SET 'pipeline.name' = '%s';
SET 'execution.checkpointing.interval' = '1 s';
SET 'state.checkpoints.dir' = '%s';
SET 'parallelism.default' = '2';
CREATE TABLE seq (k BIGINT) WITH ('connector' = 'datagen', 'scan.parallelism' = '1', 'rows-per-second' = '0', 'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '%d');
CREATE TABLE res (k BIGINT, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'mysql', 'url' = '%s', 'table-name' = '%s', 'sink.semantic' = 'exactly-once');
%s;`, mysql.UniqueForTest("bench"), b.TempDir(), c.rows, dsn, table, c.query)
				start := time.Now()
				if err := lastJob(b, run(b, s, script)).Wait(); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			var n int
			if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
				b.Fatal(err)
			}
			if want := min(c.rows, 1000); c.name == "agg1000" && n != want || c.name == "distinct" && n != c.rows {
				b.Fatalf("%d rows in the table", n)
			}
			b.ReportMetric(float64(c.rows)*float64(b.N)/total.Seconds(), "rows/s")
			// Commit latency from the Prometheus histogram: quantiles are
			// the upper bounds of its buckets (1 ms, doubling).
			if lat := metrics.Snapshot(metrics.SinkCommitLatency).Since(commits); lat.Count > 0 {
				b.ReportMetric(lat.Quantile(0.5)*1000, "p50-commit-ms")
				b.ReportMetric(lat.Quantile(0.99)*1000, "p99-commit-ms")
				b.ReportMetric(float64(lat.Count)/float64(b.N), "commits/job")
			}
		})
	}
}
