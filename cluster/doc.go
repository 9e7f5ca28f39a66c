// Package cluster runs one job across many streamsql worker processes,
// on systems users already run: Kafka for data exchange and membership,
// a shared checkpoint store (a volume or object storage) for state, and
// Kubernetes (or anything that restarts processes) for placement. There
// is no cluster manager of streamsql's own; the model is Kafka Streams'.
//
// Stages. The job graph is cut at its key-hash, rebalance and single
// exchanges into stages. Stage 0 reads the job's sources; every later
// stage reads an internal topic written by the stage before it, named
// after the job and the stage, with one partition per key-group range.
// The partition count is fixed when the job first starts; it bounds the
// parallelism of every stage.
//
// Tasks. A task is one stage × one partition (TaskID). Each task runs as
// an ordinary single-process dataflow job with its own checkpoint
// coordinator: its state, its input offsets and its output transaction
// are committed together by the existing checkpoint and two-phase-commit
// machinery, into its own folder of the checkpoint store. No barrier
// crosses processes. A task's output reaches the next stage when its
// checkpoint commits the Kafka transaction (read_committed), so each
// stage adds about one checkpoint interval of latency.
//
// Watermarks and end-of-input cross stage boundaries in-band, as marker
// records written by each upstream task into every partition it writes;
// a downstream task takes the minimum over the upstream tasks.
//
// Membership. Workers of one job join one Kafka consumer group; the
// group's assignment hands out tasks. A worker that joins or leaves
// triggers a rebalance, and a moved task restores its latest complete
// checkpoint on its new worker. Each task writes with one transactional
// id, so the task's old owner is fenced as soon as the new one starts.
package cluster
