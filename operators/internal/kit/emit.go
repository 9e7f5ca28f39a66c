package kit

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Emitter accumulates output changes and emits them as one chunk. The
// zero value is ready; it is used from the operator's goroutine only.
type Emitter struct{ c *dyntable.Chunk }

// NewEmitter returns an Emitter whose chunk has room for n changes, for
// an operator that knows about how many it will add.
func NewEmitter(n int) Emitter {
	return Emitter{c: &dyntable.Chunk{Changes: make([]dyntable.Change, 0, n)}}
}

// Add appends the change (k, r).
func (e *Emitter) Add(k dyntable.RowKind, r types.Row) {
	if e.c == nil {
		e.c = &dyntable.Chunk{}
	}
	e.c.Changes = append(e.c.Changes, dyntable.Change{Kind: k, Row: r})
}

// Flush emits the changes added since the last Flush as one chunk, if
// there are any; the chunk then belongs to out.
func (e *Emitter) Flush(out dataflow.Collector) {
	if e.c != nil && len(e.c.Changes) > 0 {
		out.Emit(e.c)
	}
	e.c = nil
}
