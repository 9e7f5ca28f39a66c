package operators

import (
	"context"
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// ProjectingSource narrows the rows of a source to the columns a scan
// reads (projection push-down). It passes checkpoint calls through to
// the wrapped source: it always offers dataflow.CheckpointedSource and
// dataflow.SourceCheckpointListener, and a wrapped source that lacks
// them fails the checkpoint (position) or ignores the call (listener).
type ProjectingSource struct {
	dataflow.Source
	fields []int
}

var (
	_ dataflow.CheckpointedSource       = (*ProjectingSource)(nil)
	_ dataflow.SourceCheckpointListener = (*ProjectingSource)(nil)
)

// NewProjectingSource wraps src so that each row it emits is replaced
// by its columns fields, in that order.
func NewProjectingSource(src dataflow.Source, fields []int) *ProjectingSource {
	return &ProjectingSource{Source: src, fields: fields}
}

// SnapshotPosition passes the wrapped source's position through.
func (s *ProjectingSource) SnapshotPosition() ([]byte, error) {
	cs, ok := s.Source.(dataflow.CheckpointedSource)
	if !ok {
		return nil, fmt.Errorf("source cannot save its position")
	}
	return cs.SnapshotPosition()
}

// RestorePosition passes the saved position to the wrapped source.
func (s *ProjectingSource) RestorePosition(pos []byte) error {
	cs, ok := s.Source.(dataflow.CheckpointedSource)
	if !ok {
		return fmt.Errorf("source cannot restore a position")
	}
	return cs.RestorePosition(pos)
}

// PositionSaved passes the event to a wrapped
// dataflow.SourceCheckpointListener (the Kafka source).
func (s *ProjectingSource) PositionSaved(id int64, pos []byte) {
	if l, ok := s.Source.(dataflow.SourceCheckpointListener); ok {
		l.PositionSaved(id, pos)
	}
}

// NotifyCheckpointComplete passes the event to a wrapped
// dataflow.SourceCheckpointListener.
func (s *ProjectingSource) NotifyCheckpointComplete(id int64) error {
	if l, ok := s.Source.(dataflow.SourceCheckpointListener); ok {
		return l.NotifyCheckpointComplete(id)
	}
	return nil
}

// Run runs the wrapped source with an output that projects its rows.
func (s *ProjectingSource) Run(ctx context.Context, out dataflow.SourceOutput) error {
	return s.Source.Run(ctx, &projectingOutput{SourceOutput: out, fields: s.fields})
}

type projectingOutput struct {
	dataflow.SourceOutput
	fields []int
}

// Emit replaces each row of c by its projection, in one allocation for
// the chunk, and hands c on.
func (o *projectingOutput) Emit(c *dyntable.Chunk) error {
	vals := make([]types.Value, len(c.Changes)*len(o.fields))
	w := len(o.fields)
	for i := range c.Changes {
		row := types.Row(vals[i*w : (i+1)*w : (i+1)*w])
		for j, f := range o.fields {
			row[j] = c.Changes[i].Row[f]
		}
		c.Changes[i].Row = row
	}
	return o.SourceOutput.Emit(c)
}
