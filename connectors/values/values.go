// Package values is the in-memory connector for tests and examples.
//
// As a source, a values table replays the rows added with
// INSERT INTO t VALUES .... Rows of all values tables of a session get
// one global sequence number, and the values sources of one job replay
// them strictly in that order, taking turns, so that at parallelism 1 a
// query over several values tables (a join, say) sees a deterministic
// interleaving. With 'changelog-mode' = 'all' the first value of each
// VALUES tuple is the row kind: '+I', '-U', '+U' or '-D'. A table with a
// WATERMARK gets one row per chunk, and the watermark assigner then emits
// a watermark after every row, so late-data behaviour is deterministic.
//
// As a sink, a values table materializes what it receives: by primary key
// if it has one (upsert), else as a multiset (retract). With
// 'sink-insert-only' = 'true' it is an append-only sink, and an updating
// query into it is rejected when planned. A later query over the table
// reads the materialized rows, then any rows inserted with VALUES.
package values

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func init() { connectors.Register(connector{}) }

type connector struct{}

func (connector) Name() string { return "values" }

func (connector) Options() []connectors.OptionDef {
	return []connectors.OptionDef{
		{Key: "changelog-mode", Kind: config.Enum, Enum: []string{"insert-only", "all", "upsert"}, Default: "insert-only", Description: "'insert-only'; 'all' when the first value of each inserted tuple is its row kind (+I, -U, +U, -D); 'upsert' for +I, +U, -D by primary key"},
		{Key: "sink-insert-only", Kind: config.Bool, Default: "false", Description: "'true' makes the table an append-only sink that rejects updating queries"},
		{Key: "bounded", Kind: config.Bool, Default: "true", Description: "the source ends after replaying its rows"},
	}
}

// session is the session-scoped storage of every values table.
type session struct {
	mu     sync.Mutex
	seq    int64
	tables map[*connectors.Table]*data
}

type entry struct {
	seq int64
	ch  dyntable.Change
}

// data is one table's content.
type data struct {
	log  []entry
	sink *dyntable.Table // what sinks wrote, nil if never a sink
}

func sessionOf(env *connectors.Env) *session {
	return env.Session.Get("values", func() any {
		return &session{tables: map[*connectors.Table]*data{}}
	}).(*session)
}

func (s *session) table(t *connectors.Table) *data {
	t = t.Identity()
	d := s.tables[t]
	if d == nil {
		d = &data{}
		s.tables[t] = d
	}
	return d
}

func (connector) NewScan(t *connectors.Table, env *connectors.Env) (connectors.ScanSource, error) {
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	mode := connectors.Option(t.Options, "changelog-mode", "insert-only")
	switch mode {
	case "insert-only", "all":
	case "upsert":
		if len(t.PrimaryKey) == 0 {
			return nil, fmt.Errorf("'changelog-mode' = 'upsert' needs a PRIMARY KEY on table '%s'", t.Name)
		}
	default:
		return nil, fmt.Errorf("option 'changelog-mode' must be 'insert-only', 'all' or 'upsert', got '%s'", mode)
	}
	if _, err := connectors.Bool(t.Options, "sink-insert-only", false); err != nil {
		return nil, err
	}
	if b, err := connectors.Bool(t.Options, "bounded", true); err != nil {
		return nil, err
	} else if !b {
		return nil, fmt.Errorf("option 'bounded' = '%s' is not supported: values tables are bounded", t.Options["bounded"])
	}
	return &scan{t: t, s: sessionOf(env), all: mode != "insert-only", upsert: mode == "upsert"}, nil
}

type scan struct {
	t      *connectors.Table
	s      *session
	all    bool // rows carry their kind
	upsert bool // ... and form an upsert stream: no -U
}

var _ connectors.ValuesInserter = (*scan)(nil)

func (sc *scan) ChangelogMode() dyntable.ChangelogMode {
	if sc.upsert {
		return dyntable.Upsert
	}
	if sc.all {
		return dyntable.Retract
	}
	return dyntable.InsertOnly
}

func (sc *scan) Parallelism() int { return 1 }
func (sc *scan) Bounded() bool    { return true }

// ValuesColumns returns the types a VALUES tuple must have: with
// changelog-mode 'all', a leading STRING row kind.
func (sc *scan) ValuesColumns() []types.Type {
	ts := sc.t.Types()
	if sc.all {
		ts = append([]types.Type{types.TypeString}, ts...)
	}
	return ts
}

// InsertValues appends rows typed as ValuesColumns says.
func (sc *scan) InsertValues(rows []types.Row) error {
	changes := make([]dyntable.Change, 0, len(rows))
	for _, r := range rows {
		ch := dyntable.Change{Kind: dyntable.Insert, Row: r}
		if sc.all {
			if r[0].IsNull() {
				return fmt.Errorf("row kind of a changelog-mode 'all' row must not be NULL")
			}
			k, err := dyntable.ParseRowKind(r[0].Str())
			if err != nil {
				return err
			}
			if sc.upsert && k == dyntable.UpdateBefore {
				return fmt.Errorf("a 'changelog-mode' = 'upsert' table takes +I, +U and -D rows, not -U")
			}
			ch = dyntable.Change{Kind: k, Row: r[1:]}
		}
		changes = append(changes, ch)
	}
	sc.s.mu.Lock()
	defer sc.s.mu.Unlock()
	d := sc.s.table(sc.t)
	for _, ch := range changes {
		sc.s.seq++
		d.log = append(d.log, entry{seq: sc.s.seq, ch: ch})
	}
	return nil
}

// snapshot returns the rows a job replays: first what sinks
// materialized (as inserts, before every VALUES row), then the log.
func (sc *scan) snapshot() []entry {
	sc.s.mu.Lock()
	defer sc.s.mu.Unlock()
	d := sc.s.table(sc.t)
	var es []entry
	if d.sink != nil {
		for _, r := range d.sink.Rows() {
			es = append(es, entry{seq: 0, ch: dyntable.Change{Kind: dyntable.Insert, Row: r}})
		}
	}
	return append(es, d.log...)
}

func (sc *scan) Create(subtask, parallelism int) (dataflow.Source, error) {
	return &source{scan: sc, perRow: sc.t.HasWatermark}, nil
}

// player makes the values sources of one job take turns in global
// sequence order.
type player struct {
	mu      sync.Mutex
	sources []*source
	order   []turn // merged entries, in replay order
	pos     int
	started bool
}

type turn struct {
	src *source
	e   entry
}

func (p *player) register(s *source) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sources = append(p.sources, s)
}

// start merges all registered sources' entries once.
func (p *player) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		return
	}
	p.started = true
	for _, s := range p.sources {
		for _, e := range s.entries {
			p.order = append(p.order, turn{s, e})
		}
	}
	// Stable: equal sequence numbers (the same table read twice) keep
	// registration order.
	sort.SliceStable(p.order, func(i, j int) bool { return p.order[i].e.seq < p.order[j].e.seq })
	p.signal()
}

// signal wakes the source whose turn it is, or everyone at the end.
func (p *player) signal() {
	if p.pos >= len(p.order) {
		for _, s := range p.sources {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
		return
	}
	select {
	case p.order[p.pos].src.wake <- struct{}{}:
	default:
	}
}

type source struct {
	dataflow.BaseSource
	scan    *scan
	perRow  bool
	entries []entry
	p       *player
	wake    chan struct{}
	emitted int64 // rows handed on, the checkpointed position
}

// SnapshotPosition implements dataflow.Source: how many of
// the table's rows this source has emitted.
func (s *source) SnapshotPosition(int64) ([]byte, error) {
	return binary.AppendVarint(nil, s.emitted), nil
}

// RestorePosition implements dataflow.Source: the first n
// rows are not replayed.
func (s *source) RestorePosition(pos []byte) error {
	n, k := binary.Varint(pos)
	if k <= 0 || k != len(pos) || n < 0 {
		return fmt.Errorf("values: corrupt position")
	}
	if n > int64(len(s.entries)) {
		return fmt.Errorf("values: position %d is beyond the table's %d rows", n, len(s.entries))
	}
	s.entries = s.entries[n:]
	s.emitted = n
	return nil
}

func (s *source) Open(ctx *dataflow.OpContext) error {
	s.entries = s.scan.snapshot()
	s.wake = make(chan struct{}, 1)
	s.p = ctx.Shared.Get("values-player", func() any { return &player{} }).(*player)
	s.p.register(s)
	return nil
}

func (s *source) Run(ctx context.Context, out dataflow.SourceOutput) error {
	s.p.start()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e := <-out.Control():
			// Barriers are taken while other sources have their turn.
			if err := out.Handle(e); err != nil {
				return err
			}
			continue
		case <-s.wake:
		}
		s.p.mu.Lock()
		if s.p.pos >= len(s.p.order) {
			s.p.signal() // pass the end on
			s.p.mu.Unlock()
			return nil
		}
		if s.p.order[s.p.pos].src != s {
			s.p.mu.Unlock()
			continue
		}
		// Take the run of consecutive turns that are ours.
		var c dyntable.Chunk
		for s.p.pos < len(s.p.order) && s.p.order[s.p.pos].src == s {
			c.Changes = append(c.Changes, s.p.order[s.p.pos].e.ch)
			s.p.pos++
			if s.perRow {
				break
			}
		}
		s.p.mu.Unlock()
		s.emitted += int64(len(c.Changes))
		// Emit before passing the turn on: the next source's rows must
		// enter the dataflow after ours.
		if err := out.Emit(&c); err != nil {
			return err
		}
		s.p.mu.Lock()
		s.p.signal()
		s.p.mu.Unlock()
	}
}

func (connector) NewSink(t *connectors.Table, env *connectors.Env) (connectors.TableSink, error) {
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	insertOnly, err := connectors.Bool(t.Options, "sink-insert-only", false)
	if err != nil {
		return nil, err
	}
	return &sink{t: t, s: sessionOf(env), insertOnly: insertOnly}, nil
}

type sink struct {
	t          *connectors.Table
	s          *session
	insertOnly bool
}

func (sk *sink) Encoding() dyntable.SinkEncoding {
	switch {
	case sk.insertOnly:
		return dyntable.AppendOnly
	case len(sk.t.PrimaryKey) > 0:
		return dyntable.UpsertEncoding
	}
	return dyntable.RetractEncoding
}

// UpdatesHint: only 'sink-insert-only' makes a values sink append-only.
func (sk *sink) UpdatesHint() string {
	return "without 'sink-insert-only' = 'true' a values table takes updates"
}

func (sk *sink) Parallelism() int { return 0 }

func (sk *sink) Create(subtask, parallelism int) (dataflow.Operator, error) {
	return &sinkOp{sk: sk}, nil
}

// sinkOp applies changes to the table's materialized content.
type sinkOp struct {
	dataflow.BaseOperator
	sk *sink
}

func (o *sinkOp) Open(*dataflow.OpContext) error {
	o.sk.s.mu.Lock()
	defer o.sk.s.mu.Unlock()
	d := o.sk.s.table(o.sk.t)
	if d.sink == nil {
		d.sink = dyntable.NewTable(o.sk.t.PrimaryKey)
	}
	return nil
}

func (o *sinkOp) ProcessChunk(_ int, c *dyntable.Chunk, _ dataflow.Collector) error {
	c, err := o.sk.Encoding().Encode(c, o.sk.t.PrimaryKey)
	if err != nil {
		return fmt.Errorf("values sink '%s': %w", o.sk.t.Name, err)
	}
	o.sk.s.mu.Lock()
	defer o.sk.s.mu.Unlock()
	d := o.sk.s.table(o.sk.t)
	for _, ch := range c.Changes {
		if err := d.sink.Apply(ch); err != nil {
			return fmt.Errorf("values sink '%s': %w", o.sk.t.Name, err)
		}
	}
	return nil
}

// Lookup makes an insert-only values table a lookup table
// (connectors.LookupSource), for tests of lookup joins: each join
// subtask takes the table's rows when it opens (sink rows, then VALUES
// rows) and indexes them by key. Rows inserted later are not seen.
func (sc *scan) Lookup(keys []int) (connectors.Lookuper, error) {
	if sc.all {
		return nil, fmt.Errorf("values table '%s' with 'changelog-mode' = '%s' cannot be looked up; only an insert-only one can", sc.t.Name, connectors.Option(sc.t.Options, "changelog-mode", ""))
	}
	return connectors.NewLoadingLookuper(keys, func(context.Context) ([]types.Row, error) {
		var rows []types.Row
		for _, e := range sc.snapshot() {
			rows = append(rows, e.ch.Row)
		}
		return rows, nil
	}), nil
}
