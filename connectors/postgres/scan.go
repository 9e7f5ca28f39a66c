package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/connectors/internal/jdbcscan"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/types"
)

// A 'jdbc:postgresql://' table is also a source, as in Flink's JDBC
// connector:
//
//   - a bounded scan with Flink's scan options ('scan.partition.column',
//     '.num', '.lower-bound', '.upper-bound', 'scan.fetch-size'),
//     planned and checkpointed by connectors/jdbcscan, one statement per
//     partition or page;
//   - a lookup table for processing-time lookup joins, one
//     SELECT ... WHERE k1 = $1 AND ... per key not in the join subtask's
//     cache (connectors.NewCachedLookuper, with Flink's lookup options).
//
// Values are read as PostgreSQL's text output (col::text) and converted
// as the postgres-cdc snapshot does (fromText); the session runs in UTC.

func init() {
	sinkOptions = append(sinkOptions, jdbcscan.OptionDefs()...)
	sinkOptions = append(sinkOptions, connectors.LookupOptionDefs()...)
}

// NewScan validates the options; the table is checked when a job starts.
func (connector) NewScan(t *connectors.Table, _ *connectors.Env) (connectors.ScanSource, error) {
	cfg, err := parseConfig(t)
	if err != nil {
		return nil, err
	}
	plan, err := jdbcscan.ParsePlan(t)
	if err != nil {
		return nil, err
	}
	if _, err := connectors.ParseLookupOptions(t.Options); err != nil {
		return nil, err
	}
	return &scan{cfg: cfg, t: t, Scan: jdbcscan.Scan{Plan: plan}}, nil
}

type scan struct {
	jdbcscan.Scan // ChangelogMode, Bounded, Parallelism
	cfg           *config
	t             *connectors.Table
	// lookupStats adds up the lookup joins' cache hits and misses.
	lookupStats connectors.LookupStats
}

var _ connectors.LookupSource = (*scan)(nil)

func (s *scan) Create(subtask, parallelism int) (dataflow.Source, error) {
	return jdbcscan.NewSource(s.t.Name, s.Plan, &reader{scan: s}, subtask, parallelism), nil
}

// reader is what a scan or lookup subtask holds once open: a pool, the
// columns as PostgreSQL spells them, and the select list.
type reader struct {
	scan      *scan
	pool      *pgxpool.Pool
	cols      []string
	qualified string
	sel       string // "a"::text AS c0, "b"::text AS c1, ...
}

// Open connects and checks the table, retrying while the server is
// unreachable.
func (r *reader) Open(ctx context.Context) error {
	s := r.scan
	p, err := s.cfg.open(ctx, 2)
	if err != nil {
		return r.errorf("%w", err)
	}
	r.pool = p
	err = retry(ctx, s.cfg.maxRetries, func() error {
		var err error
		r.cols, err = checkSchema(ctx, p, s.cfg.schema, s.cfg.table, s.t)
		return err
	})
	if err != nil {
		return r.errorf("%w", err)
	}
	r.qualified = qualifiedName(s.cfg.schema, s.cfg.table)
	// The outputs are renamed: ORDER BY a name would otherwise sort by the
	// output column of that name, the text.
	sel := make([]string, len(r.cols))
	for i, c := range r.cols {
		sel[i] = quoteIdent(c) + "::text AS c" + strconv.Itoa(i)
	}
	r.sel = strings.Join(sel, ", ")
	return nil
}

func (r *reader) errorf(format string, args ...any) error {
	return r.scan.cfg.redact(fmt.Errorf("jdbc source '%s': "+format, append([]any{r.scan.t.Name}, args...)...))
}

func (r *reader) MinMax(ctx context.Context, col int) (lo, hi int64, ok bool, err error) {
	k := quoteIdent(r.cols[col])
	var l, h *int64
	err = r.pool.QueryRow(ctx, "SELECT MIN("+k+")::bigint, MAX("+k+")::bigint FROM "+r.qualified).Scan(&l, &h)
	if err != nil {
		return 0, 0, false, r.errorf("%w", err)
	}
	if l == nil {
		return 0, 0, false, nil
	}
	return *l, *h, true, nil
}

func (r *reader) Read(ctx context.Context, q jdbcscan.Query, emit func(types.Row) error) error {
	sq := "SELECT " + r.sel + " FROM " + r.qualified
	var args []any
	if q.Column >= 0 {
		k := quoteIdent(r.cols[q.Column])
		sq += " WHERE " + k + " >= $1 AND " + k + " <= $2"
		args = append(args, q.Lo, q.Hi)
		if q.Limit > 0 {
			sq += " ORDER BY " + k + " LIMIT " + strconv.Itoa(q.Limit)
		}
	}
	rows, err := r.pool.Query(ctx, sq, args...)
	if err != nil {
		return r.errorf("%w", err)
	}
	return r.each(rows, emit)
}

// each converts and hands on every row, then closes rows.
func (r *reader) each(rows pgx.Rows, emit func(types.Row) error) error {
	defer rows.Close()
	t := r.scan.t
	for rows.Next() {
		vals := rows.RawValues()
		row := make(types.Row, len(vals))
		for i, v := range vals {
			if v == nil {
				row[i] = types.NullValue
				continue
			}
			x, err := fromText(string(v), t.Columns[i].Type)
			if err != nil {
				return r.errorf("column '%s': %v", t.Columns[i].Name, err)
			}
			row[i] = x
		}
		if err := emit(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return r.errorf("%w", err)
	}
	return nil
}

func (r *reader) Close() error {
	if r.pool != nil {
		r.pool.Close()
		r.pool = nil
	}
	return nil
}

// Lookup returns the Lookuper of one join subtask.
func (s *scan) Lookup(keys []int) (connectors.Lookuper, error) {
	o, err := connectors.ParseLookupOptions(s.t.Options)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("jdbc lookup of '%s' needs key columns", s.t.Name)
	}
	for _, k := range keys {
		if k < 0 || k >= len(s.t.Columns) {
			return nil, fmt.Errorf("jdbc lookup of '%s': key column %d of %d", s.t.Name, k, len(s.t.Columns))
		}
	}
	return connectors.NewCachedLookuper(&lookuper{reader: reader{scan: s}, keys: keys}, o, &s.lookupStats), nil
}

// lookuper queries PostgreSQL for one join subtask.
type lookuper struct {
	reader
	keys  []int
	query string
	args  []any
}

func (l *lookuper) Open(ctx context.Context) error {
	if err := l.reader.Open(ctx); err != nil {
		return err
	}
	conds := make([]string, len(l.keys))
	for i, k := range l.keys {
		conds[i] = quoteIdent(l.cols[k]) + " = $" + strconv.Itoa(i+1)
	}
	l.query = "SELECT " + l.sel + " FROM " + l.qualified + " WHERE " + strings.Join(conds, " AND ")
	return nil
}

func (l *lookuper) Lookup(ctx context.Context, key types.Row) ([]types.Row, error) {
	if l.pool == nil {
		return nil, fmt.Errorf("jdbc lookup of '%s' before Open", l.scan.t.Name)
	}
	// The simple protocol sends the values as literals, which the server
	// casts to the key columns' types (dates, timestamps and decimals go
	// as text, as the sink writes them).
	l.args = append(l.args[:0], pgx.QueryExecModeSimpleProtocol)
	for i, k := range l.keys {
		l.args = append(l.args, dbconn.Arg(key[i], l.scan.t.Columns[k].Type))
	}
	c, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rows, err := l.pool.Query(c, l.query, l.args...)
	if err != nil {
		return nil, l.errorf("lookup: %w", err)
	}
	var out []types.Row
	err = l.each(rows, func(r types.Row) error { out = append(out, r); return nil })
	return out, err
}
