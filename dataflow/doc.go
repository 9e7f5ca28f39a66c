// Package dataflow owns the job runtime: the one element type that flows
// between operators, the Operator and Source contracts, the job graph and
// its execution as tasks on goroutines with key-hash exchanges.
//
// A job graph is a DAG of nodes. Each node runs as one or more parallel
// subtasks. Nodes joined by a forward edge of equal parallelism are
// chained into one task: their operators call each other directly, with
// no channel in between (Flink's operator chaining). Between tasks, data
// moves through bounded channels in chunks, never one row per send, and
// is routed by the edge's partitioning: forward, hash of key columns,
// single (everything to subtask 0) or rebalance.
//
//	source(values) ──forward──▶ [calc → ...] ──hash(k)──▶ [agg → sink]
//	   goroutine                  task i                   task j
//
// Control elements travel in order with the data on the same channels:
// watermarks (event-time progress), checkpoint barriers and end-of-input.
// For each node the runtime tracks every (input, sender) pair and:
//   - calls ProcessWatermark when the minimum watermark over all senders
//     advances, then forwards that watermark;
//   - aligns barriers: once a sender has delivered barrier n, its later
//     elements are held back until every sender has delivered barrier n;
//     then the barrier is handed to the operator (if it snapshots) and
//     forwarded;
//   - calls Finish once every sender has delivered end-of-input, then
//     forwards end-of-input.
//
// A bounded source ends with a watermark of MaxWatermark and then
// end-of-input, so the job drains and finishes.
package dataflow
