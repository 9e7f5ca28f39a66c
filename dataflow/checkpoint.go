package dataflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/state"
)

// CheckpointedSource is an optional interface of Sources whose position
// can be saved in a checkpoint and restored, so that a restarted job
// resumes where the checkpoint was taken (offset, sequence, row index).
type CheckpointedSource interface {
	// SnapshotPosition is called from inside SourceOutput.Emit or
	// EmitWatermark, on the source's goroutine, after the chunk has been
	// handed on: it must describe the position just after the last row
	// emitted. Sources therefore advance their position before Emit.
	SnapshotPosition() ([]byte, error)
	// RestorePosition is called after Open and before Run.
	RestorePosition(pos []byte) error
}

// SourceCheckpointListener is an optional interface of CheckpointedSources
// that act once a checkpoint has completed, as a Kafka source commits the
// offsets stored in it to its consumer group, for monitoring. (Hook added
// for the Kafka source; operators use CheckpointListener.)
//
// PositionSaved is called on the source's goroutine right after
// SnapshotPosition returned pos for checkpoint checkpointID.
// NotifyCheckpointComplete is called from the checkpoint coordinator's
// goroutine, concurrently with Run and possibly after Close: it must
// synchronise with Run itself and return quickly. Its error is logged;
// it never fails the job.
type SourceCheckpointListener interface {
	PositionSaved(checkpointID int64, pos []byte)
	NotifyCheckpointComplete(checkpointID int64) error
}

// Checkpointer is the runtime's view of the checkpoint coordinator. Its
// methods are called concurrently from source and task goroutines.
type Checkpointer interface {
	// SourceBarrier is called on a source subtask's goroutine when it has
	// injected barrier b at position pos (nil for a source without
	// positions), just before the barrier travels downstream.
	SourceBarrier(b Barrier, node *Node, subtask int, pos []byte)
	// SnapshotSubtask is called on the task goroutine once an operator
	// subtask has aligned barrier b and its operator has snapshotted its
	// own extra state (Snapshotter): it snapshots the subtask's store and
	// acknowledges. An error declines the checkpoint; the job goes on.
	SnapshotSubtask(b Barrier, node *Node, subtask int, store state.Store) error
	// Decline reports that a subtask could not take part in checkpoint b.
	Decline(b Barrier, node *Node, subtask int, err error)
}

// ErrSourceFinished is returned by TriggerBarrier once any source has
// ended: a finished source can take no more barriers, so no later
// checkpoint could complete.
var ErrSourceFinished = errors.New("dataflow: a source has finished; no further checkpoints")

// TriggerBarrier asks every source subtask to inject barrier b into its
// stream at the next chunk boundary. It does not wait.
func (j *Job) TriggerBarrier(b Barrier) error {
	if j.sourcesDone.Load() > 0 {
		return ErrSourceFinished
	}
	for _, so := range j.sources {
		select {
		case so.inject <- b:
		default:
			return fmt.Errorf("dataflow: source %s/%d has not yet taken the previous barrier", so.node.Name, so.subtask)
		}
	}
	return nil
}

// NotifyCheckpointComplete tells every operator subtask that checkpoint
// id is complete (Flink's notifyCheckpointComplete). The call is
// delivered on each task's goroutine, in order with its data.
func (j *Job) NotifyCheckpointComplete(id int64) error {
	for _, t := range j.tasks {
		select {
		case t.inbox <- envelope{node: -1, notify: id}:
		case <-j.ctx.Done():
			return context.Cause(j.ctx)
		case <-j.done:
			return nil // the job finished; nobody is left to notify
		}
	}
	// Sources that listen are told directly (SourceCheckpointListener).
	for _, so := range j.sources {
		if l, ok := so.src.(SourceCheckpointListener); ok {
			if err := l.NotifyCheckpointComplete(id); err != nil && j.opts.Log != nil {
				j.opts.Log.Warn("source: checkpoint complete", "node", so.node.Name, "subtask", so.subtask, "checkpoint", id, "err", err)
			}
		}
	}
	return nil
}

// notify runs NotifyCheckpointComplete on a task's operators.
func (t *task) notify(id int64) error {
	for _, nr := range t.nodes {
		if l, ok := nr.op.(CheckpointListener); ok {
			if err := l.NotifyCheckpointComplete(id); err != nil {
				return fmt.Errorf("%s: checkpoint %d complete: %w", nr.node.Name, id, err)
			}
		}
	}
	return nil
}

// injectPending injects a barrier the coordinator asked for, if any.
func (so *sourceOutput) injectPending() error {
	select {
	case b := <-so.inject:
		return so.injectBarrier(b)
	default:
		return nil
	}
}

func (so *sourceOutput) injectBarrier(b Barrier) error {
	cp := so.j.opts.Checkpointer
	var pos []byte
	if cs, ok := so.src.(CheckpointedSource); ok {
		p, err := cs.SnapshotPosition()
		if err != nil {
			cp.Decline(b, so.node, so.subtask, fmt.Errorf("%s: position: %w", so.node.Name, err))
			return nil
		}
		pos = p
	} else {
		cp.Decline(b, so.node, so.subtask, fmt.Errorf("source %s cannot save its position in a checkpoint", so.node.Name))
		return nil
	}
	if l, ok := so.src.(SourceCheckpointListener); ok {
		l.PositionSaved(b.CheckpointID, pos)
	}
	cp.SourceBarrier(b, so.node, so.subtask, pos)
	for _, o := range so.outs {
		if err := o.send(Element{Kind: KindBarrier, Barrier: b}); err != nil {
			return err
		}
	}
	return nil
}

// SourcesAtEnd reports whether every source subtask has reached the end
// of its input and waits for the final checkpoint (Options.FinalCheckpoint).
func (j *Job) SourcesAtEnd() bool {
	return len(j.sources) > 0 && int(j.atEnd.Load()) == len(j.sources)
}

// ReleaseFinishedSources lets the sources waiting at the end of their
// input end their streams: the final checkpoint has completed (or could
// not be taken). Calling it again does nothing.
func (j *Job) ReleaseFinishedSources() {
	j.releaseOnce.Do(func() { close(j.release) })
}
