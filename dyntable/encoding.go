package dyntable

import "fmt"

// SinkEncoding is how a changelog is written to an external system.
type SinkEncoding uint8

// The three sink encodings.
const (
	// AppendOnly accepts inserts only; a query that produces updates is
	// rejected at planning time.
	AppendOnly SinkEncoding = iota
	// RetractEncoding writes the full changelog with -U/+U pairs.
	RetractEncoding
	// UpsertEncoding writes by primary key and drops -U, since the +U that
	// follows replaces the row anyway.
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

// Encode filters a chunk for the encoding in place and returns it:
// upsert drops -U; the others pass everything. It fails on an update
// reaching an append-only sink, which the planner should have prevented.
func (e SinkEncoding) Encode(c *Chunk) (*Chunk, error) {
	switch e {
	case AppendOnly:
		for _, ch := range c.Changes {
			if ch.Kind != Insert {
				return nil, fmt.Errorf("dyntable: %s reached an append-only sink", ch.Kind)
			}
		}
	case UpsertEncoding:
		out := c.Changes[:0]
		for _, ch := range c.Changes {
			if ch.Kind != UpdateBefore {
				out = append(out, ch)
			}
		}
		c.Changes = out
	}
	return c, nil
}
