package operators

import (
	"fmt"
	"math"

	"github.com/streamsql/streamsql/types"
)

// Merging of aggregate states, which window aggregation needs and the
// unbounded GroupAggregate does not: a firing HOP or CUMULATE window
// merges the states of the slices it covers, and a row that bridges two
// SESSION windows merges their states. The states are GroupAgg's
// groupState (the same words and accumulator objects, see groupagg.go),
// so the window operators share GroupAgg's planning, update and result
// code and only add the merge below.

// mergeGroup folds src into dst, as if every row added to src had been
// added to dst. Both must come from g.newGroup.
func (g *GroupAgg) mergeGroup(dst, src *groupState) error {
	if src.rows == 0 {
		return nil
	}
	for i := range g.plan {
		p := &g.plan[i]
		switch p.op {
		case opCountStar, opCount:
			// The row count and the non-NULL counts are summed below.
		case opIntSum:
			d, s := dst.word(p.word), *src.word(p.word)
			t := *d + s
			if (s > 0 && t < *d) || (s < 0 && t > *d) || t < p.lo || t > p.hi {
				return fmt.Errorf("integer overflow in SUM: %d + %d", *d, s)
			}
			*d = t
		case opFloatSum:
			d := dst.word(p.word)
			t := math.Float64frombits(uint64(*d)) + math.Float64frombits(uint64(*src.word(p.word)))
			*d = int64(math.Float64bits(t))
		case opIntMin, opIntMax:
			if *src.word(p.nn) == 0 {
				continue
			}
			d, s := dst.word(p.word), *src.word(p.word)
			if *dst.word(p.nn) == 0 || (p.op == opIntMin && s < *d) || (p.op == opIntMax && s > *d) {
				*d = s
			}
		case opAcc:
			if err := mergeAcc(dst.ext.accs[p.acc], src.ext.accs[p.acc]); err != nil {
				return err
			}
		}
	}
	for _, c := range g.nnCols {
		*dst.word(c.word) += *src.word(c.word)
	}
	dst.rows += src.rows
	return nil
}

// mergeAcc folds accumulator src into dst of the same kind.
func mergeAcc(dst, src accumulator) error {
	switch d := dst.(type) {
	case *countAcc:
		d.n += src.(*countAcc).n
	case *intSumAcc:
		s := src.(*intSumAcc)
		t := d.sum + s.sum
		if (s.sum > 0 && t < d.sum) || (s.sum < 0 && t > d.sum) || t < d.lo || t > d.hi {
			return fmt.Errorf("integer overflow in SUM: %d + %d", d.sum, s.sum)
		}
		d.sum, d.n = t, d.n+s.n
	case *floatSumAcc:
		s := src.(*floatSumAcc)
		d.sum, d.n = d.sum+s.sum, d.n+s.n
	case *decSumAcc:
		s := src.(*decSumAcc)
		if _, err := decCtx.Add(&d.sum, &d.sum, &s.sum); err != nil {
			return fmt.Errorf("DECIMAL overflow in SUM: %v", err)
		}
		d.n += s.n
	case *extremeAcc:
		s := src.(*extremeAcc)
		if !s.v.IsNull() {
			return d.add(s.v)
		}
	case *retractExtremeAcc:
		s := src.(*retractExtremeAcc)
		for _, e := range s.set.m {
			for i := int64(0); i < e.n; i++ {
				if err := d.add(e.v); err != nil {
					return err
				}
			}
		}
	case *distinctAcc:
		// Each value new to dst's set goes into dst's inner accumulator
		// once, exactly as add would have done.
		return src.(*distinctAcc).set.each(func(v types.Value, n int64) error {
			for i := int64(0); i < n; i++ {
				if err := d.add(v); err != nil {
					return err
				}
			}
			return nil
		})
	case *varianceAcc:
		return d.merge(src.(*varianceAcc))
	case *seqAcc:
		return d.merge(src.(*seqAcc))
	case *jsonObjectAcc:
		return d.merge(src.(*jsonObjectAcc))
	case *collectAcc:
		d.merge(src.(*collectAcc))
	case *percentileAcc:
		for _, e := range src.(*percentileAcc).set.m {
			for i := int64(0); i < e.n; i++ {
				d.set.add(e.v)
			}
		}
	default:
		return fmt.Errorf("cannot merge aggregate state %T", dst)
	}
	return nil
}
