// Package metrics holds the process-wide Prometheus instruments that are
// observed deep inside operators and sinks (late records, transactional
// commits). Per-job figures (operator counters, checkpoints) are not
// here: httpapi collects them from the engine's jobs at scrape time.
package metrics

import "github.com/prometheus/client_golang/prometheus"

var (
	// LateRecordsDropped counts records dropped for arriving behind the
	// watermark.
	LateRecordsDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "streamsql_late_records_dropped_total",
		Help: "Records dropped because they arrived behind the watermark: rows whose windows had all fired, in window aggregations, window ranks and window table functions.",
	})
	// SinkCommitLatency observes, per committed transaction of a
	// two-phase-commit sink, the time from its pre-commit to its commit.
	SinkCommitLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "streamsql_sink_commit_latency_seconds",
		Help:    "Time from a two-phase-commit sink's pre-commit on a checkpoint barrier to the commit of that transaction after the checkpoint completed.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 14), // 1 ms .. ~8 s
	})
	// StageExchangeLatency observes, per row crossing a stage boundary of
	// a cluster job, the time from its write into the internal topic to
	// its read by the next stage: mostly the wait for the writing task's
	// checkpoint to complete and commit it.
	StageExchangeLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "streamsql_cluster_exchange_latency_seconds",
		Help:    "Time from a row's write into a cluster job's internal topic to its read by the next stage (the wait for the writer's checkpoint to commit included).",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15), // 1 ms .. ~16 s
	})
)

// KafkaSkippedRecords counts malformed Kafka records skipped because of
// '<format>.ignore-parse-errors', per topic.
var KafkaSkippedRecords = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "streamsql_kafka_source_skipped_records_total",
	Help: "Malformed Kafka records skipped because of '<format>.ignore-parse-errors'.",
}, []string{"topic"})

// The cluster worker's instruments (streamsql worker).
var (
	// ClusterTasksRunning is the number of tasks running on this worker.
	ClusterTasksRunning = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "streamsql_cluster_tasks_running",
		Help: "Tasks of the cluster job running on this worker (0 on an idle worker).",
	})
	// ClusterGenerations counts the group generations (rebalances) this
	// worker went through.
	ClusterGenerations = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "streamsql_cluster_generations_total",
		Help: "Consumer-group generations of the job's workers this worker joined: one per rebalance.",
	})
)

// Collectors lists the instruments above, for registering them.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{LateRecordsDropped, SinkCommitLatency, StageExchangeLatency, KafkaSkippedRecords, ClusterTasksRunning, ClusterGenerations}
}
