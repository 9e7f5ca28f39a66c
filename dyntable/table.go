package dyntable

import (
	"fmt"
	"sort"

	"github.com/streamsql/streamsql/types"
)

// Table is a dynamic table materialized from a changelog: applying every
// change in order yields the table's current content. It is what a
// `values` sink holds and what golden `query rowsort` blocks compare.
//
// With key columns it is keyed: +I/+U replace the row with the same key
// and -D/-U remove it (upsert semantics, so -U may be absent). Without
// key columns it is a multiset: +I/+U add one copy, -U/-D remove one.
//
// Retracting a row that is not there is an invariant violation of the
// producing query and is reported as an error, never ignored.
type Table struct {
	keyCols []int
	rows    map[string]*tableEntry
	seq     int64 // insertion counter, so Rows() has a stable order
}

type tableEntry struct {
	row   types.Row
	count int64
	seq   int64
}

// NewTable returns an empty table; keyCols nil means a multiset.
func NewTable(keyCols []int) *Table {
	return &Table{keyCols: keyCols, rows: map[string]*tableEntry{}}
}

// Apply applies one change.
func (t *Table) Apply(ch Change) error {
	var key string
	if t.keyCols != nil {
		key = string(types.EncodeKey(nil, ch.Row, t.keyCols))
	} else {
		key = string(types.EncodeRow(nil, ch.Row))
	}
	e := t.rows[key]
	switch {
	case ch.Kind.IsAccumulate():
		if t.keyCols != nil {
			if e == nil {
				t.seq++
				t.rows[key] = &tableEntry{row: ch.Row, count: 1, seq: t.seq}
			} else {
				e.row = ch.Row
			}
			return nil
		}
		if e == nil {
			t.seq++
			t.rows[key] = &tableEntry{row: ch.Row, count: 1, seq: t.seq}
		} else {
			e.count++
		}
		return nil
	default:
		if e == nil {
			if t.keyCols != nil && ch.Kind == UpdateBefore {
				// Keyed tables accept -U for a key they already dropped
				// only if the producer sent -U then -D; treat as error.
				return fmt.Errorf("dyntable: %s for key %s that is not in the table", ch.Kind, types.FormatRow(ch.Row, nil, ", "))
			}
			return fmt.Errorf("dyntable: %s of row [%s] that is not in the table", ch.Kind, types.FormatRow(ch.Row, nil, ", "))
		}
		e.count--
		if t.keyCols != nil || e.count == 0 {
			delete(t.rows, key)
		}
		return nil
	}
}

// Len returns the number of rows, counting duplicates.
func (t *Table) Len() int {
	n := 0
	for _, e := range t.rows {
		n += int(e.count)
	}
	return n
}

// Rows returns the current rows in order of first insertion, with
// duplicates repeated.
func (t *Table) Rows() []types.Row {
	es := make([]*tableEntry, 0, len(t.rows))
	for _, e := range t.rows {
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool { return es[i].seq < es[j].seq })
	var out []types.Row
	for _, e := range es {
		for i := int64(0); i < e.count; i++ {
			out = append(out, e.row)
		}
	}
	return out
}
