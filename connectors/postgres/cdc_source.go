package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// capturedTable maps one PostgreSQL table onto the streamsql table:
// cols[i] is the PostgreSQL name of streamsql column i.
type capturedTable struct {
	schema, name string
	cols         []string
}

// cdcSource is the one subtask of a postgres-cdc table. Run emits the
// snapshot (unless restored), then streams the slot (cdc_stream.go).
// Positions are LSNs: the end of the last transaction emitted.
// SnapshotPosition, RestorePosition and NotifyCheckpointComplete run on
// Run's goroutine; the replication reader reads only confirmed, an
// atomic.
type cdcSource struct {
	dataflow.BaseSource
	cfg *cdcConfig
	t   *connectors.Table
	log *slog.Logger

	pool     *pgxpool.Pool
	tables   map[string]*capturedTable // "schema.table"
	pos      uint64                    // LSN after the last transaction emitted
	streamed bool
	restored bool
	done     bool             // 'snapshot' mode: the snapshot is emitted; the source has ended
	ckpts    map[int64]uint64 // checkpoint id -> its position, until complete
	// confirmed is what the slot may be confirmed up to: the position of
	// the latest completed checkpoint.
	confirmed atomic.Uint64
}

func (s *cdcSource) errorf(format string, args ...any) error {
	return s.cfg.redact(fmt.Errorf("postgres-cdc source '%s': "+format, append([]any{s.t.Name}, args...)...))
}

// Open connects and checks the server (wal_level), the tables (columns,
// keys, replica identity), the publication and the slot.
func (s *cdcSource) Open(oc *dataflow.OpContext) error {
	s.log = oc.Logger()
	ctx := oc.Context()
	p, err := s.cfg.open(ctx, 2)
	if err != nil {
		return s.errorf("%w", err)
	}
	s.pool = p
	if err := retry(ctx, s.cfg.maxRetries, func() error { return s.check(ctx) }); err != nil {
		return s.errorf("%w", err)
	}
	return nil
}

func (s *cdcSource) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var level string
	if err := s.pool.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		return err
	}
	if level != "logical" {
		return fmt.Errorf("the server's wal_level is %s; logical replication needs wal_level = logical in postgresql.conf (and a restart)", level)
	}
	rows, err := s.pool.Query(ctx, `SELECT n.nspname, c.relname, c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')`)
	if err != nil {
		return err
	}
	type rel struct {
		schema, name string
		ident        byte
	}
	var rels []rel
	for rows.Next() {
		var r rel
		var ident string
		if err := rows.Scan(&r.schema, &r.name, &ident); err != nil {
			rows.Close()
			return err
		}
		r.ident = ident[0]
		if s.cfg.schemaRe.MatchString(r.schema) && s.cfg.tableRe.MatchString(r.name) {
			rels = append(rels, r)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(rels) == 0 {
		return fmt.Errorf("no table matches schema-name '%s' and table-name '%s'", s.t.Options["schema-name"], s.t.Options["table-name"])
	}
	s.tables = map[string]*capturedTable{}
	var list []*capturedTable
	for _, r := range rels {
		ct, err := s.capture(ctx, r.schema, r.name)
		if err != nil {
			return err
		}
		if r.ident != 'f' {
			return fmt.Errorf("the table %s has REPLICA IDENTITY %s, so its updates and deletes do not carry the old row; "+
				"postgres-cdc needs ALTER TABLE %s REPLICA IDENTITY FULL", qualifiedName(r.schema, r.name), identityName(r.ident), qualifiedName(r.schema, r.name))
		}
		list = append(list, ct)
	}
	if s.cfg.mode == "snapshot" {
		return nil // no slot, no publication
	}
	if err := s.publication(ctx, list); err != nil {
		return err
	}
	return s.checkSlot(ctx)
}

func identityName(b byte) string {
	switch b {
	case 'd':
		return "DEFAULT"
	case 'n':
		return "NOTHING"
	case 'i':
		return "USING INDEX"
	}
	return string(b)
}

// capture maps a table's columns onto the streamsql table; an error
// names the column that does not fit.
func (s *cdcSource) capture(ctx context.Context, schema, table string) (*capturedTable, error) {
	cols, pk, err := describe(ctx, s.pool, schema, table)
	if err != nil {
		return nil, err
	}
	idx, err := dbconn.MatchColumns(s.t, cols, pgColumn.colName, compatible, "the table "+qualifiedName(schema, table))
	if err != nil {
		return nil, err
	}
	ct := &capturedTable{schema: schema, name: table}
	for _, i := range idx {
		ct.cols = append(ct.cols, cols[i].name)
	}
	if len(pk) == 0 {
		return nil, fmt.Errorf("the table %s has no primary key, which postgres-cdc needs to identify rows", qualifiedName(schema, table))
	}
	if _, _, same := dbconn.SameKey(s.t, pk); len(s.t.PrimaryKey) > 0 && !same {
		return nil, fmt.Errorf("the declared primary key differs from the table %s's (%s)", qualifiedName(schema, table), strings.Join(pk, ", "))
	}
	s.tables[schema+"."+table] = ct
	return ct, nil
}

// publication creates the publication of the captured tables, or checks
// that an existing one has them all.
func (s *cdcSource) publication(ctx context.Context, list []*capturedTable) error {
	rows, err := s.pool.Query(ctx, "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1", s.cfg.publication)
	if err != nil {
		return err
	}
	has := map[string]bool{}
	for rows.Next() {
		var sc, tb string
		if err := rows.Scan(&sc, &tb); err != nil {
			rows.Close()
			return err
		}
		has[sc+"."+tb] = true
	}
	rows.Close()
	var exists bool
	if err := s.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)", s.cfg.publication).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		what := "TABLE " + qualifiedList(list)
		switch s.cfg.autocreate {
		case "disabled":
			return fmt.Errorf("the publication %s does not exist, and debezium.publication.autocreate.mode is disabled: CREATE PUBLICATION %s FOR TABLE %s",
				s.cfg.publication, s.cfg.publication, qualifiedList(list))
		case "all_tables":
			what = "ALL TABLES"
		}
		if _, err := s.pool.Exec(ctx, "CREATE PUBLICATION "+s.cfg.publication+" FOR "+what); err != nil {
			return fmt.Errorf("creating the publication %s: %w", s.cfg.publication, err)
		}
		return nil
	}
	for _, t := range list {
		if !has[t.schema+"."+t.name] {
			return fmt.Errorf("the publication %s exists without the table %s: ALTER PUBLICATION %s ADD TABLE %s",
				s.cfg.publication, qualifiedName(t.schema, t.name), s.cfg.publication, qualifiedName(t.schema, t.name))
		}
	}
	return nil
}

// checkSlot refuses a slot another connection is using, and a slot that
// exists already when the job starts without a checkpoint (it belongs to
// another job, or to an earlier run whose position is lost).
func (s *cdcSource) checkSlot(ctx context.Context) error {
	var active bool
	var pid *int32
	var plugin string
	err := s.pool.QueryRow(ctx, "SELECT active, active_pid, coalesce(plugin, '') FROM pg_replication_slots WHERE slot_name = $1", s.cfg.slot).
		Scan(&active, &pid, &plugin)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // restore checks in Run, once RestorePosition has run
	}
	if err != nil {
		return err
	}
	if active {
		p := int32(0)
		if pid != nil {
			p = *pid
		}
		return fmt.Errorf("the replication slot %s is in use by another connection (server process %d): one job per slot", s.cfg.slot, p)
	}
	if plugin != "pgoutput" {
		return fmt.Errorf("the replication slot %s decodes with %s, not pgoutput", s.cfg.slot, plugin)
	}
	return nil
}

// slotExists reports whether the slot exists.
func (s *cdcSource) slotExists(ctx context.Context) (bool, error) {
	var n int
	err := s.pool.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", s.cfg.slot).Scan(&n)
	return n > 0, err
}

// SnapshotPosition saves the LSN; during the snapshot it declines.
func (s *cdcSource) SnapshotPosition(id int64) ([]byte, error) {
	if s.done {
		return json.Marshal(map[string]string{"snapshot": "done"})
	}
	if !s.streamed {
		return nil, fmt.Errorf("postgres-cdc source '%s' is reading its snapshot; checkpoints resume once the snapshot is emitted", s.t.Name)
	}
	s.ckpts[id] = s.pos
	return json.Marshal(map[string]string{"lsn": pglogrepl.LSN(s.pos).String()})
}

func (s *cdcSource) RestorePosition(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("postgres-cdc source '%s': corrupt checkpoint position", s.t.Name)
	}
	if m["snapshot"] == "done" {
		s.restored, s.done = true, true
		return nil
	}
	lsn, err := pglogrepl.ParseLSN(m["lsn"])
	if err != nil {
		return fmt.Errorf("postgres-cdc source '%s': corrupt checkpoint position", s.t.Name)
	}
	s.pos = uint64(lsn)
	s.confirmed.Store(s.pos)
	s.restored, s.streamed = true, true
	return nil
}

// NotifyCheckpointComplete lets the slot be confirmed up to the
// checkpoint's position: the server may then free the WAL before it.
func (s *cdcSource) NotifyCheckpointComplete(id int64) error {
	p, ok := s.ckpts[id]
	if !ok {
		return nil
	}
	for k := range s.ckpts {
		if k <= id {
			delete(s.ckpts, k)
		}
	}
	if p > s.confirmed.Load() {
		s.confirmed.Store(p)
	}
	return nil
}

func (s *cdcSource) Run(ctx context.Context, out dataflow.SourceOutput) error {
	if s.cfg.mode == "snapshot" {
		if s.done {
			return nil
		}
		if err := s.snapshot(ctx, out, ""); err != nil {
			return err
		}
		s.done = true
		return nil
	}
	exists, err := s.slotExists(ctx)
	if err != nil {
		return s.errorf("%w", err)
	}
	switch {
	case !s.restored && exists && s.cfg.mode == "committed-offset":
		var lsn string
		err := s.pool.QueryRow(ctx, "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", s.cfg.slot).Scan(&lsn)
		if err != nil {
			return s.errorf("reading the slot %s's confirmed position: %w", s.cfg.slot, err)
		}
		p, err := pglogrepl.ParseLSN(lsn)
		if err != nil {
			return s.errorf("the slot %s's confirmed position %q: %w", s.cfg.slot, lsn, err)
		}
		s.pos = uint64(p)
		s.confirmed.Store(s.pos)
		s.streamed = true
		s.log.Info("postgres-cdc resumes the slot from its confirmed position", "source", s.t.Name, "slot", s.cfg.slot, "lsn", lsn)
	case s.restored && !exists:
		return s.errorf("the replication slot %s the checkpoint resumes from does not exist any more (it was dropped); "+
			"restart the job without its checkpoint to take a new snapshot", s.cfg.slot)
	case !s.restored && exists:
		return s.errorf("the replication slot %s already exists (another job's, or an earlier run's whose position is lost); "+
			"restore the job from its checkpoint, or drop the slot with SELECT pg_drop_replication_slot('%s')", s.cfg.slot, s.cfg.slot)
	case !s.restored:
		if err := s.createSlot(ctx, out); err != nil {
			return err
		}
		s.streamed = true
	}
	return s.stream(ctx, out)
}

// createSlot creates the slot; in initial mode it reads the snapshot the
// slot exports, which is the state at the slot's consistent point.
func (s *cdcSource) createSlot(ctx context.Context, out dataflow.SourceOutput) error {
	rc, err := s.replConn(ctx)
	if err != nil {
		return s.errorf("%w", err)
	}
	defer rc.Close(context.Background())
	action := "NOEXPORT_SNAPSHOT"
	if s.cfg.initial {
		action = "EXPORT_SNAPSHOT"
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, rc, s.cfg.slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: action})
	if err != nil {
		return s.errorf("creating the replication slot %s: %w", s.cfg.slot, err)
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return s.errorf("the slot's consistent point %q: %w", res.ConsistentPoint, err)
	}
	s.pos = uint64(lsn)
	s.confirmed.Store(s.pos)
	s.log.Info("postgres-cdc slot created", "source", s.t.Name, "slot", s.cfg.slot, "lsn", res.ConsistentPoint)
	if !s.cfg.initial {
		return nil
	}
	// The exported snapshot lives while rc runs no other command.
	return s.snapshot(ctx, out, res.SnapshotName)
}

// snapshot reads every captured table in one REPEATABLE READ
// transaction, on the slot's exported snapshot name unless name is ""
// ('snapshot' mode, which has no slot).
func (s *cdcSource) snapshot(ctx context.Context, out dataflow.SourceOutput, name string) error {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return s.errorf("%w", err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if name != "" {
		if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(name)); err != nil {
			return s.errorf("importing the slot's snapshot: %w", err)
		}
	}
	for _, ct := range s.tables {
		sel := make([]string, len(ct.cols))
		for i, c := range ct.cols {
			sel[i] = quoteIdent(c) + "::text"
		}
		rows, err := tx.Query(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+qualifiedName(ct.schema, ct.name))
		if err != nil {
			return s.errorf("reading %s: %w", qualifiedName(ct.schema, ct.name), err)
		}
		c := &dyntable.Chunk{}
		for rows.Next() {
			r, err := s.row(ct, rows.RawValues())
			if err != nil {
				rows.Close()
				return err
			}
			c.Append(dyntable.Insert, r)
			if c.Len() == 1024 {
				if err := out.Emit(c); err != nil {
					rows.Close()
					return err
				}
				c = &dyntable.Chunk{}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return s.errorf("reading %s: %w", qualifiedName(ct.schema, ct.name), err)
		}
		if c.Len() > 0 {
			if err := out.Emit(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// row converts text values (nil for NULL) of ct's columns.
func (s *cdcSource) row(ct *capturedTable, vals [][]byte) (types.Row, error) {
	r := make(types.Row, len(vals))
	for i, v := range vals {
		if v == nil {
			r[i] = types.NullValue
			continue
		}
		x, err := fromText(string(v), s.t.Columns[i].Type)
		if err != nil {
			return nil, s.errorf("column '%s' of %s: %v", s.t.Columns[i].Name, qualifiedName(ct.schema, ct.name), err)
		}
		r[i] = x
	}
	return r, nil
}

// fromText reads PostgreSQL's text output of a value as type t (the
// session runs in UTC, so timestamptz values end in +00).
func fromText(s string, t types.Type) (types.Value, error) {
	switch t.ID {
	case types.Boolean:
		switch s {
		case "t":
			return types.NewBool(true), nil
		case "f":
			return types.NewBool(false), nil
		}
	case types.Int, types.BigInt:
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return types.NewInt(i), nil
		}
	case types.Double:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return types.NewFloat(f), nil
		}
	case types.Decimal:
		if d, _, err := apd.NewFromString(s); err == nil {
			return types.NewDecimal(d), nil
		}
	case types.String:
		return types.NewString(s), nil
	case types.Date:
		if tm, err := time.Parse("2006-01-02", s); err == nil {
			return types.NewDate(tm.Unix() / 86400), nil
		}
	case types.Timestamp:
		for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999-07", "2006-01-02 15:04:05.999999999-07:00"} {
			if tm, err := time.Parse(layout, s); err == nil {
				return types.NewTimestampFromTime(tm.UTC()), nil
			}
		}
	case types.Time: // PostgreSQL's 24:00:00 is refused: a TIME is below a day
		if ns, _, ok := types.ParseTimeOfDay(s); ok {
			return types.NewTime(ns), nil
		}
	}
	return types.NullValue, fmt.Errorf("cannot read %q as %s", s, t)
}

// replConn opens a replication connection (replication=database).
func (s *cdcSource) replConn(ctx context.Context) (*pgconn.PgConn, error) {
	pc, err := s.cfg.poolConfig(1)
	if err != nil {
		return nil, err
	}
	cc := pc.ConnConfig.Config.Copy()
	cc.RuntimeParams["replication"] = "database"
	c, err := pgconn.ConnectConfig(ctx, cc)
	if err != nil {
		return nil, s.cfg.redact(err)
	}
	return c, nil
}

func (s *cdcSource) Close() error {
	if s.pool != nil {
		s.pool.Close()
	}
	return nil
}
