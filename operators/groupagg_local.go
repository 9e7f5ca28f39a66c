package operators

import (
	"fmt"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/types"
)

// LocalGroupAgg is the first phase of a two-phase aggregation (Flink's
// LocalGroupAggregate, see groupagg_global.go): before the hash
// exchange, it folds each mini-batch of its insert-only input into one
// partial aggregate per group and emits the partials (+I) when the
// batch ends, on the same triggers as MiniBatchGroupAgg. It keeps no
// state: a batch ends before every checkpoint barrier, so nothing is
// held across one.
type LocalGroupAgg struct {
	*GroupAgg
	mb    MiniBatch
	clock batchClock
	index map[string]int32
	parts []localPart
	rows  int // rows folded into the batch
}

type localPart struct {
	gs  groupState
	row types.Row // the first input row of the group, for its key values
}

var _ dataflow.Operator = (*LocalGroupAgg)(nil)

// NewLocalGroupAgg returns the local phase of spec, which must be
// Mergeable; mb must be on.
func NewLocalGroupAgg(spec GroupAggSpec, mb MiniBatch) (*LocalGroupAgg, error) {
	if !mb.On() {
		return nil, fmt.Errorf("LocalGroupAggregate: mini-batch needs a latency and a size above 0, got %s", mb)
	}
	if !Mergeable(spec) {
		return nil, fmt.Errorf("LocalGroupAggregate: the aggregation cannot run in two phases")
	}
	g, err := NewGroupAgg(spec)
	if err != nil {
		return nil, err
	}
	return &LocalGroupAgg{GroupAgg: g, mb: mb, clock: batchClock{latency: mb.Latency}, index: map[string]int32{}}, nil
}

// Open implements dataflow.Operator: the local phase has no state.
func (l *LocalGroupAgg) Open(*dataflow.OpContext) error { return nil }

// ProcessChunk implements dataflow.Operator.
func (l *LocalGroupAgg) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	for i := range in.Changes {
		ch := &in.Changes[i]
		if !ch.Kind.IsAccumulate() {
			return fmt.Errorf("LocalGroupAggregate: %s on an input planned as insert-only", ch.Kind)
		}
		l.key = types.EncodeKey(l.key[:0], ch.Row, l.spec.GroupKeys)
		pi, ok := l.index[string(l.key)]
		if !ok {
			pi = int32(len(l.parts))
			l.index[string(l.key)] = pi
			l.parts = append(l.parts, localPart{gs: l.newGroup(), row: ch.Row})
		}
		if _, err := l.add(&l.parts[pi].gs, ch.Row); err != nil {
			return fmt.Errorf("Local%w", err)
		}
		l.rows++
		if l.rows >= l.mb.Size {
			l.flush(out)
		}
	}
	return nil
}

// flush emits the batch's partials, one per group, and empties it.
func (l *LocalGroupAgg) flush(out dataflow.Collector) {
	if len(l.parts) == 0 {
		return
	}
	em := kit.NewEmitter(out, len(l.parts))
	for i := range l.parts {
		em.Add(dyntable.Insert, l.partialRow(&l.parts[i].gs, l.parts[i].row))
	}
	clear(l.index)
	clear(l.parts)
	l.parts = l.parts[:0]
	l.rows = 0
	em.Flush()
}

// ProcessWatermark implements dataflow.Operator (see batchClock).
func (l *LocalGroupAgg) ProcessWatermark(wm int64, out dataflow.Collector) error {
	if l.clock.ends(wm) {
		l.flush(out)
	}
	return nil
}

// ProcessingTimeInterval implements dataflow.Operator.
func (l *LocalGroupAgg) ProcessingTimeInterval() time.Duration { return l.mb.Latency }

// OnProcessingTime implements dataflow.Operator.
func (l *LocalGroupAgg) OnProcessingTime(_ time.Time, out dataflow.Collector) error {
	l.flush(out)
	return nil
}

// PrepareSnapshotPreBarrier implements dataflow.Operator.
func (l *LocalGroupAgg) PrepareSnapshotPreBarrier(_ dataflow.Barrier, out dataflow.Collector) error {
	l.flush(out)
	return nil
}

// Finish implements dataflow.Operator.
func (l *LocalGroupAgg) Finish(out dataflow.Collector) error {
	l.flush(out)
	return nil
}
