package operators

import (
	"fmt"
	"math"

	"github.com/streamsql/streamsql/types"
)

// Two-phase aggregation (table.optimizer.agg-phase-strategy): a
// LocalGroupAgg before the hash exchange folds each mini-batch into one
// partial aggregate per group, without state, and the GlobalGroupAgg
// after it merges the partials into its state (Flink's
// LocalGroupAggregate and GlobalGroupAggregate).
//
// A partial row is the group key columns, then the group's row count,
// then GroupAgg's words (see groupState): the non-NULL counts, sums and
// extremes of the word aggregates, a DOUBLE for a DOUBLE sum and a
// BIGINT for the rest. Only aggregations computed entirely in words
// over an insert-only input can be split (Mergeable): a partial then
// never retracts, and an extreme merges by comparison.

// Mergeable reports whether spec's aggregation can run in two phases.
func Mergeable(spec GroupAggSpec) bool {
	if spec.InputRetracts {
		return false
	}
	g, err := NewGroupAgg(spec)
	return err == nil && g.nAccs == 0
}

// PartialColumn is one column of a partial row after the group keys.
type PartialColumn struct {
	Name string
	Type types.Type
}

// PartialColumns returns the columns of spec's partial rows after the
// group keys; spec must be Mergeable.
func PartialColumns(spec GroupAggSpec) ([]PartialColumn, error) {
	if !Mergeable(spec) {
		return nil, fmt.Errorf("GroupAggregate: the aggregation cannot run in two phases")
	}
	g, _ := NewGroupAgg(spec)
	cols := []PartialColumn{{Name: "count1$", Type: types.TypeBigInt.WithNotNull(true)}}
	names := make([]string, g.nWords)
	kinds := make([]types.Type, g.nWords)
	for j := range kinds {
		kinds[j] = types.TypeBigInt.WithNotNull(true)
	}
	for _, c := range g.nnCols {
		names[c.word] = fmt.Sprintf("count$%d", c.word)
	}
	for _, p := range g.plan {
		switch p.op {
		case opIntSum:
			names[p.word] = fmt.Sprintf("sum$%d", p.word)
		case opFloatSum:
			names[p.word] = fmt.Sprintf("sum$%d", p.word)
			kinds[p.word] = types.TypeDouble.WithNotNull(true)
		case opIntMax:
			names[p.word] = fmt.Sprintf("max$%d", p.word)
		case opIntMin:
			names[p.word] = fmt.Sprintf("min$%d", p.word)
		}
	}
	for j := range names {
		cols = append(cols, PartialColumn{Name: names[j], Type: kinds[j]})
	}
	return cols, nil
}

// partialRow appends gs's partial to the key values of r.
func (g *GroupAgg) partialRow(gs *groupState, r types.Row) types.Row {
	nk := len(g.spec.GroupKeys)
	row := make(types.Row, nk+1+g.nWords)
	for i, k := range g.spec.GroupKeys {
		row[i].Set(r[k])
	}
	row[nk].Set(types.NewInt(gs.rows))
	for j := 0; j < g.nWords; j++ {
		row[nk+1+j].Set(types.NewInt(*gs.word(j)))
	}
	for _, p := range g.plan {
		if p.op == opFloatSum {
			row[nk+1+p.word].Set(types.NewFloat(math.Float64frombits(uint64(*gs.word(p.word)))))
		}
	}
	return row
}

// NewGlobalGroupAgg returns the GlobalGroupAggregate of spec, the
// aggregation split in two: a mini-batch group aggregation whose input
// rows are the partials of a LocalGroupAgg of spec. Its output is
// GroupAgg's for spec.
func NewGlobalGroupAgg(spec GroupAggSpec, mb MiniBatch) (*MiniBatchGroupAgg, error) {
	if !Mergeable(spec) {
		return nil, fmt.Errorf("GlobalGroupAggregate: the aggregation cannot run in two phases")
	}
	global := spec
	global.GroupKeys = make([]int, len(spec.GroupKeys))
	for i := range global.GroupKeys {
		global.GroupKeys[i] = i
	}
	m, err := NewMiniBatchGroupAgg(global, mb)
	if err != nil {
		return nil, err
	}
	m.merge = true
	return m, nil
}

// mergePartial merges partial row r into gs.
func (g *GroupAgg) mergePartial(gs *groupState, r types.Row) error {
	base := len(g.spec.GroupKeys) + 1
	if len(r) != base+g.nWords {
		return fmt.Errorf("GlobalGroupAggregate: a partial row of %d columns, want %d", len(r), base+g.nWords)
	}
	pw := func(j int) int64 { return r[base+j].Int() }
	for i := range g.plan {
		p := &g.plan[i]
		switch p.op {
		case opIntSum:
			w, x := gs.word(p.word), pw(p.word)
			t := *w + x
			if (x > 0 && t < *w) || (x < 0 && t > *w) || t < p.lo || t > p.hi {
				return fmt.Errorf("GlobalGroupAggregate: integer overflow in SUM: %d + %d", *w, x)
			}
			*w = t
		case opFloatSum:
			w := gs.word(p.word)
			*w = int64(math.Float64bits(math.Float64frombits(uint64(*w)) + r[base+p.word].Float()))
		case opIntMax, opIntMin:
			if pw(p.nn) == 0 {
				continue
			}
			w, x := gs.word(p.word), pw(p.word)
			if *gs.word(p.nn) == 0 || (p.op == opIntMax && x > *w) || (p.op == opIntMin && x < *w) {
				*w = x
			}
		}
	}
	for _, c := range g.nnCols {
		*gs.word(c.word) += pw(c.word)
	}
	gs.rows += r[base-1].Int()
	return nil
}
