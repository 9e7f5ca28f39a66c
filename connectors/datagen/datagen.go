// Package datagen generates rows, with Flink's datagen options:
// 'rows-per-second', 'number-of-rows', and per field
// 'fields.<f>.kind' = 'random' | 'sequence' with 'min'/'max',
// 'start'/'end', 'length', 'max-past' and 'null-rate'.
//
// A sequence field makes the source bounded: it ends when the sequence is
// exhausted. With several subtasks, the sequence is split into contiguous
// ranges and number-of-rows evenly. Random fields are drawn from a
// generator seeded by the table name and subtask, so a run is repeatable.
package datagen

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func init() { connectors.Register(connector{}) }

type connector struct{}

func (connector) Name() string { return "datagen" }

func (connector) Options() []connectors.OptionDef {
	return []connectors.OptionDef{
		{Key: "rows-per-second", Default: "10000", Description: "rows per second over all subtasks; 0 for as fast as possible"},
		{Key: "number-of-rows", Kind: config.Int, Description: "total rows to emit; unbounded when unset"},
		{Key: "scan.parallelism", Kind: config.Int, Min: 1, Description: "the source's parallelism"},
		{Key: "fields.#.kind", Prefix: true, Kind: config.Enum, Enum: []string{"random", "sequence"}, Default: "random", Description: "'random' or 'sequence'"},
		{Key: "fields.#.min", Prefix: true, Description: "smallest random value"},
		{Key: "fields.#.max", Prefix: true, Description: "largest random value"},
		{Key: "fields.#.max-past", Prefix: true, Kind: config.Duration, Description: "largest distance into the past of a random TIMESTAMP, e.g. '5s' or '1000' (ms)"},
		{Key: "fields.#.length", Prefix: true, Kind: config.Int, Default: "100", Description: "length of a random STRING"},
		{Key: "fields.#.start", Prefix: true, Description: "first value of a sequence"},
		{Key: "fields.#.end", Prefix: true, Description: "last value of a sequence"},
		{Key: "fields.#.null-rate", Prefix: true, Default: "0", Description: "fraction of NULLs in a random field"},
	}
}

type field struct {
	name       string
	t          types.Type
	sequence   bool
	min, max   float64
	start, end int64
	length     int
	maxPast    time.Duration
	nullRate   float64

	// randInt is set for a random INT/BIGINT field without NULLs, which
	// the generator draws inline: lo + [0, span) or, with full, any int64.
	randInt  bool
	full     bool
	lo, span int64
}

type scan struct {
	t        *connectors.Table
	fields   []field
	rps      float64
	rows     int64 // -1 unbounded
	seqLen   int64 // -1 when no sequence field
	parallel int
}

func (connector) NewScan(t *connectors.Table, _ *connectors.Env) (connectors.ScanSource, error) {
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	o := t.Options
	s := &scan{t: t, rows: -1, seqLen: -1}
	var err error
	if s.rps, err = strconv.ParseFloat(connectors.Option(o, "rows-per-second", "10000"), 64); err != nil || s.rps < 0 {
		return nil, fmt.Errorf("option 'rows-per-second' must be a non-negative number, got '%s'", o["rows-per-second"])
	}
	if v, ok := o["number-of-rows"]; ok {
		if s.rows, err = strconv.ParseInt(v, 10, 64); err != nil || s.rows < 0 {
			return nil, fmt.Errorf("option 'number-of-rows' must be a non-negative integer, got '%s'", v)
		}
	}
	if s.parallel, err = connectors.Int(o, "scan.parallelism", 0, 1); err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, c := range t.Columns {
		known[c.Name] = true
		f, err := parseField(c, o)
		if err != nil {
			return nil, err
		}
		if f.sequence {
			n := f.end - f.start + 1
			if s.seqLen < 0 || n < s.seqLen {
				s.seqLen = n
			}
		}
		s.fields = append(s.fields, f)
	}
	for k := range o {
		rest, ok := strings.CutPrefix(k, "fields.")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(rest, '.'); i < 0 || !known[rest[:i]] {
			return nil, fmt.Errorf("option '%s' names no column of table '%s'", k, t.Name)
		}
	}
	return s, nil
}

func parseField(c connectors.Column, o map[string]string) (field, error) {
	f := field{name: c.Name, t: c.Type, length: 100}
	key := func(s string) string { return "fields." + c.Name + "." + s }
	num := func(s string, def float64) (float64, error) {
		v, ok := o[key(s)]
		if !ok {
			return def, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, fmt.Errorf("option '%s' must be a number, got '%s'", key(s), v)
		}
		return x, nil
	}
	var err error
	switch kind := connectors.Option(o, key("kind"), "random"); kind {
	case "random":
	case "sequence":
		f.sequence = true
		if !c.Type.IsInteger() && c.Type.ID != types.String && c.Type.ID != types.Decimal && c.Type.ID != types.Double {
			return f, fmt.Errorf("column '%s' of type %s cannot be a sequence", c.Name, c.Type)
		}
		st, ok1 := o[key("start")]
		en, ok2 := o[key("end")]
		if !ok1 || !ok2 {
			return f, fmt.Errorf("sequence column '%s' needs options '%s' and '%s'", c.Name, key("start"), key("end"))
		}
		if f.start, err = strconv.ParseInt(st, 10, 64); err != nil {
			return f, fmt.Errorf("option '%s' must be an integer, got '%s'", key("start"), st)
		}
		if f.end, err = strconv.ParseInt(en, 10, 64); err != nil {
			return f, fmt.Errorf("option '%s' must be an integer, got '%s'", key("end"), en)
		}
		if f.end < f.start {
			return f, fmt.Errorf("sequence column '%s': end %d is before start %d", c.Name, f.end, f.start)
		}
	default:
		return f, fmt.Errorf("option '%s' must be 'random' or 'sequence', got '%s'", key("kind"), kind)
	}
	defMin, defMax := 0.0, 0.0
	switch c.Type.ID {
	case types.Int:
		defMin, defMax = math.MinInt32, math.MaxInt32
	case types.BigInt:
		defMin, defMax = math.MinInt64, math.MaxInt64
	case types.Double, types.Decimal:
		defMin, defMax = 0, 1
	}
	if f.min, err = num("min", defMin); err != nil {
		return f, err
	}
	if f.max, err = num("max", defMax); err != nil {
		return f, err
	}
	if f.max < f.min {
		return f, fmt.Errorf("column '%s': max %v is below min %v", c.Name, f.max, f.min)
	}
	l, err := num("length", 100)
	if err != nil {
		return f, err
	}
	f.length = int(l)
	if f.nullRate, err = num("null-rate", 0); err != nil {
		return f, err
	}
	if !f.sequence && f.nullRate <= 0 && (c.Type.ID == types.Int || c.Type.ID == types.BigInt) {
		// As value draws them.
		lo, hi := clampInt(f.min), clampInt(f.max)
		f.randInt, f.lo = true, lo
		if hi-lo < 0 || hi-lo == math.MaxInt64 {
			f.full = true
		} else {
			f.span = hi - lo + 1
		}
	}
	if f.maxPast, err = connectors.Duration(o, key("max-past"), 0); err != nil {
		return f, err
	}
	return f, nil
}

func (s *scan) ChangelogMode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (s *scan) Parallelism() int                      { return s.parallel }
func (s *scan) Bounded() bool                         { return s.rows >= 0 || s.seqLen >= 0 }

func (s *scan) Create(subtask, parallelism int) (dataflow.Source, error) {
	// This subtask's share: rows [from, to) of the whole output.
	total := s.rows
	if s.seqLen >= 0 && (total < 0 || s.seqLen < total) {
		total = s.seqLen
	}
	from, to := int64(0), int64(-1)
	if total >= 0 {
		from = total * int64(subtask) / int64(parallelism)
		to = total * int64(subtask+1) / int64(parallelism)
	}
	h := fnv.New64a()
	h.Write([]byte(s.t.Name))
	return &source{s: s, next: from, from: from, to: to, rps: s.rps / float64(parallelism),
		rng: rand.New(rand.NewPCG(h.Sum64(), uint64(subtask)))}, nil
}

const chunkRows = 1024

// clampInt converts an option bound to int64; float64 cannot hold
// MaxInt64 exactly, and an out-of-range conversion is undefined in Go.
func clampInt(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

type source struct {
	dataflow.BaseSource
	s        *scan
	next, to int64
	from     int64
	rps      float64
	rng      *rand.Rand
}

// SnapshotPosition implements dataflow.Source: the index of
// the next row. Random fields are drawn afresh after a restore, so a
// restored random source is not bit-for-bit the one that would have run.
func (g *source) SnapshotPosition(int64) ([]byte, error) {
	return binary.AppendVarint(nil, g.next), nil
}

// RestorePosition implements dataflow.Source.
func (g *source) RestorePosition(pos []byte) error {
	n, k := binary.Varint(pos)
	if k <= 0 || k != len(pos) {
		return fmt.Errorf("datagen: corrupt position")
	}
	if n < g.from || (g.to >= 0 && n > g.to) {
		return fmt.Errorf("datagen: position %d is outside this subtask's rows [%d, %d)", n, g.from, g.to)
	}
	g.next = n
	return nil
}

func (g *source) Run(ctx context.Context, out dataflow.SourceOutput) error {
	start := time.Now()
	var emitted int64
	width := len(g.s.fields)
	for g.to < 0 || g.next < g.to {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int64(chunkRows)
		if g.rps > 0 && g.rps < 10*chunkRows {
			// Small rates emit about ten chunks a second, so rows (and the
			// barriers that follow chunks) are not held back for long.
			n = max(1, int64(g.rps/10))
		}
		if g.to >= 0 && g.to-g.next < n {
			n = g.to - g.next
		}
		if g.rps > 0 {
			// Never get ahead of the configured rate.
			if ahead := time.Duration(float64(emitted+n)/g.rps*float64(time.Second)) - time.Since(start); ahead > 0 {
				// Barriers and idleness checks are taken while waiting.
				if err := out.Sleep(ctx, ahead); err != nil {
					return err
				}
			}
		}
		vals := make([]types.Value, int(n)*width)
		c := &dyntable.Chunk{Changes: make([]dyntable.Change, n)}
		now := time.Now()
		for i := int64(0); i < n; i++ {
			row := types.Row(vals[int(i)*width : int(i+1)*width : int(i+1)*width])
			for j := range g.s.fields {
				switch f := &g.s.fields[j]; {
				case !f.randInt:
					row[j].Set(g.value(f, g.next+i, now))
				case f.full:
					row[j].Set(types.NewInt(int64(g.rng.Uint64())))
				default:
					row[j].Set(types.NewInt(f.lo + g.rng.Int64N(f.span)))
				}
			}
			c.Changes[i] = dyntable.Change{Kind: dyntable.Insert, Row: row}
		}
		g.next += n
		emitted += n
		if err := out.Emit(c); err != nil {
			return err
		}
	}
	return nil
}

func (g *source) value(f *field, idx int64, now time.Time) types.Value {
	if f.sequence {
		x := f.start + idx
		switch f.t.ID {
		case types.String:
			return types.NewString(strconv.FormatInt(x, 10))
		case types.Double:
			return types.NewFloat(float64(x))
		case types.Decimal:
			return types.NewDecimal(apd.New(x, 0))
		}
		return types.NewInt(x)
	}
	if f.nullRate > 0 && g.rng.Float64() < f.nullRate {
		return types.NullValue
	}
	switch f.t.ID {
	case types.Boolean:
		return types.NewBool(g.rng.IntN(2) == 1)
	case types.Int, types.BigInt:
		lo, hi := clampInt(f.min), clampInt(f.max)
		if hi-lo < 0 || hi-lo == math.MaxInt64 { // the full range
			return types.NewInt(int64(g.rng.Uint64()))
		}
		return types.NewInt(lo + g.rng.Int64N(hi-lo+1))
	case types.Double:
		return types.NewFloat(f.min + g.rng.Float64()*(f.max-f.min))
	case types.Decimal:
		x := f.min + g.rng.Float64()*(f.max-f.min)
		d := new(apd.Decimal)
		_, _ = d.SetFloat64(x)
		q := new(apd.Decimal)
		_, _ = apd.BaseContext.WithPrecision(38).Quantize(q, d, -int32(f.t.Scale))
		return types.NewDecimal(q)
	case types.String:
		const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
		b := make([]byte, f.length)
		for i := range b {
			b[i] = letters[g.rng.IntN(len(letters))]
		}
		return types.NewString(string(b))
	case types.Date:
		return types.NewDate(now.Unix() / 86400)
	case types.Time: // the time of day now, as Flink's datagen
		tod := types.NewTimestampFromTime(now).Timestamp() % types.NanosPerDay
		if tod < 0 {
			tod += types.NanosPerDay
		}
		return types.NewTime(tod)
	case types.Timestamp:
		t := now
		if f.maxPast > 0 {
			t = t.Add(-time.Duration(g.rng.Int64N(int64(f.maxPast))))
		}
		return types.NewTimestampFromTime(t)
	}
	return types.NullValue
}
