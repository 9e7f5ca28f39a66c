// Package cluster runs one job across many streamsql worker processes,
// on systems users already run: Kafka for data exchange and membership,
// a shared checkpoint store (a volume or object storage) for state, and
// Kubernetes (or anything that restarts processes) for placement. There
// is no cluster manager of streamsql's own; the model is Kafka Streams'.
//
// Stages. Compile plans the job file's INSERT with the ordinary planner,
// at parallelism cluster.partitions, and cuts the job graph at its
// key-hash, rebalance and single exchanges into stages (stage.go): the
// nodes joined by forward edges. The stages that read the job's sources
// come first; every other stage reads internal topics written by the
// stages before it, one per cut edge, named after the job and the stage
// that reads it (streamsql-<job>-s<n>, streamsql-<job>-s<n>-in<k> for
// its further inputs), with one partition per key-group range. The
// partition count is fixed when the job first starts; it bounds the
// parallelism of every stage.
//
//	s0: [Scan(bid) → WatermarkAssigner → Calc] → StageSink ─▶ topic streamsql-j-s1 (P partitions)
//	s1: StageSource(partition p) → [WindowAggregate → Sink]
//
// A stage sink (exchange_sink.go) routes each row as the in-memory hash
// exchange would (same key group, partition = key-group range) and
// writes it, in the binary row encoding of state with its changelog
// kind (exchange.go), through the exactly-once Kafka sink's
// two-phase-commit handler; a stage source (exchange_source.go) reads
// one partition read_committed through the Kafka source's fetch path.
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
// Watermarks, idleness and end-of-input cross stage boundaries in-band,
// as marker records written by each upstream task into every partition
// it writes, inside its transactions; a downstream task takes the
// minimum over the upstream tasks that are not idle, and ends once all
// have ended. Its offset and the upstream watermarks are its
// checkpointed position.
//
// RunTask (task_run.go) builds a task's graph from a fresh build of the
// job graph: the stage's nodes at parallelism 1, each seeing itself as
// subtask p of the stage (dataflow.Options.Shard), between its stage
// sources and stage sinks, and runs it with a checkpoint coordinator of
// its own in <state.checkpoints.dir>/<job>/s<n>-p<p>.
//
// Membership. Workers of one job join one Kafka consumer group; the
// group's assignment hands out tasks. A worker that joins or leaves
// triggers a rebalance, and a moved task restores its latest complete
// checkpoint on its new worker. Each run of a task claims an owner epoch
// in the checkpoint store (checkpoint/owner.go; dataflow.Shard.Epoch
// carries it to the operators, and MySQL XA names carry it) and writes
// with one transactional id per task, so the task's old owner is fenced
// as soon as the new one starts: it commits nothing more, in Kafka, in
// MySQL or in the checkpoint store.
package cluster
