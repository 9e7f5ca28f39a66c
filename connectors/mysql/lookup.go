package mysql

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/types"
)

// A MySQL table is also a lookup table (connectors.LookupSource) for
// processing-time lookup joins: each join subtask keeps its own
// connection pool and runs SELECT cols FROM t WHERE k1 = ? AND ... per
// key it has not cached, with Flink's JDBC lookup options
// ('lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows',
// 'lookup.partial-cache.expire-after-write', 'lookup.max-retries'); the
// cache is the shared one of connectors.NewCachedLookuper. An index on
// the key columns is the user's business, as in Flink.

func init() { options = append(options, connectors.LookupOptionDefs()...) }

// Lookup returns the Lookuper of one join subtask; the stats of all of
// them add up in s.lookupStats.
func (s *scan) Lookup(keys []int) (connectors.Lookuper, error) {
	o, err := connectors.ParseLookupOptions(s.t.Options)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("mysql lookup of '%s' needs key columns", s.t.Name)
	}
	conds := make([]string, len(keys))
	for i, k := range keys {
		if k < 0 || k >= len(s.shape.Cols) {
			return nil, fmt.Errorf("mysql lookup of '%s': key column %d of %d", s.t.Name, k, len(s.shape.Cols))
		}
		conds[i] = quoteIdent(s.shape.Cols[k]) + " = ?"
	}
	l := &lookuper{scan: s, keys: keys,
		query: "SELECT " + s.selectList() + " FROM " + s.shape.Qualified + " WHERE " + strings.Join(conds, " AND ")}
	return connectors.NewCachedLookuper(l, o, &s.lookupStats), nil
}

// lookuper queries MySQL for one subtask.
type lookuper struct {
	scan  *scan
	keys  []int
	query string
	pool  *pool
	args  []any
}

// Open connects and checks the table's schema, as the scan source does.
func (l *lookuper) Open(ctx context.Context) error {
	p, err := l.scan.open(ctx)
	l.pool = p
	return err
}

func (l *lookuper) Lookup(ctx context.Context, key types.Row) ([]types.Row, error) {
	s := l.scan
	if l.pool == nil {
		return nil, fmt.Errorf("mysql lookup of '%s' before Open", s.t.Name)
	}
	l.args = l.args[:0]
	for i, k := range l.keys {
		l.args = append(l.args, dbconn.Arg(key[i], s.shape.Types[k]))
	}
	c, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rows, err := l.pool.db.QueryContext(c, l.query, l.args...)
	if err != nil {
		return nil, fmt.Errorf("mysql lookup of '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	defer rows.Close()
	var out []types.Row
	for rows.Next() {
		r, err := s.scanRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mysql lookup of '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	return out, nil
}

func (l *lookuper) Close() error {
	if l.pool == nil {
		return nil
	}
	err := l.pool.close()
	l.pool = nil
	return err
}
