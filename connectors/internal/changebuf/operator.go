package changebuf

import (
	"context"
	"sync"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
)

// Writer is the database half of an at-least-once (upsert or append)
// sink subtask run by Operator.
//
// Call order: Open once; Write any number of times, never concurrently;
// Close once, always.
type Writer interface {
	// Open connects and checks the target table.
	Open(ctx context.Context) error
	// Write writes every change of b, retrying transient failures
	// itself; an error is final and fails the job. b is reset by the
	// caller after a success.
	Write(ctx context.Context, b *Buffer) error
	// Close releases the connections.
	Close() error
}

// Operator is the at-least-once sink operator of a database: changes are
// buffered (compacted by key) and written by size, by interval (a
// flusher goroutine) and at every barrier, so a completed checkpoint
// means the rows are in the database. A replay after a failure rewrites
// the same keys with the same final values. mu guards the buffer and the
// writer.
type Operator struct {
	dataflow.BaseOperator
	sink     string // names the sink in errors
	w        Writer
	pk       []int
	maxRows  int
	interval time.Duration

	ctx context.Context

	mu      sync.Mutex
	buf     *Buffer
	failed  error // a write that failed for good: the job must stop
	stop    chan struct{}
	stopped chan struct{}
}

var _ dataflow.Operator = (*Operator)(nil)

// NewOperator runs w for a table with primary key pk, writing once
// maxRows changes are buffered and at least every interval (0: only by
// size and at barriers).
func NewOperator(sink string, w Writer, pk []int, maxRows int, interval time.Duration) *Operator {
	return &Operator{sink: sink, w: w, pk: pk, maxRows: maxRows, interval: interval}
}

func (o *Operator) Open(oc *dataflow.OpContext) error {
	o.ctx = oc.Context()
	if err := o.w.Open(o.ctx); err != nil {
		return err
	}
	o.buf = New(o.pk)
	if o.interval > 0 {
		o.stop, o.stopped = make(chan struct{}), make(chan struct{})
		go o.flusher()
	}
	return nil
}

func (o *Operator) flusher() {
	defer close(o.stopped)
	t := time.NewTicker(o.interval)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-o.ctx.Done():
			return
		case <-t.C:
			o.mu.Lock()
			if o.failed == nil && o.buf.Len() > 0 {
				if err := o.flushLocked(); err != nil {
					o.failed = err
				}
			}
			o.mu.Unlock()
		}
	}
}

// flushLocked writes the buffer; on success it is emptied. mu is held.
func (o *Operator) flushLocked() error {
	if o.buf.Len() == 0 {
		return nil
	}
	if err := o.w.Write(o.ctx, o.buf); err != nil {
		return err
	}
	o.buf.Reset()
	return nil
}

func (o *Operator) ProcessChunk(_ int, c *dyntable.Chunk, _ dataflow.Collector) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failed != nil {
		return o.failed
	}
	if err := o.buf.Add(o.sink, c); err != nil {
		return err
	}
	if o.buf.Len() >= o.maxRows {
		return o.flushLocked()
	}
	return nil
}

// SnapshotState writes on the barrier: a checkpoint completes only once
// every change before it is in the database. A failure declines the
// checkpoint; the changes stay buffered.
func (o *Operator) SnapshotState(dataflow.Barrier) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failed != nil {
		return o.failed
	}
	return o.flushLocked()
}

func (o *Operator) Finish(dataflow.Collector) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.failed != nil {
		return o.failed
	}
	return o.flushLocked()
}

func (o *Operator) Close() error {
	if o.stop != nil {
		close(o.stop)
		<-o.stopped
	}
	return o.w.Close()
}
