package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// binlogPos is a position in the binlog, between two transactions; it is
// the source's checkpoint position. GTID, when known, is the GTID set of
// every transaction up to the position (MySQL's executed set, or
// MariaDB's GTID position, one GTID per replication domain): a server
// with GTIDs (MariaDB always, MySQL with gtid_mode = ON) is resumed from
// it rather than from the file and offset, which are kept for the log
// and for servers without GTIDs. File and offset name one server's
// files; the GTID set stays valid on a replica promoted in its place.
type binlogPos struct {
	File string `json:"file"`
	Pos  uint32 `json:"pos"`
	GTID string `json:"gtid,omitempty"`
	// Snap is the progress of a chunked snapshot (cdc_chunked.go) that
	// the binlog is read along with; nil once it is done, or without one.
	Snap *snapPos `json:"snap,omitempty"`
}

func (p binlogPos) String() string {
	if p.GTID != "" {
		return fmt.Sprintf("%s:%d (GTID set %s)", p.File, p.Pos, p.GTID)
	}
	return fmt.Sprintf("%s:%d", p.File, p.Pos)
}

// capturedTable maps one MySQL table's binlog rows onto the streamsql
// table: cols[i] is the MySQL column (ordinal position) of streamsql
// column i.
type capturedTable struct {
	schema, name string
	ncols        int // the MySQL table's column count
	idx          []int
	cols         []mysqlColumn
	pk           []string // the MySQL table's primary key columns
}

// cdcSource is the one subtask of a mysql-cdc table.
//
// Run: (unless restored) the snapshot, then the binlog from the
// snapshot's position, forever. A binlog reader goroutine (cdc_binlog.go)
// turns committed transactions into changes; Run emits each transaction
// as one chunk and only then advances the position, so a barrier always
// falls between transactions. SnapshotPosition and RestorePosition run
// on Run's goroutine (the dataflow contract) and need no lock.
type cdcSource struct {
	dataflow.BaseSource
	cfg *cdcConfig
	t   *connectors.Table
	log *slog.Logger

	db       *sql.DB
	flavor   string // "mysql" or "mariadb"
	gtids    bool   // the server has GTIDs: MariaDB, or MySQL with gtid_mode = ON
	tables   map[string]*capturedTable
	pos      binlogPos
	streamed bool // the snapshot (if any) is emitted; pos is valid
	restored bool
}

// errorf prefixes an error with the source's name and scrubs the
// password.
func (s *cdcSource) errorf(format string, args ...any) error {
	return s.cfg.redact(fmt.Errorf("mysql-cdc source '%s': "+format, append([]any{s.t.Name}, args...)...))
}

// Open connects and checks the server: a binlog in ROW format with full
// row images, and the tables' columns and keys.
func (s *cdcSource) Open(oc *dataflow.OpContext) error {
	s.log = oc.Logger()
	ctx := oc.Context()
	db, err := s.cfg.openDB()
	if err != nil {
		return s.errorf("%w", err)
	}
	db.SetMaxIdleConns(2)
	s.db = db
	err = retryWrite(ctx, s.cfg.maxRetries, func() error { return s.checkServer(ctx) })
	if err != nil {
		return s.errorf("%w", err)
	}
	return nil
}

func (s *cdcSource) checkServer(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var logBin int
	var format, image, version string
	err := s.db.QueryRowContext(ctx, "SELECT @@GLOBAL.log_bin, @@GLOBAL.binlog_format, @@GLOBAL.binlog_row_image, VERSION()").
		Scan(&logBin, &format, &image, &version)
	if err != nil {
		return err
	}
	switch {
	case logBin == 0:
		return errors.New("the server writes no binlog (log_bin is OFF): start it with --log-bin and --binlog-format=ROW")
	case !strings.EqualFold(format, "ROW"):
		return fmt.Errorf("the server's binlog_format is %s, and mysql-cdc reads row events only: set binlog_format = ROW "+
			"(SET GLOBAL binlog_format = 'ROW', and in the server's configuration)", format)
	case !strings.EqualFold(image, "FULL"):
		return fmt.Errorf("the server's binlog_row_image is %s, and mysql-cdc needs whole rows: set binlog_row_image = FULL", image)
	}
	s.flavor = "mysql"
	if strings.Contains(strings.ToLower(version), "mariadb") {
		s.flavor, s.gtids = "mariadb", true
	} else {
		var mode string
		if err := s.db.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_mode").Scan(&mode); err == nil {
			s.gtids = strings.EqualFold(mode, "ON")
		}
	}
	if s.cfg.startGTID != "" && !s.gtids {
		return errors.New("option 'scan.startup.specific-offset.gtid-set' needs a server with GTIDs (MySQL's gtid_mode is not ON)")
	}
	rows, err := s.db.QueryContext(ctx, "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE'")
	if err != nil {
		return err
	}
	var names [][2]string
	for rows.Next() {
		var db, tbl string
		if err := rows.Scan(&db, &tbl); err != nil {
			rows.Close()
			return err
		}
		if s.matches(db, tbl) {
			names = append(names, [2]string{db, tbl})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("no table matches database-name '%s' and table-name '%s'", s.t.Options["database-name"], s.t.Options["table-name"])
	}
	s.tables = map[string]*capturedTable{}
	for _, n := range names {
		if _, err := s.capture(ctx, n[0], n[1]); err != nil {
			return err
		}
	}
	return nil
}

func (s *cdcSource) matches(db, table string) bool {
	return s.cfg.dbRe.MatchString(db) && s.cfg.tableRe.MatchString(table)
}

// capture describes a MySQL table and maps it onto the streamsql table;
// an error names the column that does not fit.
func (s *cdcSource) capture(ctx context.Context, db, table string) (*capturedTable, error) {
	cols, pk, err := describe(ctx, s.db, db, table)
	if err != nil {
		return nil, err
	}
	ct := &capturedTable{schema: db, name: table, ncols: len(cols), pk: pk}
	fits := func(t types.Type, c mysqlColumn) error {
		if c.dataType == "enum" || c.dataType == "set" || c.dataType == "json" {
			return fmt.Errorf("has MySQL type %s, which mysql-cdc cannot map", c.columnType)
		}
		return compatible(t, c)
	}
	idx, err := dbconn.MatchColumns(s.t, cols, mysqlColumn.colName, fits, fmt.Sprintf("the MySQL table %s.%s", db, table))
	if err != nil {
		return nil, err
	}
	for _, i := range idx {
		ct.idx = append(ct.idx, i)
		ct.cols = append(ct.cols, cols[i])
	}
	if len(pk) == 0 {
		return nil, fmt.Errorf("the MySQL table %s.%s has no primary key, which mysql-cdc needs to identify rows", db, table)
	}
	if _, _, same := dbconn.SameKey(s.t, pk); len(s.t.PrimaryKey) > 0 && !same {
		return nil, fmt.Errorf("the declared primary key differs from the MySQL table %s.%s's (%s)", db, table, strings.Join(pk, ", "))
	}
	s.tables[db+"."+table] = ct
	return ct, nil
}

// convert reads one binlog or snapshot row of ct into a streamsql row.
func (s *cdcSource) convert(ct *capturedTable, raw []any) (types.Row, error) {
	r := make(types.Row, len(ct.idx))
	for i, j := range ct.idx {
		v := raw[j]
		switch x := v.(type) { // the binlog's integer widths
		case int8:
			v = int64(x)
		case int16:
			v = int64(x)
		case int32:
			v = int64(x)
		case uint8:
			v = uint64(x)
		case uint16:
			v = uint64(x)
		case uint32:
			v = uint64(x)
		}
		x, err := fromMySQL(v, s.t.Columns[i].Type)
		if err != nil {
			return nil, fmt.Errorf("column '%s' of %s.%s: %v", s.t.Columns[i].Name, ct.schema, ct.name, err)
		}
		r[i] = x
	}
	return r, nil
}

// SnapshotPosition saves the binlog position; during the snapshot it
// declines (see cdc.go).
func (s *cdcSource) SnapshotPosition(int64) ([]byte, error) {
	if !s.streamed {
		return nil, fmt.Errorf("mysql-cdc source '%s' is reading its snapshot; checkpoints resume once the snapshot is emitted", s.t.Name)
	}
	return json.Marshal(s.pos)
}

func (s *cdcSource) RestorePosition(b []byte) error {
	if err := json.Unmarshal(b, &s.pos); err != nil || (s.pos.File == "" && s.pos.GTID == "") {
		return fmt.Errorf("mysql-cdc source '%s': corrupt checkpoint position", s.t.Name)
	}
	s.restored, s.streamed = true, true
	return nil
}

func (s *cdcSource) Run(ctx context.Context, out dataflow.SourceOutput) error {
	if !s.restored {
		if _, ok := s.chunkable(); ok && s.cfg.mode == startInitial && s.cfg.chunked {
			p, err := s.masterStatus(ctx, s.db)
			if err != nil {
				return s.errorf("%w", err)
			}
			s.pos = p
			s.pos.Snap = &snapPos{}
		} else if err := s.start(ctx, out); err != nil {
			return err
		}
		s.streamed = true
	}
	if s.pos.Snap != nil {
		if err := s.chunkedSnapshot(ctx, out); err != nil {
			return err
		}
	}
	return s.stream(ctx, out)
}

// start finds where the binlog is read from, emitting the snapshot in
// initial mode.
func (s *cdcSource) start(ctx context.Context, out dataflow.SourceOutput) error {
	switch s.cfg.mode {
	case startInitial:
		return s.snapshot(ctx, out)
	case startSpecific:
		s.pos = binlogPos{File: s.cfg.startFile, Pos: s.cfg.startPos, GTID: s.cfg.startGTID}
	case startLatest:
		p, err := s.masterStatus(ctx, s.db)
		if err != nil {
			return s.errorf("%w", err)
		}
		s.pos = p
	case startTimestamp:
		var file string
		var size any
		err := s.db.QueryRowContext(ctx, "SHOW BINARY LOGS").Scan(&file, &size)
		if err != nil {
			return s.errorf("listing the binlog files: %w", err)
		}
		s.pos = binlogPos{File: file, Pos: 4}
	}
	return nil
}

// gtidAt is the GTID set at a binlog position, when the server can say
// (MariaDB's BINLOG_GTID_POS; ok is false on MySQL, whose GTID set is
// read with the position itself, in masterStatus, and for a position the
// server does not know). An empty set with ok means no transaction had
// a GTID yet: the position is resumed by file and offset until one does.
func (s *cdcSource) gtidAt(ctx context.Context, q queryer, p binlogPos) (gtid string, ok bool, err error) {
	if s.flavor != "mariadb" {
		return "", false, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT BINLOG_GTID_POS(?, ?)", p.File, p.Pos)
	if err != nil {
		return "", false, err
	}
	defer rows.Close()
	var g sql.NullString
	if rows.Next() {
		if err := rows.Scan(&g); err != nil {
			return "", false, err
		}
	}
	return g.String, g.Valid, rows.Err()
}

type queryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// masterStatus is the end of the binlog.
func (s *cdcSource) masterStatus(ctx context.Context, q queryer) (binlogPos, error) {
	rows, err := q.QueryContext(ctx, "SHOW MASTER STATUS")
	if err != nil {
		return binlogPos{}, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		return binlogPos{}, errors.New("SHOW MASTER STATUS returned nothing: the server writes no binlog")
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return binlogPos{}, err
	}
	var p binlogPos
	p.File = string(vals[0])
	if _, err := fmt.Sscan(string(vals[1]), &p.Pos); err != nil {
		return p, err
	}
	// MySQL's fifth column is the executed GTID set.
	if s.gtids && s.flavor == "mysql" && len(vals) >= 5 {
		p.GTID = strings.ReplaceAll(strings.TrimSpace(string(vals[4])), "\n", "")
	}
	if err := rows.Close(); err != nil {
		return p, err
	}
	if p.GTID == "" {
		if p.GTID, _, err = s.gtidAt(ctx, q, p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// snapshot reads every captured table in one consistent-snapshot
// transaction and sets s.pos to the binlog position it corresponds to.
func (s *cdcSource) snapshot(ctx context.Context, out dataflow.SourceOutput) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.errorf("%w", err)
	}
	defer conn.Close()
	exec := func(q string) error { _, err := conn.ExecContext(ctx, q); return err }
	if err := exec("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err != nil {
		return s.errorf("%w", err)
	}
	if s.flavor == "mariadb" {
		if err := exec("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
			return s.errorf("starting the snapshot: %w", err)
		}
		// MariaDB reports the binlog position of the snapshot itself.
		rows, err := conn.QueryContext(ctx, "SHOW STATUS LIKE 'binlog_snapshot_%'")
		if err != nil {
			return s.errorf("%w", err)
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return s.errorf("%w", err)
			}
			switch strings.ToLower(k) {
			case "binlog_snapshot_file":
				s.pos.File = v
			case "binlog_snapshot_position":
				_, _ = fmt.Sscan(v, &s.pos.Pos)
			}
		}
		rows.Close()
		if s.pos.File == "" {
			return s.errorf("the server reported no binlog_snapshot_file for the snapshot")
		}
		if s.pos.GTID, _, err = s.gtidAt(ctx, conn, s.pos); err != nil {
			return s.errorf("the snapshot's GTID position: %w", err)
		}
	} else {
		// MySQL: hold a global read lock while the transaction starts, so
		// that the binlog position read meanwhile is the snapshot's.
		if err := exec("FLUSH TABLES WITH READ LOCK"); err != nil {
			return s.errorf("locking for the snapshot (the user needs RELOAD): %w", err)
		}
		err := exec("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
		if err == nil {
			s.pos, err = s.masterStatus(ctx, conn)
		}
		if uerr := exec("UNLOCK TABLES"); err == nil {
			err = uerr
		}
		if err != nil {
			return s.errorf("starting the snapshot: %w", err)
		}
	}
	defer func() { _ = exec("COMMIT") }()
	s.log.Info("mysql-cdc snapshot started", "source", s.t.Name, "binlog", s.pos.String(), "tables", len(s.tables))
	sel := make([]string, len(s.t.Columns))
	for _, ct := range s.tables {
		for i, c := range ct.cols {
			sel[i] = quoteIdent(c.name)
		}
		rows, err := conn.QueryContext(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+quoteIdent(ct.schema)+"."+quoteIdent(ct.name))
		if err != nil {
			return s.errorf("reading %s.%s: %w", ct.schema, ct.name, err)
		}
		// The SELECT lists the mapped columns in the streamsql order.
		ident := &capturedTable{schema: ct.schema, name: ct.name, idx: make([]int, len(ct.idx)), cols: ct.cols}
		for i := range ident.idx {
			ident.idx[i] = i
		}
		if err := s.emitRows(out, ident, rows); err != nil {
			return err
		}
	}
	return nil
}

// emitRows emits a snapshot query's rows as inserts, in chunks.
func (s *cdcSource) emitRows(out dataflow.SourceOutput, ct *capturedTable, rows *sql.Rows) error {
	c := &dyntable.Chunk{}
	err := s.scanRows(ct, rows, func(r types.Row) error {
		c.Append(dyntable.Insert, r)
		if c.Len() < chunkRows {
			return nil
		}
		err := out.Emit(c)
		c = &dyntable.Chunk{}
		return err
	})
	if err != nil {
		return err
	}
	if c.Len() > 0 {
		return out.Emit(c)
	}
	return nil
}

func (s *cdcSource) Close() error {
	if s.db != nil {
		return s.db.Close()
	}
	return nil
}
