// Package jdbcscan is the bounded scan of Flink's JDBC connector, shared
// by the databases that have one ('connector' = 'jdbc' with a
// 'jdbc:mysql://' or 'jdbc:postgresql://' URL, and 'mysql'): Flink's
// scan options, the split of a column's range into partitions, and the
// Source that reads a subtask's partitions with checkpointed positions.
// A database package supplies a Reader, which runs the queries.
//
// How a table is read (Plan):
//
//   - With 'scan.partition.column' (and .num, .lower-bound, .upper-bound,
//     all four or none, as in Flink), [lower-bound, upper-bound] is
//     split into num partitions of nearly equal width, and subtask i of
//     p reads partitions i, i+p, i+2p, ... Rows outside the bounds or
//     with a NULL in the column are not read (Flink's bounds filter too).
//   - Without them, a table whose primary key is one integer column is
//     split by that key: [MIN, MAX], read when the job starts, into one
//     partition per subtask.
//   - Otherwise one subtask reads the table with one SELECT.
//
// A partition on a column that is the table's single-column primary key
// is read in key order a page at a time ('scan.fetch-size' rows per
// statement, keyset pagination) and its checkpoint position is the last
// key emitted: a restore goes on right after it. A partition on any
// other column is read by one statement, and a checkpoint that falls
// inside it is declined (there is no position to resume from); the
// position after a whole partition is saved, so a restore starts at the
// next one. The single-SELECT read declines until it has finished.
//
// Partitions are read by separate statements, not in one snapshot: rows
// changed during the scan may be seen by one partition and not another,
// as in Flink.
package jdbcscan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// DefaultPageRows is the page size of a keyset-paginated read when
// 'scan.fetch-size' is 0 (Flink's default, "the driver's").
const DefaultPageRows = 10000

// chunkRows is the most rows one emitted chunk holds.
const chunkRows = 1024

// OptionDefs are Flink's JDBC scan options, for the dialects' option
// lists.
func OptionDefs() []connectors.OptionDef {
	return []connectors.OptionDef{
		{Key: "scan.partition.column", Description: "the integer column (TINYINT to BIGINT) whose range [scan.partition.lower-bound, scan.partition.upper-bound] is split into scan.partition.num partitions, read by the source's subtasks in parallel; the four options go together. Rows outside the bounds are not read. Without it, a table whose primary key is one integer column is split by its key's MIN and MAX"},
		{Key: "scan.partition.num", Kind: config.Int, Min: 1, Description: "the number of partitions of scan.partition.column's range; subtask i of p reads partitions i, i+p, ..."},
		{Key: "scan.partition.lower-bound", Description: "the smallest value of scan.partition.column read (an integer)"},
		{Key: "scan.partition.upper-bound", Description: "the largest value of scan.partition.column read (an integer)"},
		{Key: "scan.fetch-size", Kind: config.Int, Min: 0, Default: "0", Description: "rows per statement when a partition is read in pages by the table's single-column primary key (keyset pagination, resumable from the last key); 0 is 10000"},
		{Key: "scan.parallelism", Kind: config.Int, Min: 1, Description: "the source's parallelism; above 1 only with scan.partition.column or a single integer primary key, whose range is split"},
	}
}

// Plan is how a table is read; ParsePlan makes it from the options.
type Plan struct {
	// Column is the column the partitions are ranges of, or -1: the whole
	// table in one SELECT.
	Column int
	// Unique: Column is the table's single-column primary key, so a
	// partition is read in key order, in pages, and resumably.
	Unique bool
	// Fixed: the partitions split [Lower, Upper] into Num; otherwise
	// [MIN, MAX] of Column into one partition per subtask.
	Fixed        bool
	Num          int
	Lower, Upper int64
	// PageRows is the page size of a Unique partition.
	PageRows int
	// Parallelism is 'scan.parallelism', or 0 for the job's default.
	Parallelism int
}

// ParsePlan reads the scan options of t.
func ParsePlan(t *connectors.Table) (Plan, error) {
	o := t.Options
	p := Plan{Column: -1}
	var err error
	if p.Parallelism, err = connectors.Int(o, "scan.parallelism", 0, 1); err != nil {
		return p, err
	}
	if p.PageRows, err = connectors.Int(o, "scan.fetch-size", 0, 0); err != nil {
		return p, err
	}
	if p.PageRows == 0 {
		p.PageRows = DefaultPageRows
	}
	keys := []string{"scan.partition.column", "scan.partition.num", "scan.partition.lower-bound", "scan.partition.upper-bound"}
	var set []string
	for _, k := range keys {
		if _, ok := o[k]; ok {
			set = append(set, k)
		}
	}
	intKey := len(t.PrimaryKey) == 1 && t.Columns[t.PrimaryKey[0]].Type.IsInteger()
	switch {
	case len(set) == 0:
		if intKey {
			p.Column, p.Unique = t.PrimaryKey[0], true
		} else if p.Parallelism > 1 {
			return p, errors.New("option 'scan.parallelism' above 1 needs 'scan.partition.column' (with .num, .lower-bound and .upper-bound) or a single integer PRIMARY KEY, whose range is split")
		}
		return p, nil
	case len(set) < len(keys):
		return p, fmt.Errorf("options %s go together: %s given without the others", strings.Join(keys, ", "), strings.Join(set, ", "))
	}
	name := o["scan.partition.column"]
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			p.Column = i
		}
	}
	if p.Column < 0 {
		return p, fmt.Errorf("option 'scan.partition.column': the table has no column '%s'", name)
	}
	if ct := t.Columns[p.Column].Type; !ct.IsInteger() {
		return p, fmt.Errorf("option 'scan.partition.column': column '%s' is %s; partitions are ranges of an integer column", t.Columns[p.Column].Name, ct)
	}
	if p.Num, err = connectors.Int(o, "scan.partition.num", 0, 1); err != nil {
		return p, err
	}
	for _, b := range []struct {
		key string
		dst *int64
	}{{"scan.partition.lower-bound", &p.Lower}, {"scan.partition.upper-bound", &p.Upper}} {
		v, err := strconv.ParseInt(strings.TrimSpace(o[b.key]), 10, 64)
		if err != nil {
			return p, fmt.Errorf("option '%s' must be an integer, got '%s'", b.key, o[b.key])
		}
		*b.dst = v
	}
	if p.Lower > p.Upper {
		return p, fmt.Errorf("option 'scan.partition.lower-bound' (%d) is above 'scan.partition.upper-bound' (%d)", p.Lower, p.Upper)
	}
	p.Fixed = true
	p.Unique = len(t.PrimaryKey) == 1 && t.PrimaryKey[0] == p.Column
	return p, nil
}

// Range is a closed interval of a column's values.
type Range struct {
	Lo int64 `json:"lo"`
	Hi int64 `json:"hi"`
}

// Split divides [lo, hi] into n ranges of widths differing by at most
// one, in order; fewer when the interval holds fewer than n values.
// Range i is [lo + w*i/n, lo + w*(i+1)/n - 1] with w = hi - lo + 1,
// computed without overflow.
func Split(lo, hi int64, n int) []Range {
	if n < 1 || lo > hi {
		return nil
	}
	w := new(big.Int).Sub(big.NewInt(hi), big.NewInt(lo))
	w.Add(w, big.NewInt(1))
	if w.Cmp(big.NewInt(int64(n))) < 0 {
		n = int(w.Int64())
	}
	at := func(i int) *big.Int {
		v := new(big.Int).Mul(w, big.NewInt(int64(i)))
		v.Quo(v, big.NewInt(int64(n)))
		return v.Add(v, big.NewInt(lo))
	}
	out := make([]Range, n)
	for i := range out {
		to := at(i + 1)
		out[i] = Range{Lo: at(i).Int64(), Hi: to.Sub(to, big.NewInt(1)).Int64()}
	}
	return out
}

// Query is one read of a Reader: the rows whose Column lies in [Lo, Hi]
// (every row when Column < 0), in Column's order and at most Limit of
// them when Limit > 0.
type Query struct {
	Column int
	Lo, Hi int64
	Limit  int
}

// Reader runs a subtask's queries against the database.
//
// Lifecycle: Open once; then MinMax and Read any number of times, from
// one goroutine; then Close once, always (also when Open failed).
type Reader interface {
	// Open connects and checks the table against its declaration.
	Open(ctx context.Context) error
	// MinMax returns MIN and MAX of column col; ok is false when no row
	// has a value in it.
	MinMax(ctx context.Context, col int) (lo, hi int64, ok bool, err error)
	// Read calls emit with each row of q, converted to the table's types.
	Read(ctx context.Context, q Query, emit func(types.Row) error) error
	Close() error
}

// Source reads one subtask's partitions.
type Source struct {
	dataflow.BaseSource
	name                 string // the table's, for errors
	plan                 Plan
	r                    Reader
	subtask, parallelism int
	pos                  position
	// inside is true while a partition read by one statement is being
	// emitted: there is no position to save.
	inside bool
}

// position is the checkpointed progress: the subtask's partitions, fixed
// at the first run, how many are finished, and inside the next one
// (Unique plans) the last key emitted.
type position struct {
	Planned bool    `json:"planned"`
	Ranges  []Range `json:"ranges"`
	Done    int     `json:"done"`
	Started bool    `json:"started"`
	Last    int64   `json:"last"`
}

// NewSource makes subtask's Source of a table read by plan through r.
func NewSource(name string, plan Plan, r Reader, subtask, parallelism int) *Source {
	return &Source{name: name, plan: plan, r: r, subtask: subtask, parallelism: parallelism}
}

func (s *Source) Open(oc *dataflow.OpContext) error { return s.r.Open(oc.Context()) }
func (s *Source) Close() error                      { return s.r.Close() }

// SnapshotPosition saves the position, or declines inside a partition
// read by one statement.
func (s *Source) SnapshotPosition(int64) ([]byte, error) {
	if s.inside {
		if s.plan.Column < 0 {
			return nil, fmt.Errorf("source '%s' reads its table with one SELECT (no scan.partition.column and no single integer primary key) and cannot save a read position; checkpoints resume once it has finished", s.name)
		}
		return nil, fmt.Errorf("source '%s' is inside a partition of a column that is not the primary key, which has no read position; checkpoints resume after the partition", s.name)
	}
	return json.Marshal(s.pos)
}

func (s *Source) RestorePosition(b []byte) error {
	var p position
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("source '%s': corrupt position: %w", s.name, err)
	}
	s.pos = p
	return nil
}

// plan fixes the subtask's partitions.
func (s *Source) planRanges(ctx context.Context) error {
	var all []Range
	switch {
	case s.plan.Column < 0:
		all = []Range{{}} // the whole table, once
		if s.subtask != 0 {
			all = nil
		}
	case s.plan.Fixed:
		all = Split(s.plan.Lower, s.plan.Upper, s.plan.Num)
	default:
		lo, hi, ok, err := s.r.MinMax(ctx, s.plan.Column)
		if err != nil {
			return fmt.Errorf("source '%s': %w", s.name, err)
		}
		if ok {
			all = Split(lo, hi, s.parallelism)
		}
	}
	s.pos = position{Planned: true}
	for i := s.subtask; i < len(all); i += s.parallelism {
		s.pos.Ranges = append(s.pos.Ranges, all[i])
	}
	return nil
}

func (s *Source) Run(ctx context.Context, out dataflow.SourceOutput) error {
	if !s.pos.Planned {
		if err := s.planRanges(ctx); err != nil {
			return err
		}
	}
	for s.pos.Done < len(s.pos.Ranges) {
		var err error
		if s.plan.Unique {
			err = s.pages(ctx, out)
		} else {
			err = s.whole(ctx, out)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// pages reads the current partition in key order, a page at a time,
// from after the last key emitted.
func (s *Source) pages(ctx context.Context, out dataflow.SourceOutput) error {
	rg := s.pos.Ranges[s.pos.Done]
	for {
		from := rg.Lo
		if s.pos.Started {
			if s.pos.Last >= rg.Hi {
				break
			}
			from = s.pos.Last + 1
		}
		n := 0
		c := &dyntable.Chunk{}
		emit := func() error {
			// The position moves before Emit: SnapshotPosition runs inside it.
			s.pos.Started, s.pos.Last = true, c.Changes[c.Len()-1].Row[s.plan.Column].Int()
			err := out.Emit(c)
			c = &dyntable.Chunk{}
			return err
		}
		err := s.r.Read(ctx, Query{Column: s.plan.Column, Lo: from, Hi: rg.Hi, Limit: s.plan.PageRows}, func(r types.Row) error {
			n++
			c.Append(dyntable.Insert, r)
			if c.Len() == chunkRows {
				return emit()
			}
			return nil
		})
		if err == nil && c.Len() > 0 {
			err = emit()
		}
		if err != nil {
			return err
		}
		if n < s.plan.PageRows {
			break
		}
	}
	s.pos.Done++
	s.pos.Started = false
	return nil
}

// whole reads the current partition with one statement; the position
// moves past it before its last chunk is emitted.
func (s *Source) whole(ctx context.Context, out dataflow.SourceOutput) error {
	rg := s.pos.Ranges[s.pos.Done]
	s.inside = true
	c := &dyntable.Chunk{}
	err := s.r.Read(ctx, Query{Column: s.plan.Column, Lo: rg.Lo, Hi: rg.Hi}, func(r types.Row) error {
		if c.Len() == chunkRows {
			if err := out.Emit(c); err != nil {
				return err
			}
			c = &dyntable.Chunk{}
		}
		c.Append(dyntable.Insert, r)
		return nil
	})
	if err != nil {
		return err
	}
	s.pos.Done++
	s.inside = false
	if c.Len() > 0 {
		return out.Emit(c)
	}
	return nil
}

// Scan answers what the planner asks a dialect's bounded scan, the same
// for every dialect: insert-only, bounded, and one subtask unless the
// Plan splits the table. A dialect's scan embeds it and adds Create.
type Scan struct {
	Plan Plan
}

func (s *Scan) ChangelogMode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (s *Scan) Bounded() bool                         { return true }

// Parallelism is the Plan's, or 1 when the table is read by one SELECT.
func (s *Scan) Parallelism() int {
	if s.Plan.Column < 0 {
		return 1
	}
	return s.Plan.Parallelism
}
