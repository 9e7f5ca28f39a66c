// Package checkpoint owns checkpoint coordination, Flink's asynchronous
// barrier snapshots, and the on-disk layout of checkpoints and savepoints.
//
// The Coordinator plays the JobManager's part for one job:
//
//  1. every execution.checkpointing.interval it asks each source subtask
//     (dataflow.Job.TriggerBarrier) to inject barrier n into its stream;
//     the source saves its position and sends the barrier downstream;
//  2. each operator subtask aligns barrier n over its inputs and takes
//     the synchronous part of a snapshot of its keyed state
//     (state.Store.Snapshot: hashmap key groups frozen for copy-on-access,
//     or a Pebble checkpoint of hard-linked SSTs), then goes on; the
//     snapshot is written on another goroutine, and the subtask
//     acknowledges once it is (each checkpoint costs roughly its change:
//     unchanged key groups or SSTs are hard-linked);
//  3. when every subtask has acknowledged, the coordinator writes
//     chk-n/_metadata durably (checksummed, fsynced, atomically renamed)
//     — only then is checkpoint n complete — and notifies every operator
//     (NotifyCheckpointComplete: each source sends the notice down its
//     stream, ahead of barrier n+1), where two-phase-commit sinks commit;
//  4. a decline or a timeout aborts checkpoint n only; the job goes on.
//
// On start it restores from the newest valid checkpoint of the job (or
// from execution.savepoint.path): every operator subtask's state, re-split
// by key group if the parallelism changed, and every source's position.
// A checkpoint without valid metadata is skipped with a warning; one whose
// plan differs from the job's is refused unless the user starts fresh.
//
// Layout under state.checkpoints.dir/<job name>:
//
//	work/node-<id>-<subtask>/   the running job's Pebble databases
//	chk-<n>/_metadata           JSON: plan hash, positions, state dirs, checksum
//	chk-<n>/node-<id>-<subtask>/ that subtask's state: a Pebble checkpoint,
//	                            or key-group files (hashmap)
//
// A cluster task's store (Config.Owned) is fenced by owner epochs
// (owner.go): each run claims owners/<e> atomically and keeps the layout
// above under e-<e>/; restoring follows the newest epoch's history, and a
// run that finds a newer epoch after writing a checkpoint's metadata
// commits nothing and stops with ErrFenced.
//
// A savepoint has the same shape in a directory of its own; every path in
// its metadata is relative, so it can be copied anywhere. Its state is in
// the canonical key-group format (state/canonical.go), which either
// backend restores.
//
// Stores (store.go). The coordinator keeps checkpoints through one small
// interface, Store, with two implementations:
//
//	localStore   state.checkpoints.dir is a path: the layout above,
//	             snapshots written in place, nothing to upload
//	bucketStore  a URL, file:///dir (a shared volume) or
//	             s3://bucket/prefix?region=… (gocloud.dev/blob): the same
//	             layout as objects; the work/ directory and the snapshots
//	             are written to a local temporary directory first
//
// With a bucket, each subtask uploads its snapshot once written (PutState,
// on the snapshot's goroutine), and the coordinator writes chk-<n>/_metadata
// last, once every subtask has acknowledged: a reader that finds the
// metadata finds every file it lists. The completion notices, and with
// them the two-phase-commit sinks' commits, follow the metadata. A file
// identical to one of the previous checkpoint (same subtask, name, size
// and checksum: Pebble's SSTs, unchanged key-group files) is not uploaded
// again; the metadata names the object that holds it, and pruning keeps
// every object a retained checkpoint names. Restoring lists chk-<n> in the
// store, reads the metadata newest first, skips one that is missing or
// corrupt, downloads the state of the first good one to the local
// directory and restores from there as from a local checkpoint.
package checkpoint
