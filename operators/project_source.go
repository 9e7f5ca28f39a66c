package operators

import (
	"context"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// ProjectingSource narrows the rows of a source to the columns a scan
// reads (projection push-down), and to the fields of ROW columns it
// reads (nested projection push-down). Embedding the source passes every call
// but Run through, so the wrapped source's abilities (positions,
// checkpoint notices) stay its own.
type ProjectingSource struct {
	dataflow.Source
	fields [][]int
}

var _ dataflow.Source = (*ProjectingSource)(nil)

// NewProjectingSource wraps src so that each row it emits is replaced
// by the values at fields, in that order. A field is a path, as
// connectors.ProjectionPushDown takes it: a column, then for a longer
// path the field indexes into that ROW column and the ROWs nested in it
// (NULL where a ROW on the path is NULL).
func NewProjectingSource(src dataflow.Source, fields [][]int) *ProjectingSource {
	return &ProjectingSource{Source: src, fields: fields}
}

// Run runs the wrapped source with an output that projects its rows.
func (s *ProjectingSource) Run(ctx context.Context, out dataflow.SourceOutput) error {
	return s.Source.Run(ctx, &projectingOutput{SourceOutput: out, fields: s.fields})
}

type projectingOutput struct {
	dataflow.SourceOutput
	fields [][]int
}

// Emit replaces each row of c by its projection, in one allocation for
// the chunk, and hands c on.
func (o *projectingOutput) Emit(c *dyntable.Chunk) error {
	vals := make([]types.Value, len(c.Changes)*len(o.fields))
	w := len(o.fields)
	for i := range c.Changes {
		row := types.Row(vals[i*w : (i+1)*w : (i+1)*w])
		for j, f := range o.fields {
			v := c.Changes[i].Row[f[0]]
			for _, k := range f[1:] {
				if v.IsNull() {
					break
				}
				v = v.Elems()[k]
			}
			row[j] = v
		}
		c.Changes[i].Row = row
	}
	return o.SourceOutput.Emit(c)
}
