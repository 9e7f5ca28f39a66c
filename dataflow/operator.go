package dataflow

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
)

// Collector receives an operator's output chunks.
//
// Ownership: Emit takes the chunk; the operator must not touch it again.
// Rows inside are immutable and may still be referenced by the operator's
// state. Emit may run the downstream operators synchronously (chaining),
// so an operator must be in a consistent state when it calls Emit.
type Collector interface {
	Emit(c *dyntable.Chunk)
}

// Operator is one step of the dataflow, run by one subtask.
//
// Call order: Open once; then, from one goroutine, any interleaving of
// ProcessChunk and ProcessWatermark; then Finish once if and only if every
// input reached end-of-input; then Close once, always, even after an
// error. No two calls run concurrently.
//
// ProcessChunk owns c for the duration of the call; it may keep c's rows
// but not c itself. ProcessWatermark is called when the minimum watermark
// over all inputs advances; the runtime forwards the watermark downstream
// after it returns, so results it emits precede the watermark. Finish is
// called after the final watermark, before end-of-input is forwarded.
//
// An error from any call fails the job. An operator that detects a broken
// invariant (a retraction of a row it never saw, say) returns an error
// naming the operator; it never emits a silently wrong row.
type Operator interface {
	Open(ctx *OpContext) error
	ProcessChunk(input int, c *dyntable.Chunk, out Collector) error
	ProcessWatermark(wm int64, out Collector) error
	Finish(out Collector) error
	Close() error
}

// WatermarkEmitter is implemented by the Collector given to operators of
// nodes with GeneratesWatermarks set: such an operator (a watermark
// assigner) emits watermarks itself, and the runtime forwards only the
// final MaxWatermark from its inputs.
type WatermarkEmitter interface {
	EmitWatermark(ts int64) error
}

// Snapshotter is an optional interface of operators with state to put
// into checkpoint n when barrier n has been aligned.
type Snapshotter interface {
	SnapshotState(b Barrier) error
}

// ProcessingTimer is an optional interface of operators that act on the
// wall clock (processing-time windows): the runtime calls
// OnProcessingTime about every ProcessingTimeInterval, from the task's
// goroutine, between the other calls (never after Finish). An interval of
// 0 asks for no calls.
type ProcessingTimer interface {
	ProcessingTimeInterval() time.Duration
	OnProcessingTime(now time.Time, out Collector) error
}

// LateRecordCounter is an optional interface of operators that drop rows
// that arrive behind the watermark (window operators); the count feeds
// the job's metrics. LateRecordsDropped may be called from any goroutine.
type LateRecordCounter interface {
	LateRecordsDropped() int64
}

// CheckpointListener is an optional interface of operators (sinks, mostly)
// that act when a checkpoint has completed everywhere.
type CheckpointListener interface {
	NotifyCheckpointComplete(checkpointID int64) error
}

// SourceOutput receives what a source produces, in order.
type SourceOutput interface {
	// Emit hands over a chunk. It blocks while downstream is busy and
	// returns ctx.Err() once the job is cancelled.
	Emit(c *dyntable.Chunk) error
	// EmitWatermark declares that no row older than ts will follow.
	EmitWatermark(ts int64) error
}

// Source produces one input stream, run by one subtask.
//
// Call order: Open; Run once in a goroutine of its own; Close once, always.
// Run returns nil when a bounded input is exhausted — the runtime then
// emits the final watermark and end-of-input — or ctx.Err() when the job
// is cancelled, or an error that fails the job.
type Source interface {
	Open(ctx *OpContext) error
	Run(ctx context.Context, out SourceOutput) error
	Close() error
}

// OpContext is what the runtime gives an operator or source subtask.
type OpContext struct {
	// Ctx is the job's context: it is cancelled when the job stops, so
	// operators that wait on external systems (a sink retrying a commit)
	// give up promptly.
	Ctx         context.Context
	JobName     string
	NodeID      int
	NodeName    string
	Subtask     int
	Parallelism int
	// State is this subtask's keyed-state namespace.
	State state.Store
	// Shared holds job-scoped objects that subtasks of different nodes
	// coordinate through (e.g. the values sources' replay order).
	Shared *Shared
	Log    *slog.Logger
}

// Context returns Ctx, or context.Background() for an OpContext built
// without one, or a nil OpContext (operator tests).
func (c *OpContext) Context() context.Context {
	if c == nil || c.Ctx == nil {
		return context.Background()
	}
	return c.Ctx
}

// Logger returns Log, or slog.Default() for an OpContext built without
// one, or a nil OpContext (operator tests).
func (c *OpContext) Logger() *slog.Logger {
	if c == nil || c.Log == nil {
		return slog.Default()
	}
	return c.Log
}

// Shared is a job-scoped registry of objects, created on first use.
type Shared struct {
	mu sync.Mutex
	m  map[string]any
}

// NewShared returns an empty registry.
func NewShared() *Shared { return &Shared{m: map[string]any{}} }

// Get returns the object under key, creating it with init on first use.
func (s *Shared) Get(key string, init func() any) any {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[key]; ok {
		return v
	}
	v := init()
	s.m[key] = v
	return v
}
