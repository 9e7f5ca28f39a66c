package operators

import (
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Aggregator is GroupAgg's aggregate code — planning, update, merge,
// result and state encoding — without GroupAgg's keyed state. The window
// operators (package operators/window) keep one AggState per key and
// slice or session in state of their own, and fold rows into it, merge
// states and read results through an Aggregator, so that windows and the
// unbounded GroupAggregate compute every aggregate with the same code.
//
// An Aggregator holds no rows; it is built once per operator and used
// from the operator's goroutine only.
type Aggregator struct {
	g    *GroupAgg
	keys []int
}

// AggState is one group's aggregate state (GroupAgg's groupState) and the
// values of the group keys it was opened with. Its zero value is not
// ready: states come from Aggregator.NewState or the codec.
type AggState struct{ gs groupState }

// NewAggregator returns the aggregator of aggs over groups keyed by the
// input columns keys; it fails on an aggregate it cannot compute.
func NewAggregator(keys []int, aggs []AggCall) (*Aggregator, error) {
	if keys == nil {
		keys = []int{} // nil would make EncodeKey take every column
	}
	g, err := NewGroupAgg(GroupAggSpec{GroupKeys: keys, Aggs: aggs})
	if err != nil {
		return nil, err
	}
	return &Aggregator{g: g, keys: keys}, nil
}

// NewState returns an empty state with no group key values.
func (a *Aggregator) NewState() AggState { return AggState{a.g.newGroup()} }

// Add folds input row r into s.
func (a *Aggregator) Add(s *AggState, r types.Row) error {
	_, err := a.g.add(&s.gs, r)
	return err
}

// Merge folds src into dst, as if every row added to src had been added
// to dst (see GroupAgg.mergeGroup).
func (a *Aggregator) Merge(dst, src *AggState) error { return a.g.mergeGroup(&dst.gs, &src.gs) }

// SetKeys makes input row r's group key columns s's group key values.
func (a *Aggregator) SetKeys(s *AggState, r types.Row) { s.gs.out = keyRow(r, a.keys) }

// Keys returns the group key values SetKeys gave s, or nil.
func (s *AggState) Keys() types.Row { return s.gs.out }

// Empty reports whether no row has been added to s (or merged into it).
func (s *AggState) Empty() bool { return s.gs.rows == 0 }

// Len returns the number of aggregates.
func (a *Aggregator) Len() int { return len(a.g.plan) }

// ResultsTo stores the aggregates' current values of s in dst[0:Len()],
// which is part of a row being built.
func (a *Aggregator) ResultsTo(dst types.Row, s *AggState) {
	for i := range a.g.plan {
		a.g.resultTo(&dst[i], &s.gs, i)
	}
}

// Codec returns the state codec of a's states (GroupAgg's encoding).
func (a *Aggregator) Codec() state.Codec[AggState] { return aggStateCodec{groupCodec{a.g}} }

type aggStateCodec struct{ g groupCodec }

func (c aggStateCodec) Encode(dst []byte, s AggState) []byte { return c.g.Encode(dst, s.gs) }

func (c aggStateCodec) Decode(b []byte) (AggState, error) {
	gs, err := c.g.Decode(b)
	return AggState{gs}, err
}
