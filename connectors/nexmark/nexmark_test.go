package nexmark

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func genAll(g *Generator, n int64) []Event {
	var a Arena
	out := make([]Event, n)
	for i := range out {
		g.Event(int64(i), &out[i], &a)
	}
	return out
}

// TestGeneratorShape checks the reference's proportions, id sequences,
// value domains and hot-key ratios on 100,000 events.
func TestGeneratorShape(t *testing.T) {
	g := NewGenerator(Config{Seed: 7, BaseTime: 1_700_000_000_000, Rate: 10000})
	const n = 100_000
	evs := genAll(g, n)
	var counts [3]int
	var nextPerson, nextAuction int64 = FirstPersonID, FirstAuctionID
	hotAuction, hotBidder, hotSeller, hotChannel, bids, auctions := 0, 0, 0, 0, 0, 0
	var minPrice, maxPrice int64 = math.MaxInt64, 0
	var extraLen int
	states := map[string]bool{}
	for i, e := range evs {
		counts[e.Kind]++
		// Event time: base + i * 100us, truncated to ms.
		var ts int64
		switch e.Kind {
		case KindPerson:
			p := e.Person
			ts = p.DateTime
			if p.ID != nextPerson {
				t.Fatalf("event %d: person id %d, want %d", i, p.ID, nextPerson)
			}
			nextPerson++
			states[p.State] = true
			if !strings.Contains(p.EmailAddress, "@") || !strings.HasSuffix(p.EmailAddress, ".com") || len(p.CreditCard) != 19 {
				t.Fatalf("event %d: malformed person %+v", i, p)
			}
			if sz := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State) + len(p.Extra); sz < 150 || sz > 250 {
				t.Fatalf("event %d: person of %d bytes, want about 200", i, sz)
			}
		case KindAuction:
			a := e.Auction
			ts = a.DateTime
			auctions++
			if a.ID != nextAuction {
				t.Fatalf("event %d: auction id %d, want %d", i, a.ID, nextAuction)
			}
			nextAuction++
			if a.Category < 10 || a.Category > 14 || a.Expires <= a.DateTime || a.Reserve < a.InitialBid {
				t.Fatalf("event %d: malformed auction %+v", i, a)
			}
			// A seller is an existing person or one of the next 10.
			if a.Seller < FirstPersonID || a.Seller >= nextPerson+personIDLead {
				t.Fatalf("event %d: seller %d outside [1000, %d)", i, a.Seller, nextPerson+personIDLead)
			}
			if (a.Seller-FirstPersonID)%100 == 0 {
				hotSeller++
			}
		case KindBid:
			b := e.Bid
			ts = b.DateTime
			bids++
			if b.Auction < FirstAuctionID || b.Auction >= nextAuction+auctionIDLead {
				t.Fatalf("event %d: bid on auction %d outside [1000, %d)", i, b.Auction, nextAuction+auctionIDLead)
			}
			if (b.Auction-FirstAuctionID)%100 == 0 {
				hotAuction++
			}
			if (b.Bidder-FirstPersonID)%100 == 1 {
				hotBidder++
			}
			for _, c := range HotChannels {
				if b.Channel == c {
					hotChannel++
				}
			}
			minPrice, maxPrice = min(minPrice, b.Price), max(maxPrice, b.Price)
			extraLen += len(b.Extra)
			if !strings.HasPrefix(b.URL, "https://www.nexmark.com/") {
				t.Fatalf("event %d: url %q", i, b.URL)
			}
		}
		if want := g.Config().BaseTime + int64(i)/10; ts != want {
			t.Fatalf("event %d: time %d, want %d", i, ts, want)
		}
	}
	// 1:3:46 exactly, since 100,000 is a multiple of 50.
	if counts != [3]int{2000, 6000, 92000} {
		t.Fatalf("kinds %v, want [2000 6000 92000]", counts)
	}
	// Hot auctions are picked with probability 1/2, plus the uniform
	// picks that land on a hot id; hot bidders and sellers 3/4.
	ratio := func(name string, got, of int, lo, hi float64) {
		t.Helper()
		if r := float64(got) / float64(of); r < lo || r > hi {
			t.Errorf("%s: %.3f, want in [%.2f, %.2f]", name, r, lo, hi)
		}
	}
	ratio("hot auctions", hotAuction, bids, 0.48, 0.53)
	ratio("hot bidders", hotBidder, bids, 0.73, 0.78)
	ratio("hot sellers", hotSeller, auctions, 0.72, 0.78)
	ratio("hot channels", hotChannel, bids, 0.48, 0.52)
	if len(states) != 6 {
		t.Errorf("states %v, want the reference's 6", states)
	}
	// Prices are 10^U(0,6) * 100 cents.
	if minPrice < 100 || maxPrice > 100_000_000 || minPrice > 200 || maxPrice < 50_000_000 {
		t.Errorf("prices in [%d, %d], want about [100, 100000000]", minPrice, maxPrice)
	}
	// Bids are 100 bytes on average: 32 of fields, 68 of extra (±20%).
	if avg := float64(extraLen) / float64(bids); avg < 66 || avg > 70 {
		t.Errorf("average bid extra %.1f bytes, want about 68", avg)
	}
}

// TestGeneratorDeterministic checks that an event depends only on the
// seed and its number.
func TestGeneratorDeterministic(t *testing.T) {
	cfg := Config{Seed: 42, BaseTime: 0, Rate: 1000}
	a := genAll(NewGenerator(cfg), 2000)
	b := genAll(NewGenerator(cfg), 2000)
	var arena Arena
	g := NewGenerator(cfg)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("event %d differs between two generators", i)
		}
	}
	// Out of order, each event is still the same.
	for i := len(a) - 1; i >= 0; i -= 7 {
		var e Event
		g.Event(int64(i), &e, &arena)
		if e != a[i] {
			t.Fatalf("event %d generated alone differs", i)
		}
	}
	c := genAll(NewGenerator(Config{Seed: 43, Rate: 1000}), 2000)
	same := 0
	for i := range a {
		if a[i].Kind == KindBid && a[i].Bid.Price == c[i].Bid.Price {
			same++
		}
	}
	if same > 100 {
		t.Fatalf("seeds 42 and 43 agree on %d bid prices", same)
	}
}

// collect is a SourceOutput that keeps rows and can stop the source.
type collect struct {
	dataflow.NoControl
	rows   []string
	raw    []types.Row
	src    *source
	stopAt int // stop after this many chunks (0: never)
	chunks int
	pos    []byte
	cancel context.CancelFunc
}

func (c *collect) Emit(ch *dyntable.Chunk) error {
	for _, x := range ch.Changes {
		c.rows = append(c.rows, fmt.Sprint(x.Row))
		c.raw = append(c.raw, x.Row)
	}
	c.chunks++
	if c.stopAt > 0 && c.chunks == c.stopAt {
		p, err := c.src.SnapshotPosition(0)
		if err != nil {
			return err
		}
		c.pos = p
		c.cancel()
		return context.Canceled
	}
	return nil
}
func (c *collect) EmitWatermark(int64) error { return nil }

func newTestScan(t *testing.T, opts map[string]string, cols ...connectors.Column) *scan {
	t.Helper()
	opts["connector"] = "nexmark"
	sc, err := connector{}.NewScan(&connectors.Table{Name: "t", Columns: cols, Options: opts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc.(*scan)
}

func run(t *testing.T, s *scan, subtask, par int, stopAt int, restore []byte) *collect {
	t.Helper()
	src, err := s.Create(subtask, par)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &collect{src: src.(*source), stopAt: stopAt, cancel: cancel}
	if restore != nil {
		if err := src.(*source).RestorePosition(restore); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.Run(ctx, c); err != nil && stopAt == 0 {
		t.Fatal(err)
	}
	return c
}

var bidCols = []connectors.Column{
	{Name: "price", Type: types.TypeBigInt}, {Name: "AUCTION", Type: types.TypeBigInt},
	{Name: "dateTime", Type: types.TimestampType(3)}, {Name: "url", Type: types.TypeString},
}

// TestSourceSplitsAndRestores checks that two subtasks together, and a
// source stopped and restored from its position, produce exactly the rows
// of one uninterrupted source.
func TestSourceSplitsAndRestores(t *testing.T) {
	opts := map[string]string{"table": "bid", "events.num": "10000", "seed": "3"}
	s := newTestScan(t, opts, bidCols...)
	whole := run(t, s, 0, 1, 0, nil).rows
	if len(whole) != 9200 {
		t.Fatalf("%d bids from 10,000 events, want 9,200", len(whole))
	}
	count := map[string]int{}
	for _, r := range whole {
		count[r]++
	}
	for sub := range 2 {
		for _, r := range run(t, s, sub, 2, 0, nil).rows {
			count[r]--
		}
	}
	for r, c := range count {
		if c != 0 {
			t.Fatalf("row %s: %+d between one source and two subtasks", r, c)
		}
	}
	stopped := run(t, s, 0, 1, 3, nil)
	rest := run(t, s, 0, 1, 0, stopped.pos)
	got := append(stopped.rows, rest.rows...)
	if len(got) != len(whole) {
		t.Fatalf("restored run has %d rows, want %d", len(got), len(whole))
	}
	for i := range got {
		if got[i] != whole[i] {
			t.Fatalf("row %d after restore: %s, want %s", i, got[i], whole[i])
		}
	}
}

// TestAllTable checks the flattened combined table: every event, with
// NULL in the fields of the other kinds.
func TestAllTable(t *testing.T) {
	s := newTestScan(t, map[string]string{"events.num": "50"},
		connectors.Column{Name: "event_type", Type: types.TypeInt},
		connectors.Column{Name: "person_id", Type: types.TypeBigInt},
		connectors.Column{Name: "auction_seller", Type: types.TypeBigInt},
		connectors.Column{Name: "bid_bidder", Type: types.TypeBigInt})
	rows := run(t, s, 0, 1, 0, nil).raw
	if len(rows) != 50 {
		t.Fatalf("%d rows, want 50", len(rows))
	}
	// Event 0 is person 1000, events 1-3 auctions, 4-49 bids: each row
	// has its kind's field set and the other two NULL.
	for i, r := range rows {
		kind := KindOf(int64(i))
		if r[0].Int() != int64(kind) {
			t.Fatalf("row %d: event_type %d, want %d", i, r[0].Int(), kind)
		}
		for k := range 3 {
			if r[1+k].IsNull() != (k != kind) {
				t.Fatalf("row %d (kind %d): field %d null=%v", i, kind, 1+k, r[1+k].IsNull())
			}
		}
	}
	if r := rows[0]; r[1].Int() != FirstPersonID {
		t.Fatalf("first person id %d, want 1000", r[1].Int())
	}
}

// TestAllTableRows reads the combined table with the reference's ROW
// columns: each event fills its kind's row, the others are NULL, and the
// row's fields are the flattened table's values.
func TestAllTableRows(t *testing.T) {
	pt, _ := types.ParseType("ROW<id BIGINT, name VARCHAR, dateTime TIMESTAMP(3)>")
	bt, _ := types.ParseType("ROW<price BIGINT, auction BIGINT>")
	s := newTestScan(t, map[string]string{"events.num": "50"},
		connectors.Column{Name: "event_type", Type: types.TypeInt},
		connectors.Column{Name: "person", Type: pt},
		connectors.Column{Name: "bid", Type: bt},
		connectors.Column{Name: "person_name", Type: types.TypeString},
		connectors.Column{Name: "bid_price", Type: types.TypeBigInt},
		connectors.Column{Name: "bid_auction", Type: types.TypeBigInt})
	rows := run(t, s, 0, 1, 0, nil).raw
	if len(rows) != 50 {
		t.Fatalf("%d rows, want 50", len(rows))
	}
	for i, r := range rows {
		kind := KindOf(int64(i))
		if r[1].IsNull() != (kind != KindPerson) || r[2].IsNull() != (kind != KindBid) {
			t.Fatalf("row %d (kind %d): person null=%v, bid null=%v", i, kind, r[1].IsNull(), r[2].IsNull())
		}
		switch kind {
		case KindPerson:
			if p := r[1].Elems(); p[0].Int() != FirstPersonID+int64(i)/50 || p[1].Str() != r[3].Str() {
				t.Fatalf("row %d: person %s, flattened name %s", i, types.Format(r[1], pt), r[3].Str())
			}
		case KindBid:
			if b := r[2].Elems(); b[0].Int() != r[4].Int() || b[1].Int() != r[5].Int() {
				t.Fatalf("row %d: bid %s, flattened price %d auction %d", i, types.Format(r[2], bt), r[4].Int(), r[5].Int())
			}
		}
	}
	bad, _ := types.ParseType("ROW<nope INT>")
	if _, err := (connector{}).NewScan(&connectors.Table{Name: "x", Options: map[string]string{"connector": "nexmark"},
		Columns: []connectors.Column{{Name: "bid", Type: bad}}}, nil); err == nil || !strings.Contains(err.Error(), "has no field 'nope'") {
		t.Fatalf("error %v", err)
	}
}

// TestNestedProjection reads the ROW columns' fields as columns of their
// own (nested projection push-down): each projected value is the field
// of the whole-ROW read of the same event, NULL for the other kinds;
// bad paths are refused.
func TestNestedProjection(t *testing.T) {
	pt, _ := types.ParseType("ROW<id BIGINT, name VARCHAR, dateTime TIMESTAMP(3)>")
	bt, _ := types.ParseType("ROW<price BIGINT, auction BIGINT>")
	s := newTestScan(t, map[string]string{"events.num": "200"},
		connectors.Column{Name: "event_type", Type: types.TypeInt},
		connectors.Column{Name: "person", Type: pt},
		connectors.Column{Name: "bid", Type: bt})
	whole := run(t, s, 0, 1, 0, nil).raw
	paths := [][]int{{2, 1}, {0}, {1, 2}, {2, 0}}
	src, err := s.CreateProjected(0, 1, paths)
	if err != nil {
		t.Fatal(err)
	}
	c := &collect{src: src.(*source)}
	if err := src.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if len(c.raw) != len(whole) {
		t.Fatalf("%d projected rows, want %d", len(c.raw), len(whole))
	}
	for i, r := range c.raw {
		w := whole[i]
		for j, p := range paths {
			want := w[p[0]]
			if len(p) == 2 && !want.IsNull() {
				want = want.Elems()[p[1]]
			}
			if len(p) == 2 && w[p[0]].IsNull() {
				want = types.NullValue
			}
			if types.Compare(r[j], want) != 0 || r[j].IsNull() != want.IsNull() {
				t.Fatalf("row %d field %v: %v, want %v", i, p, r[j], want)
			}
		}
	}
	for _, bad := range [][]int{{3}, {1, 3}, {0, 0}, {2, 0, 0}} {
		if _, err := s.CreateProjected(0, 1, [][]int{bad}); err == nil {
			t.Errorf("projection %v accepted", bad)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		opts map[string]string
		cols []connectors.Column
		want string
	}{
		{map[string]string{"table": "bids"}, nil, "option 'table'"},
		{map[string]string{"table": "bid"}, []connectors.Column{{Name: "seller", Type: types.TypeBigInt}}, "has no field 'seller'"},
		{map[string]string{"table": "bid"}, []connectors.Column{{Name: "price", Type: types.TypeString}}, "must be BIGINT"},
		{map[string]string{"events.num": "-1"}, nil, "'events.num'"},
		{map[string]string{"first-event.time": "yesterday"}, nil, "'first-event.time'"},
		{map[string]string{"rate": "5"}, nil, "unsupported option"},
	} {
		tc.opts["connector"] = "nexmark"
		_, err := connector{}.NewScan(&connectors.Table{Name: "t", Columns: tc.cols, Options: tc.opts}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("options %v: error %v, want one containing %q", tc.opts, err, tc.want)
		}
	}
}

var _ dataflow.SourceOutput = (*collect)(nil)

// BenchmarkGenerateBids measures the generator alone: bids per second.
func BenchmarkGenerateBids(b *testing.B) {
	g := NewGenerator(Config{Rate: 1e7})
	var a Arena
	var e Event
	for i := 0; i < b.N; i++ {
		n := int64(i)
		if KindOf(n) != KindBid {
			continue
		}
		g.Event(n, &e, &a)
	}
}

// Proportions 2:1:7: in every 10 events, 2 persons, 1 auction, 7 bids;
// ids count each kind from its first id.
func TestProportions(t *testing.T) {
	g := NewGenerator(Config{Seed: 1, Rate: 1000, Proportions: Proportions{Person: 2, Auction: 1, Bid: 7}})
	var ev Event
	var a Arena
	kinds := ""
	var persons, auctions []int64
	for n := int64(0); n < 20; n++ {
		g.Event(n, &ev, &a)
		kinds += string("PAB"[ev.Kind])
		switch ev.Kind {
		case KindPerson:
			persons = append(persons, ev.Person.ID)
		case KindAuction:
			auctions = append(auctions, ev.Auction.ID)
			if ev.Auction.Seller < 0 || ev.Auction.Seller > ev.Person.ID+personIDLead {
				t.Fatalf("auction %d has seller %d", ev.Auction.ID, ev.Auction.Seller)
			}
		case KindBid:
			if ev.Bid.Auction < FirstAuctionID || ev.Bid.Auction > auctions[len(auctions)-1]+auctionIDLead {
				t.Fatalf("bid %d refers to auction %d; auctions so far %v", n, ev.Bid.Auction, auctions)
			}
		}
	}
	if kinds != "PPABBBBBBBPPABBBBBBB" {
		t.Fatalf("kinds %s", kinds)
	}
	if fmt.Sprint(persons) != "[1000 1001 1002 1003]" || fmt.Sprint(auctions) != "[1000 1001]" {
		t.Fatalf("persons %v, auctions %v", persons, auctions)
	}
	// The default is the reference's 1:3:46.
	if d := NewGenerator(Config{}); d.KindOf(0) != KindPerson || d.KindOf(1) != KindAuction || d.KindOf(4) != KindBid || d.KindOf(50) != KindPerson {
		t.Fatal("default proportions are not 1:3:46")
	}
}

// TestReferenceV2Options checks the options of the reference's later
// ddl_gen_v2.sql: 'stop-at' ends the stream at an event number and a
// restore with no stop goes on; 'keep-alive' keeps the source running
// after its last event; 'max-emit-speed' = 'false' paces at the nominal
// rate; a column customTime is the event time.
func TestReferenceV2Options(t *testing.T) {
	whole := run(t, newTestScan(t, map[string]string{"table": "bid", "events.num": "10000", "seed": "3"}, bidCols...), 0, 1, 0, nil).rows

	stopped := newTestScan(t, map[string]string{"table": "bid", "events.num": "10000", "seed": "3", "stop-at": "1000"}, bidCols...)
	if !stopped.Bounded() {
		t.Fatal("a stop-at source is bounded")
	}
	c := run(t, stopped, 0, 1, 0, nil)
	// 1,000 events of which 46 in every 50 are bids.
	if len(c.rows) != 920 {
		t.Fatalf("stop-at 1000: %d bids, want 920", len(c.rows))
	}
	pos, err := c.src.SnapshotPosition(0)
	if err != nil {
		t.Fatal(err)
	}
	rest := run(t, newTestScan(t, map[string]string{"table": "bid", "events.num": "10000", "seed": "3", "stop-at": "-1"}, bidCols...), 0, 1, 0, pos).rows
	got := append(c.rows, rest...)
	if len(got) != len(whole) {
		t.Fatalf("stopped then resumed: %d rows, want %d", len(got), len(whole))
	}
	for i := range got {
		if got[i] != whole[i] {
			t.Fatalf("row %d: %s, want %s", i, got[i], whole[i])
		}
	}

	alive := newTestScan(t, map[string]string{"table": "bid", "events.num": "50", "keep-alive": "true"}, bidCols...)
	if alive.Bounded() {
		t.Fatal("a keep-alive source is not bounded")
	}
	src, err := alive.Create(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	out := &collect{src: src.(*source), cancel: cancel}
	if err := src.Run(ctx, out); err == nil {
		t.Fatal("a keep-alive source ended by itself")
	}
	if len(out.rows) != 46 {
		t.Fatalf("keep-alive: %d bids before idling, want 46", len(out.rows))
	}

	if s := newTestScan(t, map[string]string{"first-event.rate": "500", "max-emit-speed": "false"}); s.tps != 500 {
		t.Fatalf("max-emit-speed false: rate limit %g, want the first-event.rate 500", s.tps)
	}
	if s := newTestScan(t, map[string]string{"first-event.rate": "500"}); s.tps != 0 {
		t.Fatalf("max-emit-speed by default: rate limit %g, want none", s.tps)
	}

	ct := run(t, newTestScan(t, map[string]string{"table": "bid", "events.num": "100", "seed": "3"},
		connectors.Column{Name: "customTime", Type: types.TimestampType(3)}), 0, 1, 0, nil).raw
	dt := run(t, newTestScan(t, map[string]string{"table": "bid", "events.num": "100", "seed": "3"},
		connectors.Column{Name: "dateTime", Type: types.TimestampType(3)}), 0, 1, 0, nil).raw
	if len(ct) != 92 || fmt.Sprint(ct) != fmt.Sprint(dt) {
		t.Fatalf("customTime column: %v, want the dateTime values %v", ct, dt)
	}

	for _, tc := range []struct{ opts map[string]string }{
		{map[string]string{"stop-at": "-2"}}, {map[string]string{"keep-alive": "maybe"}},
		{map[string]string{"rate.shape": "TRIANGLE"}}, {map[string]string{"max-emit-speed": "yes please"}},
	} {
		tc.opts["connector"] = "nexmark"
		if _, err := (connector{}).NewScan(&connectors.Table{Name: "t", Options: tc.opts}, nil); err == nil {
			t.Errorf("options %v accepted", tc.opts)
		}
	}
}

// TestShapeOptions checks the reference's size and hot-ratio options
// against their definitions: a hot auction is one of the multiples of 100
// (counted from FirstAuctionID), a hot bidder is 1 above a multiple of
// 100 and a hot seller a multiple of 100 (counted from FirstPersonID).
// With ratio r, 1 - 1/r of the events pick a hot one; the others draw
// from the recent ids, of which about 1 in 100 fall on such an id.
func TestShapeOptions(t *testing.T) {
	fractions := func(sh Shape) (hotAuction, hotBidder, hotSeller, meanBid, meanPerson float64) {
		evs := genAll(NewGenerator(Config{Seed: 5, Rate: 10000, Shape: sh}), 50_000)
		var bids, auctions, persons, ha, hb, hs, bidBytes, personBytes int
		for _, e := range evs {
			switch e.Kind {
			case KindBid:
				bids++
				if (e.Bid.Auction-FirstAuctionID)%100 == 0 {
					ha++
				}
				if (e.Bid.Bidder-FirstPersonID)%100 == 1 {
					hb++
				}
				bidBytes += 32 + len(e.Bid.Extra)
			case KindAuction:
				auctions++
				if (e.Auction.Seller-FirstPersonID)%100 == 0 {
					hs++
				}
			case KindPerson:
				persons++
				p := e.Person
				personBytes += 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State) + len(p.Extra)
			}
		}
		return float64(ha) / float64(bids), float64(hb) / float64(bids), float64(hs) / float64(auctions),
			float64(bidBytes) / float64(bids), float64(personBytes) / float64(persons)
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s: %.3f, want %.3f ± %.3f", what, got, want, tol)
		}
	}
	// Defaults: 1/2, 3/4 and 3/4 hot, plus the ~1% of the rest that land
	// on a hot id by chance; bids of 100 bytes, persons of 200.
	ha, hb, hs, mb, mp := fractions(Shape{})
	near("default hot auctions", ha, 0.5, 0.03)
	near("default hot bidders", hb, 0.75, 0.03)
	near("default hot sellers", hs, 0.75, 0.03)
	near("default bid size", mb, 100, 3)
	near("default person size", mp, 200, 5)
	// Ratio 1 never picks a hot one; 1000 almost always; sizes follow.
	ha, hb, hs, mb, mp = fractions(Shape{HotAuctionRatio: 1, HotBiddersRatio: 1000, HotSellersRatio: 1, BidAvgSize: 1024, PersonAvgSize: 400})
	near("no hot auctions", ha, 0.01, 0.02)
	near("hot bidders at ratio 1000", hb, 0.999, 0.01)
	near("no hot sellers", hs, 0.01, 0.02)
	near("bid size 1kb", mb, 1024, 10)
	near("person size 400", mp, 400, 8)

	// The options reach the generator, in Flink's memory sizes.
	s := newTestScan(t, map[string]string{"bid.avg-size": "1kb", "person.avg-size": "400", "bid.hot-ratio.auctions": "1",
		"bid.hot-ratio.bidders": "1000", "auction.hot-ratio.sellers": "1"})
	want := Shape{PersonAvgSize: 400, AuctionAvgSize: 500, BidAvgSize: 1024, HotAuctionRatio: 1, HotBiddersRatio: 1000, HotSellersRatio: 1}
	if s.cfg.Shape != want {
		t.Fatalf("options: shape %+v, want %+v", s.cfg.Shape, want)
	}
	for _, tc := range []struct{ opts map[string]string }{
		{map[string]string{"bid.avg-size": "big"}}, {map[string]string{"bid.avg-size": "2gb"}},
		{map[string]string{"bid.hot-ratio.auctions": "0"}}, {map[string]string{"auction.hot-ratio.sellers": "x"}},
	} {
		tc.opts["connector"] = "nexmark"
		if _, err := (connector{}).NewScan(&connectors.Table{Name: "t", Options: tc.opts}, nil); err == nil {
			t.Errorf("options %v accepted", tc.opts)
		}
	}
}
