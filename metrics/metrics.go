// Package metrics holds the process-wide Prometheus instruments of the
// features that do not exist yet (late-record handling, transactional
// sinks), so that the HTTP endpoint exposes them from day one at zero and
// the code that lands later only has to observe them. Per-job figures
// (operator counters, checkpoints) are not here: httpapi collects them
// from the engine's jobs at scrape time.
//
// Each instrument's help text says that it stays at zero in this version;
// change that sentence when the feature lands.
package metrics

import "github.com/prometheus/client_golang/prometheus"

const pending = " Always zero in this version: "

var (
	// LateRecordsDropped counts records dropped for arriving behind the
	// watermark.
	LateRecordsDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "streamsql_late_records_dropped_total",
		Help: "Records dropped because they arrived behind the watermark: rows whose windows had all fired, in window aggregations, window ranks and window table functions.",
	})
	// SinkCommitLatency observes how long a transactional sink takes to
	// commit on a completed checkpoint.
	SinkCommitLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "streamsql_sink_commit_latency_seconds",
		Help:    "Time a transactional sink takes to commit after a checkpoint completes." + pending + "no sink commits transactionally yet.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 14), // 1 ms .. ~8 s
	})
)

// Pending lists the instruments above, for registering them.
func Pending() []prometheus.Collector {
	return []prometheus.Collector{LateRecordsDropped, SinkCommitLatency}
}
