package dyntable

import (
	"fmt"

	"github.com/streamsql/streamsql/types"
)

// SinkEncoding is how a changelog is written to an external system.
type SinkEncoding uint8

// The three sink encodings.
const (
	// AppendOnly accepts inserts only; a query that produces updates is
	// rejected at planning time.
	AppendOnly SinkEncoding = iota
	// RetractEncoding writes the full changelog with -U/+U pairs.
	RetractEncoding
	// UpsertEncoding writes by primary key: -U is dropped when its +U
	// follows, and becomes -D when nothing does (see Encode).
	UpsertEncoding
)

func (e SinkEncoding) String() string {
	switch e {
	case AppendOnly:
		return "append-only"
	case RetractEncoding:
		return "retract"
	case UpsertEncoding:
		return "upsert"
	}
	return fmt.Sprintf("SinkEncoding(%d)", e)
}

// Accepts reports whether a query with changelog mode m can be written
// with this encoding, and if not, why.
func (e SinkEncoding) Accepts(m ChangelogMode) error {
	if e == AppendOnly && !m.IsInsertOnly() {
		return fmt.Errorf("the query produces updates %s but the sink is append-only", m)
	}
	return nil
}

// Encode rewrites a chunk for the encoding, in place, and returns it. An
// append-only sink fails on anything but an insert, which the planner
// should have prevented. An upsert sink writes by its primary key (the
// columns key): a -U is dropped when a +U or +I of the same key follows
// it in the chunk, since that replaces the row anyway; a -U that nothing
// follows (its +U was filtered out, say, by a WHERE over an updating
// aggregate) becomes a -D, because the row left the result. Retract
// sinks take everything.
func (e SinkEncoding) Encode(c *Chunk, key []int) (*Chunk, error) {
	switch e {
	case AppendOnly:
		for _, ch := range c.Changes {
			if ch.Kind != Insert {
				return nil, fmt.Errorf("dyntable: %s reached an append-only sink", ch.Kind)
			}
		}
	case UpsertEncoding:
		upsertChanges(c, key)
	}
	return c, nil
}

// upsertChanges applies the upsert rule of Encode. It walks the chunk
// backwards, remembering for each key whether an accumulating change of
// it comes later (before any other retraction of it).
func upsertChanges(c *Chunk, key []int) {
	lone := false
	for _, ch := range c.Changes {
		if ch.Kind == UpdateBefore {
			lone = true
			break
		}
	}
	if !lone {
		return
	}
	followed := map[string]bool{}
	drop := make([]bool, len(c.Changes))
	var kb []byte
	for i := len(c.Changes) - 1; i >= 0; i-- {
		ch := &c.Changes[i]
		kb = types.EncodeKey(kb[:0], ch.Row, key)
		switch ch.Kind {
		case Insert, UpdateAfter:
			followed[string(kb)] = true
		case UpdateBefore:
			if followed[string(kb)] {
				drop[i] = true
			} else {
				ch.Kind = Delete
			}
			followed[string(kb)] = false
		case Delete:
			followed[string(kb)] = false
		}
	}
	out := c.Changes[:0]
	for i, ch := range c.Changes {
		if !drop[i] {
			out = append(out, ch)
		}
	}
	c.Changes = out
}
