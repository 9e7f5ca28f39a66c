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
	filter      Predicate // nil: keep every row
	projections []Scalar  // nil: keep the row as is
}

var _ dataflow.Operator = (*Calc)(nil)

// NewCalc returns a calc operator.
func NewCalc(filter Predicate, projections []Scalar) *Calc {
	return &Calc{filter: filter, projections: projections}
}

// ProcessChunk implements dataflow.Operator. It reuses the input chunk
// for its output, which it owns.
func (c *Calc) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	kept := in.Changes[:0]
	for _, ch := range in.Changes {
		if c.filter != nil {
			ok, err := c.filter(ch.Row)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		}
		if c.projections != nil {
			row := make(types.Row, len(c.projections))
			for i, p := range c.projections {
				v, err := p(ch.Row)
				if err != nil {
					return err
				}
				row[i] = v
			}
			ch.Row = row
		}
		kept = append(kept, ch)
	}
	in.Changes = kept
	out.Emit(in)
	return nil
}
