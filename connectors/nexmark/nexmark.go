// Package nexmark is the Nexmark benchmark's event generator as a source
// connector ('connector' = 'nexmark'). It produces the reference
// generator's Person, Auction and Bid events (see generator.go)
// deterministically from a seed.
//
// A table reads one kind of event:
//
//	CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT,
//	  channel STRING, url STRING, dateTime TIMESTAMP(3), extra STRING,
//	  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
//	WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '10000000');
//
// Columns are matched to event fields by name (case-insensitively); a
// table may declare any subset in any order. 'table' = 'all' reads every
// event with an event_type column and the fields flattened with prefixes
// (person_id, auction_seller, bid_price, ...), NULL where they do not
// apply, plus the common dateTime; or, as the reference's ddl_gen.sql
// declares it, with ROW columns person, auction and bid (ROW<id BIGINT,
// name VARCHAR, ...>), NULL for the other kinds of event.
//
// Every table over the same options sees the same event stream: the
// person table of a query holds exactly the persons its bid table's bids
// refer to. 'events.num' counts events of all kinds, as the reference
// does; a bid table of 'events.num' = '50' has 46 rows.
//
// Options: 'events.num' (0 or absent: unbounded), 'tps' (a wall-clock
// rate limit over all events; 0 or absent: as fast as possible),
// 'first-event.rate' (the nominal rate that spaces event times; defaults
// to 'tps' when that is set, else 10,000/s), 'next-event.rate' (the
// reference's; equal to the first rate, as the reference's DDL sets it),
// 'person.proportion', 'auction.proportion' and 'bid.proportion' (the
// reference's 1:3:46 by default), 'first-event.time', 'seed' and
// 'scan.parallelism'; of the reference's later options, 'max-emit-speed'
// (false paces events at the nominal rate), 'keep-alive' (the source
// stays running after its last event) and 'stop-at' (the events numbered
// below it only), while 'rate.shape', 'rate.period' and 'rate.limited'
// are accepted without effect (see Options). A column or ROW field named
// customTime, the later reference's name, is dateTime. With several subtasks, subtask i generates event
// numbers i, i+p, i+2p, ..., so each subtask's event time advances at the
// same pace and none holds the watermark back.
//
// The source's checkpoint position is the next event number; since each
// event depends only on the seed and its number, a restored source goes
// on with exactly the events an uninterrupted one would have produced.
package nexmark

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func init() { connectors.Register(connector{}) }

type connector struct{}

func (connector) Name() string { return "nexmark" }

// DefaultFirstEventTime is the first event's time unless
// 'first-event.time' says otherwise. The reference uses the wall clock;
// a fixed time makes every run, and every test, repeatable.
const DefaultFirstEventTime = "2024-01-01 00:00:00"

// DefaultRate is the reference's default nominal event rate.
const DefaultRate = 10000

func (connector) Options() []connectors.OptionDef {
	return []connectors.OptionDef{
		{Key: "table", Kind: config.Enum, Enum: []string{"person", "auction", "bid", "all"}, Default: "all", Description: "which events the table reads: 'person', 'auction', 'bid' or 'all'"},
		{Key: "events.num", Kind: config.Int, Default: "0", Description: "events to generate, of all kinds; 0 for unbounded"},
		{Key: "tps", Default: "0", Description: "wall-clock rate limit in events per second over all subtasks; 0 for as fast as possible"},
		{Key: "first-event.rate", Description: "nominal events per second that spaces event times (default: 'tps' if set, else 10000)"},
		{Key: "next-event.rate", Description: "the reference's rate after the first period; only a constant rate is supported, so it must equal 'first-event.rate' (as in the reference's own DDL)"},
		{Key: "person.proportion", Kind: config.Int, Min: 1, Default: "1", Description: "persons in each cycle of person.proportion + auction.proportion + bid.proportion events"},
		{Key: "auction.proportion", Kind: config.Int, Min: 1, Default: "3", Description: "auctions in each cycle of events, after the persons"},
		{Key: "bid.proportion", Kind: config.Int, Default: "46", Description: "bids in each cycle of events, after the auctions"},
		{Key: "first-event.time", Default: DefaultFirstEventTime, Description: "the first event's time, 'yyyy-MM-dd HH:mm:ss[.SSS]' or ms since the epoch"},
		{Key: "seed", Default: "0", Description: "seed of the generated stream"},
		{Key: "scan.parallelism", Kind: config.Int, Min: 1, Description: "the source's parallelism"},
		// The reference's NexmarkSourceOptions of later versions.
		{Key: "max-emit-speed", Kind: config.Bool, Default: "true", Description: "the reference's: true emits events as fast as possible; false paces them on the wall clock at 'first-event.rate' (unless 'tps' sets another rate)"},
		{Key: "keep-alive", Kind: config.Bool, Default: "false", Description: "the reference's: true keeps the source running, idle, after its last event instead of ending (the job then never finishes, as in the reference)"},
		{Key: "stop-at", Default: "-1", Description: "the reference's: generate only the events numbered below this (of all kinds, like 'events.num'); -1 for no stop. A job restored with a later or no 'stop-at' goes on from where it stopped"},
		{Key: "rate.shape", Kind: config.Enum, Enum: []string{"SQUARE", "SINE"}, Default: "SQUARE", Description: "the reference's shape of a varying rate; accepted, and without effect, since the rate is constant here ('next-event.rate' must equal 'first-event.rate')"},
		{Key: "rate.period", Kind: config.Duration, Default: "600 s", Description: "the reference's period of a varying rate; accepted, and without effect, since the rate is constant here"},
		{Key: "person.avg-size", Default: "200b", Description: "the reference's: the mean size a person event is padded to with its extra field, a memory size such as '200b'"},
		{Key: "auction.avg-size", Default: "500b", Description: "the reference's: the mean size an auction event is padded to with its extra field"},
		{Key: "bid.avg-size", Default: "100b", Description: "the reference's: the mean size a bid event is padded to with its extra field"},
		{Key: "bid.hot-ratio.auctions", Kind: config.Int, Min: 1, Default: "2", Description: "the reference's: a bid is for a hot auction with probability 1 - 1/ratio (1: never)"},
		{Key: "bid.hot-ratio.bidders", Kind: config.Int, Min: 1, Default: "4", Description: "the reference's: a bid is by a hot bidder with probability 1 - 1/ratio (1: never)"},
		{Key: "auction.hot-ratio.sellers", Kind: config.Int, Min: 1, Default: "4", Description: "the reference's: an auction is by a hot seller with probability 1 - 1/ratio (1: never)"},
		{Key: "rate.limited", Kind: config.Bool, Default: "false", Description: "the reference's; accepted and without effect, as in the reference's Flink source, which does not read it ('max-emit-speed' and 'tps' pace the events)"},
	}
}

// field is one generated column: its name, the kind of event it belongs
// to (-1: every kind) and how to read it from an event.
type field struct {
	name string
	kind int
	typ  types.TypeID
	get  func(e *Event) types.Value
}

func str(s string) types.Value { return types.NewString(s) }
func ms(t int64) types.Value   { return types.NewTimestamp(t * int64(time.Millisecond)) }
func i64(x int64) types.Value  { return types.NewInt(x) }

var personFields = []field{
	{"id", KindPerson, types.BigInt, func(e *Event) types.Value { return i64(e.Person.ID) }},
	{"name", KindPerson, types.String, func(e *Event) types.Value { return str(e.Person.Name) }},
	{"emailAddress", KindPerson, types.String, func(e *Event) types.Value { return str(e.Person.EmailAddress) }},
	{"creditCard", KindPerson, types.String, func(e *Event) types.Value { return str(e.Person.CreditCard) }},
	{"city", KindPerson, types.String, func(e *Event) types.Value { return str(e.Person.City) }},
	{"state", KindPerson, types.String, func(e *Event) types.Value { return str(e.Person.State) }},
	{"dateTime", KindPerson, types.Timestamp, func(e *Event) types.Value { return ms(e.Person.DateTime) }},
	{"extra", KindPerson, types.String, func(e *Event) types.Value { return str(e.Person.Extra) }},
}

var auctionFields = []field{
	{"id", KindAuction, types.BigInt, func(e *Event) types.Value { return i64(e.Auction.ID) }},
	{"itemName", KindAuction, types.String, func(e *Event) types.Value { return str(e.Auction.ItemName) }},
	{"description", KindAuction, types.String, func(e *Event) types.Value { return str(e.Auction.Description) }},
	{"initialBid", KindAuction, types.BigInt, func(e *Event) types.Value { return i64(e.Auction.InitialBid) }},
	{"reserve", KindAuction, types.BigInt, func(e *Event) types.Value { return i64(e.Auction.Reserve) }},
	{"dateTime", KindAuction, types.Timestamp, func(e *Event) types.Value { return ms(e.Auction.DateTime) }},
	{"expires", KindAuction, types.Timestamp, func(e *Event) types.Value { return ms(e.Auction.Expires) }},
	{"seller", KindAuction, types.BigInt, func(e *Event) types.Value { return i64(e.Auction.Seller) }},
	{"category", KindAuction, types.BigInt, func(e *Event) types.Value { return i64(e.Auction.Category) }},
	{"extra", KindAuction, types.String, func(e *Event) types.Value { return str(e.Auction.Extra) }},
}

var bidFields = []field{
	{"auction", KindBid, types.BigInt, func(e *Event) types.Value { return i64(e.Bid.Auction) }},
	{"bidder", KindBid, types.BigInt, func(e *Event) types.Value { return i64(e.Bid.Bidder) }},
	{"price", KindBid, types.BigInt, func(e *Event) types.Value { return i64(e.Bid.Price) }},
	{"channel", KindBid, types.String, func(e *Event) types.Value { return str(e.Bid.Channel) }},
	{"url", KindBid, types.String, func(e *Event) types.Value { return str(e.Bid.URL) }},
	{"dateTime", KindBid, types.Timestamp, func(e *Event) types.Value { return ms(e.Bid.DateTime) }},
	{"extra", KindBid, types.String, func(e *Event) types.Value { return str(e.Bid.Extra) }},
}

// allFields is the flattened combined table.
var allFields = func() []field {
	fs := []field{
		{"event_type", -1, types.Int, func(e *Event) types.Value { return i64(int64(e.Kind)) }},
		{"dateTime", -1, types.Timestamp, func(e *Event) types.Value {
			switch e.Kind {
			case KindPerson:
				return ms(e.Person.DateTime)
			case KindAuction:
				return ms(e.Auction.DateTime)
			}
			return ms(e.Bid.DateTime)
		}},
	}
	for _, g := range []struct {
		prefix string
		fs     []field
	}{{"person_", personFields}, {"auction_", auctionFields}, {"bid_", bidFields}} {
		for _, f := range g.fs {
			f.name = g.prefix + f.name
			fs = append(fs, f)
		}
	}
	return fs
}()

var tableFields = map[string][]field{"person": personFields, "auction": auctionFields, "bid": bidFields, "all": allFields}

type scan struct {
	table  string
	fields []field // one per declared column, in order
	// rowFields are, per declared column, the fields of its ROW (nil for
	// other columns), so that a nested projection can generate one of
	// them as a column of its own.
	rowFields [][]field
	kinds     [3]bool // the event kinds the table emits
	events    int64   // 0: unbounded
	tps       float64
	keepAlive bool
	stopAt    int64 // -1: no stop
	parallel  int
	cfg       Config
}

func (connector) NewScan(t *connectors.Table, _ *connectors.Env) (connectors.ScanSource, error) {
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	o := t.Options
	s := &scan{table: strings.ToLower(connectors.Option(o, "table", "all"))}
	avail, ok := tableFields[s.table]
	if !ok {
		return nil, fmt.Errorf("option 'table' must be 'person', 'auction', 'bid' or 'all', got '%s'", o["table"])
	}
	var err error
	if s.events, err = strconv.ParseInt(connectors.Option(o, "events.num", "0"), 10, 64); err != nil || s.events < 0 {
		return nil, fmt.Errorf("option 'events.num' must be a non-negative integer, got '%s'", o["events.num"])
	}
	if s.tps, err = strconv.ParseFloat(connectors.Option(o, "tps", "0"), 64); err != nil || s.tps < 0 {
		return nil, fmt.Errorf("option 'tps' must be a non-negative number, got '%s'", o["tps"])
	}
	s.cfg.Rate = DefaultRate
	if s.tps > 0 {
		s.cfg.Rate = s.tps
	}
	if v, ok := o["first-event.rate"]; ok {
		if s.cfg.Rate, err = strconv.ParseFloat(v, 64); err != nil || s.cfg.Rate <= 0 {
			return nil, fmt.Errorf("option 'first-event.rate' must be a positive number, got '%s'", v)
		}
	}
	if v, ok := o["next-event.rate"]; ok {
		if r, err := strconv.ParseFloat(v, 64); err != nil || r <= 0 {
			return nil, fmt.Errorf("option 'next-event.rate' must be a positive number, got '%s'", v)
		} else if r != s.cfg.Rate {
			return nil, fmt.Errorf("option 'next-event.rate' (%s) differs from the first event rate (%g): a varying event rate is not supported", v, s.cfg.Rate)
		}
	}
	if s.cfg.Proportions, err = parseProportions(o); err != nil {
		return nil, err
	}
	if s.cfg.Shape, err = parseShape(o); err != nil {
		return nil, err
	}
	if s.cfg.BaseTime, err = parseTime(connectors.Option(o, "first-event.time", DefaultFirstEventTime)); err != nil {
		return nil, err
	}
	if s.cfg.Seed, err = strconv.ParseInt(connectors.Option(o, "seed", "0"), 10, 64); err != nil {
		return nil, fmt.Errorf("option 'seed' must be an integer, got '%s'", o["seed"])
	}
	if s.parallel, err = connectors.Int(o, "scan.parallelism", 0, 1); err != nil {
		return nil, err
	}
	if s.keepAlive, err = connectors.Bool(o, "keep-alive", false); err != nil {
		return nil, err
	}
	if s.stopAt, err = strconv.ParseInt(connectors.Option(o, "stop-at", "-1"), 10, 64); err != nil || s.stopAt < -1 {
		return nil, fmt.Errorf("option 'stop-at' must be -1 or a non-negative integer, got '%s'", o["stop-at"])
	}
	maxSpeed, err := connectors.Bool(o, "max-emit-speed", true)
	if err != nil {
		return nil, err
	}
	if !maxSpeed && s.tps == 0 {
		// The reference's reader sleeps until each event's wall-clock
		// time: the nominal rate paces the events.
		s.tps = s.cfg.Rate
	}
	for _, c := range t.Columns {
		if f, sub, ok, err := rowField(s.table, c); ok || err != nil {
			if err != nil {
				return nil, err
			}
			s.fields = append(s.fields, f)
			s.rowFields = append(s.rowFields, sub)
			continue
		}
		f, ok := lookupField(avail, c.Name)
		if !ok {
			var names []string
			for _, f := range avail {
				names = append(names, f.name)
			}
			return nil, fmt.Errorf("nexmark table '%s' ('table' = '%s') has no field '%s'; its fields are %s",
				t.Name, s.table, c.Name, strings.Join(names, ", "))
		}
		if !compatible(c.Type, f.typ) {
			return nil, fmt.Errorf("column '%s' of nexmark table '%s' must be %s, not %s", c.Name, t.Name, f.typ, c.Type)
		}
		s.fields = append(s.fields, f)
		s.rowFields = append(s.rowFields, nil)
	}
	switch s.table {
	case "person":
		s.kinds[KindPerson] = true
	case "auction":
		s.kinds[KindAuction] = true
	case "bid":
		s.kinds[KindBid] = true
	default:
		s.kinds = [3]bool{true, true, true}
	}
	return s, nil
}

// rowFields are the reference's ROW columns of the combined table, as
// its ddl_gen.sql declares them: person, auction and bid.
var rowFields = map[string]struct {
	kind   int
	fields []field
}{"person": {KindPerson, personFields}, "auction": {KindAuction, auctionFields}, "bid": {KindBid, bidFields}}

// rowField is the field of a ROW column person, auction or bid of the
// 'all' table: the event's fields named by the ROW's fields (any subset,
// any order), NULL for the other kinds of event, and the fields of the
// ROW. ok is false for other columns.
func rowField(table string, c connectors.Column) (field, []field, bool, error) {
	rf, isRow := rowFields[strings.ToLower(c.Name)]
	if table != "all" || !isRow || c.Type.ID != types.RowT {
		return field{}, nil, false, nil
	}
	var sub []field
	for _, ft := range c.Type.Fields {
		f, ok := lookupField(rf.fields, ft.Name)
		if !ok {
			var names []string
			for _, f := range rf.fields {
				names = append(names, f.name)
			}
			return field{}, nil, true, fmt.Errorf("column '%s': a nexmark %s has no field '%s'; its fields are %s", c.Name, c.Name, ft.Name, strings.Join(names, ", "))
		}
		if !compatible(ft.Type, f.typ) {
			return field{}, nil, true, fmt.Errorf("field '%s' of column '%s' must be %s, not %s", ft.Name, c.Name, f.typ, ft.Type)
		}
		sub = append(sub, f)
	}
	return field{name: c.Name, kind: rf.kind, typ: types.RowT, get: func(e *Event) types.Value {
		vals := make([]types.Value, len(sub))
		for i := range sub {
			vals[i] = sub[i].get(e)
		}
		return types.NewRow(vals)
	}}, sub, true, nil
}

// lookupField finds the field name. customTime is another name of
// dateTime: the reference's later DDL (ddl_gen.sql, ddl_kafka.sql,
// ddl_views.sql) renamed the field, whose value its source sets by
// position whatever the name.
func lookupField(fs []field, name string) (field, bool) {
	if strings.EqualFold(name, "customTime") {
		name = "dateTime"
	}
	for _, f := range fs {
		if strings.EqualFold(f.name, name) {
			return f, true
		}
	}
	return field{}, false
}

func compatible(t types.Type, id types.TypeID) bool {
	switch id {
	case types.BigInt, types.Int:
		return t.ID == types.BigInt || (id == types.Int && t.ID == types.Int)
	default:
		return t.ID == id
	}
}

// parseProportions reads 'person.proportion', 'auction.proportion' and
// 'bid.proportion'. Persons and auctions must be generated (bids refer
// to them); bids may be left out.
func parseProportions(o map[string]string) (Proportions, error) {
	p := DefaultProportions
	for _, f := range []struct {
		key string
		dst *int64
		min int64
	}{{"person.proportion", &p.Person, 1}, {"auction.proportion", &p.Auction, 1}, {"bid.proportion", &p.Bid, 0}} {
		v, ok := o[f.key]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < f.min || n > 1_000_000 {
			return p, fmt.Errorf("option '%s' must be an integer from %d to 1000000, got '%s'", f.key, f.min, v)
		}
		*f.dst = n
	}
	return p, nil
}

// parseTime reads 'first-event.time': a timestamp in UTC or ms since the
// epoch.
func parseTime(v string) (int64, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("option 'first-event.time' must be 'yyyy-MM-dd HH:mm:ss[.SSS]' or ms since the epoch, got '%s'", v)
}

func (s *scan) ChangelogMode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (s *scan) Parallelism() int                      { return s.parallel }
func (s *scan) Bounded() bool                         { return (s.events > 0 || s.stopAt >= 0) && !s.keepAlive }

// generators shares one Generator (and its 10,000 precomputed channel
// URLs) among all subtasks and tables with the same configuration.
var generators sync.Map // Config -> *Generator

func generatorFor(cfg Config) *Generator {
	if g, ok := generators.Load(cfg); ok {
		return g.(*Generator)
	}
	g, _ := generators.LoadOrStore(cfg, NewGenerator(cfg))
	return g.(*Generator)
}

var _ connectors.ProjectionPushDown = (*scan)(nil)

func (s *scan) Create(subtask, parallelism int) (dataflow.Source, error) {
	return s.create(subtask, parallelism, s.fields), nil
}

// SupportsNestedProjection implements connectors.ProjectionPushDown: a
// field of a ROW column is generated as a column of its own, so a query
// that reads bid.price and bid.auction builds no ROW values.
func (s *scan) SupportsNestedProjection() bool { return true }

// CreateProjected implements connectors.ProjectionPushDown.
func (s *scan) CreateProjected(subtask, parallelism int, paths [][]int) (dataflow.Source, error) {
	fs := make([]field, len(paths))
	for i, p := range paths {
		if len(p) == 0 || len(p) > 2 || p[0] < 0 || p[0] >= len(s.fields) {
			return nil, fmt.Errorf("nexmark: projection %v of %d columns", paths, len(s.fields))
		}
		f := s.fields[p[0]]
		if len(p) == 2 {
			sub := s.rowFields[p[0]]
			if p[1] < 0 || p[1] >= len(sub) {
				return nil, fmt.Errorf("nexmark: projection %v: column '%s' has %d fields", p, f.name, len(sub))
			}
			f = sub[p[1]]
		}
		fs[i] = f
	}
	return s.create(subtask, parallelism, fs), nil
}

// create makes the source of one subtask generating the columns fields.
func (s *scan) create(subtask, parallelism int, fields []field) *source {
	end := s.events
	if end == 0 {
		end = -1
	}
	if s.stopAt >= 0 && (end < 0 || s.stopAt < end) {
		end = s.stopAt
	}
	return &source{s: s, fields: fields, gen: generatorFor(s.cfg), next: int64(subtask), first: int64(subtask),
		stride: int64(parallelism), end: end, rps: s.tps / float64(parallelism)}
}

// chunkRows is how many rows a source emits per chunk when it runs as
// fast as it can; a chunk covers at most maxChunkSpan event numbers, so
// that the watermark of a table of rare events (persons are 1 in 50)
// still advances steadily.
const (
	chunkRows    = 1024
	maxChunkSpan = 64 * chunkRows
)

// source generates event numbers first, first+stride, ... below end.
type source struct {
	dataflow.BaseSource
	s                   *scan
	fields              []field // the columns generated, in row order
	gen                 *Generator
	next, first, stride int64
	end                 int64 // -1: unbounded
	rps                 float64
}

// SnapshotPosition implements dataflow.Source: the next event
// number this subtask generates.
func (g *source) SnapshotPosition(int64) ([]byte, error) {
	return binary.AppendVarint(nil, g.next), nil
}

// RestorePosition implements dataflow.Source.
func (g *source) RestorePosition(pos []byte) error {
	n, k := binary.Varint(pos)
	if k <= 0 || k != len(pos) {
		return fmt.Errorf("nexmark: corrupt position")
	}
	if n < g.first || (n-g.first)%g.stride != 0 || (g.end >= 0 && n > g.end+g.stride) {
		return fmt.Errorf("nexmark: position %d is not one of this subtask's events (%d + k*%d); was the job rescaled?", n, g.first, g.stride)
	}
	g.next = n
	return nil
}

func (g *source) done() bool { return g.end >= 0 && g.next >= g.end }

func (g *source) Run(ctx context.Context, out dataflow.SourceOutput) error {
	start := time.Now()
	var covered int64 // event numbers covered, for the rate limit
	width := len(g.fields)
	var ev Event
	var arena Arena
	for !g.done() {
		if err := ctx.Err(); err != nil {
			return err
		}
		span := int64(maxChunkSpan) // event numbers this chunk may cover
		if g.rps > 0 {
			// A rate-limited source covers a fixed number of event
			// numbers per chunk: about ten chunks a second at slow rates.
			span = min(chunkRows, max(1, int64(g.rps/10)))
			if ahead := time.Duration(float64(covered+span)/g.rps*float64(time.Second)) - time.Since(start); ahead > 0 {
				// Barriers and idleness checks are taken while waiting.
				if err := out.Sleep(ctx, ahead); err != nil {
					return err
				}
			}
		}
		// Count this chunk's rows first, so that the values are one
		// allocation of exactly the size needed.
		rows, last := 0, g.next
		for k := int64(0); k < span && rows < chunkRows && (g.end < 0 || last < g.end); k++ {
			if g.s.kinds[g.gen.KindOf(last)] {
				rows++
			}
			last += g.stride
		}
		vals := make([]types.Value, rows*width)
		changes := make([]dyntable.Change, 0, rows)
		for ; g.next < last; g.next += g.stride {
			covered++
			if !g.s.kinds[g.gen.KindOf(g.next)] {
				continue
			}
			g.gen.Event(g.next, &ev, &arena)
			i := len(changes)
			row := types.Row(vals[i*width : (i+1)*width : (i+1)*width])
			for j := range g.fields {
				f := &g.fields[j]
				if f.kind < 0 || f.kind == ev.Kind {
					row[j] = f.get(&ev)
				}
			}
			changes = append(changes, dyntable.Change{Kind: dyntable.Insert, Row: row})
		}
		if len(changes) == 0 {
			continue
		}
		if err := out.Emit(&dyntable.Chunk{Changes: changes}); err != nil {
			return err
		}
	}
	if g.s.keepAlive {
		// The reference's keep-alive: no more events, but no end of
		// input either; checkpoints go on until the job is stopped.
		for {
			if err := out.Sleep(ctx, time.Hour); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseShape reads the event sizes and hot ratios (see Shape).
func parseShape(o map[string]string) (Shape, error) {
	sh := DefaultShape
	for _, f := range []struct {
		key string
		v   *int
	}{{"person.avg-size", &sh.PersonAvgSize}, {"auction.avg-size", &sh.AuctionAvgSize}, {"bid.avg-size", &sh.BidAvgSize}} {
		v, ok := o[f.key]
		if !ok {
			continue
		}
		n, err := config.ParseMemorySize(v)
		if err != nil {
			return sh, fmt.Errorf("option '%s': %v", f.key, err)
		}
		if n > 1<<20 {
			return sh, fmt.Errorf("option '%s' is %s; an event of more than 1 MiB is not supported", f.key, v)
		}
		*f.v = max(int(n), 1) // 0 would mean the default; 1 byte pads nothing either
	}
	var err error
	for _, f := range []struct {
		key string
		v   *int
	}{{"bid.hot-ratio.auctions", &sh.HotAuctionRatio}, {"bid.hot-ratio.bidders", &sh.HotBiddersRatio}, {"auction.hot-ratio.sellers", &sh.HotSellersRatio}} {
		if *f.v, err = connectors.Int(o, f.key, *f.v, 1); err != nil {
			return sh, err
		}
	}
	return sh, nil
}
