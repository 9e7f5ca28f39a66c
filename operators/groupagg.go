package operators

import (
	"encoding/binary"
	"fmt"
	"math"

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
	plan   []aggPlan // one per aggregate, in spec.Aggs order
	nAccs  int       // aggregates computed by accumulator objects
	groups state.ValueState[*groupState]
	key    []byte
}

var _ dataflow.Operator = (*GroupAgg)(nil)

// groupState is one group's accumulators and its last emitted row. The
// common aggregates (COUNT, SUM/AVG of INT/BIGINT/DOUBLE, insert-only
// MIN/MAX of INT/BIGINT) live in flat slots, one per aggregate, stored
// inline for up to len(inl) aggregates so that a group is a single
// allocation; the configuration of each aggregate is in GroupAgg.plan.
// The others (DECIMAL, DISTINCT, retractable and non-integer MIN/MAX)
// are accumulator objects in accs.
type groupState struct {
	rows  int64 // input rows currently in the group
	out   types.Row
	slots []aggSlot // indexed by aggregate; unused for COUNT(*) and accumulators
	accs  []accumulator
	inl   [4]aggSlot
}

// NewGroupAgg returns a group aggregation operator; it fails on an
// aggregate the operator cannot compute.
func NewGroupAgg(spec GroupAggSpec) (*GroupAgg, error) {
	g := &GroupAgg{spec: spec, plan: make([]aggPlan, len(spec.Aggs))}
	for i, c := range spec.Aggs {
		p, err := planAgg(c, spec.InputRetracts)
		if err != nil {
			return nil, err
		}
		if p.op == opAcc {
			p.acc = g.nAccs
			g.nAccs++
		}
		g.plan[i] = p
	}
	return g, nil
}

// Open implements dataflow.Operator.
func (g *GroupAgg) Open(ctx *dataflow.OpContext) error {
	var err error
	g.groups, err = state.NewValueState[*groupState](ctx.State, "groups", groupCodec{g})
	return err
}

func (g *GroupAgg) newGroup() *groupState {
	gs := &groupState{}
	if len(g.plan) <= len(gs.inl) {
		gs.slots = gs.inl[:len(g.plan)]
	} else {
		gs.slots = make([]aggSlot, len(g.plan))
	}
	if g.nAccs > 0 {
		gs.accs = make([]accumulator, 0, g.nAccs)
		for i, p := range g.plan {
			if p.op == opAcc {
				a, _ := newAccumulator(g.spec.Aggs[i], g.spec.InputRetracts) // checked in NewGroupAgg
				gs.accs = append(gs.accs, a)
			}
		}
	}
	return gs
}

// ProcessChunk implements dataflow.Operator.
func (g *GroupAgg) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	em := emitter{c: &dyntable.Chunk{Changes: make([]dyntable.Change, 0, 2*len(in.Changes))}}
	for i := range in.Changes {
		ch := &in.Changes[i]
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
		var changed bool
		if acc {
			changed, err = g.add(gs, ch.Row)
		} else {
			changed, err = g.retract(gs, ch.Row)
		}
		if err != nil {
			return err
		}
		if gs.rows == 0 {
			em.add(dyntable.Delete, gs.out)
			if err := g.groups.Delete(g.key); err != nil {
				return err
			}
			continue
		}
		if row := g.changedRow(gs, ch.Row, changed); row != nil {
			if gs.out == nil {
				em.add(dyntable.Insert, row)
			} else {
				em.add(dyntable.UpdateBefore, gs.out)
				em.add(dyntable.UpdateAfter, row)
			}
			gs.out = row
		}
		if err := g.groups.Put(g.key, gs); err != nil {
			return err
		}
	}
	em.flush(out)
	return nil
}

// add accumulates input row r into gs. Aggregates other than COUNT(*)
// skip NULL arguments. It reports whether the result of a slot
// aggregate changed (as types.RowsEqual sees it) or the group has a
// COUNT(*); accumulator aggregates are left to changedRow.
func (g *GroupAgg) add(gs *groupState, r types.Row) (changed bool, err error) {
	for i := range g.plan {
		p := &g.plan[i]
		if p.op == opCountStar {
			changed = true
			continue
		}
		v := &r[p.arg]
		if v.IsNull() {
			continue
		}
		s := &gs.slots[i]
		switch p.op {
		case opCount:
			s.a++
			changed = true
		case opIntSum:
			x, sum := v.Int(), s.a
			t := sum + x
			if (x > 0 && t < sum) || (x < 0 && t > sum) || t < p.lo || t > p.hi {
				return false, fmt.Errorf("GroupAggregate: integer overflow in SUM: %d + %d", sum, x)
			}
			changed = changed || intSumChanged(p.avg, sum, s.b, t, s.b+1)
			s.a, s.b = t, s.b+1
		case opFloatSum:
			sum := math.Float64frombits(uint64(s.a))
			t := sum + v.Float()
			changed = changed || floatSumChanged(p.avg, sum, s.b, t, s.b+1)
			s.a, s.b = int64(math.Float64bits(t)), s.b+1
		case opIntMax:
			if x := v.Int(); s.b == 0 || x > s.a {
				s.a, s.b = x, 1
				changed = true
			}
		case opIntMin:
			if x := v.Int(); s.b == 0 || x < s.a {
				s.a, s.b = x, 1
				changed = true
			}
		default:
			if err := gs.accs[p.acc].add(*v); err != nil {
				return false, fmt.Errorf("GroupAggregate: %w", err)
			}
		}
	}
	gs.rows++
	return changed, nil
}

// retract removes input row r from gs; see add.
func (g *GroupAgg) retract(gs *groupState, r types.Row) (changed bool, err error) {
	for i := range g.plan {
		p := &g.plan[i]
		if p.op == opCountStar {
			changed = true
			continue
		}
		v := &r[p.arg]
		if v.IsNull() {
			continue
		}
		s := &gs.slots[i]
		switch p.op {
		case opCount:
			s.a--
			changed = true
		case opIntSum:
			x, sum := v.Int(), s.a
			t := sum - x
			if (x < 0 && t < sum) || (x > 0 && t > sum) {
				return false, fmt.Errorf("GroupAggregate: integer overflow in SUM: %d - %d", sum, x)
			}
			changed = changed || intSumChanged(p.avg, sum, s.b, t, s.b-1)
			s.a, s.b = t, s.b-1
		case opFloatSum:
			sum := math.Float64frombits(uint64(s.a))
			t := sum - v.Float()
			changed = changed || floatSumChanged(p.avg, sum, s.b, t, s.b-1)
			s.a, s.b = int64(math.Float64bits(t)), s.b-1
		case opIntMax, opIntMin:
			return false, fmt.Errorf("GroupAggregate: %w", errInsertOnlyExtreme)
		default:
			if err := gs.accs[p.acc].retract(*v); err != nil {
				return false, fmt.Errorf("GroupAggregate: %w", err)
			}
		}
	}
	gs.rows--
	return changed, nil
}

// intSumChanged reports whether an integer SUM (or AVG) result differs
// between (sum0, n0) and (sum1, n1); n == 0 is NULL.
func intSumChanged(avg bool, sum0, n0, sum1, n1 int64) bool {
	if n0 == 0 || n1 == 0 {
		return (n0 == 0) != (n1 == 0)
	}
	if avg {
		return sum0/n0 != sum1/n1
	}
	return sum0 != sum1
}

// floatSumChanged is intSumChanged for DOUBLE, with types.Compare's
// equality: -0 equals 0 and NaN equals NaN.
func floatSumChanged(avg bool, sum0 float64, n0 int64, sum1 float64, n1 int64) bool {
	if n0 == 0 || n1 == 0 {
		return (n0 == 0) != (n1 == 0)
	}
	if avg {
		sum0, sum1 = sum0/float64(n0), sum1/float64(n1)
	}
	return sum0 != sum1 && !(math.IsNaN(sum0) && math.IsNaN(sum1))
}

// result returns the current value of aggregate i of gs.
func (g *GroupAgg) result(gs *groupState, i int) types.Value {
	p := &g.plan[i]
	s := &gs.slots[i]
	switch p.op {
	case opCountStar:
		return types.NewInt(gs.rows)
	case opCount:
		return types.NewInt(s.a)
	case opIntSum:
		if s.b == 0 {
			return types.NullValue
		}
		if p.avg {
			return types.NewInt(s.a / s.b)
		}
		return types.NewInt(s.a)
	case opFloatSum:
		if s.b == 0 {
			return types.NullValue
		}
		f := math.Float64frombits(uint64(s.a))
		if p.avg {
			f /= float64(s.b)
		}
		return types.NewFloat(f)
	case opIntMax, opIntMin:
		if s.b == 0 {
			return types.NullValue
		}
		return types.NewInt(s.a)
	}
	return gs.accs[p.acc].result()
}

// changedRow returns gs's new result row, with the group key values
// taken from input row r, or nil when it equals the last emitted row as
// types.RowsEqual sees it. changed tells whether a slot aggregate's
// result changed; only accumulator aggregates are compared here.
func (g *GroupAgg) changedRow(gs *groupState, r types.Row, changed bool) types.Row {
	nk := len(g.spec.GroupKeys)
	if !changed && gs.out != nil {
		if g.nAccs == 0 {
			return nil
		}
		for i := range g.plan {
			if g.plan[i].op != opAcc {
				continue
			}
			v := g.result(gs, i)
			if !sameValue(&gs.out[nk+i], &v) {
				changed = true
				break
			}
		}
		if !changed {
			return nil
		}
	}
	row := make(types.Row, nk+len(g.plan))
	for i, k := range g.spec.GroupKeys {
		row[i] = r[k]
	}
	res := row[nk:]
	for i := range g.plan {
		g.resultTo(&res[i], gs, i)
	}
	return row
}

// resultTo stores the current value of aggregate i of gs in *dst. It is
// result, writing in place: building the common values right in the row
// saves copying them there.
func (g *GroupAgg) resultTo(dst *types.Value, gs *groupState, i int) {
	p := &g.plan[i]
	s := &gs.slots[i]
	switch p.op {
	case opCountStar:
		*dst = types.NewInt(gs.rows)
	case opCount:
		*dst = types.NewInt(s.a)
	case opIntSum:
		switch {
		case s.b == 0:
			*dst = types.NullValue
		case p.avg:
			*dst = types.NewInt(s.a / s.b)
		default:
			*dst = types.NewInt(s.a)
		}
	case opIntMax, opIntMin:
		if s.b == 0 {
			*dst = types.NullValue
		} else {
			*dst = types.NewInt(s.a)
		}
	default:
		*dst = g.result(gs, i)
	}
}

// sameValue is types.RowsEqual for one pair of values.
func sameValue(a, b *types.Value) bool {
	k := a.Kind()
	if k != b.Kind() {
		return false
	}
	switch k {
	case types.KindFloat, types.KindDecimal:
		return types.Compare(*a, *b) == 0
	}
	return *a == *b
}

func keyRow(r types.Row, cols []int) types.Row {
	k := make(types.Row, len(cols))
	for i, c := range cols {
		k[i] = r[c]
	}
	return k
}

// groupCodec serializes a group's state for persistent backends:
// rows, the last emitted row, then each aggregate in order. Slot
// aggregates use the encoding of the accumulator they stand for.
type groupCodec struct{ g *GroupAgg }

func (c groupCodec) Encode(dst []byte, gs *groupState) []byte {
	dst = binary.AppendVarint(dst, gs.rows)
	row := types.EncodeRow(nil, gs.out)
	dst = binary.AppendUvarint(dst, uint64(len(row)))
	dst = append(dst, row...)
	for i := range c.g.plan {
		p := &c.g.plan[i]
		if p.op == opAcc {
			dst = gs.accs[p.acc].encode(dst)
		} else {
			dst = p.encodeSlot(dst, gs, i)
		}
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
	for i := range c.g.plan {
		p := &c.g.plan[i]
		if p.op == opAcc {
			b, err = gs.accs[p.acc].decode(b)
		} else {
			b, err = p.decodeSlot(b, gs, i)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(b) != 0 {
		return nil, types.ErrCorrupt
	}
	return gs, nil
}
