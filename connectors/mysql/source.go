package mysql

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/connectors/internal/jdbcscan"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/types"
)

// The scan source reads the MySQL table once (a bounded source, for
// dimension tables), with Flink's JDBC scan options: connectors/jdbcscan
// plans the partitions ('scan.partition.*', or the range of a single
// integer primary key) and keeps the positions; reader runs the queries.
func (connector) NewScan(t *connectors.Table, _ *connectors.Env) (connectors.ScanSource, error) {
	cfg, err := parseConfig(t)
	if err != nil {
		return nil, err
	}
	plan, err := jdbcscan.ParsePlan(t)
	if err != nil {
		return nil, err
	}
	return &scan{cfg: cfg, t: t, shape: shapeOf(cfg, t), Scan: jdbcscan.Scan{Plan: plan}}, nil
}

type scan struct {
	jdbcscan.Scan // ChangelogMode, Bounded, Parallelism
	cfg           *config
	t             *connectors.Table
	shape         *dbconn.Table
	// lookupStats counts the lookup joins' cache hits and misses (lookup.go).
	lookupStats connectors.LookupStats
}

func (s *scan) Create(subtask, parallelism int) (dataflow.Source, error) {
	return jdbcscan.NewSource(s.t.Name, s.Plan, &reader{scan: s}, subtask, parallelism), nil
}

// selectList is "`a`, `b`" for the table's columns.
func (s *scan) selectList() string {
	q := make([]string, len(s.shape.Cols))
	for i, c := range s.shape.Cols {
		q[i] = quoteIdent(c)
	}
	return strings.Join(q, ", ")
}

func (s *scan) open(ctx context.Context) (*pool, error) {
	p, err := newPool(s.cfg)
	if err != nil {
		return nil, err
	}
	err = retryWrite(ctx, s.cfg.maxRetries, func() error {
		c, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		return checkSchema(c, p.db, s.cfg, s.t)
	})
	if err != nil {
		p.close()
		return nil, fmt.Errorf("mysql source '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	return p, nil
}

// chunkRows is the most rows of one emitted chunk.
const chunkRows = 1024

// reader is the jdbcscan.Reader of one subtask.
type reader struct {
	scan *scan
	pool *pool
}

func (r *reader) Open(ctx context.Context) error {
	p, err := r.scan.open(ctx)
	r.pool = p
	return err
}

func (r *reader) MinMax(ctx context.Context, col int) (lo, hi int64, ok bool, err error) {
	s := r.scan
	key := quoteIdent(s.shape.Cols[col])
	var l, h *int64
	err = r.pool.db.QueryRowContext(ctx, "SELECT MIN("+key+"), MAX("+key+") FROM "+s.shape.Qualified).Scan(&l, &h)
	if err != nil {
		return 0, 0, false, s.cfg.redact(err)
	}
	if l == nil {
		return 0, 0, false, nil
	}
	return *l, *h, true, nil
}

func (r *reader) Read(ctx context.Context, q jdbcscan.Query, emit func(types.Row) error) error {
	s := r.scan
	sq := "SELECT " + s.selectList() + " FROM " + s.shape.Qualified
	var args []any
	if q.Column >= 0 {
		key := quoteIdent(s.shape.Cols[q.Column])
		sq += " WHERE " + key + " >= ? AND " + key + " <= ?"
		args = append(args, q.Lo, q.Hi)
		if q.Limit > 0 {
			sq += " ORDER BY " + key + " LIMIT " + strconv.Itoa(q.Limit)
		}
	}
	rows, err := r.pool.db.QueryContext(ctx, sq, args...)
	if err != nil {
		return fmt.Errorf("mysql source '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	defer rows.Close()
	for rows.Next() {
		row, err := s.scanRow(rows)
		if err != nil {
			return err
		}
		if err := emit(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mysql source '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	return nil
}

func (r *reader) Close() error {
	if r.pool == nil {
		return nil
	}
	err := r.pool.close()
	r.pool = nil
	return err
}

type rowScanner interface{ Scan(dest ...any) error }

// scanRow reads one result row into streamsql values.
func (s *scan) scanRow(rows rowScanner) (types.Row, error) {
	n := len(s.shape.Cols)
	raw := make([]any, n)
	ptrs := make([]any, n)
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, fmt.Errorf("mysql source '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	r := make(types.Row, n)
	for i, v := range raw {
		x, err := fromMySQL(v, s.shape.Types[i])
		if err != nil {
			return nil, fmt.Errorf("mysql source '%s': column '%s': %v", s.t.Name, s.shape.Cols[i], err)
		}
		r[i] = x
	}
	return r, nil
}

// fromMySQL converts a value the driver returned to type t.
func fromMySQL(v any, t types.Type) (types.Value, error) {
	if v == nil {
		return types.NullValue, nil
	}
	if tm, ok := v.(time.Time); ok {
		switch t.ID {
		case types.Timestamp:
			return types.NewTimestampFromTime(tm), nil
		case types.Date:
			y, m, d := tm.Date()
			return types.NewDate(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400), nil
		}
		return types.NullValue, fmt.Errorf("a date/time value for a %s column", t)
	}
	var str string
	switch x := v.(type) {
	case []byte:
		str = string(x)
	case string:
		str = x
	case int64:
		str = strconv.FormatInt(x, 10)
	case uint64:
		str = strconv.FormatUint(x, 10)
	case float64:
		str = strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		str = strconv.FormatFloat(float64(x), 'g', -1, 32)
	default:
		return types.NullValue, fmt.Errorf("unexpected driver value %T", v)
	}
	switch t.ID {
	case types.Boolean:
		switch str {
		case "0", "\x00":
			return types.NewBool(false), nil
		case "1", "\x01":
			return types.NewBool(true), nil
		}
	case types.Int, types.BigInt:
		if i, err := strconv.ParseInt(str, 10, 64); err == nil {
			return types.NewInt(i), nil
		}
	case types.Double:
		if f, err := strconv.ParseFloat(str, 64); err == nil {
			return types.NewFloat(f), nil
		}
	case types.Decimal:
		if d, _, err := apd.NewFromString(str); err == nil {
			return types.NewDecimal(d), nil
		}
	case types.String:
		return types.NewString(str), nil
	case types.Date:
		if tm, err := time.Parse("2006-01-02", str); err == nil {
			return types.NewDate(tm.Unix() / 86400), nil
		}
	case types.Timestamp:
		if tm, err := time.Parse("2006-01-02 15:04:05.999999999", str); err == nil {
			return types.NewTimestampFromTime(tm), nil
		}
	case types.Time: // MySQL's TIME beyond a day (up to 838:59:59) or negative is refused
		if ns, _, ok := types.ParseTimeOfDay(str); ok {
			return types.NewTime(ns), nil
		}
	}
	return types.NullValue, fmt.Errorf("cannot read %q as %s", str, t)
}
