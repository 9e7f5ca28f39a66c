package operators

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
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
	dataflow.BaseOperator
	spec GroupAggSpec
	plan []aggPlan // one per aggregate, in spec.Aggs order
	// nnCols are the argument columns whose non-NULL count some word
	// aggregate needs; each count is kept once per group.
	nnCols []nnCol
	nWords int // words per group
	nAccs  int // aggregates computed by accumulator objects
	groups state.ValueState[groupState]
	key    []byte
}

var _ dataflow.Operator = (*GroupAgg)(nil)

// groupState is one group's row count, aggregates and last emitted row.
// The state holds it by value, so that looking a group up reaches its
// data without following another pointer.
//
// The common aggregates (COUNT, SUM/AVG of INT/BIGINT/DOUBLE, insert-only
// MIN/MAX of INT/BIGINT) are computed in int64 words, laid out by
// GroupAgg.plan: each such aggregate has at most one word of its own
// (a sum or an extreme) and shares with the others over the same column
// one word counting the column's non-NULL values. The first inlineWords
// words are inline, so that a typical group is 64 bytes referring to
// nothing but its last emitted row. Further words and the accumulator
// objects of the other aggregates (DECIMAL, DISTINCT, retractable or
// non-integer MIN/MAX) are in ext, nil when there are none.
type groupState struct {
	rows int64 // input rows currently in the group
	out  types.Row
	ext  *groupExt
	w    [inlineWords]int64
}

const inlineWords = 3

type groupExt struct {
	words []int64 // words from inlineWords on
	accs  []accumulator
}

// word returns word j of gs.
func (gs *groupState) word(j int) *int64 {
	if j < inlineWords {
		return &gs.w[j]
	}
	return &gs.ext.words[j-inlineWords]
}

// nnCol is an argument column and the word that counts its non-NULL
// values.
type nnCol struct{ arg, word int }

// NewGroupAgg returns a group aggregation operator; it fails on an
// aggregate the operator cannot compute.
func NewGroupAgg(spec GroupAggSpec) (*GroupAgg, error) {
	g := &GroupAgg{spec: spec, plan: make([]aggPlan, len(spec.Aggs))}
	for i, c := range spec.Aggs {
		p, err := planAgg(c, spec.InputRetracts)
		if err != nil {
			return nil, err
		}
		switch p.op {
		case opAcc:
			p.acc = g.nAccs
			g.nAccs++
		case opCountStar:
		default:
			p.nn = -1
			for _, c := range g.nnCols {
				if c.arg == p.arg {
					p.nn = c.word
				}
			}
			if p.nn < 0 {
				p.nn = g.nWords
				g.nnCols = append(g.nnCols, nnCol{arg: p.arg, word: p.nn})
				g.nWords++
			}
			if p.op != opCount {
				p.word = g.nWords
				g.nWords++
			}
		}
		g.plan[i] = p
	}
	return g, nil
}

// Open implements dataflow.Operator.
func (g *GroupAgg) Open(ctx *dataflow.OpContext) error {
	var err error
	g.groups, err = state.NewValueState[groupState](ctx.State, "groups", groupCodec{g})
	return err
}

func (g *GroupAgg) newGroup() groupState {
	var gs groupState
	if g.nAccs > 0 || g.nWords > inlineWords {
		gs.ext = &groupExt{}
		if g.nWords > inlineWords {
			gs.ext.words = make([]int64, g.nWords-inlineWords)
		}
		if g.nAccs > 0 {
			gs.ext.accs = make([]accumulator, 0, g.nAccs)
			for i, p := range g.plan {
				if p.op == opAcc {
					a, _ := newAccumulator(g.spec.Aggs[i], g.spec.InputRetracts) // checked in NewGroupAgg
					gs.ext.accs = append(gs.ext.accs, a)
				}
			}
		}
	}
	return gs
}

// ProcessChunk implements dataflow.Operator.
func (g *GroupAgg) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	em := kit.NewEmitter(out, 2*len(in.Changes))
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
			changed, err = g.add(&gs, ch.Row)
		} else {
			changed, err = g.retract(&gs, ch.Row)
		}
		if err != nil {
			return err
		}
		if gs.rows == 0 {
			em.Add(dyntable.Delete, gs.out)
			if err := g.groups.Delete(g.key); err != nil {
				return err
			}
			continue
		}
		if row := g.changedRow(&gs, ch.Row, changed); row != nil {
			if gs.out == nil {
				em.Add(dyntable.Insert, row)
			} else {
				em.Add(dyntable.UpdateBefore, gs.out)
				em.Add(dyntable.UpdateAfter, row)
			}
			gs.out = row
		}
		if err := g.groups.Put(g.key, gs); err != nil {
			return err
		}
	}
	em.Flush()
	return nil
}

// add accumulates input row r into gs. Aggregates other than COUNT(*)
// skip NULL arguments, but for a KeepNulls call, and a Filtered call
// skips the rows whose filter column is not TRUE. It reports whether the result of a word
// aggregate changed (as types.RowsEqual sees it) or there is a COUNT(*);
// accumulator aggregates are left to changedRow.
func (g *GroupAgg) add(gs *groupState, r types.Row) (changed bool, err error) {
	for i := range g.plan {
		p := &g.plan[i]
		if p.op == opCountStar {
			changed = true
			continue
		}
		v := &r[p.arg]
		if v.IsNull() && !p.nulls || p.filter >= 0 && !isTrue(r[p.filter]) {
			continue
		}
		switch p.op {
		case opCount:
			changed = true
		case opIntSum:
			n, w := *gs.word(p.nn), gs.word(p.word)
			x, sum := v.Int(), *w
			t := sum + x
			if (x > 0 && t < sum) || (x < 0 && t > sum) || t < p.lo || t > p.hi {
				return false, fmt.Errorf("GroupAggregate: integer overflow in SUM: %d + %d", sum, x)
			}
			changed = changed || intSumChanged(p.avg, sum, n, t, n+1)
			*w = t
		case opFloatSum:
			n, w := *gs.word(p.nn), gs.word(p.word)
			sum := math.Float64frombits(uint64(*w))
			t := sum + v.Float()
			changed = changed || floatSumChanged(p.avg, sum, n, t, n+1)
			*w = int64(math.Float64bits(t))
		case opIntMax:
			n, w := *gs.word(p.nn), gs.word(p.word)
			if x := v.Int(); n == 0 || x > *w {
				*w = x
				changed = true
			}
		case opIntMin:
			n, w := *gs.word(p.nn), gs.word(p.word)
			if x := v.Int(); n == 0 || x < *w {
				*w = x
				changed = true
			}
		default:
			if err := gs.ext.accs[p.acc].add(*v); err != nil {
				return false, fmt.Errorf("GroupAggregate: %w", err)
			}
		}
	}
	for _, c := range g.nnCols {
		if !r[c.arg].IsNull() {
			*gs.word(c.word)++
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
		if v.IsNull() && !p.nulls || p.filter >= 0 && !isTrue(r[p.filter]) {
			continue
		}
		switch p.op {
		case opCount:
			changed = true
		case opIntSum:
			n, w := *gs.word(p.nn), gs.word(p.word)
			x, sum := v.Int(), *w
			t := sum - x
			if (x < 0 && t < sum) || (x > 0 && t > sum) {
				return false, fmt.Errorf("GroupAggregate: integer overflow in SUM: %d - %d", sum, x)
			}
			changed = changed || intSumChanged(p.avg, sum, n, t, n-1)
			*w = t
		case opFloatSum:
			n, w := *gs.word(p.nn), gs.word(p.word)
			sum := math.Float64frombits(uint64(*w))
			t := sum - v.Float()
			changed = changed || floatSumChanged(p.avg, sum, n, t, n-1)
			*w = int64(math.Float64bits(t))
		case opIntMax, opIntMin:
			return false, fmt.Errorf("GroupAggregate: %w", errInsertOnlyExtreme)
		default:
			if err := gs.ext.accs[p.acc].retract(*v); err != nil {
				return false, fmt.Errorf("GroupAggregate: %w", err)
			}
		}
	}
	for _, c := range g.nnCols {
		if !r[c.arg].IsNull() {
			*gs.word(c.word)--
		}
	}
	gs.rows--
	return changed, nil
}

// isTrue reports whether v is the BOOLEAN TRUE (not FALSE, not NULL).
func isTrue(v types.Value) bool { return v.Kind() == types.KindBool && v.Bool() }

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
	var v types.Value
	g.resultTo(&v, gs, i)
	return v
}

// resultTo stores the current value of aggregate i of gs in *dst, which
// is part of a row being built (see types.Value.Set).
func (g *GroupAgg) resultTo(dst *types.Value, gs *groupState, i int) {
	p := &g.plan[i]
	switch p.op {
	case opCountStar:
		dst.Set(types.NewInt(gs.rows))
		return
	case opAcc:
		dst.Set(gs.ext.accs[p.acc].result())
		return
	}
	n := *gs.word(p.nn)
	switch {
	case p.op == opCount:
		dst.Set(types.NewInt(n))
	case n == 0:
		dst.Set(types.NullValue)
	case p.op == opFloatSum:
		f := math.Float64frombits(uint64(*gs.word(p.word)))
		if p.avg {
			f /= float64(n)
		}
		dst.Set(types.NewFloat(f))
	case p.avg:
		dst.Set(types.NewInt(*gs.word(p.word) / n))
	default: // SUM, MIN, MAX of INT/BIGINT
		dst.Set(types.NewInt(*gs.word(p.word)))
	}
}

// changedRow returns gs's new result row, with the group key values
// taken from input row r, or nil when it equals the last emitted row as
// types.RowsEqual sees it. changed tells whether a word aggregate's
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
		row[i].Set(r[k])
	}
	res := row[nk:]
	for i := range g.plan {
		g.resultTo(&res[i], gs, i)
	}
	return row
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

// groupCodec serializes a group's state for persistent backends: rows,
// the last emitted row, the words, then each accumulator object.
type groupCodec struct{ g *GroupAgg }

func (c groupCodec) Encode(dst []byte, gs groupState) []byte {
	dst = binary.AppendVarint(dst, gs.rows)
	row := types.EncodeRow(nil, gs.out)
	dst = binary.AppendUvarint(dst, uint64(len(row)))
	dst = append(dst, row...)
	for j := 0; j < c.g.nWords; j++ {
		dst = binary.AppendVarint(dst, *gs.word(j))
	}
	if gs.ext != nil {
		for _, a := range gs.ext.accs {
			dst = a.encode(dst)
		}
	}
	return dst
}

func (c groupCodec) Decode(b []byte) (groupState, error) {
	gs := c.g.newGroup()
	n, k := binary.Varint(b)
	if k <= 0 {
		return groupState{}, types.ErrCorrupt
	}
	gs.rows, b = n, b[k:]
	l, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < l {
		return groupState{}, types.ErrCorrupt
	}
	out, err := types.DecodeRow(b[k : k+int(l)])
	if err != nil {
		return groupState{}, err
	}
	gs.out, b = out, b[k+int(l):]
	for j := 0; j < c.g.nWords; j++ {
		w, k := binary.Varint(b)
		if k <= 0 {
			return groupState{}, types.ErrCorrupt
		}
		*gs.word(j), b = w, b[k:]
	}
	if gs.ext != nil {
		for _, a := range gs.ext.accs {
			if b, err = a.decode(b); err != nil {
				return groupState{}, err
			}
		}
	}
	if len(b) != 0 {
		return groupState{}, types.ErrCorrupt
	}
	return gs, nil
}
