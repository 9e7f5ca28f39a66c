package repl

import (
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// resultSet is the live materialized result of a query in table mode:
// it applies each change of the changelog so that the rows it lists are
// the query's current result.
//
// Rows keep their place: an update replaces its row where it stands,
// a delete removes it, an insert goes at the end. With an upsert key the
// key says which row an update replaces (and -U is not needed); without
// one the result is a multiset, -U removes one copy of its row and the +U
// right after it takes that row's place.
//
// Unlike dyntable.Table, which sorts on every read, listing a window of
// rows costs only the window, so a large result can be redrawn several
// times a second.
//
// At most max rows are kept (Flink's sql-client.display.max-table-result-rows):
// past it the oldest rows, the first in the list, are dropped and counted
// in dropped. A retraction of a dropped row is then not an anomaly.
type resultSet struct {
	key     []int // upsert key; nil for a multiset
	max     int   // rows kept; 0: no limit
	dropped int64 // rows dropped past max
	head    int   // no live row before this position
	rows    []rsRow
	index   map[string][]int // key (or whole row) -> positions in rows
	live    int
	hole    int   // position freed by the last -U, for the next +U; -1 if none
	changes int64 // changes applied
	// anomalies counts retractions of rows that are not in the result:
	// a bug of the producing query, shown rather than hidden.
	anomalies int64
	kb        []byte
}

type rsRow struct {
	row  types.Row
	key  string
	dead bool
}

func newResultSet(key []int, maxRows int) *resultSet {
	return &resultSet{key: key, max: maxRows, index: map[string][]int{}, hole: -1}
}

func (r *resultSet) keyOf(row types.Row) string {
	if r.key != nil {
		r.kb = types.EncodeKey(r.kb[:0], row, r.key)
	} else {
		r.kb = types.EncodeRow(r.kb[:0], row)
	}
	return string(r.kb)
}

// apply applies one change.
func (r *resultSet) apply(ch dyntable.Change) {
	r.changes++
	if r.key != nil {
		r.applyKeyed(ch)
	} else {
		r.applyMultiset(ch)
	}
	for r.max > 0 && r.live > r.max {
		r.dropOldest()
	}
}

// dropOldest drops the first live row.
func (r *resultSet) dropOldest() {
	for r.rows[r.head].dead {
		r.head++
	}
	e := r.rows[r.head]
	for i, p := range r.index[e.key] {
		if p == r.head {
			r.removeAt(e.key, i)
			break
		}
	}
	r.dropped++
}

// anomaly counts a retraction of a row not in the result, unless rows were
// dropped: it may be one of those.
func (r *resultSet) anomaly() {
	if r.dropped == 0 {
		r.anomalies++
	}
}

func (r *resultSet) applyMultiset(ch dyntable.Change) {
	k := r.keyOf(ch.Row)
	if ch.Kind.IsAccumulate() {
		pos := len(r.rows)
		if ch.Kind == dyntable.UpdateAfter && r.hole >= 0 {
			pos = r.hole
			r.rows[pos] = rsRow{row: ch.Row, key: k}
		} else {
			r.rows = append(r.rows, rsRow{row: ch.Row, key: k})
		}
		r.hole = -1
		r.index[k] = append(r.index[k], pos)
		r.live++
		return
	}
	r.hole = -1
	ps := r.index[k]
	if len(ps) == 0 {
		r.anomaly()
		return
	}
	pos := ps[len(ps)-1]
	r.removeAt(k, len(ps)-1)
	if ch.Kind == dyntable.UpdateBefore {
		r.hole = pos
	}
}

func (r *resultSet) applyKeyed(ch dyntable.Change) {
	switch ch.Kind {
	case dyntable.UpdateBefore:
		// The +U that follows replaces the row by its key.
		return
	case dyntable.Delete:
		k := r.keyOf(ch.Row)
		if len(r.index[k]) == 0 {
			r.anomaly()
			return
		}
		r.removeAt(k, 0)
	default:
		k := r.keyOf(ch.Row)
		if ps := r.index[k]; len(ps) > 0 {
			r.rows[ps[0]].row = ch.Row
			return
		}
		r.index[k] = []int{len(r.rows)}
		r.rows = append(r.rows, rsRow{row: ch.Row, key: k})
		r.live++
	}
}

// removeAt marks the i-th position of key k dead.
func (r *resultSet) removeAt(k string, i int) {
	ps := r.index[k]
	r.rows[ps[i]].dead = true
	r.rows[ps[i]].row = nil
	ps = append(ps[:i], ps[i+1:]...)
	if len(ps) == 0 {
		delete(r.index, k)
	} else {
		r.index[k] = ps
	}
	r.live--
}

// len returns the number of rows.
func (r *resultSet) len() int { return r.live }

// window returns up to n rows starting at the off-th, in order.
func (r *resultSet) window(off, n int) []types.Row {
	r.compact()
	if off < 0 {
		off = 0
	}
	var out []types.Row
	for i := 0; i < len(r.rows) && len(out) < n; i++ {
		if r.rows[i].dead {
			continue
		}
		if off > 0 {
			off--
			continue
		}
		out = append(out, r.rows[i].row)
	}
	return out
}

// compact drops dead positions once they outnumber the live rows.
func (r *resultSet) compact() {
	dead := len(r.rows) - r.live
	if dead < 64 || dead < r.live || r.hole >= 0 {
		return
	}
	rows := make([]rsRow, 0, r.live)
	index := make(map[string][]int, len(r.index))
	for _, e := range r.rows {
		if e.dead {
			continue
		}
		index[e.key] = append(index[e.key], len(rows))
		rows = append(rows, e)
	}
	r.rows, r.index, r.head = rows, index, 0
}
