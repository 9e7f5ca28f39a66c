package dataflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/internal/metrics"
	"github.com/streamsql/streamsql/state"
)

// Collector receives an operator's output.
//
// Ownership: Emit takes the chunk; the operator must not touch it again.
// Rows inside are immutable and may still be referenced by the operator's
// state. Emit may run the downstream operators synchronously (chaining),
// so an operator must be in a consistent state when it calls Emit.
//
// EmitWatermark is for the operators of nodes with GeneratesWatermarks
// set (watermark assigners): they emit watermarks themselves, and the
// runtime forwards only the final MaxWatermark from their inputs. On any
// other node it returns an error.
type Collector interface {
	Emit(c *dyntable.Chunk)
	EmitWatermark(ts int64) error
}

// Operator is one step of the dataflow, run by one subtask. Operators
// embed BaseOperator and override the calls they need; ProcessChunk is
// the one every operator writes.
//
// Call order: Open once; then, from one goroutine, any interleaving of
// ProcessChunk, ProcessWatermark, ProcessIdle, SnapshotState,
// NotifyCheckpointComplete and OnProcessingTime; then Finish once if and only if every input
// reached end-of-input; then Close once, always, even after an error. No
// two calls run concurrently.
//
// ProcessChunk owns c for the duration of the call; it may keep c's rows
// but not c itself. ProcessWatermark is called when the minimum watermark
// over all inputs advances; the runtime forwards the watermark downstream
// after it returns, so results it emits precede the watermark.
// ProcessIdle is called with true when the node becomes idle (every
// sender that has not ended said it is idle, KindIdle), and with false
// when it becomes active again; the runtime tells downstream after it
// returns (an operator that ends the dataflow, such as a cluster stage's
// sink, passes it on itself).
// PrepareSnapshotPreBarrier is called once barrier b has been aligned
// over every input, before SnapshotState: an operator that holds rows
// back outside its store (a mini-batch's buffer) emits them here, so
// that they precede the barrier downstream and the checkpoint holds
// their effect (Flink's prepareSnapshotPreBarrier); an error from it
// fails the job, since part of the buffer may be out.
// SnapshotState is called once barrier b has been aligned over every
// input, before the runtime snapshots the subtask's store and forwards
// the barrier: the operator puts into its store whatever it keeps outside
// it (a watermark, an open transaction's handle). NotifyCheckpointComplete
// is called once per completed checkpoint, after every element that
// preceded the checkpoint's barrier and before the next barrier.
// OnProcessingTime is called about every ProcessingTimeInterval (0 asks
// for no calls), never after Finish. Finish is called after the final
// watermark, before end-of-input is forwarded.
//
// An error from any call fails the job, except from SnapshotState, which
// declines that checkpoint only. An operator that detects a broken
// invariant (a retraction of a row it never saw, say) returns an error
// naming the operator; it never emits a silently wrong row.
type Operator interface {
	Open(ctx *OpContext) error
	ProcessChunk(input int, c *dyntable.Chunk, out Collector) error
	ProcessWatermark(wm int64, out Collector) error
	ProcessIdle(idle bool, out Collector) error
	PrepareSnapshotPreBarrier(b Barrier, out Collector) error
	SnapshotState(b Barrier) error
	NotifyCheckpointComplete(checkpointID int64) error
	ProcessingTimeInterval() time.Duration
	OnProcessingTime(now time.Time, out Collector) error
	Finish(out Collector) error
	Close() error
}

// BaseOperator gives an embedding operator the default of every call but
// ProcessChunk: nothing to open, watermarks and idleness only forwarded,
// nothing held back before a barrier, nothing kept outside the store, no
// processing-time calls, nothing to finish or close.
type BaseOperator struct{}

func (BaseOperator) Open(*OpContext) error                              { return nil }
func (BaseOperator) ProcessWatermark(int64, Collector) error            { return nil }
func (BaseOperator) ProcessIdle(bool, Collector) error                  { return nil }
func (BaseOperator) PrepareSnapshotPreBarrier(Barrier, Collector) error { return nil }
func (BaseOperator) SnapshotState(Barrier) error                        { return nil }
func (BaseOperator) NotifyCheckpointComplete(int64) error               { return nil }
func (BaseOperator) ProcessingTimeInterval() time.Duration              { return 0 }
func (BaseOperator) OnProcessingTime(time.Time, Collector) error        { return nil }
func (BaseOperator) Finish(Collector) error                             { return nil }
func (BaseOperator) Close() error                                       { return nil }

// SourceOutput receives what a source produces, in order, and hands the
// source the control elements the runtime has for it.
type SourceOutput interface {
	// Emit hands over a chunk, then takes any control element waiting
	// for the source (see Control). It blocks while downstream is busy
	// and returns an error once the job is cancelled.
	Emit(c *dyntable.Chunk) error
	// EmitWatermark declares that no row older than ts will follow, then
	// takes any control element waiting, like Emit.
	EmitWatermark(ts int64) error
	// Control delivers the control elements meant for this source:
	// checkpoint barriers, checkpoint-complete notices and idleness
	// checks. A source that never blocks may ignore it, since Emit and
	// EmitWatermark take what is waiting; a source that blocks (waits for
	// input, sleeps for a rate) selects on Control as well and passes each
	// element to Handle at once, so that it takes checkpoints and goes
	// idle while it has nothing to emit.
	Control() <-chan Element
	// Handle acts on a control element received from Control: for a
	// barrier it saves the source's position (Source.SnapshotPosition)
	// and sends the barrier downstream; for a notice it calls
	// Source.NotifyCheckpointComplete and sends the notice on.
	Handle(e Element) error
	// Sleep waits for d, or until ctx is done, handling control elements
	// meanwhile: the way a rate-limited source pauses.
	Sleep(ctx context.Context, d time.Duration) error
	// Idle declares the source idle now, whatever the idle timeout: a
	// source that knows it has nothing to read (a Kafka source subtask
	// without partitions) says so, so that it does not hold back the
	// watermark downstream (KindIdle). Its next row or watermark makes it
	// active again.
	Idle() error
}

// NoControl is the control half of a SourceOutput used outside a job
// (reading a bounded source whole, tests): no barrier or notice ever
// comes, and Sleep just sleeps.
type NoControl struct{}

func (NoControl) Control() <-chan Element { return nil }

func (NoControl) Handle(e Element) error {
	return fmt.Errorf("dataflow: %s outside a job", e.Kind)
}

// Idle does nothing: outside a job nobody waits for the watermark.
func (NoControl) Idle() error { return nil }

func (NoControl) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Source produces one input stream, run by one subtask. Sources embed
// BaseSource and override the calls they need; Run is the one every
// source writes.
//
// Call order: Open; RestorePosition, if the job restores a saved
// position; Run once, in a goroutine of its own; Close once, always.
// SnapshotPosition and NotifyCheckpointComplete are called on Run's
// goroutine, from inside the SourceOutput calls, so they need no locks.
//
// Run returns nil when a bounded input is exhausted — the runtime then
// emits the final watermark and end-of-input — or ctx.Err() when the job
// is cancelled, or an error that fails the job.
//
// SnapshotPosition describes the position just after the last row
// emitted, for checkpoint checkpointID: sources advance their position
// before Emit. A source that cannot save its position returns an error,
// which declines the checkpoint. NotifyCheckpointComplete tells the source
// that a checkpoint holding one of its positions completed (the Kafka
// source commits that position to its consumer group); its error is
// logged and never fails the job.
type Source interface {
	Open(ctx *OpContext) error
	Run(ctx context.Context, out SourceOutput) error
	SnapshotPosition(checkpointID int64) ([]byte, error)
	RestorePosition(pos []byte) error
	NotifyCheckpointComplete(checkpointID int64) error
	Close() error
}

// ErrNoPosition is BaseSource's answer to SnapshotPosition and
// RestorePosition: the source cannot take part in checkpoints.
var ErrNoPosition = errors.New("the source cannot save its position in a checkpoint")

// BaseSource gives an embedding source the defaults: nothing to open or
// close, no position to save or restore, nothing to do on completion.
type BaseSource struct{}

func (BaseSource) Open(*OpContext) error                  { return nil }
func (BaseSource) SnapshotPosition(int64) ([]byte, error) { return nil, ErrNoPosition }
func (BaseSource) RestorePosition([]byte) error           { return ErrNoPosition }
func (BaseSource) NotifyCheckpointComplete(int64) error   { return nil }
func (BaseSource) Close() error                           { return nil }

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
	// Epoch is the task run's owner epoch in cluster mode (Options.Shard),
	// 0 otherwise.
	Epoch int64
	// State is this subtask's keyed-state namespace.
	State state.Store
	// Shared holds job-scoped objects that subtasks of different nodes
	// coordinate through (e.g. the values sources' replay order).
	Shared *Shared
	Log    *slog.Logger
	// Metrics receives what only the operator can count; the runtime
	// counts the rest (rows in and out, watermarks, checkpoint time).
	Metrics *SubtaskMetrics
	// Hooks are the job's crash points for the kill -9 tests (Options.Hooks).
	Hooks TestHooks
}

// SubtaskMetrics is where an operator subtask reports the figures only it
// sees. Its methods may be called on a nil *SubtaskMetrics (operator
// tests), and from the operator's goroutine only.
type SubtaskMetrics struct {
	counters *nodeCounters
}

// LateRecordsDropped counts n rows dropped for arriving behind the
// watermark (windows, OVER, window joins). Every operator that drops
// late rows reports them here, so they are counted once and the same
// way: per node, and in the process-wide
// streamsql_late_records_dropped_total.
func (m *SubtaskMetrics) LateRecordsDropped(n int) {
	if m == nil || n <= 0 {
		return
	}
	m.counters.late.Add(int64(n))
	metrics.LateRecordsDropped.Add(float64(n))
}

// NewSubtaskMetrics returns the metrics of a subtask run outside a job,
// by operator tests and benchmarks.
func NewSubtaskMetrics() *SubtaskMetrics { return &SubtaskMetrics{counters: &nodeCounters{}} }

// LateRecords returns the late rows counted so far.
func (m *SubtaskMetrics) LateRecords() int64 {
	if m == nil {
		return 0
	}
	return m.counters.late.Load()
}

// LateRecordsDropped is OpContext.Metrics.LateRecordsDropped for an
// OpContext that may be nil (operator tests).
func (c *OpContext) LateRecordsDropped(n int) {
	if c != nil {
		c.Metrics.LateRecordsDropped(n)
	}
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
