package dataflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/state"
)

// Checkpointer is the runtime's view of the checkpoint coordinator. Its
// methods are called concurrently from source and task goroutines.
type Checkpointer interface {
	// SourceBarrier is called on a source subtask's goroutine when it has
	// taken barrier b at position pos, just before the barrier travels
	// downstream.
	SourceBarrier(b Barrier, node *Node, subtask int, pos []byte)
	// SnapshotSubtask is called on the task goroutine once an operator
	// subtask has aligned barrier b and its operator has put its extra
	// state into its store (Operator.SnapshotState): it snapshots the
	// store (state.Store.Snapshot) and acknowledges once the snapshot is
	// written, which may be after it returns, on another goroutine (the
	// operator goes on meanwhile). sized is then called with the size in
	// bytes of the subtask's state in the checkpoint (0 when it keeps
	// none). An error declines the checkpoint; the job goes on.
	SnapshotSubtask(b Barrier, node *Node, subtask int, store state.Store, sized func(bytes int64)) error
	// Decline reports that a subtask could not take part in checkpoint b.
	Decline(b Barrier, node *Node, subtask int, err error)
}

// ErrSourceFinished is returned by TriggerBarrier once any source has
// ended: a finished source can take no more barriers, so no later
// checkpoint could complete.
var ErrSourceFinished = errors.New("dataflow: a source has finished; no further checkpoints")

// TriggerBarrier asks every source subtask to inject barrier b into its
// stream at its next chunk boundary, or at once if it is waiting (see
// SourceOutput.Control). It does not wait. It fails while a source has
// not yet taken the previous barrier.
func (j *Job) TriggerBarrier(b Barrier) error {
	if j.sourcesDone.Load() > 0 {
		return ErrSourceFinished
	}
	for _, so := range j.sources {
		if last := so.lastBarrier.Load(); last > so.taken.Load() {
			return fmt.Errorf("dataflow: source %s/%d has not yet taken barrier %d", so.node.Name, so.subtask, last)
		}
	}
	// Every source gets the barrier, or the job has stopped: a barrier
	// that reached only some of them would leave the operators that
	// align it waiting for the others. (A source that has just ended
	// counts as arrived in the alignment.) The channel has room, since
	// the previous barrier was taken.
	for _, so := range j.sources {
		select {
		case so.ctl <- Element{Kind: KindBarrier, Barrier: b}:
			so.lastBarrier.Store(b.CheckpointID)
		case <-so.finished:
		case <-j.ctx.Done():
			return context.Cause(j.ctx)
		}
	}
	return nil
}

// NotifyCheckpointComplete tells the job that checkpoint id completed
// everywhere (Flink's notifyCheckpointComplete). Every source sends the
// notice into its stream (KindCheckpointComplete), so that it reaches
// each operator once, in order with the data: after barrier id and
// before barrier id+1. It returns once every source that still runs has
// the notice queued.
func (j *Job) NotifyCheckpointComplete(id int64) error {
	e := Element{Kind: KindCheckpointComplete, Barrier: Barrier{CheckpointID: id}}
	for _, so := range j.sources {
		select {
		case so.ctl <- e:
		case <-so.finished:
			// The source has ended: the operators downstream of it have
			// either ended too or hear of the checkpoint from another.
		case <-j.ctx.Done():
			return context.Cause(j.ctx)
		}
	}
	return nil
}

// injectBarrier saves the source's position for checkpoint b and sends
// the barrier downstream. A source that cannot save its position
// declines the checkpoint, and the barrier still travels, so that
// downstream stays aligned.
func (so *sourceOutput) injectBarrier(b Barrier) error {
	so.taken.Store(b.CheckpointID)
	cp := so.j.opts.Checkpointer
	pos, err := so.src.SnapshotPosition(b.CheckpointID)
	switch {
	case cp == nil:
	case err != nil:
		cp.Decline(b, so.node, so.subtask, fmt.Errorf("source %s: %w", so.node.Name, err))
	default:
		cp.SourceBarrier(b, so.node, so.subtask, pos)
	}
	return so.send(Element{Kind: KindBarrier, Barrier: b})
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
