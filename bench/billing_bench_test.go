package bench

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/connectors/mysql/mysqltest"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/examples/billing/bills"
	"github.com/streamsql/streamsql/internal/metrics"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/repl"
)

// BenchmarkBillingMySQL runs the billing example's MySQL job (tables.sql
// + to_mysql.sql, checkpoints every second, source parallelism 2) over
// bills already in the local broker, the source bounded at the latest
// offsets so the job ends when it has read them. One op is one bill
// event. It reports events/s and the commit latency (p50/p99 from a
// checkpoint's pre-commit on the barrier to its XA COMMIT).
//
//	go test -run=NONE -bench=BillingMySQL -benchtime=300000x ./bench
func BenchmarkBillingMySQL(b *testing.B) {
	dsn := mysqltest.Database(b, "streamsql_billing_bench")
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"DROP TABLE IF EXISTS user_totals",
		"CREATE TABLE user_totals (user_id BIGINT PRIMARY KEY, total_cents BIGINT NOT NULL, bills BIGINT NOT NULL)"} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	br, err := broker.Start(broker.Config{Topics: []string{"bills", "user_totals"}, Partitions: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	cfg := bills.DefaultConfig()
	cfg.Bills = max(b.N, 1000) * 100 / 105 // about b.N events with the resends
	recs := bills.Generate(cfg)
	if err := bills.Produce(context.Background(), br.Addr(), "bills", recs, 0, nil); err != nil {
		b.Fatal(err)
	}
	vars := repl.Vars{"bootstrap": br.Addr(), "checkpoints": b.TempDir(), "mysql_url": dsn}
	var script strings.Builder
	for _, f := range []string{"tables.sql", "to_mysql.sql"} {
		text, err := os.ReadFile(filepath.Join("..", "examples", "billing", f))
		if err != nil {
			b.Fatal(err)
		}
		script.WriteString(repl.Substitute(string(text), vars, io.Discard, f))
	}
	// Only the MySQL job, bounded at the offsets present now.
	sqlText := script.String()
	sqlText = strings.Replace(sqlText, "'connector' = 'kafka',", "'connector' = 'kafka',\n  'scan.bounded.mode' = 'latest-offset',", 1)
	sqlText = sqlText[:strings.Index(sqlText, "SET 'pipeline.name' = 'billing-topic'")]
	commits := metrics.Snapshot(metrics.SinkCommitLatency)
	s := engine.NewSession(io.Discard)
	stmts, err := parser.Parse(sqlText)
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
		}
	}
	if err := job.Wait(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	got, err := bills.MySQLTotals(db, "user_totals")
	if err != nil {
		b.Fatal(err)
	}
	if l, d, m := bills.Diff(bills.Reference(recs), got); l+d+m != 0 {
		b.Fatalf("lost=%d duplicated=%d mismatched=%d", l, d, m)
	}
	b.ReportMetric(float64(len(recs))/b.Elapsed().Seconds(), "events/s")
	// Commit latency from the Prometheus histogram: quantiles are the
	// upper bounds of its buckets (1 ms, doubling).
	if lat := metrics.Snapshot(metrics.SinkCommitLatency).Since(commits); lat.Count > 0 {
		b.ReportMetric(lat.Quantile(0.5)*1000, "commit-p50-ms")
		b.ReportMetric(lat.Quantile(0.99)*1000, "commit-p99-ms")
		b.ReportMetric(float64(lat.Count), "commits")
	}
}
