package mysql

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/connectors/internal/cdcpump"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// The chunked, lock-free snapshot ('scan.incremental.snapshot.enabled',
// Flink CDC 2.x's algorithm after DBLog), for captured tables whose
// primary keys are one integer column each.
//
// The binlog is read from the position where the snapshot starts, and
// the tables are read one after the other (by name) in chunks of
// 'scan.incremental.snapshot.chunk.size' rows in key order, between the
// binlog's transactions, by plain statements (no lock, no long
// transaction):
//
//  1. SELECT the next chunk: the rows with a key above the last one
//     emitted, in key order, LIMIT the chunk size. Its keys span
//     (after, hi], hi the last key read (unbounded for the last chunk).
//  2. The high watermark H: the binlog's end, read after the SELECT.
//  3. Read the binlog up to H. A change of a key in (after, hi] is
//     applied to the chunk's rows (an insert or update sets the row, a
//     delete removes it): the SELECT saw the table at some moment
//     between the start of this window and H, and replaying the window's
//     changes in order over it gives the rows as of H. A change of a key
//     at or below after (an emitted chunk), or of a table done before,
//     is emitted; a change of a key above hi, or of a table after this
//     one, is dropped: the SELECT of its chunk, later, sees it. A table
//     that was not there when the snapshot started has all its rows in
//     the binlog: its changes are emitted.
//  4. Emit the chunk's rows, as of H, as inserts.
//
// The binlog then goes on from H with every key emitted. So each row is
// emitted once by its chunk, and every change after its chunk's high
// watermark once by the binlog: no gap and no duplicate, and the -U/-D
// of a change always follows the +I of the row it changes.
//
// The checkpoint position is the binlog position plus the table being
// read and the last key emitted ('snap'); a restore selects the next
// chunk after that key and
// reads the binlog from the position, so checkpoints complete during the
// snapshot, unlike the one-transaction snapshot's. The snapshot still
// runs in the one subtask of the source (the binlog is one stream).
// A lost binlog connection during the snapshot fails the job, which
// restores from its last checkpoint.

// snapPos is the chunked snapshot's progress in a checkpoint position.
type snapPos struct {
	// Table is the table being read ("schema.table"); "" before the first.
	Table string `json:"table,omitempty"`
	// After is the last key of Table emitted; nil before its first chunk.
	After *int64 `json:"after,omitempty"`
}

// chunkTable is a table the chunked snapshot reads.
type chunkTable struct {
	name  string // "schema.table"
	query string // SELECT of the mapped columns, in the streamsql order
	key   int    // the streamsql column of its key
	ident *capturedTable
}

// chunkable returns the captured tables in name order with their keys,
// or ok false when one of them has a key that is not one integer column
// of the streamsql table (the chunked snapshot does not apply). The
// reader goroutine may map a table again (a DDL): the SELECTs use their
// own copies of the columns.
func (s *cdcSource) chunkable() (list []chunkTable, ok bool) {
	for name, ct := range s.tables {
		if len(ct.pk) != 1 {
			return nil, false
		}
		key := -1
		for i, c := range s.t.Columns {
			if strings.EqualFold(c.Name, ct.pk[0]) && c.Type.IsInteger() {
				key = i
			}
		}
		if key < 0 {
			return nil, false
		}
		cols := make([]string, len(ct.cols))
		for i, c := range ct.cols {
			cols[i] = quoteIdent(c.name)
		}
		ident := &capturedTable{schema: ct.schema, name: ct.name, idx: make([]int, len(cols)), cols: slices.Clone(ct.cols)}
		for i := range ident.idx {
			ident.idx[i] = i
		}
		list = append(list, chunkTable{name: name, key: key, ident: ident,
			query: "SELECT " + strings.Join(cols, ", ") + " FROM " + quoteIdent(ct.schema) + "." + quoteIdent(ct.name)})
	}
	slices.SortFunc(list, func(a, b chunkTable) int { return strings.Compare(a.name, b.name) })
	return list, len(list) > 0
}

// chunkedSnapshot runs the snapshot from s.pos (whose Snap says how far
// it got) and returns with s.pos at the high watermark of the last
// chunk, Snap nil, for the stream to go on from.
func (s *cdcSource) chunkedSnapshot(ctx context.Context, out dataflow.SourceOutput) error {
	list, ok := s.chunkable()
	if !ok {
		return s.errorf("the snapshot restored from the checkpoint is chunked, and the captured tables no longer allow it (one-column integer primary keys); restart the job without its checkpoint")
	}
	known := map[string]int{} // table -> its place in list
	for i, ct := range list {
		known[ct.name] = i
	}
	cur := 0 // the table being read
	if t := s.pos.Snap.Table; t != "" {
		for cur < len(list) && list[cur].name < t {
			cur++
		}
		if cur == len(list) || list[cur].name != t {
			s.pos.Snap.After = nil // that table is gone: go on with the next
		}
	}
	syncer, streamer, gset, err := s.openBinlog(ctx)
	if err != nil {
		return err
	}
	defer syncer.Close()
	rctx, cancel := context.WithCancel(ctx)
	txns := make(chan cdcpump.Txn[binlogPos], 64)
	errc := make(chan error, 1)
	go func() { errc <- s.read(rctx, streamer, gset, txns) }()
	defer func() {
		cancel()
		<-errc
	}()
	s.log.Info("mysql-cdc chunked snapshot", "source", s.t.Name, "tables", len(list), "binlog", s.pos.String(), "chunk", s.cfg.chunkSize)
	for ; cur < len(list); cur++ {
		ct := list[cur]
		if s.pos.Snap.Table != ct.name {
			s.pos.Snap = &snapPos{Table: ct.name}
		}
		if err := s.chunkTable(ctx, out, list, known, cur, txns, errc); err != nil {
			return err
		}
	}
	s.pos.Snap = nil
	s.log.Info("mysql-cdc chunked snapshot done", "source", s.t.Name, "binlog", s.pos.String())
	return nil
}

// chunkTable reads list[cur] chunk by chunk from s.pos.Snap.After on.
// When it returns, every row of the table is emitted and s.pos.Snap.After
// is its last key.
func (s *cdcSource) chunkTable(ctx context.Context, out dataflow.SourceOutput, list []chunkTable, known map[string]int, cur int,
	txns <-chan cdcpump.Txn[binlogPos], errc chan error) error {
	ct := list[cur]
	keyName := quoteIdent(ct.ident.cols[ct.key].name)
	for {
		after := s.pos.Snap.After
		q, args := ct.query, []any(nil)
		if after != nil {
			q += " WHERE " + keyName + " > ?"
			args = append(args, *after)
		}
		q += " ORDER BY " + keyName + " LIMIT " + strconv.Itoa(s.cfg.chunkSize)
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return s.errorf("reading a chunk of %s: %w", ct.name, err)
		}
		chunk := map[int64]types.Row{}
		var hi int64
		n := 0
		err = s.scanRows(ct.ident, rows, func(r types.Row) error {
			hi = r[ct.key].Int()
			chunk[hi] = r
			n++
			return nil
		})
		if err != nil {
			return err
		}
		last := n < s.cfg.chunkSize
		high, err := s.masterStatus(ctx, s.db)
		if err != nil {
			return s.errorf("the chunk's high watermark: %w", err)
		}
		// region: -1 emitted, 0 this chunk, 1 later.
		region := func(table string, k int64) int {
			i, ok := known[table]
			switch {
			case !ok || i < cur:
				return -1
			case i > cur:
				return 1
			case after != nil && k <= *after:
				return -1
			case last || k <= hi:
				return 0
			}
			return 1
		}
		for !reached(s.pos, high) {
			select {
			case t := <-txns:
				c := &dyntable.Chunk{}
				window(t.Changes, t.Tables, func(table string) int {
					if i, ok := known[table]; ok {
						return list[i].key
					}
					return ct.key // a table unknown at the start: emitted, whatever its key
				}, region, chunk, c)
				snap := s.pos.Snap
				s.pos = t.End
				s.pos.Snap = snap
				if c.Len() > 0 {
					if err := out.Emit(c); err != nil {
						return err
					}
				}
			case e := <-out.Control():
				if err := out.Handle(e); err != nil {
					return err
				}
			case err := <-errc:
				errc <- err // for the deferred wait
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return s.errorf("the binlog connection failed during the snapshot (the job restores from its last checkpoint): %w", purged(traceless(err)))
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		// Emit the chunk as of the high watermark, in key order; the
		// position moves to each piece's last key before it goes out (to
		// hi with the chunk's last piece: rows of the chunk deleted in the
		// window are gone).
		keys := make([]int64, 0, len(chunk))
		for k := range chunk {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i := 0; i < len(keys); i += chunkRows {
			c := &dyntable.Chunk{}
			end := min(i+chunkRows, len(keys))
			for _, k := range keys[i:end] {
				c.Append(dyntable.Insert, chunk[k])
			}
			k := keys[end-1]
			if end == len(keys) && !last {
				k = max(k, hi)
			}
			s.pos.Snap = &snapPos{Table: ct.name, After: &k}
			if err := out.Emit(c); err != nil {
				return err
			}
		}
		if last {
			return nil
		}
		if len(keys) == 0 {
			s.pos.Snap = &snapPos{Table: ct.name, After: &hi}
		}
	}
}

// window sorts a transaction's changes read during a chunk's window:
// changes of emitted keys go to out, changes of the chunk's keys are
// applied to chunk, changes of later keys are dropped. tables names each
// change's table, keyOf its key column, region(table, key) its place.
// An update that moves a row's key across regions is split: its old
// row's half and its new row's half each go where their key belongs (a
// delete or an insert when the other half is not emitted).
func window(in *dyntable.Chunk, tables []string, keyOf func(string) int, region func(string, int64) int, chunk map[int64]types.Row, out *dyntable.Chunk) {
	ch := in.Changes
	for i := 0; i < len(ch); i++ {
		c := ch[i]
		table := tables[i]
		key := keyOf(table)
		if c.Kind == dyntable.UpdateBefore && i+1 < len(ch) && ch[i+1].Kind == dyntable.UpdateAfter {
			a := ch[i+1]
			i++
			kb, ka := c.Row[key].Int(), a.Row[key].Int()
			rb, ra := region(table, kb), region(table, ka)
			switch {
			case rb < 0 && ra < 0:
				out.Append(dyntable.UpdateBefore, c.Row)
				out.Append(dyntable.UpdateAfter, a.Row)
				continue
			case rb < 0:
				out.Append(dyntable.Delete, c.Row)
			case rb == 0:
				delete(chunk, kb)
			}
			switch {
			case ra < 0:
				out.Append(dyntable.Insert, a.Row)
			case ra == 0:
				chunk[ka] = a.Row
			}
			continue
		}
		k := c.Row[key].Int()
		switch region(table, k) {
		case -1:
			out.Append(c.Kind, c.Row)
		case 0:
			if c.Kind == dyntable.Delete || c.Kind == dyntable.UpdateBefore {
				delete(chunk, k)
			} else {
				chunk[k] = c.Row
			}
		}
	}
}

// reached reports whether the binlog position p is at or past h.
func reached(p, h binlogPos) bool {
	return p.File > h.File || (p.File == h.File && p.Pos >= h.Pos)
}

// scanRows converts each row of a snapshot query (columns in ct's
// order) and hands it to f, stopping at f's first error, which it
// returns as it is; it closes rows.
func (s *cdcSource) scanRows(ct *capturedTable, rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}, f func(types.Row) error) error {
	defer rows.Close()
	raw := make([]any, len(ct.idx))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return s.errorf("%w", err)
		}
		r, err := s.convert(ct, raw)
		if err != nil {
			return s.errorf("%w", err)
		}
		if err := f(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.errorf("reading %s.%s: %w", ct.schema, ct.name, fmt.Errorf("%w", err))
	}
	return nil
}
