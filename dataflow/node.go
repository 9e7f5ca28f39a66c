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
	// With an idle timeout: the task tick of each sender's last element,
	// and whether it is idle (left out of the watermark minimum).
	seen []uint32
	idle []bool
}

func newInputState(senders int) inputState {
	in := inputState{wm: make([]int64, senders), ended: make([]bool, senders), barrier: make([]int64, senders),
		seen: make([]uint32, senders), idle: make([]bool, senders)}
	for i := range in.wm {
		in.wm[i] = MinWatermark
	}
	return in
}

type pending struct {
	input, sender int
	elem          Element
}

// nodeRuntime runs one operator subtask: it tracks watermarks, barrier
// alignment and end-of-input over all of the operator's senders.
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
	// clock is the task's tick counter when an idle timeout is set.
	clock    *uint32
	ended    int
	finished bool

	// Barrier alignment.
	aligning       int64 // checkpoint id being aligned, 0 if none
	arrived        int   // senders that delivered it
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
	if nr.clock != nil {
		in.seen[sender] = *nr.clock
		in.idle[sender] = false
	}
	switch e.Kind {
	case KindData:
		nr.counters.in.Add(int64(e.Chunk.Len()))
		return nr.check(nr.op.ProcessChunk(input, e.Chunk, &nr.collector))
	case KindWatermark:
		if e.Watermark <= in.wm[sender] {
			return nil
		}
		in.wm[sender] = e.Watermark
		return nr.advanceWatermark()
	case KindBarrier:
		return nr.onBarrier(input, sender, e.Barrier)
	case KindEndOfInput:
		if in.ended[sender] {
			return fmt.Errorf("%s: duplicate end-of-input on input %d", nr.node.Name, input)
		}
		in.ended[sender] = true
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
		for _, o := range nr.outputs {
			if err := o.send(Element{Kind: KindEndOfInput}); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s: unknown element kind %d", nr.node.Name, e.Kind)
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
		if pt, ok := nr.op.(ProcessingTimer); ok {
			if i := pt.ProcessingTimeInterval(); i > 0 && (d == 0 || i < d) {
				d = i
			}
		}
	}
	return d
}

// onProcessingTime passes a processing-time tick to the operator.
func (nr *nodeRuntime) onProcessingTime(now time.Time) error {
	pt, ok := nr.op.(ProcessingTimer)
	if !ok || nr.finished || pt.ProcessingTimeInterval() <= 0 {
		return nil
	}
	return nr.check(pt.OnProcessingTime(now, &nr.collector))
}

// idleTicks is how many task ticks make one idle timeout.
const idleTicks = 4

// checkIdle marks the senders that have been silent for an idle timeout
// (idleTicks ticks, so between 3/4 and 1 timeout of silence) as idle:
// they no longer hold back the watermark, which may then advance. The
// next element from a sender makes it active again; its watermark then
// counts again, and the combined watermark never goes back (rows it
// sends behind the watermark are late), as in Flink. It runs on the
// task's goroutine, like handle.
func (nr *nodeRuntime) checkIdle(tick uint32) error {
	if nr.finished || nr.clock == nil {
		return nil
	}
	changed := false
	for i := range nr.inputs {
		in := &nr.inputs[i]
		for s := range in.seen {
			// A sender held back by barrier alignment is waiting, not idle.
			if !in.idle[s] && !in.ended[s] && !nr.blocked(i, s) && tick-in.seen[s] >= idleTicks {
				in.idle[s] = true
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	return nr.advanceWatermark()
}

// forwardWatermark sends wm downstream if it advances the node's output
// watermark.
func (nr *nodeRuntime) forwardWatermark(wm int64) error {
	if wm <= nr.outWm {
		return nil
	}
	nr.outWm = wm
	for _, o := range nr.outputs {
		if err := o.send(WatermarkElement(wm)); err != nil {
			return err
		}
	}
	return nil
}

func (nr *nodeRuntime) onBarrier(input, sender int, b Barrier) error {
	in := &nr.inputs[input]
	switch {
	case nr.aligning == 0:
		nr.aligning = b.CheckpointID
		nr.arrived = 0
	case b.CheckpointID != nr.aligning:
		return fmt.Errorf("%s: barrier %d arrived while aligning barrier %d", nr.node.Name, b.CheckpointID, nr.aligning)
	}
	in.barrier[sender] = b.CheckpointID
	nr.arrived++
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
	var err error
	if sn, ok := nr.op.(Snapshotter); ok {
		err = sn.SnapshotState(b)
	}
	cp := nr.job.opts.Checkpointer
	if cp == nil && err != nil {
		return fmt.Errorf("%s: snapshot for barrier %d: %w", nr.node.Name, b.CheckpointID, err)
	}
	if cp != nil {
		if err == nil {
			err = cp.SnapshotSubtask(b, nr.node, nr.subtask, nr.store)
		}
		if err != nil {
			// Declining aborts this checkpoint only; the job goes on and
			// the barrier still travels, so that downstream stays aligned.
			cp.Decline(b, nr.node, nr.subtask, fmt.Errorf("%s: %w", nr.node.Name, err))
		}
	}
	nr.aligning = 0
	for _, o := range nr.outputs {
		if err := o.send(Element{Kind: KindBarrier, Barrier: b}); err != nil {
			return err
		}
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

// EmitWatermark implements WatermarkEmitter for nodes that generate
// watermarks.
func (c *collector) EmitWatermark(ts int64) error {
	if !c.nr.node.GeneratesWatermarks {
		return fmt.Errorf("%s emits watermarks but its node does not generate them", c.nr.node.Name)
	}
	return c.nr.forwardWatermark(ts)
}
