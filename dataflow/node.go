package dataflow

import (
	"fmt"
	"time"

	"github.com/streamsql/streamsql/state"

	"github.com/streamsql/streamsql/dyntable"
)

// inputState tracks the senders of one input of a node subtask.
type inputState struct {
	wm      []int64
	ended   []bool
	barrier []int64 // last barrier id received per sender
	// idle marks the senders that said they are idle (KindIdle): they are
	// left out of the watermark minimum until they send again.
	idle []bool
}

func newInputState(senders int) inputState {
	in := inputState{wm: make([]int64, senders), ended: make([]bool, senders), barrier: make([]int64, senders),
		idle: make([]bool, senders)}
	for i := range in.wm {
		in.wm[i] = MinWatermark
	}
	return in
}

type pending struct {
	input, sender int
	elem          Element
}

// nodeRuntime runs one operator subtask: it tracks watermarks, idleness,
// barrier alignment, checkpoint notices and end-of-input over all of the
// operator's senders.
type nodeRuntime struct {
	job          *Job
	node         *Node
	subtask      int
	op           Operator
	store        state.Store
	outputs      []output
	collector    collector
	counters     *nodeCounters
	inputs       []inputState
	totalSenders int

	wm    int64 // combined input watermark
	outWm int64 // last watermark forwarded
	// outIdle: every sender is idle, and the node said so downstream.
	outIdle  bool
	notified int64 // the newest checkpoint notice handled
	ended    int
	finished bool

	// Barrier alignment.
	aligning       int64 // checkpoint id being aligned, 0 if none
	held           []pending
	pendingBarrier Barrier

	// err holds the first error raised downstream while the operator was
	// emitting; Collector.Emit has no error result, so handle checks it
	// after every operator call.
	err error
}

// check returns the operator's error, or else the first downstream error.
func (nr *nodeRuntime) check(err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", nr.node.Name, err)
	}
	if nr.err != nil {
		err, nr.err = nr.err, nil
		return err
	}
	return nil
}

func (nr *nodeRuntime) blocked(input, sender int) bool {
	return nr.aligning != 0 && nr.inputs[input].barrier[sender] == nr.aligning
}

// handle processes one element from (input, sender).
func (nr *nodeRuntime) handle(input, sender int, e Element) error {
	if nr.finished {
		return fmt.Errorf("%s: %s after end-of-input", nr.node.Name, e.Kind)
	}
	if nr.blocked(input, sender) {
		nr.held = append(nr.held, pending{input, sender, e})
		return nil
	}
	in := &nr.inputs[input]
	switch e.Kind {
	case KindData:
		if err := nr.active(in, sender); err != nil {
			return err
		}
		nr.counters.in.Add(int64(e.Chunk.Len()))
		return nr.check(nr.op.ProcessChunk(input, e.Chunk, &nr.collector))
	case KindWatermark:
		if err := nr.active(in, sender); err != nil {
			return err
		}
		if e.Watermark <= in.wm[sender] {
			return nil
		}
		in.wm[sender] = e.Watermark
		return nr.advanceWatermark()
	case KindIdle:
		if in.idle[sender] || in.ended[sender] {
			return nil
		}
		in.idle[sender] = true
		if err := nr.advanceWatermark(); err != nil {
			return err
		}
		return nr.maybeIdle()
	case KindBarrier:
		return nr.onBarrier(input, sender, e.Barrier)
	case KindCheckpointComplete:
		// Every source sends the notice; the first copy to arrive counts.
		id := e.Barrier.CheckpointID
		if id <= nr.notified {
			return nil
		}
		nr.notified = id
		if err := nr.op.NotifyCheckpointComplete(id); err != nil {
			return fmt.Errorf("%s: checkpoint %d complete: %w", nr.node.Name, id, err)
		}
		return nr.send(e)
	case KindEndOfInput:
		if in.ended[sender] {
			return fmt.Errorf("%s: duplicate end-of-input on input %d", nr.node.Name, input)
		}
		in.ended[sender] = true
		in.idle[sender] = false
		in.wm[sender] = MaxWatermark
		nr.ended++
		if err := nr.advanceWatermark(); err != nil {
			return err
		}
		if nr.aligning != 0 {
			// An ended sender can deliver no barrier: count it as arrived.
			if err := nr.maybeAligned(); err != nil {
				return err
			}
		}
		if nr.ended < nr.totalSenders {
			return nil
		}
		if err := nr.check(nr.op.Finish(&nr.collector)); err != nil {
			return err
		}
		nr.finished = true
		return nr.send(Element{Kind: KindEndOfInput})
	}
	return fmt.Errorf("%s: unknown element kind %d", nr.node.Name, e.Kind)
}

// send forwards a control element to every output.
func (nr *nodeRuntime) send(e Element) error {
	for _, o := range nr.outputs {
		if err := o.send(e); err != nil {
			return err
		}
	}
	return nil
}

// active marks a sender that sent data or a watermark as active again.
// A node that was idle becomes active with it and says so downstream by
// repeating its output watermark, so that downstream counts it in the
// watermark minimum again before any row of its arrives.
func (nr *nodeRuntime) active(in *inputState, sender int) error {
	if !in.idle[sender] {
		return nil
	}
	in.idle[sender] = false
	if !nr.outIdle {
		return nil
	}
	nr.outIdle = false
	if err := nr.check(nr.op.ProcessIdle(false, &nr.collector)); err != nil {
		return err
	}
	return nr.send(WatermarkElement(nr.outWm))
}

// maybeIdle tells downstream that the node is idle once every sender
// that has not ended is idle (Flink's watermark status valve).
func (nr *nodeRuntime) maybeIdle() error {
	if nr.outIdle {
		return nil
	}
	for i := range nr.inputs {
		for s := range nr.inputs[i].idle {
			if !nr.inputs[i].idle[s] && !nr.inputs[i].ended[s] {
				return nil
			}
		}
	}
	nr.outIdle = true
	if err := nr.check(nr.op.ProcessIdle(true, &nr.collector)); err != nil {
		return err
	}
	return nr.send(Element{Kind: KindIdle})
}

func (nr *nodeRuntime) advanceWatermark() error {
	// The minimum over the senders that are not idle; when every sender
	// is idle, the largest of their watermarks (as Flink's watermark
	// valve does), so that the last watermark of the last input to go
	// idle is not lost.
	m, active, maxIdle := int64(MaxWatermark), false, int64(MinWatermark)
	for i := range nr.inputs {
		for s, w := range nr.inputs[i].wm {
			if nr.inputs[i].idle[s] {
				maxIdle = max(maxIdle, w)
			} else {
				m, active = min(m, w), true
			}
		}
	}
	if !active {
		m = maxIdle
	}
	if m <= nr.wm {
		return nil
	}
	nr.wm = m
	nr.counters.wm[nr.subtask].Store(m)
	if err := nr.check(nr.op.ProcessWatermark(m, &nr.collector)); err != nil {
		return err
	}
	if nr.node.GeneratesWatermarks && m != MaxWatermark {
		return nil
	}
	return nr.forwardWatermark(m)
}

// processingInterval is the shortest ProcessingTimeInterval of the
// task's operators, 0 if none asks for calls.
func (t *task) processingInterval() time.Duration {
	var d time.Duration
	for _, nr := range t.nodes {
		if i := nr.op.ProcessingTimeInterval(); i > 0 && (d == 0 || i < d) {
			d = i
		}
	}
	return d
}

// onProcessingTime passes a processing-time tick to the operator.
func (nr *nodeRuntime) onProcessingTime(now time.Time) error {
	if nr.finished || nr.op.ProcessingTimeInterval() <= 0 {
		return nil
	}
	return nr.check(nr.op.OnProcessingTime(now, &nr.collector))
}

// forwardWatermark sends wm downstream if it advances the node's output
// watermark.
func (nr *nodeRuntime) forwardWatermark(wm int64) error {
	if wm <= nr.outWm {
		return nil
	}
	nr.outWm = wm
	return nr.send(WatermarkElement(wm))
}

func (nr *nodeRuntime) onBarrier(input, sender int, b Barrier) error {
	in := &nr.inputs[input]
	switch {
	case nr.aligning == 0:
		nr.aligning = b.CheckpointID
	case b.CheckpointID != nr.aligning:
		return fmt.Errorf("%s: barrier %d arrived while aligning barrier %d", nr.node.Name, b.CheckpointID, nr.aligning)
	}
	in.barrier[sender] = b.CheckpointID
	nr.pendingBarrier = b
	return nr.maybeAligned()
}

func (nr *nodeRuntime) maybeAligned() error {
	n := 0
	for i := range nr.inputs {
		for s := range nr.inputs[i].barrier {
			if nr.inputs[i].barrier[s] == nr.aligning || nr.inputs[i].ended[s] {
				n++
			}
		}
	}
	if n < nr.totalSenders {
		return nil
	}
	b := nr.pendingBarrier
	err := nr.op.PrepareSnapshotPreBarrier(b, &nr.collector)
	if err != nil {
		err = fmt.Errorf("before barrier %d: %w", b.CheckpointID, err)
	}
	if err := nr.check(err); err != nil {
		return err
	}
	if err := nr.snapshot(b); err != nil {
		return err
	}
	nr.aligning = 0
	if err := nr.send(Element{Kind: KindBarrier, Barrier: b}); err != nil {
		return err
	}
	held := nr.held
	nr.held = nil
	for _, p := range held {
		if err := nr.handle(p.input, p.sender, p.elem); err != nil {
			return err
		}
	}
	return nil
}

// snapshot takes the subtask's part of checkpoint b: the operator puts
// what it keeps outside its store into it, then the checkpointer
// snapshots the store and acknowledges. A failure declines checkpoint b
// only: the barrier still travels, so that downstream stays aligned.
func (nr *nodeRuntime) snapshot(b Barrier) error {
	started := time.Now()
	err := nr.op.SnapshotState(b)
	cp := nr.job.opts.Checkpointer
	if cp == nil {
		if err != nil {
			return fmt.Errorf("%s: snapshot for barrier %d: %w", nr.node.Name, b.CheckpointID, err)
		}
		return nil
	}
	if err == nil {
		err = cp.SnapshotSubtask(b, nr.node, nr.subtask, nr.store, nr.counters.stateBytes[nr.subtask].Store)
	}
	if err != nil {
		cp.Decline(b, nr.node, nr.subtask, fmt.Errorf("%s: %w", nr.node.Name, err))
	}
	nr.counters.snapshotNanos[nr.subtask].Store(int64(time.Since(started)))
	return nil
}

// collector is the Collector a node's operator emits into.
type collector struct{ nr *nodeRuntime }

func (c *collector) Emit(ch *dyntable.Chunk) {
	if ch.Len() == 0 {
		return
	}
	nr := c.nr
	nr.counters.out.Add(int64(ch.Len()))
	if nr.err != nil {
		return
	}
	if err := emitTo(nr.outputs, ch); err != nil {
		nr.err = err
	}
}

// EmitWatermark forwards a watermark generated by the operator of a node
// that generates watermarks.
func (c *collector) EmitWatermark(ts int64) error {
	if !c.nr.node.GeneratesWatermarks {
		return fmt.Errorf("%s emits watermarks but its node does not generate them", c.nr.node.Name)
	}
	return c.nr.forwardWatermark(ts)
}
