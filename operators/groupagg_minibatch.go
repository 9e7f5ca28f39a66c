package operators

import (
	"fmt"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/types"
)

// MiniBatch is the setting of table.exec.mini-batch.*: a batch ends
// when Size rows are buffered or Latency has passed, whichever is first.
// The zero value is off.
type MiniBatch struct {
	Latency time.Duration
	Size    int
}

// On reports whether mini-batch execution is on.
func (m MiniBatch) On() bool { return m.Latency > 0 && m.Size > 0 }

// String renders the setting for EXPLAIN.
func (m MiniBatch) String() string {
	return fmt.Sprintf("interval=[%dms], size=[%d]", m.Latency.Milliseconds(), m.Size)
}

// MiniBatchGroupAgg is the group aggregation with mini-batch execution
// (Flink's MiniBatchGroupAggFunction): it buffers its input rows per
// group and folds each group's rows into its state once per batch, with
// one state read and one write per group, and emits at most one change
// per group per batch (+I, -U/+U or -D, against the row it emitted at
// the end of the previous batch). Results are those of GroupAgg once the
// changelog is applied; only the intermediate updates within a batch are
// skipped.
//
// A batch ends when MiniBatch.Size rows are buffered, on every
// processing-time tick (every MiniBatch.Latency), on a watermark that
// is at least MiniBatch.Latency of event time past the one that last
// ended a batch (batches aligned on event time, as Flink's row-time
// mini-batch assigner does; the output of a group aggregation has no
// time attribute, so no row of it can be late), on the final watermark,
// before a checkpoint barrier is passed on (so that the checkpoint holds
// every buffered row's effect and nothing buffered is lost on restore),
// and at end of input.
type MiniBatchGroupAgg struct {
	*GroupAgg
	mb MiniBatch

	// The buffer: groups in first-seen order, each with its encoded key
	// (in keyBytes) and a list of its changes, linked through next.
	index     map[string]int32
	bufGroups []bufGroup
	keyBytes  []byte
	changes   []dyntable.Change
	next      []int32 // next change of the same group, -1 at the end
	clock     batchClock
	// merge is set for GlobalGroupAggregate: the input rows are partial
	// aggregates of LocalGroupAggregate, merged instead of added.
	merge bool
}

// batchClock decides which watermarks end a mini-batch: the final one,
// and one at least the latency of event time past the watermark that
// last ended a batch (the first one too).
type batchClock struct {
	latency time.Duration
	last    int64
	seen    bool
}

func (c *batchClock) ends(wm int64) bool {
	if wm != dataflow.MaxWatermark && c.seen && wm-c.last < int64(c.latency) {
		return false
	}
	c.last, c.seen = wm, true
	return true
}

type bufGroup struct {
	keyStart, keyEnd int32
	head, tail       int32
}

var _ dataflow.Operator = (*MiniBatchGroupAgg)(nil)

// NewMiniBatchGroupAgg returns the mini-batch group aggregation; mb must
// be on.
func NewMiniBatchGroupAgg(spec GroupAggSpec, mb MiniBatch) (*MiniBatchGroupAgg, error) {
	if !mb.On() {
		return nil, fmt.Errorf("GroupAggregate: mini-batch needs a latency and a size above 0, got %s", mb)
	}
	g, err := NewGroupAgg(spec)
	if err != nil {
		return nil, err
	}
	return &MiniBatchGroupAgg{GroupAgg: g, mb: mb, index: map[string]int32{}, clock: batchClock{latency: mb.Latency}}, nil
}

// ProcessChunk implements dataflow.Operator: it buffers c's changes and
// ends the batch once it holds MiniBatch.Size rows.
func (m *MiniBatchGroupAgg) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	for i := range in.Changes {
		ch := in.Changes[i]
		m.key = types.EncodeKey(m.key[:0], ch.Row, m.spec.GroupKeys)
		c := int32(len(m.changes))
		m.changes = append(m.changes, ch)
		m.next = append(m.next, -1)
		if gi, ok := m.index[string(m.key)]; ok {
			g := &m.bufGroups[gi]
			m.next[g.tail] = c
			g.tail = c
		} else {
			start := int32(len(m.keyBytes))
			m.keyBytes = append(m.keyBytes, m.key...)
			m.index[string(m.key)] = int32(len(m.bufGroups))
			m.bufGroups = append(m.bufGroups, bufGroup{keyStart: start, keyEnd: int32(len(m.keyBytes)), head: c, tail: c})
		}
		if len(m.changes) >= m.mb.Size {
			if err := m.flush(out); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush folds the buffered changes into the state, group by group, and
// emits each group's change.
func (m *MiniBatchGroupAgg) flush(out dataflow.Collector) error {
	if len(m.changes) == 0 {
		return nil
	}
	em := kit.NewEmitter(out, 2*len(m.bufGroups))
	for gi := range m.bufGroups {
		bg := &m.bufGroups[gi]
		key := m.keyBytes[bg.keyStart:bg.keyEnd]
		gs, existed, err := m.GroupAgg.groups.Get(key)
		if err != nil {
			return err
		}
		if !existed {
			gs = m.newGroup()
		}
		var last types.Row
		for c := bg.head; c >= 0; c = m.next[c] {
			ch := &m.changes[c]
			last = ch.Row
			switch {
			case m.merge:
				err = m.mergePartial(&gs, ch.Row)
			case ch.Kind.IsAccumulate():
				_, err = m.add(&gs, ch.Row)
			default:
				if gs.rows == 0 {
					return fmt.Errorf("GroupAggregate: %s for group [%s] that has no state", ch.Kind,
						types.FormatRow(keyRow(ch.Row, m.spec.GroupKeys), nil, ", "))
				}
				_, err = m.retract(&gs, ch.Row)
			}
			if err != nil {
				return err
			}
			if gs.rows == 0 {
				// The group emptied within the batch: start it afresh,
				// remembering what was last emitted for it.
				prev := gs.out
				gs = m.newGroup()
				gs.out = prev
			}
		}
		if gs.rows == 0 {
			if gs.out != nil {
				em.Add(dyntable.Delete, gs.out)
			}
			if existed {
				if err := m.GroupAgg.groups.Delete(key); err != nil {
					return err
				}
			}
			continue
		}
		row := m.resultRow(&gs, last)
		switch {
		case gs.out == nil:
			em.Add(dyntable.Insert, row)
			gs.out = row
		case !types.RowsEqual(gs.out, row):
			em.Add(dyntable.UpdateBefore, gs.out)
			em.Add(dyntable.UpdateAfter, row)
			gs.out = row
		}
		if err := m.GroupAgg.groups.Put(key, gs); err != nil {
			return err
		}
	}
	m.reset()
	em.Flush()
	return nil
}

// resultRow is gs's result row, with the group key values of input row r.
func (m *MiniBatchGroupAgg) resultRow(gs *groupState, r types.Row) types.Row {
	nk := len(m.spec.GroupKeys)
	row := make(types.Row, nk+len(m.plan))
	for i, k := range m.spec.GroupKeys {
		row[i].Set(r[k])
	}
	for i := range m.plan {
		m.resultTo(&row[nk+i], gs, i)
	}
	return row
}

// reset empties the buffer, keeping its memory for the next batch.
func (m *MiniBatchGroupAgg) reset() {
	clear(m.index)
	clear(m.changes) // drop the rows for the collector
	m.changes = m.changes[:0]
	m.next = m.next[:0]
	m.bufGroups = m.bufGroups[:0]
	m.keyBytes = m.keyBytes[:0]
}

// ProcessWatermark implements dataflow.Operator: a watermark
// MiniBatch.Latency past the one that ended the last batch, or the
// final one, ends the batch before it is passed on.
func (m *MiniBatchGroupAgg) ProcessWatermark(wm int64, out dataflow.Collector) error {
	if !m.clock.ends(wm) {
		return nil
	}
	return m.flush(out)
}

// ProcessingTimeInterval implements dataflow.Operator: a tick every
// MiniBatch.Latency ends the batch.
func (m *MiniBatchGroupAgg) ProcessingTimeInterval() time.Duration { return m.mb.Latency }

// OnProcessingTime implements dataflow.Operator.
func (m *MiniBatchGroupAgg) OnProcessingTime(_ time.Time, out dataflow.Collector) error {
	return m.flush(out)
}

// PrepareSnapshotPreBarrier implements dataflow.Operator: the batch
// ends before the checkpoint, which then holds its effect.
func (m *MiniBatchGroupAgg) PrepareSnapshotPreBarrier(_ dataflow.Barrier, out dataflow.Collector) error {
	return m.flush(out)
}

// Finish implements dataflow.Operator: the last batch ends with the input.
func (m *MiniBatchGroupAgg) Finish(out dataflow.Collector) error { return m.flush(out) }
