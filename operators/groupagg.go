package operators

import (
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// GroupAggSpec describes a GROUP BY aggregation.
type GroupAggSpec struct {
	GroupKeys []int
	Aggs      []AggCall
	// InputRetracts is set when the input carries -U/-D. MIN and MAX then
	// keep a multiset per group so that retracting the current extreme
	// finds the next one; over an insert-only input they keep one value.
	InputRetracts bool
}

// GroupAgg is the unbounded group aggregation (Flink's GroupAggregate).
// Its output row is the group key columns followed by one column per
// aggregate. For each input change it updates the group's accumulators
// and emits the difference of the group's result row:
//   - first row of a group: +I[new];
//   - result changed: -U[old], +U[new];
//   - result unchanged: nothing;
//   - the group's row count back to 0: -D[old], and its state is dropped.
//
// A retraction for a group that has no state is an invariant violation
// of the input changelog and fails the job.
type GroupAgg struct {
	base
	spec   GroupAggSpec
	groups state.ValueState[*groupState]
	key    []byte
}

var _ dataflow.Operator = (*GroupAgg)(nil)

// groupState is one group's accumulators and its last emitted row.
type groupState struct {
	rows int64 // input rows currently in the group
	accs []accumulator
	out  types.Row
}

// NewGroupAgg returns a group aggregation operator; it fails on an
// aggregate the operator cannot compute.
func NewGroupAgg(spec GroupAggSpec) (*GroupAgg, error) {
	for _, c := range spec.Aggs {
		if _, err := newAccumulator(c, spec.InputRetracts); err != nil {
			return nil, err
		}
	}
	return &GroupAgg{spec: spec}, nil
}

// Open implements dataflow.Operator.
func (g *GroupAgg) Open(ctx *dataflow.OpContext) error {
	var err error
	g.groups, err = state.NewValueState[*groupState](ctx.State, "groups", groupCodec{g})
	return err
}

func (g *GroupAgg) newGroup() *groupState {
	gs := &groupState{accs: make([]accumulator, len(g.spec.Aggs))}
	for i, c := range g.spec.Aggs {
		gs.accs[i], _ = newAccumulator(c, g.spec.InputRetracts) // checked in NewGroupAgg
	}
	return gs
}

// ProcessChunk implements dataflow.Operator.
func (g *GroupAgg) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	em := emitter{c: &dyntable.Chunk{Changes: make([]dyntable.Change, 0, 2*len(in.Changes))}}
	nk := len(g.spec.GroupKeys)
	for _, ch := range in.Changes {
		g.key = types.EncodeKey(g.key[:0], ch.Row, g.spec.GroupKeys)
		gs, ok, err := g.groups.Get(g.key)
		if err != nil {
			return err
		}
		acc := ch.Kind.IsAccumulate()
		if !ok {
			if !acc {
				return fmt.Errorf("GroupAggregate: %s for group [%s] that has no state", ch.Kind,
					types.FormatRow(keyRow(ch.Row, g.spec.GroupKeys), nil, ", "))
			}
			gs = g.newGroup()
		}
		for i, c := range g.spec.Aggs {
			v := ch.Row[c.Arg]
			if c.Kind == AggCountStar {
				v = types.NewBool(true)
			} else if v.IsNull() {
				continue
			}
			if acc {
				err = gs.accs[i].add(v)
			} else {
				err = gs.accs[i].retract(v)
			}
			if err != nil {
				return fmt.Errorf("GroupAggregate: %w", err)
			}
		}
		if acc {
			gs.rows++
		} else {
			gs.rows--
		}
		if gs.rows == 0 {
			em.add(dyntable.Delete, gs.out)
			if err := g.groups.Delete(g.key); err != nil {
				return err
			}
			continue
		}
		row := make(types.Row, nk+len(gs.accs))
		for i, k := range g.spec.GroupKeys {
			row[i] = ch.Row[k]
		}
		for i, a := range gs.accs {
			row[nk+i] = a.result()
		}
		switch {
		case gs.out == nil:
			em.add(dyntable.Insert, row)
			gs.out = row
		case !types.RowsEqual(gs.out, row):
			em.add(dyntable.UpdateBefore, gs.out)
			em.add(dyntable.UpdateAfter, row)
			gs.out = row
		}
		if err := g.groups.Put(g.key, gs); err != nil {
			return err
		}
	}
	em.flush(out)
	return nil
}

func keyRow(r types.Row, cols []int) types.Row {
	k := make(types.Row, len(cols))
	for i, c := range cols {
		k[i] = r[c]
	}
	return k
}

// groupCodec serializes a group's state for persistent backends:
// rows, the last emitted row, then each accumulator.
type groupCodec struct{ g *GroupAgg }

func (c groupCodec) Encode(dst []byte, gs *groupState) []byte {
	dst = binary.AppendVarint(dst, gs.rows)
	row := types.EncodeRow(nil, gs.out)
	dst = binary.AppendUvarint(dst, uint64(len(row)))
	dst = append(dst, row...)
	for _, a := range gs.accs {
		dst = a.encode(dst)
	}
	return dst
}

func (c groupCodec) Decode(b []byte) (*groupState, error) {
	gs := c.g.newGroup()
	n, k := binary.Varint(b)
	if k <= 0 {
		return nil, types.ErrCorrupt
	}
	gs.rows, b = n, b[k:]
	l, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < l {
		return nil, types.ErrCorrupt
	}
	out, err := types.DecodeRow(b[k : k+int(l)])
	if err != nil {
		return nil, err
	}
	gs.out, b = out, b[k+int(l):]
	for _, a := range gs.accs {
		if b, err = a.decode(b); err != nil {
			return nil, err
		}
	}
	if len(b) != 0 {
		return nil, types.ErrCorrupt
	}
	return gs, nil
}
