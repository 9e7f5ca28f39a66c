package kit

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// MaxChunk is the most changes an Emitter holds before it emits them. An
// operator may produce far more rows in one call than any input chunk
// held (a watermark that closes every key's window, the end of input),
// and those rows must stream on instead of being gathered whole: at
// MaxChunk the chunk goes to the collector and a new one begins.
const MaxChunk = 4096

// Emitter gathers an operator's output changes into chunks for one
// collector. Lifecycle: made with NewEmitter at the start of the call
// that produces output, Add for each change (which emits a full chunk),
// Flush once at the end, before the operator emits a watermark or
// returns. It is used from the operator's goroutine only.
type Emitter struct {
	out dataflow.Collector
	c   *dyntable.Chunk
	n   int
}

// NewEmitter returns an Emitter for out whose chunks have room for n
// changes (capped at MaxChunk), for an operator that knows about how many
// it will add; n may be 0.
func NewEmitter(out dataflow.Collector, n int) Emitter {
	return Emitter{out: out, n: min(n, MaxChunk)}
}

// Add appends the change (k, r), emitting the chunk when it is full.
func (e *Emitter) Add(k dyntable.RowKind, r types.Row) {
	if e.c == nil {
		e.c = &dyntable.Chunk{Changes: make([]dyntable.Change, 0, e.n)}
	}
	e.c.Changes = append(e.c.Changes, dyntable.Change{Kind: k, Row: r})
	if len(e.c.Changes) >= MaxChunk {
		e.Flush()
	}
}

// Flush emits the changes added since the last Flush as one chunk, if
// there are any; the chunk then belongs to the collector.
func (e *Emitter) Flush() {
	if e.c != nil && len(e.c.Changes) > 0 {
		e.out.Emit(e.c)
	}
	e.c = nil
}
