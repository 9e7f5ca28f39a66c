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
}

// NodeMetrics are a node's counters, summed over its subtasks.
type NodeMetrics struct {
	ID         int
	Name       string
	RecordsIn  int64
	RecordsOut int64
	Watermark  int64 // the lowest current watermark among its subtasks
	// LateRecordsDropped sums the subtasks' LateRecordCounter counts;
	// CountsLateRecords says whether the operator counts them at all.
	LateRecordsDropped int64
	CountsLateRecords  bool
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
	in, out atomic.Int64
	wm      []atomic.Int64 // per subtask
}

// envelope is what travels on a task's inbox.
type envelope struct {
	notify int64 // with node -1: checkpoint notify is complete
	node   int   // target node id
	input  int
	sender int
	elem   Element
}

type task struct {
	inbox chan envelope
	nodes map[int]*nodeRuntime
	live  int // nodes not yet finished
	// tick counts the idle-timeout ticks of the task's goroutine; the
	// task's node runtimes stamp their senders' activity with it.
	tick uint32
}

// Start validates g and starts running it. The job stops when every
// node has finished, on the first error, or when ctx is cancelled.
func Start(ctx context.Context, g *Graph, opts Options) (*Job, error) {
	if err := g.Validate(); err != nil {
		return nil, err
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
		j.metrics[i] = &nodeCounters{wm: make([]atomic.Int64, n.Parallelism)}
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

// Metrics returns the current counters of every node.
func (j *Job) Metrics() []NodeMetrics {
	out := make([]NodeMetrics, len(j.g.Nodes))
	for i, n := range j.g.Nodes {
		c := j.metrics[i]
		wm := int64(MaxWatermark)
		for s := range c.wm {
			wm = min(wm, c.wm[s].Load())
		}
		out[i] = NodeMetrics{ID: n.ID, Name: n.Name, RecordsIn: c.in.Load(), RecordsOut: c.out.Load(), Watermark: wm}
	}
	// Operators (not their nodes' runtimes) count late rows; the tasks'
	// node maps are fixed once the job runs.
	for _, t := range j.tasks {
		for _, nr := range t.nodes {
			if lc, ok := nr.op.(LateRecordCounter); ok {
				out[nr.node.ID].LateRecordsDropped += lc.LateRecordsDropped()
				out[nr.node.ID].CountsLateRecords = true
			}
		}
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
			if g.IdleTimeout > 0 {
				nr.clock = &taskOf(n.ID, s).tick
			}
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
			ctx := &OpContext{Ctx: j.ctx, JobName: j.opts.JobName, NodeID: n.ID, NodeName: n.Name, Subtask: s,
				Parallelism: n.Parallelism, State: store, Shared: shared,
				Log: j.opts.Log.With("node", n.Name, "subtask", s)}
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
			ctx := &OpContext{Ctx: j.ctx, JobName: j.opts.JobName, NodeID: n.ID, NodeName: n.Name, Subtask: s,
				Parallelism: n.Parallelism, State: j.opts.NewStore(n, s), Shared: shared,
				Log: j.opts.Log.With("node", n.Name, "subtask", s)}
			if err := src.Open(ctx); err != nil {
				_ = src.Close()
				closeAll()
				return fmt.Errorf("%s: %w", n.Name, err)
			}
			if j.opts.RestorePosition != nil {
				if pos := j.opts.RestorePosition(n, s); pos != nil {
					cs, ok := src.(CheckpointedSource)
					if !ok {
						_ = src.Close()
						closeAll()
						return fmt.Errorf("%s: a saved position exists but the source cannot restore positions", n.Name)
					}
					if err := cs.RestorePosition(pos); err != nil {
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
			node: sr.n, subtask: sr.s, src: sr.src, wm: MinWatermark, inject: make(chan Barrier, 1)})
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
	// With an idle timeout, the task ticks idleTicks times per timeout and
	// its nodes stop waiting for the watermark of senders silent for a
	// whole timeout.
	var tick <-chan time.Time
	if d := j.g.IdleTimeout; d > 0 {
		tk := time.NewTicker(max(d/idleTicks, time.Millisecond))
		defer tk.Stop()
		tick = tk.C
	}
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
		case <-tick:
			t.tick++
			for _, nr := range t.nodes {
				if err := nr.checkIdle(t.tick); err != nil {
					j.fail(err)
					return
				}
			}
		case env := <-t.inbox:
			if env.node < 0 {
				if err := t.notify(env.notify); err != nil {
					j.fail(err)
					return
				}
				continue
			}
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
	n, src, outs := so.node, so.src, so.outs
	defer j.wg.Done()
	defer func() {
		if err := src.Close(); err != nil {
			j.fail(fmt.Errorf("%s: close: %w", n.Name, err))
		}
	}()
	defer j.guard(n.Name)
	err := src.Run(j.ctx, so)
	if err != nil {
		j.sourcesDone.Add(1)
		if !errors.Is(err, context.Canceled) || j.ctx.Err() == nil {
			j.fail(fmt.Errorf("%s: %w", n.Name, err))
		}
		return
	}
	if err := so.EmitWatermark(MaxWatermark); err != nil {
		j.sourcesDone.Add(1)
		return
	}
	if j.opts.FinalCheckpoint && j.opts.Checkpointer != nil {
		// At the end: keep taking barriers until the final checkpoint.
		j.atEnd.Add(1)
	wait:
		for {
			select {
			case b := <-so.inject:
				if err := so.injectBarrier(b); err != nil {
					j.sourcesDone.Add(1)
					return
				}
			case <-j.release:
				break wait
			case <-j.ctx.Done():
				j.sourcesDone.Add(1)
				return
			}
		}
	}
	j.sourcesDone.Add(1)
	for _, o := range outs {
		if err := o.send(Element{Kind: KindEndOfInput}); err != nil {
			return
		}
	}
}

// sourceOutput is the SourceOutput of one source subtask. Barriers the
// coordinator asks for are injected between chunks, on the source's own
// goroutine, so the position saved with them is exact.
type sourceOutput struct {
	j        *Job
	outs     []output
	counters *nodeCounters
	node     *Node
	subtask  int
	src      Source
	wm       int64
	inject   chan Barrier
}

func (so *sourceOutput) Emit(c *dyntable.Chunk) error {
	so.counters.out.Add(int64(c.Len()))
	if err := emitTo(so.outs, c); err != nil {
		return err
	}
	return so.injectPending()
}

func (so *sourceOutput) EmitWatermark(ts int64) error {
	if err := so.injectPending(); err != nil {
		return err
	}
	if ts <= so.wm {
		return nil
	}
	so.wm = ts
	so.counters.wm[so.subtask].Store(ts)
	for _, o := range so.outs {
		if err := o.send(WatermarkElement(ts)); err != nil {
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
