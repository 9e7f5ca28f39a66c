package operators

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// ConstSource emits constant rows once, as inserts: the rows of a
// FROM-less query or of INSERT ... VALUES. Its position is the number of
// rows emitted, so it takes part in checkpoints like any other bounded
// source, and a restored one does not emit its rows again.
type ConstSource struct {
	dataflow.BaseSource
	rows    []types.Row
	emitted int
}

var _ dataflow.Source = (*ConstSource)(nil)

// NewConstSource returns a source of rows. It does not copy them; the
// caller must not change them afterwards.
func NewConstSource(rows []types.Row) *ConstSource { return &ConstSource{rows: rows} }

// Run emits the rows not emitted yet in one chunk and returns.
func (s *ConstSource) Run(_ context.Context, out dataflow.SourceOutput) error {
	if s.emitted >= len(s.rows) {
		return nil
	}
	c := &dyntable.Chunk{}
	for _, r := range s.rows[s.emitted:] {
		c.Append(dyntable.Insert, r)
	}
	s.emitted = len(s.rows) // the position is advanced before Emit
	return out.Emit(c)
}

// SnapshotPosition implements dataflow.Source.
func (s *ConstSource) SnapshotPosition(int64) ([]byte, error) {
	return binary.AppendUvarint(nil, uint64(s.emitted)), nil
}

// RestorePosition implements dataflow.Source.
func (s *ConstSource) RestorePosition(pos []byte) error {
	n, k := binary.Uvarint(pos)
	if k <= 0 || k != len(pos) || n > uint64(len(s.rows)) {
		return fmt.Errorf("constant rows: invalid saved position %x for %d rows", pos, len(s.rows))
	}
	s.emitted = int(n)
	return nil
}
