package mysql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// The scan source reads the MySQL table once (a bounded source, for
// dimension tables).
//
// With a single integer primary key, the key range [MIN, MAX] is split
// evenly over the subtasks ('scan.parallelism'), each reads its range in
// key order, a page at a time (keyset pagination), and its checkpoint
// position is the last key emitted: a restored job goes on after it.
// Otherwise one subtask reads the table with one SELECT, and checkpoints
// are declined while it runs (it cannot name a position to resume
// from); they resume once it has finished.
//
// The subtasks' reads are separate statements, not one snapshot: rows
// changed in MySQL during the scan may be seen by one range and not
// another.
func (connector) NewScan(t *connectors.Table, _ *connectors.Env) (connectors.ScanSource, error) {
	cfg, err := parseConfig(t)
	if err != nil {
		return nil, err
	}
	s := &scan{cfg: cfg, t: t, shape: shapeOf(cfg, t), intKey: -1}
	if len(t.PrimaryKey) == 1 && t.Columns[t.PrimaryKey[0]].Type.IsInteger() {
		s.intKey = t.PrimaryKey[0]
	} else if cfg.scanPar > 1 {
		return nil, errors.New("option 'scan.parallelism' above 1 needs a single integer PRIMARY KEY, whose range is split")
	}
	return s, nil
}

type scan struct {
	cfg    *config
	t      *connectors.Table
	shape  *tableShape
	intKey int // column of the single integer primary key, or -1
	// lookupStats counts the lookup joins' cache hits and misses (lookup.go).
	lookupStats connectors.LookupStats
}

func (s *scan) ChangelogMode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (s *scan) Bounded() bool                         { return true }

func (s *scan) Parallelism() int {
	if s.intKey < 0 {
		return 1
	}
	return s.cfg.scanPar
}

func (s *scan) Create(subtask, parallelism int) (dataflow.Source, error) {
	if s.intKey >= 0 {
		return &keyedSource{scan: s, subtask: subtask, parallelism: parallelism}, nil
	}
	return &plainSource{scan: s}, nil
}

// selectList is "`a`, `b`" for the table's columns.
func (s *scan) selectList() string {
	q := make([]string, len(s.shape.cols))
	for i, c := range s.shape.cols {
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

const chunkRows = 1024

// plainSource reads the whole table with one SELECT.
type plainSource struct {
	dataflow.BaseSource
	scan *scan
	pool *pool
}

func (p *plainSource) Open(oc *dataflow.OpContext) error {
	ctx := oc.Context()
	pl, err := p.scan.open(ctx)
	p.pool = pl
	return err
}

// SnapshotPosition declines: a SELECT without a key order has no
// position to resume from.
func (p *plainSource) SnapshotPosition(int64) ([]byte, error) {
	return nil, fmt.Errorf("mysql source '%s' (no single integer primary key) cannot save a read position; checkpoints resume once it has finished", p.scan.t.Name)
}

func (p *plainSource) RestorePosition([]byte) error {
	return fmt.Errorf("mysql source '%s' has no read position to restore", p.scan.t.Name)
}

func (p *plainSource) Run(ctx context.Context, out dataflow.SourceOutput) error {
	s := p.scan
	rows, err := p.pool.db.QueryContext(ctx, "SELECT "+s.selectList()+" FROM "+s.shape.qualified)
	if err != nil {
		return fmt.Errorf("mysql source '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	defer rows.Close()
	c := &dyntable.Chunk{}
	for rows.Next() {
		r, err := s.scanRow(rows)
		if err != nil {
			return err
		}
		c.Append(dyntable.Insert, r)
		if c.Len() == chunkRows {
			if err := out.Emit(c); err != nil {
				return err
			}
			c = &dyntable.Chunk{}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mysql source '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	if c.Len() > 0 {
		return out.Emit(c)
	}
	return nil
}

func (p *plainSource) Close() error {
	if p.pool != nil {
		return p.pool.close()
	}
	return nil
}

// keyedSource reads one range of an integer primary key in key order.
type keyedSource struct {
	dataflow.BaseSource
	scan                 *scan
	subtask, parallelism int
	pool                 *pool
	pos                  keyedPos
}

// keyedPos is the checkpointed position: the subtask's range, fixed at
// the first run, and the last key emitted.
type keyedPos struct {
	Planned bool  `json:"planned"`
	Empty   bool  `json:"empty"` // the range holds no keys
	Lo      int64 `json:"lo"`    // inclusive
	Hi      int64 `json:"hi"`    // inclusive
	Started bool  `json:"started"`
	Last    int64 `json:"last"` // the last key emitted, if Started
}

func (k *keyedSource) Open(oc *dataflow.OpContext) error {
	ctx := oc.Context()
	p, err := k.scan.open(ctx)
	k.pool = p
	return err
}

func (k *keyedSource) SnapshotPosition(int64) ([]byte, error) { return json.Marshal(k.pos) }

func (k *keyedSource) RestorePosition(b []byte) error {
	if err := json.Unmarshal(b, &k.pos); err != nil {
		return fmt.Errorf("mysql source '%s': corrupt position: %w", k.scan.t.Name, err)
	}
	return nil
}

// plan splits [MIN, MAX] of the key evenly: subtask i of p reads
// [min + span*i/p, min + span*(i+1)/p - 1].
func (k *keyedSource) plan(ctx context.Context) error {
	s := k.scan
	key := quoteIdent(s.shape.cols[s.intKey])
	var lo, hi *int64
	err := k.pool.db.QueryRowContext(ctx, "SELECT MIN("+key+"), MAX("+key+") FROM "+s.shape.qualified).Scan(&lo, &hi)
	if err != nil {
		return fmt.Errorf("mysql source '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	k.pos.Planned = true
	if lo == nil {
		k.pos.Empty = true
		return nil
	}
	span := new(big.Int).Sub(big.NewInt(*hi), big.NewInt(*lo))
	span.Add(span, big.NewInt(1))
	at := func(i int) *big.Int {
		v := new(big.Int).Mul(span, big.NewInt(int64(i)))
		v.Quo(v, big.NewInt(int64(k.parallelism)))
		return v.Add(v, big.NewInt(*lo))
	}
	from, to := at(k.subtask), at(k.subtask+1)
	to.Sub(to, big.NewInt(1))
	if from.Cmp(to) > 0 {
		k.pos.Empty = true
		return nil
	}
	k.pos.Lo, k.pos.Hi = from.Int64(), to.Int64()
	return nil
}

const pageRows = 10000

func (k *keyedSource) Run(ctx context.Context, out dataflow.SourceOutput) error {
	s := k.scan
	if !k.pos.Planned {
		if err := k.plan(ctx); err != nil {
			return err
		}
	}
	if k.pos.Empty {
		return nil
	}
	key := quoteIdent(s.shape.cols[s.intKey])
	q := "SELECT " + s.selectList() + " FROM " + s.shape.qualified +
		" WHERE " + key + " >= ? AND " + key + " <= ? ORDER BY " + key + " LIMIT " + strconv.Itoa(pageRows)
	for {
		from := k.pos.Lo
		if k.pos.Started {
			if k.pos.Last >= k.pos.Hi {
				return nil
			}
			from = k.pos.Last + 1
		}
		n, err := k.page(ctx, out, q, from)
		if err != nil {
			return err
		}
		if n < pageRows {
			return nil
		}
	}
}

// page reads and emits one page of keys from 'from' on.
func (k *keyedSource) page(ctx context.Context, out dataflow.SourceOutput, q string, from int64) (int, error) {
	s := k.scan
	rows, err := k.pool.db.QueryContext(ctx, q, from, k.pos.Hi)
	if err != nil {
		return 0, fmt.Errorf("mysql source '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	defer rows.Close()
	n := 0
	c := &dyntable.Chunk{}
	emit := func() error {
		// The position moves before Emit: SnapshotPosition runs inside it.
		last := c.Changes[c.Len()-1].Row[s.intKey].Int()
		k.pos.Started, k.pos.Last = true, last
		err := out.Emit(c)
		c = &dyntable.Chunk{}
		return err
	}
	for rows.Next() {
		r, err := s.scanRow(rows)
		if err != nil {
			return n, err
		}
		c.Append(dyntable.Insert, r)
		n++
		if c.Len() == chunkRows {
			if err := emit(); err != nil {
				return n, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("mysql source '%s': %w", s.t.Name, s.cfg.redact(err))
	}
	if c.Len() > 0 {
		if err := emit(); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (k *keyedSource) Close() error {
	if k.pool != nil {
		return k.pool.close()
	}
	return nil
}

type rowScanner interface{ Scan(dest ...any) error }

// scanRow reads one result row into streamsql values.
func (s *scan) scanRow(rows rowScanner) (types.Row, error) {
	n := len(s.shape.cols)
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
		x, err := fromMySQL(v, s.shape.types[i])
		if err != nil {
			return nil, fmt.Errorf("mysql source '%s': column '%s': %v", s.t.Name, s.shape.cols[i], err)
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
	}
	return types.NullValue, fmt.Errorf("cannot read %q as %s", str, t)
}
