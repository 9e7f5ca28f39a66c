package operators

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
)

// Collect hands the result changes of a query to the client: it is the
// last node of a query's graph and runs as a single subtask, so fn sees
// every change in order, from one goroutine. fn must not retain the
// chunk; an error from it fails the job.
type Collect struct {
	dataflow.BaseOperator
	fn func(c *dyntable.Chunk) error
}

var _ dataflow.Operator = (*Collect)(nil)

// NewCollect returns a Collect that passes each chunk to fn.
func NewCollect(fn func(c *dyntable.Chunk) error) *Collect { return &Collect{fn: fn} }

// ProcessChunk implements dataflow.Operator.
func (c *Collect) ProcessChunk(_ int, ch *dyntable.Chunk, _ dataflow.Collector) error {
	return c.fn(ch)
}
