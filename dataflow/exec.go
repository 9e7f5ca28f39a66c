package dataflow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Options configure a job run.
type Options struct {
	JobName string
	// NewStore creates the state namespace of one operator subtask; nil
	// means in-memory state.
	NewStore func(node *Node, subtask int) state.Store
	Log      *slog.Logger
	// ChannelSize is the capacity, in elements, of each task's inbox.
	ChannelSize int
	// Checkpointer receives barrier acknowledgements; nil disables
	// checkpoints.
	Checkpointer Checkpointer
	// RestorePosition returns the saved position of a source subtask, or
	// nil to start from the beginning.
	RestorePosition func(node *Node, subtask int) []byte
	// FinalCheckpoint makes a source subtask that has reached the end of
	// its input keep taking barriers (at its final position) instead of
	// ending its stream, until ReleaseFinishedSources: the checkpointer
	// then takes one last checkpoint once every source is at its end, so
	// that two-phase-commit sinks commit the tail of a bounded input on a
	// completed checkpoint, and checkpoints go on while other sources
	// still run (Flink's FLIP-147). The final watermark is emitted at the
	// end as usual. Only with a Checkpointer that triggers checkpoints.
	FinalCheckpoint bool
	// Hooks are the kill -9 tests' crash points, handed to every operator
	// in its OpContext; zero in production.
	Hooks TestHooks
	// Shard makes the job one task of a job that runs scaled out (package
	// cluster): every node of the graph has parallelism 1, and its
	// operators and sources see themselves, in their OpContext, as subtask
	// Shard.Index of Shard.Count, so that what they derive from their
	// subtask (key-group ranges, transaction names, checkpoint records)
	// is the same as in the whole job. Zero: the subtask is the node's.
	Shard Shard
}

// Shard is the subtask a single-task job stands for: Index of Count.
// Epoch is the task run's owner epoch (checkpoint/owner.go): two runs of
// one task never share it, and a later run's is higher. Operators that
// name transactions in external systems without fencing of their own
// (MySQL XA) put it in the names, so that a former owner still running
// never collides with the current one. Zero outside cluster mode.
type Shard struct {
	Index, Count int
	Epoch        int64
}

// subtaskOf returns the subtask and parallelism an operator or source
// of node n's subtask s sees.
func (o *Options) subtaskOf(n *Node, s int) (int, int) {
	if o.Shard.Count > 0 {
		return o.Shard.Index, o.Shard.Count
	}
	return s, n.Parallelism
}

// TestHooks are crash points that the kill -9 tests inject through
// session options (test.crash.*) instead of the environment.
type TestHooks struct {
	// CrashBeforeCommit = k > 0: a two-phase-commit sink exits the
	// process with status 137 at the process's k-th commit round.
	CrashBeforeCommit int
}

// NodeMetrics are a node's counters, summed over its subtasks.
type NodeMetrics struct {
	ID         int
	Name       string
	RecordsIn  int64
	RecordsOut int64
	Watermark  int64 // the lowest current watermark among its subtasks
	// LateRecordsDropped counts the rows its operator dropped for
	// arriving behind the watermark (OpContext.LateRecordsDropped).
	LateRecordsDropped int64
	// SnapshotDuration is the longest time one of its subtasks took for
	// its part of the last checkpoint (operator snapshot and store).
	SnapshotDuration time.Duration
	// StateBytes is the size of its state in the last checkpoint each of
	// its subtasks took, summed over the subtasks.
	StateBytes int64
}

// Job is a running graph.
type Job struct {
	g       *Graph
	opts    Options
	ctx     context.Context
	cancel  context.CancelCauseFunc
	wg      sync.WaitGroup
	errOnce sync.Once
	err     error
	done    chan struct{}
	metrics []*nodeCounters

	tasks       []*task
	sources     []*sourceOutput
	sourcesDone atomic.Int32
	finished    atomic.Int32 // tasks whose nodes all finished
	// atEnd counts source subtasks waiting at the end of their input
	// (FinalCheckpoint); release lets them end their streams.
	atEnd       atomic.Int32
	release     chan struct{}
	releaseOnce sync.Once
}

type nodeCounters struct {
	in, out, late atomic.Int64
	wm            []atomic.Int64 // per subtask
	snapshotNanos []atomic.Int64 // per subtask: its part of the last checkpoint
	stateBytes    []atomic.Int64 // per subtask: its state's size in its last checkpoint
}

// envelope is what travels on a task's inbox.
type envelope struct {
	node   int // target node id
	input  int
	sender int
	elem   Element
}

type task struct {
	inbox chan envelope
	nodes map[int]*nodeRuntime
	live  int // nodes not yet finished
}

// Start validates g and starts running it. The job stops when every
// node has finished, on the first error, or when ctx is cancelled.
func Start(ctx context.Context, g *Graph, opts Options) (*Job, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if opts.Shard.Count > 0 {
		for _, n := range g.Nodes {
			if n.Parallelism != 1 {
				return nil, fmt.Errorf("dataflow: node %q of a shard job has parallelism %d, not 1", n.Name, n.Parallelism)
			}
		}
		if opts.Shard.Index < 0 || opts.Shard.Index >= opts.Shard.Count {
			return nil, fmt.Errorf("dataflow: shard %d of %d", opts.Shard.Index, opts.Shard.Count)
		}
	}
	if opts.ChannelSize <= 0 {
		opts.ChannelSize = 64
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.NewStore == nil {
		opts.NewStore = func(n *Node, subtask int) state.Store {
			return state.NewMemoryStore(fmt.Sprintf("%d-%s/%d", n.ID, n.Name, subtask))
		}
	}
	j := &Job{g: g, opts: opts, done: make(chan struct{}), release: make(chan struct{})}
	j.ctx, j.cancel = context.WithCancelCause(ctx)
	j.metrics = make([]*nodeCounters, len(g.Nodes))
	for i, n := range g.Nodes {
		j.metrics[i] = &nodeCounters{wm: make([]atomic.Int64, n.Parallelism), snapshotNanos: make([]atomic.Int64, n.Parallelism), stateBytes: make([]atomic.Int64, n.Parallelism)}
		for s := range j.metrics[i].wm {
			j.metrics[i].wm[s].Store(MinWatermark)
		}
	}
	if err := j.build(); err != nil {
		j.cancel(err)
		return nil, err
	}
	go func() {
		j.wg.Wait()
		close(j.done)
	}()
	return j, nil
}

// Wait blocks until the job has stopped and returns its first error, or
// nil when every node finished.
func (j *Job) Wait() error {
	<-j.done
	if j.err == nil && j.finished.Load() < int32(len(j.tasks)) {
		// Stopped by the caller's context rather than by finishing.
		if err := context.Cause(j.ctx); err != nil {
			return err
		}
	}
	return j.err
}

// Done is closed when the job has stopped.
func (j *Job) Done() <-chan struct{} { return j.done }

// Cancel stops the job; Wait then returns context.Canceled.
func (j *Job) Cancel() { j.fail(context.Canceled) }

// Fail stops the job with err, which Wait then returns (unless the job
// had already failed).
func (j *Job) Fail(err error) { j.fail(err) }

// Metrics returns the current counters of every node.
func (j *Job) Metrics() []NodeMetrics {
	out := make([]NodeMetrics, len(j.g.Nodes))
	for i, n := range j.g.Nodes {
		c := j.metrics[i]
		wm := int64(MaxWatermark)
		var snap time.Duration
		var size int64
		for s := range c.wm {
			wm = min(wm, c.wm[s].Load())
			snap = max(snap, time.Duration(c.snapshotNanos[s].Load()))
			size += c.stateBytes[s].Load()
		}
		out[i] = NodeMetrics{ID: n.ID, Name: n.Name, RecordsIn: c.in.Load(), RecordsOut: c.out.Load(), Watermark: wm,
			LateRecordsDropped: c.late.Load(), SnapshotDuration: snap, StateBytes: size}
	}
	return out
}

func (j *Job) fail(err error) {
	j.errOnce.Do(func() {
		j.err = err
		j.cancel(err)
	})
}

// isLocal reports whether edge e into n chains n with e.From in one task.
func isLocal(e Edge, n *Node) bool {
	if e.From.NewSource != nil {
		return false
	}
	return e.Partition == Forward || (e.From.Parallelism == 1 && n.Parallelism == 1)
}

// build wires tasks and starts their goroutines.
func (j *Job) build() error {
	g := j.g
	// Fragments: union-find over local edges between operator nodes.
	parent := make([]int, len(g.Nodes))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, n := range g.Nodes {
		for _, e := range n.Inputs {
			if isLocal(e, n) {
				parent[find(n.ID)] = find(e.From.ID)
			}
		}
	}
	// tasks[fragmentRoot][subtask]
	tasks := map[int][]*task{}
	taskOf := func(nodeID, subtask int) *task { return tasks[find(nodeID)][subtask] }
	for _, n := range g.Nodes {
		if n.NewSource != nil {
			continue
		}
		r := find(n.ID)
		if tasks[r] == nil {
			ts := make([]*task, n.Parallelism)
			for s := range ts {
				ts[s] = &task{inbox: make(chan envelope, j.opts.ChannelSize), nodes: map[int]*nodeRuntime{}}
			}
			tasks[r] = ts
		}
	}
	shared := NewShared()
	// consumers[node] lists (consumer node, input index).
	type consumer struct {
		node  *Node
		input int
	}
	consumers := make([][]consumer, len(g.Nodes))
	for _, n := range g.Nodes {
		for i, e := range n.Inputs {
			consumers[e.From.ID] = append(consumers[e.From.ID], consumer{n, i})
		}
	}
	// Create node runtimes (operators) for every subtask.
	var opened []*nodeRuntime
	closeAll := func() {
		for _, nr := range opened {
			_ = nr.op.Close()
		}
	}
	for _, n := range g.Nodes {
		if n.NewSource != nil {
			continue
		}
		for s := 0; s < n.Parallelism; s++ {
			op, err := n.NewOperator(s)
			if err != nil {
				closeAll()
				return fmt.Errorf("%s: %w", n.Name, err)
			}
			nr := &nodeRuntime{job: j, node: n, subtask: s, op: op, counters: j.metrics[n.ID], wm: MinWatermark, outWm: MinWatermark}
			store := j.opts.NewStore(n, s)
			nr.store = store
			nr.inputs = make([]inputState, len(n.Inputs))
			for i, e := range n.Inputs {
				senders := 1
				if !isLocal(e, n) && e.Partition != Forward {
					senders = e.From.Parallelism
				}
				nr.inputs[i] = newInputState(senders)
				nr.totalSenders += senders
			}
			sub, par := j.opts.subtaskOf(n, s)
			ctx := &OpContext{Ctx: j.ctx, JobName: j.opts.JobName, NodeID: n.ID, NodeName: n.Name, Subtask: sub,
				Parallelism: par, Epoch: j.opts.Shard.Epoch, State: store, Shared: shared, Hooks: j.opts.Hooks,
				Log: j.opts.Log.With("node", n.Name, "subtask", sub), Metrics: &SubtaskMetrics{counters: j.metrics[n.ID]}}
			if err := op.Open(ctx); err != nil {
				_ = op.Close()
				closeAll()
				return fmt.Errorf("%s: %w", n.Name, err)
			}
			opened = append(opened, nr)
			t := taskOf(n.ID, s)
			t.nodes[n.ID] = nr
			t.live++
		}
	}
	// outputsFor builds the output targets of (node, subtask).
	outputsFor := func(n *Node, s int) []output {
		var outs []output
		for _, c := range consumers[n.ID] {
			e := c.node.Inputs[c.input]
			if isLocal(e, c.node) {
				outs = append(outs, &localOutput{to: taskOf(c.node.ID, s).nodes[c.node.ID], input: c.input})
				continue
			}
			x := &exchangeOutput{ctx: j.ctx, kind: e.Partition, keys: e.Keys, node: c.node.ID, input: c.input, sender: s}
			switch e.Partition {
			case Forward:
				x.targets = []*task{taskOf(c.node.ID, s)}
				x.sender = 0
			case Single:
				x.targets = []*task{taskOf(c.node.ID, 0)}
			default:
				x.targets = tasks[find(c.node.ID)]
			}
			outs = append(outs, x)
		}
		return outs
	}
	for _, n := range g.Nodes {
		if n.NewSource != nil {
			continue
		}
		for s := 0; s < n.Parallelism; s++ {
			nr := taskOf(n.ID, s).nodes[n.ID]
			nr.outputs = outputsFor(n, s)
			nr.collector = collector{nr: nr}
		}
	}
	// Sources.
	type srcRun struct {
		n    *Node
		s    int
		src  Source
		outs []output
	}
	var srcs []srcRun
	for _, n := range g.Nodes {
		if n.NewSource == nil {
			continue
		}
		for s := 0; s < n.Parallelism; s++ {
			src, err := n.NewSource(s)
			if err != nil {
				closeAll()
				return fmt.Errorf("%s: %w", n.Name, err)
			}
			sub, par := j.opts.subtaskOf(n, s)
			ctx := &OpContext{Ctx: j.ctx, JobName: j.opts.JobName, NodeID: n.ID, NodeName: n.Name, Subtask: sub,
				Parallelism: par, Epoch: j.opts.Shard.Epoch, State: j.opts.NewStore(n, s), Shared: shared, Hooks: j.opts.Hooks,
				Log: j.opts.Log.With("node", n.Name, "subtask", sub), Metrics: &SubtaskMetrics{counters: j.metrics[n.ID]}}
			if err := src.Open(ctx); err != nil {
				_ = src.Close()
				closeAll()
				return fmt.Errorf("%s: %w", n.Name, err)
			}
			if j.opts.RestorePosition != nil {
				if pos := j.opts.RestorePosition(n, s); pos != nil {
					if err := src.RestorePosition(pos); err != nil {
						_ = src.Close()
						closeAll()
						return fmt.Errorf("%s: restoring position: %w", n.Name, err)
					}
				}
			}
			srcs = append(srcs, srcRun{n, s, src, outputsFor(n, s)})
		}
	}
	// Start everything.
	for _, ts := range tasks {
		for _, t := range ts {
			j.tasks = append(j.tasks, t)
		}
	}
	for _, sr := range srcs {
		j.sources = append(j.sources, &sourceOutput{j: j, outs: sr.outs, counters: j.metrics[sr.n.ID],
			node: sr.n, subtask: sr.s, src: sr.src, wm: MinWatermark, ctl: make(chan Element, sourceControlSize),
			finished: make(chan struct{}), idleTimeout: g.IdleTimeout, lastActive: time.Now()})
	}
	for _, t := range j.tasks {
		j.wg.Add(1)
		go j.runTask(t)
	}
	for _, so := range j.sources {
		j.wg.Add(1)
		go j.runSource(so)
	}
	return nil
}

// guard turns a panic in operator code into a loud job failure with the
// stack, instead of crashing the process that may host other jobs.
func (j *Job) guard(name string) {
	if r := recover(); r != nil {
		j.fail(fmt.Errorf("internal error in %s: %v\n%s", name, r, debug.Stack()))
	}
}

func (j *Job) runTask(t *task) {
	defer j.wg.Done()
	defer func() {
		for _, nr := range t.nodes {
			if err := nr.op.Close(); err != nil {
				j.fail(fmt.Errorf("%s: close: %w", nr.node.Name, err))
			}
		}
	}()
	defer j.guard("task")
	defer func() {
		if t.live == 0 {
			j.finished.Add(1)
		}
	}()
	// Operators that act on the wall clock get called at their interval.
	var ptick <-chan time.Time
	if d := t.processingInterval(); d > 0 {
		tk := time.NewTicker(d)
		defer tk.Stop()
		ptick = tk.C
	}
	for t.live > 0 {
		select {
		case <-j.ctx.Done():
			return
		case now := <-ptick:
			for _, nr := range t.nodes {
				if err := nr.onProcessingTime(now); err != nil {
					j.fail(err)
					return
				}
			}
		case env := <-t.inbox:
			nr := t.nodes[env.node]
			if err := nr.handle(env.input, env.sender, env.elem); err != nil {
				j.fail(err)
				return
			}
			// A node finishes when all its inputs ended; chained nodes
			// downstream finish within the same call.
			t.live = 0
			for _, n := range t.nodes {
				if !n.finished {
					t.live++
				}
			}
		}
	}
}

func (j *Job) runSource(so *sourceOutput) {
	n, src := so.node, so.src
	defer j.wg.Done()
	defer func() {
		if err := src.Close(); err != nil {
			j.fail(fmt.Errorf("%s: close: %w", n.Name, err))
		}
	}()
	defer j.guard(n.Name)
	defer close(so.finished)
	// The source counts as done before its end-of-input travels, so no
	// barrier is triggered that it would never take.
	done := sync.OnceFunc(func() { j.sourcesDone.Add(1) })
	defer done()
	if so.idleTimeout > 0 {
		stop := so.checkIdleEvery(so.idleTimeout / idleChecks)
		defer stop()
	}
	err := src.Run(j.ctx, so)
	if err != nil {
		if !errors.Is(err, context.Canceled) || j.ctx.Err() == nil {
			j.fail(fmt.Errorf("%s: %w", n.Name, err))
		}
		return
	}
	if err := so.EmitWatermark(MaxWatermark); err != nil {
		return
	}
	if j.opts.FinalCheckpoint && j.opts.Checkpointer != nil {
		// At the end: keep taking barriers and notices until the final
		// checkpoint has completed (or could not be taken).
		j.atEnd.Add(1)
	wait:
		for {
			select {
			case e := <-so.ctl:
				if err := so.Handle(e); err != nil {
					return
				}
			case <-j.release:
				break wait
			case <-j.ctx.Done():
				return
			}
		}
		// The notice of the final checkpoint was queued before the
		// release: pass on whatever is still waiting.
		if err := so.handlePending(); err != nil {
			return
		}
	}
	done()
	_ = so.send(Element{Kind: KindEndOfInput})
}

// sourceControlSize is the capacity of a source's control channel: a
// barrier, the notice of the checkpoint before it, and an idleness check
// at the most are ever waiting at once.
const sourceControlSize = 4

// idleChecks is how many idleness checks a source gets per idle timeout,
// so that it goes idle between 1 and 5/4 timeouts after its last row.
const idleChecks = 4

// sourceOutput is the SourceOutput of one source subtask. It runs on the
// source's goroutine only: barriers and notices reach it on ctl and are
// handled between chunks, so the position saved with a barrier is exact
// and the source needs no locks.
type sourceOutput struct {
	j        *Job
	outs     []output
	counters *nodeCounters
	node     *Node
	subtask  int
	src      Source
	wm       int64
	ctl      chan Element
	// finished is closed when the source's goroutine ends: nothing
	// handles ctl any more.
	finished chan struct{}
	// lastBarrier is the newest barrier put on ctl, taken the newest one
	// the source handled: a new barrier waits until the last was taken.
	lastBarrier, taken atomic.Int64

	// Idleness (table.exec.source.idle-timeout): when the source last
	// emitted a row or advanced its watermark, and whether it told
	// downstream that it is idle.
	idleTimeout time.Duration
	lastActive  time.Time
	idle        bool
}

func (so *sourceOutput) Emit(c *dyntable.Chunk) error {
	if err := so.activity(); err != nil {
		return err
	}
	so.counters.out.Add(int64(c.Len()))
	if err := emitTo(so.outs, c); err != nil {
		return err
	}
	return so.handlePending()
}

func (so *sourceOutput) EmitWatermark(ts int64) error {
	if ts > so.wm {
		if err := so.activity(); err != nil {
			return err
		}
		so.wm = ts
		so.counters.wm[so.subtask].Store(ts)
		if err := so.send(WatermarkElement(ts)); err != nil {
			return err
		}
	}
	return so.handlePending()
}

func (so *sourceOutput) Control() <-chan Element { return so.ctl }

func (so *sourceOutput) Handle(e Element) error {
	switch e.Kind {
	case KindBarrier:
		return so.injectBarrier(e.Barrier)
	case KindCheckpointComplete:
		if err := so.src.NotifyCheckpointComplete(e.Barrier.CheckpointID); err != nil {
			so.j.opts.Log.Warn("source: checkpoint complete", "node", so.node.Name, "subtask", so.subtask,
				"checkpoint", e.Barrier.CheckpointID, "err", err)
		}
		return so.send(e)
	case KindIdle:
		// An idleness check: the source goes idle once it has been silent
		// for the whole timeout.
		if so.idleTimeout <= 0 || so.idle || time.Since(so.lastActive) < so.idleTimeout {
			return nil
		}
		so.idle = true
		return so.send(e)
	}
	return fmt.Errorf("dataflow: %s is not a control element for a source", e.Kind)
}

func (so *sourceOutput) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return so.handlePending()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case e := <-so.ctl:
			if err := so.Handle(e); err != nil {
				return err
			}
		}
	}
}

// handlePending handles the control elements waiting, without blocking.
func (so *sourceOutput) handlePending() error {
	for {
		select {
		case e := <-so.ctl:
			if err := so.Handle(e); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// activity notes a row or a watermark advance. A source that was idle
// becomes active and says so downstream by repeating its watermark, so
// that downstream counts it in the watermark minimum again before its
// rows arrive.
func (so *sourceOutput) activity() error {
	if so.idleTimeout > 0 {
		so.lastActive = time.Now()
	}
	if !so.idle {
		return nil
	}
	so.idle = false
	return so.send(WatermarkElement(so.wm))
}

func (so *sourceOutput) Idle() error {
	if so.idle {
		return nil
	}
	so.idle = true
	return so.send(Element{Kind: KindIdle})
}

// checkIdleEvery puts an idleness check on ctl every d while the source
// runs, if none is waiting; the source handles it between its rows, or
// in its wait, like a barrier. It returns a function that stops it.
func (so *sourceOutput) checkIdleEvery(d time.Duration) (stop func()) {
	d = max(d, time.Millisecond)
	done := make(chan struct{})
	go func() {
		tk := time.NewTicker(d)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				if len(so.ctl) == 0 {
					select {
					case so.ctl <- Element{Kind: KindIdle}:
					default:
					}
				}
			}
		}
	}()
	return func() { close(done) }
}

// send hands a control element to every output.
func (so *sourceOutput) send(e Element) error {
	for _, o := range so.outs {
		if err := o.send(e); err != nil {
			return err
		}
	}
	return nil
}

// emitTo hands c to every output; all but the last get a copy of the
// change slice because each consumer owns what it receives.
func emitTo(outs []output, c *dyntable.Chunk) error {
	for i, o := range outs {
		cc := c
		if i < len(outs)-1 {
			cc = &dyntable.Chunk{Changes: append([]dyntable.Change(nil), c.Changes...)}
		}
		if err := o.send(DataElement(cc)); err != nil {
			return err
		}
	}
	return nil
}

// output is one downstream target of a node subtask.
type output interface {
	send(e Element) error
}

type localOutput struct {
	to    *nodeRuntime
	input int
}

func (o *localOutput) send(e Element) error { return o.to.handle(o.input, 0, e) }

type exchangeOutput struct {
	ctx     context.Context
	kind    PartitionKind
	keys    []int
	targets []*task
	node    int
	input   int
	sender  int
	rr      int
	buf     []dyntable.Chunk
}

func (x *exchangeOutput) put(t *task, e Element) error {
	select {
	case t.inbox <- envelope{node: x.node, input: x.input, sender: x.sender, elem: e}:
		return nil
	case <-x.ctx.Done():
		return context.Cause(x.ctx)
	}
}

func (x *exchangeOutput) send(e Element) error {
	if e.Kind != KindData {
		for _, t := range x.targets {
			if err := x.put(t, e); err != nil {
				return err
			}
		}
		return nil
	}
	if len(x.targets) == 1 {
		return x.put(x.targets[0], e)
	}
	switch x.kind {
	case Rebalance:
		x.rr = (x.rr + 1) % len(x.targets)
		return x.put(x.targets[x.rr], e)
	case Hash:
		parts := make([]*dyntable.Chunk, len(x.targets))
		var kb []byte
		for _, ch := range e.Chunk.Changes {
			kb = types.EncodeKey(kb[:0], ch.Row, x.keys)
			s := state.SubtaskFor(state.KeyGroup(kb), len(x.targets))
			if parts[s] == nil {
				parts[s] = &dyntable.Chunk{}
			}
			parts[s].Changes = append(parts[s].Changes, ch)
		}
		for s, p := range parts {
			if p != nil {
				if err := x.put(x.targets[s], DataElement(p)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return fmt.Errorf("dataflow: edge kind %d with %d targets", x.kind, len(x.targets))
}
