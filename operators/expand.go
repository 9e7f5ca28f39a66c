package operators

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Expand is Flink's Expand operator, which GROUPING SETS, ROLLUP and
// CUBE aggregate over: each change becomes one change of the same kind
// per projection list, in order (one list per grouping set: the columns
// the set groups by, NULL for the others, and the set's number). It is
// stateless, and retractions expand exactly as the rows they retract.
type Expand struct {
	dataflow.BaseOperator
	projections [][]Scalar
}

var _ dataflow.Operator = (*Expand)(nil)

// NewExpand returns an expand operator.
func NewExpand(projections [][]Scalar) *Expand { return &Expand{projections: projections} }

// ProcessChunk implements dataflow.Operator.
func (e *Expand) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	res := &dyntable.Chunk{Changes: make([]dyntable.Change, 0, len(in.Changes)*len(e.projections))}
	for _, ch := range in.Changes {
		for _, proj := range e.projections {
			row := make(types.Row, len(proj))
			for i, p := range proj {
				v, err := p(ch.Row)
				if err != nil {
					return err
				}
				row[i] = v
			}
			res.Changes = append(res.Changes, dyntable.Change{Kind: ch.Kind, Row: row})
		}
	}
	if len(res.Changes) > 0 {
		out.Emit(res)
	}
	return nil
}
