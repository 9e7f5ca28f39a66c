package operators

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Unnest is the stateless operator of CROSS JOIN UNNEST(e): each input
// change becomes one change of the same kind per element of e's ARRAY
// (or entry of its MAP), the row followed by the element's values (and,
// WITH ORDINALITY, its number from 1); a MULTISET's element comes once
// per copy, as in Flink. A NULL or empty collection gives
// no change, as a cross join with an empty table does, unless Outer
// (LEFT JOIN UNNEST ... ON TRUE) keeps the row padded with NULLs.
//
// Lifecycle: built per subtask; ProcessChunk runs on the subtask's
// goroutine; it holds no state, so checkpoints carry nothing of it.
type Unnest struct {
	dataflow.BaseOperator
	coll Scalar
	// expand says how an element becomes values: a MAP entry is its key
	// and value, a ROW element its fields, anything else itself.
	mapEntries, rowFields bool
	width                 int // the columns added to each row
	// Outer keeps a row whose collection is NULL or empty, padded with
	// NULLs (LEFT JOIN UNNEST ... ON TRUE); Ordinality makes the last
	// added column the element's number from 1 (WITH ORDINALITY).
	Outer, Ordinality bool
	// Multiset: the collection is a MULTISET, element and count entries.
	Multiset bool
}

var _ dataflow.Operator = (*Unnest)(nil)

// NewUnnest returns the operator; coll computes the collection of a row,
// whose elements add width columns.
func NewUnnest(coll Scalar, mapEntries, rowFields bool, width int) *Unnest {
	return &Unnest{coll: coll, mapEntries: mapEntries, rowFields: rowFields, width: width}
}

// ProcessChunk implements dataflow.Operator.
func (u *Unnest) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	var changes []dyntable.Change
	for _, ch := range in.Changes {
		v, err := u.coll(ch.Row)
		if err != nil {
			return err
		}
		var es []types.Value
		if !v.IsNull() {
			es = v.Elems()
		}
		if u.Multiset {
			es = multisetCopies(es)
		}
		step := 1
		if u.mapEntries {
			step = 2
		}
		if len(es) < step && u.Outer {
			row := make(types.Row, len(ch.Row)+u.width) // padded with NULLs
			copy(row, ch.Row)
			changes = append(changes, dyntable.Change{Kind: ch.Kind, Row: row})
			continue
		}
		for i := 0; i+step <= len(es); i += step {
			var add []types.Value
			switch {
			case u.mapEntries:
				add = es[i : i+2]
			case u.rowFields && !es[i].IsNull():
				add = es[i].Elems()
			case u.rowFields:
				add = nil // a NULL row element: its fields are NULL
			default:
				add = es[i : i+1]
			}
			row := make(types.Row, len(ch.Row)+u.width)
			copy(row, ch.Row)
			copy(row[len(ch.Row):], add)
			if u.Ordinality {
				row[len(row)-1] = types.NewInt(int64(i/step + 1))
			}
			changes = append(changes, dyntable.Change{Kind: ch.Kind, Row: row})
		}
	}
	in.Changes = changes
	out.Emit(in)
	return nil
}

// multisetCopies lists a MULTISET's elements, each as many times as its
// count says.
func multisetCopies(entries []types.Value) []types.Value {
	var out []types.Value
	for i := 0; i+1 < len(entries); i += 2 {
		for n := entries[i+1].Int(); n > 0; n-- {
			out = append(out, entries[i])
		}
	}
	return out
}
