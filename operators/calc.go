package operators

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Calc is projection and filter: for each change whose row passes the
// filter, it emits the projected row with the same row kind. A filter
// applies to retractions exactly as to accumulations, so what was let in
// is also let out; that needs the filter to be deterministic, which the
// planner checks.
type Calc struct {
	dataflow.BaseOperator
	filter      Predicate    // nil: keep every row
	projections []Projection // nil: keep the row as is
}

var _ dataflow.Operator = (*Calc)(nil)

// Projection is one output column of a Calc: the input column Col as it
// is when Col >= 0 (copied without a call), else the value of Eval.
type Projection struct {
	Col  int
	Eval Scalar
}

// ColumnProjection is the projection of input column i.
func ColumnProjection(i int) Projection { return Projection{Col: i} }

// ScalarProjection is the projection of an expression.
func ScalarProjection(e Scalar) Projection { return Projection{Col: -1, Eval: e} }

// NewCalc returns a calc operator.
func NewCalc(filter Predicate, projections []Projection) *Calc {
	return &Calc{filter: filter, projections: projections}
}

// ProcessChunk implements dataflow.Operator. It reuses the input chunk
// for its output, which it owns. The filter runs first, over every
// change; the projected rows of those kept are then carved out of one
// allocation for the chunk (a consumer that keeps a row beyond the
// chunk, in state held in memory, keeps its own copy: kit.Own).
func (c *Calc) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	kept := in.Changes
	if c.filter != nil {
		kept = in.Changes[:0]
		for _, ch := range in.Changes {
			ok, err := c.filter(ch.Row)
			if err != nil {
				return err
			}
			if ok {
				kept = append(kept, ch)
			}
		}
	}
	if w := len(c.projections); c.projections != nil && len(kept) > 0 {
		vals := make([]types.Value, len(kept)*w)
		for i := range kept {
			row := types.Row(vals[i*w : (i+1)*w : (i+1)*w])
			in := kept[i].Row
			for j, p := range c.projections {
				if p.Col >= 0 {
					row[j] = in[p.Col]
					continue
				}
				v, err := p.Eval(in)
				if err != nil {
					return err
				}
				row[j] = v
			}
			kept[i].Row = row
		}
	}
	in.Changes = kept
	out.Emit(in)
	return nil
}
