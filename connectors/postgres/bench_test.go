package postgres_test

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/postgres/pgtest"
	"github.com/streamsql/streamsql/engine"
)

// BenchmarkJDBCSink runs a SQL job of 300,000 distinct keys into the
// jdbc sink on the private PostgreSQL, at parallelism 2 with a 1 s
// checkpoint interval, and reports rows/s (input rows over the job's
// wall time, the final commit included) for upsert and exactly-once.
func BenchmarkJDBCSink(b *testing.B) {
	pg := pgtest.Shared(b)
	c := pg.Conn(b)
	const rows = 300000
	for _, sem := range []string{"upsert", "exactly-once"} {
		b.Run(sem, func(b *testing.B) {
			table := fmt.Sprintf("bench_%d", os.Getpid())
			pg.Exec(b, c, "DROP TABLE IF EXISTS "+table, "CREATE TABLE "+table+" (k BIGINT PRIMARY KEY, v BIGINT NOT NULL)")
			defer pg.Exec(b, c, "DROP TABLE "+table)
			var total time.Duration
			for i := 0; i < b.N; i++ {
				pg.Exec(b, c, "TRUNCATE "+table)
				script := fmt.Sprintf(`
SET 'pipeline.name' = 'bench_%d_%d';
SET 'execution.checkpointing.interval' = '1 s';
SET 'state.checkpoints.dir' = '%s';
SET 'parallelism.default' = '2';
CREATE TABLE seq (k BIGINT) WITH ('connector' = 'datagen', 'scan.parallelism' = '1', 'rows-per-second' = '0', 'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '%d');
CREATE TABLE res (k BIGINT, v BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '%s', 'table-name' = '%s', 'sink.semantic' = '%s');
INSERT INTO res SELECT k, k * 2 FROM seq;`, os.Getpid(), i, b.TempDir(), rows, pg.JDBC(), table, sem)
				start := time.Now()
				if err := run(b, engine.NewSession(&bytes.Buffer{}), script).Wait(); err != nil {
					b.Fatal(err)
				}
				total += time.Since(start)
			}
			if got := pgtest.Rows(b, c, "SELECT count(*) FROM "+table); got[0] != fmt.Sprint(rows) {
				b.Fatalf("%s rows in the table, want %d", got[0], rows)
			}
			b.ReportMetric(float64(rows*b.N)/total.Seconds(), "rows/s")
		})
	}
}
