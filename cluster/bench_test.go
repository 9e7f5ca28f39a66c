package cluster

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/internal/metrics"
	"github.com/streamsql/streamsql/parser"
)

// benchEvents is the Nexmark events each run reads (92% of them bids).
const benchEvents = 200000

// BenchmarkClusterTumble runs the tumbling-window job of
// TestTumbleAfterShuffle (one hash exchange, on the auction) over
// benchEvents Nexmark events with a blackhole sink: once as one
// single-process job at parallelism 4, and as a cluster job of 4
// partitions with all 8 tasks in this process over the embedded broker,
// at several checkpoint intervals. The difference is the cost of the
// internal topic: encoding, transactional writes, read_committed reads,
// and waiting for checkpoints to commit. The exchange's latency comes
// from streamsql_cluster_exchange_latency_seconds.
//
//	go test ./cluster -run '^$' -bench ClusterTumble -benchtime 3x
func BenchmarkClusterTumble(b *testing.B) {
	query := nexmarkDDL(b, benchEvents, 0) + tumbleQuery
	b.Run("single", func(b *testing.B) {
		for range b.N {
			s := engine.NewSession(io.Discard)
			sql := "SET 'parallelism.default' = '4';\n" + query
			stmts, err := parser.Parse(sql)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
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
			b.ReportMetric(float64(benchEvents)/time.Since(start).Seconds(), "events/s")
		}
	})
	for _, interval := range []string{"100 ms", "500 ms", "2 s"} {
		b.Run("cluster/interval="+interval, func(b *testing.B) { benchCluster(b, query, interval, benchEvents) })
	}
	// Below capacity (5,000 events/s), the exchange's latency is the
	// wait for the writer's checkpoint rather than a backlog.
	paced := nexmarkDDL(b, 20000, 5000) + tumbleQuery
	for _, interval := range []string{"100 ms", "500 ms", "2 s"} {
		b.Run("paced/interval="+interval, func(b *testing.B) { benchCluster(b, paced, interval, 20000) })
	}
}

// benchCluster runs query as a cluster job of 4 partitions reading
// events events, with checkpoints every interval.
func benchCluster(b *testing.B, query, interval string, events int) {
	br := startBroker(b)
	for i := range b.N {
		sql := clusterSettings(b, 4, interval) + fmt.Sprintf("SET 'pipeline.name' = 'bench%d';\n", i) + query
		j, err := Compile(context.Background(), Config{Script: sql, File: "bench.sql", BootstrapServers: []string{br.Addr()}})
		if err != nil {
			b.Fatal(err)
		}
		lat := metrics.Snapshot(metrics.StageExchangeLatency)
		start := time.Now()
		runAll(b, j, 10*time.Minute, nil)
		b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
		// Latency of the exchange (write to read, commit wait
		// included): mean, and the buckets of the median and the
		// 99th percentile.
		l := metrics.Snapshot(metrics.StageExchangeLatency).Since(lat)
		b.ReportMetric(l.Sum/float64(l.Count)*1e3, "exchange-mean-ms")
		b.ReportMetric(l.Quantile(0.5)*1e3, "exchange-p50-ms")
		b.ReportMetric(l.Quantile(0.99)*1e3, "exchange-p99-ms")
		b.ReportMetric(float64(l.Count), "rows-exchanged")
	}
}
