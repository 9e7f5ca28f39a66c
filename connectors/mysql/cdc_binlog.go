package mysql

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/streamsql/streamsql/connectors/internal/cdcpump"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
)

// errPurged marks a start position the server no longer has.
var errPurged = errors.New("purged")

// stream reads the binlog from s.pos forever, reconnecting after a lost
// connection (a server restart) from the last transaction emitted.
func (s *cdcSource) stream(ctx context.Context, out dataflow.SourceOutput) error {
	r := cdcpump.Reconnect{
		MaxRetries: s.cfg.maxRetries,
		Once: func(ctx context.Context, failures *int) error {
			return s.streamOnce(ctx, out, failures)
		},
		Classify: func(err error) (error, bool) {
			if errors.Is(err, errPurged) {
				return s.errorf("the binlog position %s to resume from is no longer on the server (its binlog was purged, "+
					"see expire_logs_days / binlog_expire_logs_seconds); restart the job without its checkpoint to take a new snapshot", s.pos), false
			}
			err = traceless(err)
			return err, isTransient(err)
		},
		Exhausted: func(n int, err error) error {
			return s.errorf("the binlog connection failed %d times in a row: %w", n, err)
		},
		Lost: func(n int, err error) {
			s.log.Warn("mysql-cdc: binlog connection lost; reconnecting", "source", s.t.Name, "position", s.pos.String(),
				"attempt", n, "error", s.cfg.redact(err))
		},
	}
	return r.Run(ctx, out)
}

// streamOnce runs one binlog connection until it fails. failures is
// reset once the connection delivers a transaction.
func (s *cdcSource) streamOnce(ctx context.Context, out dataflow.SourceOutput, failures *int) error {
	syncer, streamer, gset, err := s.openBinlog(ctx)
	if err != nil {
		return err
	}
	defer syncer.Close()
	err = cdcpump.Pump(ctx, out, func(rctx context.Context, txns chan<- cdcpump.Txn[binlogPos]) error {
		return s.read(rctx, streamer, gset, txns)
	}, func(end binlogPos) {
		*failures = 0
		s.pos = end
	})
	return purged(err)
}

// purged marks the server's "binlog not found" (1236) as errPurged.
func purged(err error) error {
	if err != nil && strings.Contains(err.Error(), "1236") {
		return fmt.Errorf("%w: %v", errPurged, err)
	}
	return err
}

// openBinlog starts a binlog connection at s.pos: from its GTID set when
// the server has GTIDs and the set is known, else from its file and
// offset. gset, when not nil, is the GTID set at s.pos, for read to
// follow. The caller closes the syncer.
func (s *cdcSource) openBinlog(ctx context.Context) (*replication.BinlogSyncer, *replication.BinlogStreamer, gmysql.GTIDSet, error) {
	// The GTID set is followed only from a known one: MariaDB's position
	// keeps one GTID per domain, and a domain missing from it would be
	// read again from the binlog's start. MariaDB says what the set is at
	// a file and offset (possibly empty: no GTID yet).
	known := s.gtids && s.pos.GTID != ""
	if s.gtids && !known && s.pos.File != "" {
		g, ok, err := s.gtidAt(ctx, s.db, s.pos)
		if err != nil {
			return nil, nil, nil, err
		}
		s.pos.GTID, known = g, ok
	}
	byGTID := known && s.pos.GTID != ""
	var gset gmysql.GTIDSet
	if byGTID {
		var err error
		if gset, err = gmysql.ParseGTIDSet(s.flavor, s.pos.GTID); err != nil {
			return nil, nil, nil, s.errorf("the GTID set %q to resume from: %v", s.pos.GTID, err)
		}
	} else if err := s.checkPosition(ctx); err != nil {
		return nil, nil, nil, err
	}
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID:                s.cfg.serverID,
		Flavor:                  s.flavor,
		Host:                    s.cfg.host,
		Port:                    s.cfg.port,
		User:                    s.cfg.dsn.User,
		Password:                s.cfg.dsn.Passwd,
		HeartbeatPeriod:         s.cfg.heartbeat,
		ReadTimeout:             3 * s.cfg.heartbeat,
		TimestampStringLocation: time.UTC,
		DisableRetrySync:        true, // reconnection is ours: from a transaction boundary
		Logger:                  slog.New(slog.DiscardHandler),
	})
	var streamer *replication.BinlogStreamer
	var err error
	if byGTID {
		// The server finds the first transaction after the set in
		// whichever file holds it; its first event is a rotate to that file.
		streamer, err = syncer.StartSyncGTID(gset.Clone())
	} else {
		streamer, err = syncer.StartSync(gmysql.Position{Name: s.pos.File, Pos: s.pos.Pos})
	}
	if err != nil {
		syncer.Close()
		return nil, nil, nil, fmt.Errorf("starting the binlog at %s: %w", s.pos, err)
	}
	if known && gset == nil {
		gset, _ = gmysql.ParseGTIDSet(s.flavor, "")
	}
	return syncer, streamer, gset, nil
}

// checkPosition fails with errPurged when s.pos's file is not among the
// server's binlog files.
func (s *cdcSource) checkPosition(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rows, err := s.db.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	var name string
	vals[0] = &name
	for i := 1; i < len(vals); i++ {
		vals[i] = new(any)
	}
	for rows.Next() {
		if err := rows.Scan(vals...); err != nil {
			return err
		}
		if name == s.pos.File {
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return errPurged
}

// read decodes binlog events into transactions until ctx ends or the
// connection fails. It runs on its own goroutine and touches only the
// table map (s.tables), which Run's goroutine does not use meanwhile.
//
// gset, when not nil, is the GTID set at the start position (a copy the
// reader owns); each transaction's GTID is added to it, and the set
// after a transaction is part of its end position.
func (s *cdcSource) read(ctx context.Context, st *replication.BinlogStreamer, gset gmysql.GTIDSet, txns chan<- cdcpump.Txn[binlogPos]) error {
	file := s.pos.File
	cur := &dyntable.Chunk{}
	var tables []string // the table of each change in cur
	since := uint32(s.cfg.startTS / 1000)
	next := "" // the GTID of the transaction being read
	inTxn := false
	last := binlogPos{File: file, Pos: s.pos.Pos}
	send := func(t cdcpump.Txn[binlogPos]) error {
		last = t.End
		select {
		case txns <- t:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	commit := func(h *replication.EventHeader) error {
		inTxn = false
		t := cdcpump.Txn[binlogPos]{Changes: cur, End: binlogPos{File: file, Pos: h.LogPos}, Tables: tables}
		if gset != nil {
			if next != "" {
				if err := gset.Update(next); err != nil {
					return s.errorf("the binlog's GTID %s: %v", next, err)
				}
			}
			t.End.GTID = gset.String()
		}
		next = ""
		if s.cfg.mode == startTimestamp && h.Timestamp < since {
			t.Changes, t.Tables = &dyntable.Chunk{}, nil // committed before the start time
		}
		cur, tables = &dyntable.Chunk{}, nil
		return send(t)
	}
	// progress moves the position past an event between transactions
	// (a new file's header, MariaDB's checkpoint and GTID list events),
	// so that a position the server reports at the binlog's end is
	// reached without waiting for the next transaction (the chunked
	// snapshot's high watermark). It never moves the position back.
	progress := func(h *replication.EventHeader) error {
		if inTxn || h.LogPos == 0 || (file == last.File && h.LogPos <= last.Pos) {
			return nil
		}
		t := cdcpump.Txn[binlogPos]{Changes: &dyntable.Chunk{}, End: binlogPos{File: file, Pos: h.LogPos}}
		if gset != nil {
			t.End.GTID = gset.String()
		}
		return send(t)
	}
	for {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			return err
		}
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			file = string(e.NextLogName)
		case *replication.MariadbGTIDEvent:
			next, inTxn = e.GTID.String(), true
		case *replication.GTIDEvent:
			if g, err := e.GTIDNext(); err == nil && s.flavor == "mysql" {
				next = g.String()
			}
			inTxn = true
		case *replication.FormatDescriptionEvent, *replication.MariadbBinlogCheckPointEvent,
			*replication.MariadbGTIDListEvent, *replication.PreviousGTIDsEvent:
			if err := progress(ev.Header); err != nil {
				return err
			}
		case *replication.XIDEvent:
			if err := commit(ev.Header); err != nil {
				return err
			}
		case *replication.QueryEvent:
			q := strings.TrimSpace(string(e.Query))
			switch {
			case strings.EqualFold(q, "BEGIN"):
				inTxn = true
			case strings.EqualFold(q, "COMMIT"): // non-transactional tables
				if err := commit(ev.Header); err != nil {
					return err
				}
			default:
				if err := s.ddl(ctx, string(e.Schema), q); err != nil {
					return err
				}
				if err := commit(ev.Header); err != nil {
					return err
				}
			}
		case *replication.RowsEvent:
			if err := s.rows(ctx, ev.Header, e, cur, &tables); err != nil {
				return err
			}
		}
	}
}

// rows adds a rows event's changes, when its table is captured.
// Each change's table goes to tables.
func (s *cdcSource) rows(ctx context.Context, h *replication.EventHeader, e *replication.RowsEvent, cur *dyntable.Chunk, tables *[]string) error {
	db, table := string(e.Table.Schema), string(e.Table.Table)
	if !s.matches(db, table) {
		return nil
	}
	ct := s.tables[db+"."+table]
	if ct == nil || int(e.ColumnCount) != ct.ncols {
		// A table created since the start, or one whose columns changed:
		// map it (again) from the server's current definition.
		var err error
		if ct, err = s.capture(ctx, db, table); err != nil {
			return s.errorf("%w", err)
		}
		if int(e.ColumnCount) != ct.ncols {
			return s.errorf("the binlog's rows of %s.%s have %d columns, the table now has %d: its definition changed in a way the source cannot follow; "+
				"restart the job without its checkpoint to take a new snapshot", db, table, e.ColumnCount, ct.ncols)
		}
	}
	var kinds []dyntable.RowKind
	switch e.Type() {
	case replication.EnumRowsEventTypeInsert:
		kinds = []dyntable.RowKind{dyntable.Insert}
	case replication.EnumRowsEventTypeDelete:
		kinds = []dyntable.RowKind{dyntable.Delete}
	case replication.EnumRowsEventTypeUpdate:
		kinds = []dyntable.RowKind{dyntable.UpdateBefore, dyntable.UpdateAfter}
	default:
		return s.errorf("unexpected rows event %s ending at binlog position %d", h.EventType, h.LogPos)
	}
	for i, raw := range e.Rows {
		r, err := s.convert(ct, raw)
		if err != nil {
			return s.errorf("%w", err)
		}
		cur.Append(kinds[i%len(kinds)], r)
		*tables = append(*tables, db+"."+table)
	}
	return nil
}

// ddl forgets the mapping of captured tables that a statement may have
// changed; the next rows event of the table maps it again and fails
// clearly if a column it needs is gone or changed its type.
//
// A data change logged as a statement (a session that set binlog_format
// to STATEMENT or MIXED) cannot be turned into rows: it fails the job
// rather than being lost silently.
func (s *cdcSource) ddl(ctx context.Context, schema, q string) error {
	lq := strings.ToLower(q)
	verb, _, _ := strings.Cut(strings.TrimSpace(lq), " ")
	for k, ct := range s.tables {
		if strings.Contains(lq, strings.ToLower(ct.name)) && (schema == ct.schema || strings.Contains(lq, strings.ToLower(ct.schema))) {
			switch verb {
			case "insert", "update", "delete", "replace":
				return s.errorf("a change to %s.%s was logged as a statement, not as rows (the session ran with binlog_format = STATEMENT or MIXED); "+
					"mysql-cdc needs binlog_format = ROW in every session that writes the table", ct.schema, ct.name)
			}
			delete(s.tables, k)
			if _, err := s.capture(ctx, ct.schema, ct.name); err != nil && !strings.Contains(err.Error(), "does not exist") {
				return s.errorf("after `%s`: %w", q, err)
			}
		}
	}
	return nil
}

// traceless drops the stack traces that go-mysql's errors print with
// their message, keeping the messages.
func traceless(err error) error {
	if err == nil || !strings.Contains(err.Error(), "\n") {
		return err
	}
	var keep []string
	for i, l := range strings.Split(err.Error(), "\n") {
		if i == 0 || (!strings.HasPrefix(l, "\t") && !strings.Contains(l, "/") && strings.TrimSpace(l) != "") {
			keep = append(keep, l)
		}
	}
	return tracelessError{msg: strings.Join(keep, ": "), err: err}
}

type tracelessError struct {
	msg string
	err error
}

func (e tracelessError) Error() string { return e.msg }
func (e tracelessError) Unwrap() error { return e.err }
