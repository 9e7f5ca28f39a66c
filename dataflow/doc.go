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
// One message type flows through the dataflow, Element: a chunk of
// changes, or a control element. Every control signal of the runtime is
// an element, travelling in order with the data on the same channels:
// watermarks (event-time progress), idleness (a sender with no input for
// now), checkpoint barriers, checkpoint-complete notices and end-of-input.
// For each node the runtime tracks every (input, sender) pair and:
//   - calls ProcessWatermark when the minimum watermark over the senders
//     that are not idle advances, then forwards that watermark; a node
//     whose senders are all idle says so downstream;
//   - aligns barriers: once a sender has delivered barrier n, its later
//     elements are held back until every sender has delivered barrier n;
//     then the operator emits what it held back (a mini-batch's buffer,
//     PrepareSnapshotPreBarrier) and puts its extra state into its
//     store (SnapshotState), the checkpointer snapshots the store, and the
//     barrier is forwarded;
//   - hands the first copy of each checkpoint-complete notice to the
//     operator (NotifyCheckpointComplete) and forwards it;
//   - calls Finish once every sender has delivered end-of-input, then
//     forwards end-of-input.
//
// Operators implement one interface, Operator, embedding BaseOperator for
// the calls they do not need; no ability is found by type assertion, so
// a wrapper that embeds an operator or a source passes every call on.
//
// Sources receive their control elements (barriers, notices, idleness
// checks) on a channel of their own, SourceOutput.Control. A source takes
// them between chunks inside Emit, or selects on the channel while it
// waits for input, so that an idle source still checkpoints at once:
//
//	coordinator ──barrier n / complete n──▶ source.ctl
//	source: Emit(chunk) … Handle(barrier n): save position, send barrier
//
// A bounded source ends with a watermark of MaxWatermark and then
// end-of-input, so the job drains and finishes. With periodic
// checkpoints it first waits at its end, still taking barriers and
// notices, until the final checkpoint completes (FLIP-147).
package dataflow
