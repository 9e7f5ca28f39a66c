package operators

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
)

// Union is UNION ALL: it forwards every input's changes unchanged. The
// runtime already merges watermarks (minimum over inputs) and waits for
// end-of-input on all of them.
type Union struct{ dataflow.BaseOperator }

var _ dataflow.Operator = (*Union)(nil)

// NewUnion returns a UNION ALL operator.
func NewUnion() *Union { return &Union{} }

// ProcessChunk implements dataflow.Operator.
func (u *Union) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	out.Emit(in)
	return nil
}
