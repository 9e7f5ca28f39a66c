// Package changebuf holds the changes a database sink has received
// since its last write (a flush, or an exactly-once transaction), in the
// form the sink writes them: with a primary key only the last change of
// each key survives (upsert semantics make the earlier ones irrelevant),
// so the buffer is bounded by the keys changed; without one it is an
// append log of inserts.
//
// The MySQL and PostgreSQL sinks share it; each renders Split's rows as
// its own SQL.
package changebuf

import (
	"fmt"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Buffer is one batch of changes. It is not safe for concurrent use.
type Buffer struct {
	pk    []int
	keyed map[string]int // encoded key -> index in chs
	chs   []dyntable.Change
}

// New returns an empty buffer for a table with primary key pk (column
// indexes; nil for a table without one).
func New(pk []int) *Buffer {
	b := &Buffer{pk: pk}
	if len(pk) > 0 {
		b.keyed = map[string]int{}
	}
	return b
}

// Add buffers c's changes. A table with a primary key is written as an
// upsert sink (dyntable.UpsertEncoding: a -U is dropped for its +U, or
// becomes a delete when none follows). Without a key only inserts are
// accepted; sink names the sink in the error.
func (b *Buffer) Add(sink string, c *dyntable.Chunk) error {
	if b.keyed != nil {
		c, _ = dyntable.UpsertEncoding.Encode(c, b.pk)
	}
	for _, ch := range c.Changes {
		if b.keyed == nil {
			if ch.Kind != dyntable.Insert {
				return fmt.Errorf("%s: %s reached a table without a primary key, which takes inserts only", sink, ch.Kind)
			}
			b.chs = append(b.chs, ch)
			continue
		}
		k := string(types.EncodeKey(nil, ch.Row, b.pk))
		if i, ok := b.keyed[k]; ok {
			b.chs[i] = ch // the later change of the same key wins, in place
			continue
		}
		b.keyed[k] = len(b.chs)
		b.chs = append(b.chs, ch)
	}
	return nil
}

// Len is the number of buffered changes (distinct keys, with a key).
func (b *Buffer) Len() int { return len(b.chs) }

// Reset empties the buffer, keeping its memory.
func (b *Buffer) Reset() {
	b.chs = b.chs[:0]
	if b.keyed != nil {
		clear(b.keyed)
	}
}

// Split returns the rows to upsert (or insert) and the rows to delete by
// key, each in arrival order. The buffer is unchanged: a sink resets it
// only once the rows are safe, so that a failed write can be retried.
func (b *Buffer) Split() (upserts, deletes []types.Row) {
	for _, ch := range b.chs {
		if ch.Kind == dyntable.Delete {
			deletes = append(deletes, ch.Row)
		} else {
			upserts = append(upserts, ch.Row)
		}
	}
	return upserts, deletes
}
