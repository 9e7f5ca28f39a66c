package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/connectors/internal/cdcpump"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// stream reads the slot from s.pos forever, reconnecting after a lost
// connection (a server restart) from the last transaction emitted.
func (s *cdcSource) stream(ctx context.Context, out dataflow.SourceOutput) error {
	r := cdcpump.Reconnect{
		MaxRetries: s.cfg.maxRetries,
		Once: func(ctx context.Context, failures *int) error {
			return s.streamOnce(ctx, out, failures)
		},
		Classify: func(err error) (error, bool) {
			if !isTransient(err) {
				return s.errorf("%w", err), false
			}
			return err, true
		},
		Exhausted: func(n int, err error) error {
			return s.errorf("the replication connection failed %d times in a row: %w", n, err)
		},
		Lost: func(n int, err error) {
			s.log.Warn("postgres-cdc: replication connection lost; reconnecting", "source", s.t.Name,
				"lsn", pglogrepl.LSN(s.pos).String(), "attempt", n, "error", s.cfg.redact(err))
		},
	}
	return r.Run(ctx, out)
}

// streamOnce runs one replication connection until it fails.
func (s *cdcSource) streamOnce(ctx context.Context, out dataflow.SourceOutput, failures *int) error {
	rc, err := s.replConn(ctx)
	if err != nil {
		return err
	}
	defer rc.Close(context.Background())
	err = pglogrepl.StartReplication(ctx, rc, s.cfg.slot, pglogrepl.LSN(s.pos), pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + s.cfg.publication + "'"}})
	if err != nil {
		return fmt.Errorf("starting replication from %s: %w", pglogrepl.LSN(s.pos), err)
	}
	start := s.pos
	return cdcpump.Pump(ctx, out, func(rctx context.Context, txns chan<- cdcpump.Txn[uint64]) error {
		return s.read(rctx, rc, start, txns)
	}, func(end uint64) {
		*failures = 0
		s.pos = end
	})
}

// read decodes pgoutput messages into transactions and reports the
// confirmed position to the server every heartbeat interval and when
// asked. It owns rc; it reads only s.confirmed of the source's state
// (and s.tables, which Run does not touch meanwhile).
func (s *cdcSource) read(ctx context.Context, rc *pgconn.PgConn, start uint64, txns chan<- cdcpump.Txn[uint64]) error {
	relations := map[uint32]*pglogrepl.RelationMessage{}
	mapped := map[uint32][]int{} // relation -> index of each streamsql column in its tuples
	var cur *dyntable.Chunk
	next := time.Now()
	for {
		if !time.Now().Before(next) {
			// Write, flush and apply are all the confirmed position: the
			// server frees WAL up to the flush position.
			c := pglogrepl.LSN(max(s.confirmed.Load(), start))
			if err := pglogrepl.SendStandbyStatusUpdate(ctx, rc, pglogrepl.StandbyStatusUpdate{WALWritePosition: c, WALFlushPosition: c, WALApplyPosition: c}); err != nil {
				return err
			}
			next = time.Now().Add(s.cfg.heartbeat)
		}
		dctx, cancel := context.WithDeadline(ctx, next)
		msg, err := rc.ReceiveMessage(dctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if pgconn.Timeout(err) {
				continue
			}
			return err
		}
		var data []byte
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			data = m.Data
		case *pgproto3.ErrorResponse:
			return pgconn.ErrorResponseToPgError(m)
		default:
			continue
		}
		if len(data) == 0 {
			continue
		}
		switch data[0] {
		case pglogrepl.PrimaryKeepaliveMessageByteID:
			k, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
			if err != nil {
				return err
			}
			if k.ReplyRequested {
				next = time.Now()
			}
			continue
		case pglogrepl.XLogDataByteID:
		default:
			continue
		}
		x, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return err
		}
		lm, err := pglogrepl.Parse(x.WALData)
		if err != nil {
			return fmt.Errorf("decoding pgoutput: %w", err)
		}
		switch m := lm.(type) {
		case *pglogrepl.RelationMessage:
			relations[m.RelationID] = m
			delete(mapped, m.RelationID)
		case *pglogrepl.BeginMessage:
			cur = &dyntable.Chunk{}
		case *pglogrepl.CommitMessage:
			t := cdcpump.Txn[uint64]{Changes: cur, End: uint64(m.TransactionEndLSN)}
			if t.Changes == nil {
				t.Changes = &dyntable.Chunk{}
			}
			cur = nil
			select {
			case txns <- t:
			case <-ctx.Done():
				return ctx.Err()
			}
		case *pglogrepl.InsertMessage:
			r, err := s.tuple(relations, mapped, m.RelationID, m.Tuple, nil)
			if err != nil {
				return err
			}
			if r != nil {
				cur.Append(dyntable.Insert, r)
			}
		case *pglogrepl.UpdateMessage:
			if m.OldTuple == nil || m.OldTupleType != 'O' {
				return s.errorf("an update of relation %d carries no old row: its REPLICA IDENTITY is no longer FULL", m.RelationID)
			}
			before, err := s.tuple(relations, mapped, m.RelationID, m.OldTuple, nil)
			if err != nil {
				return err
			}
			after, err := s.tuple(relations, mapped, m.RelationID, m.NewTuple, m.OldTuple)
			if err != nil {
				return err
			}
			if before != nil {
				cur.Append(dyntable.UpdateBefore, before)
				cur.Append(dyntable.UpdateAfter, after)
			}
		case *pglogrepl.DeleteMessage:
			if m.OldTuple == nil || m.OldTupleType != 'O' {
				return s.errorf("a delete of relation %d carries no old row: its REPLICA IDENTITY is no longer FULL", m.RelationID)
			}
			r, err := s.tuple(relations, mapped, m.RelationID, m.OldTuple, nil)
			if err != nil {
				return err
			}
			if r != nil {
				cur.Append(dyntable.Delete, r)
			}
		case *pglogrepl.TruncateMessage:
			s.log.Warn("postgres-cdc: a captured table was truncated; the source emits no deletes for it", "source", s.t.Name)
		}
	}
}

// tuple converts a tuple of a relation to a streamsql row, or nil for a
// relation that is not captured. Unchanged TOAST values ('u') are taken
// from old, the update's old row.
func (s *cdcSource) tuple(relations map[uint32]*pglogrepl.RelationMessage, mapped map[uint32][]int, id uint32, t, old *pglogrepl.TupleData) (types.Row, error) {
	rel, ok := relations[id]
	if !ok {
		return nil, s.errorf("a change of relation %d arrived before its description", id)
	}
	idx, ok := mapped[id]
	if !ok {
		ct := s.tables[rel.Namespace+"."+rel.RelationName]
		if ct == nil {
			mapped[id] = nil
			return nil, nil
		}
		pos := map[string]int{}
		for i, c := range rel.Columns {
			pos[c.Name] = i
		}
		for i, name := range ct.cols {
			j, ok := pos[name]
			if !ok {
				return nil, s.errorf("column '%s' is no longer in %s: the table changed in a way the source cannot follow",
					s.t.Columns[i].Name, qualifiedName(ct.schema, ct.name))
			}
			idx = append(idx, j)
		}
		mapped[id] = idx
	}
	if idx == nil {
		return nil, nil
	}
	r := make(types.Row, len(idx))
	for i, j := range idx {
		if j >= len(t.Columns) {
			return nil, s.errorf("a tuple of %s.%s has %d columns", rel.Namespace, rel.RelationName, len(t.Columns))
		}
		col := t.Columns[j]
		if col.DataType == pglogrepl.TupleDataTypeToast && old != nil && j < len(old.Columns) {
			col = old.Columns[j]
		}
		switch col.DataType {
		case pglogrepl.TupleDataTypeNull:
			r[i] = types.NullValue
		case pglogrepl.TupleDataTypeText:
			v, err := fromText(string(col.Data), s.t.Columns[i].Type)
			if err != nil {
				return nil, s.errorf("column '%s' of %s.%s: %v", s.t.Columns[i].Name, rel.Namespace, rel.RelationName, err)
			}
			r[i] = v
		default:
			return nil, s.errorf("column '%s' of %s.%s: an unchanged TOAST value without the old row", s.t.Columns[i].Name, rel.Namespace, rel.RelationName)
		}
	}
	return r, nil
}
