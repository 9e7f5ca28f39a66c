package nexmark

import (
	"math"
	"math/bits"
	"strconv"
	"unsafe"
)

// The generator follows the reference Nexmark generator (nexmark/nexmark,
// NexmarkGenerator, GeneratorConfig and the Person/Auction/Bid/Price/
// Strings generators) with its default configuration: the proportions
// person:auction:bid = 1:3:46, hot auctions 1/2, hot sellers 3/4 and hot
// bidders 3/4 of the time, 1,000 active people, 100 auctions in flight,
// average sizes 200/500/100 bytes, and event time advancing by a fixed
// inter-event delay from the first event's time.
//
// One deliberate difference: the reference draws every event from one
// unseeded java.util.Random that runs through the whole stream. Here each
// event is a pure function of (seed, event number): its random numbers
// come from a SplitMix64 stream seeded by both. That makes a run
// repeatable, lets subtasks split the event-number space any way they
// like, and makes a restored source produce exactly the events the
// uninterrupted one would have.

// Reference constants.
const (
	FirstPersonID   = 1000
	FirstAuctionID  = 1000
	FirstCategoryID = 10

	numCategories      = 5
	personIDLead       = 10
	auctionIDLead      = 10
	hotSellerRatio     = 100 // sellers: the first of each batch of 100 people
	hotAuctionRatio100 = 100 // auctions: the first of each batch of 100
	hotBidderRatio100  = 100 // bidders: the second of each batch of 100 people
	hotChannelsRatio   = 2   // P(hot channel) = 1 - 1/2
	channelsNumber     = 10000
	numInFlightAuction = 100
	numActivePeople    = 1000
	minStringLength    = 3
)

// Event kinds, the values of the reference's event_type column.
const (
	KindPerson  = 0
	KindAuction = 1
	KindBid     = 2
)

var (
	usStates   = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities   = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	// HotChannels are the four channels half of all bids come from.
	HotChannels = []string{"Google", "Facebook", "Baidu", "Apple"}
	// fullNames holds every "first last" combination, so that generating
	// a name allocates nothing.
	fullNames = func() []string {
		var out []string
		for _, f := range firstNames {
			for _, l := range lastNames {
				out = append(out, f+" "+l)
			}
		}
		return out
	}()
)

// Person is a new person event.
type Person struct {
	ID           int64
	Name         string
	EmailAddress string
	CreditCard   string
	City         string
	State        string
	DateTime     int64 // ms since the epoch
	Extra        string
}

// Auction is a new auction event.
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	InitialBid  int64
	Reserve     int64
	DateTime    int64 // ms
	Expires     int64 // ms
	Seller      int64
	Category    int64
	Extra       string
}

// Bid is a bid event.
type Bid struct {
	Auction  int64
	Bidder   int64
	Price    int64
	Channel  string
	URL      string
	DateTime int64 // ms
	Extra    string
}

// Event is one generated event; Kind says which of the parts is set.
type Event struct {
	Kind    int
	Person  Person
	Auction Auction
	Bid     Bid
}

// Config is what determines the generated stream.
type Config struct {
	Seed int64
	// BaseTime is the first event's time, ms since the epoch.
	BaseTime int64
	// Rate is the nominal rate in events per second that spaces event
	// times; it does not limit how fast events are produced.
	Rate float64
	// Proportions are the shares of persons, auctions and bids among the
	// events, the reference's 'person.proportion', 'auction.proportion'
	// and 'bid.proportion'; the zero value means the reference's 1:3:46.
	// Of every Total() events, the first Person are persons, the next
	// Auction auctions and the rest bids.
	Proportions Proportions
	// Shape holds the sizes and hot ratios; a zero field means the
	// reference's default (DefaultShape).
	Shape Shape
}

// Shape is the reference's 'person.avg-size', 'auction.avg-size' and
// 'bid.avg-size' (the mean size in bytes each event is padded to with its
// extra field) and 'bid.hot-ratio.auctions', 'bid.hot-ratio.bidders' and
// 'auction.hot-ratio.sellers': with ratio r, a bid's auction (bidder, an
// auction's seller) is a hot one with probability 1 - 1/r, so 1 means
// never.
type Shape struct {
	PersonAvgSize, AuctionAvgSize, BidAvgSize         int
	HotAuctionRatio, HotBiddersRatio, HotSellersRatio int
}

// DefaultShape is the reference's: 200, 500 and 100 bytes; hot auctions
// half of the time, hot bidders and sellers three quarters.
var DefaultShape = Shape{PersonAvgSize: 200, AuctionAvgSize: 500, BidAvgSize: 100,
	HotAuctionRatio: 2, HotBiddersRatio: 4, HotSellersRatio: 4}

// withDefaults fills zero fields from DefaultShape.
func (s Shape) withDefaults() Shape {
	d := DefaultShape
	for _, f := range []struct{ v, def *int }{
		{&s.PersonAvgSize, &d.PersonAvgSize}, {&s.AuctionAvgSize, &d.AuctionAvgSize}, {&s.BidAvgSize, &d.BidAvgSize},
		{&s.HotAuctionRatio, &d.HotAuctionRatio}, {&s.HotBiddersRatio, &d.HotBiddersRatio}, {&s.HotSellersRatio, &d.HotSellersRatio},
	} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return s
}

// Proportions are the shares of each kind of event.
type Proportions struct{ Person, Auction, Bid int64 }

// DefaultProportions are the reference's: 1 person, 3 auctions and 46
// bids in every 50 events.
var DefaultProportions = Proportions{Person: 1, Auction: 3, Bid: 46}

// Total is the length of the cycle of event kinds.
func (p Proportions) Total() int64 { return p.Person + p.Auction + p.Bid }

// KindOf returns the kind of event number n without generating it.
func (p Proportions) KindOf(n int64) int {
	switch rem := n % p.Total(); {
	case rem < p.Person:
		return KindPerson
	case rem < p.Person+p.Auction:
		return KindAuction
	}
	return KindBid
}

// Generator produces events by number. It is immutable after NewGenerator
// and safe for concurrent use.
type Generator struct {
	cfg        Config
	p          Proportions
	delayUs    float64 // microseconds between events
	hotURLs    [4]string
	channelURL [channelsNumber]string
	channelNam [channelsNumber]string
}

// NewGenerator prepares a generator: it precomputes the channel names and
// URLs (the reference caches them the same way).
func NewGenerator(cfg Config) *Generator {
	if cfg.Rate <= 0 {
		cfg.Rate = 10000
	}
	if cfg.Proportions == (Proportions{}) {
		cfg.Proportions = DefaultProportions
	}
	cfg.Shape = cfg.Shape.withDefaults()
	g := &Generator{cfg: cfg, p: cfg.Proportions, delayUs: 1e6 / cfg.Rate}
	// The URLs draw from a stream of their own, seeded apart from every
	// event's stream by a tag in the high bits.
	for i := range g.hotURLs {
		r := newRNG(cfg.Seed, -1-int64(i))
		g.hotURLs[i] = baseURL(&r)
	}
	for i := range channelsNumber {
		r := newRNG(cfg.Seed, math.MinInt64+int64(i))
		url := baseURL(&r)
		if r.intn(10) > 0 {
			url += "&channel_id=" + strconv.FormatInt(int64(absInt32(reverseBits32(int32(i)))), 10)
		}
		g.channelURL[i] = url
		g.channelNam[i] = "channel-" + strconv.Itoa(i)
	}
	return g
}

// Config returns the generator's configuration.
func (g *Generator) Config() Config { return g.cfg }

// KindOf returns the kind of event number n of the reference's default
// proportions without generating it.
func KindOf(n int64) int { return DefaultProportions.KindOf(n) }

// KindOf returns the kind of event number n without generating it.
func (g *Generator) KindOf(n int64) int { return g.p.KindOf(n) }

// TimestampMs is event n's time: the reference's timestampForEvent.
func (g *Generator) TimestampMs(n int64) int64 {
	return g.cfg.BaseTime + int64(float64(n)*g.delayUs)/1000
}

// Event generates event number n into ev. Strings are carved from a
// (which must not be nil).
func (g *Generator) Event(n int64, ev *Event, a *Arena) {
	r := newRNG(g.cfg.Seed, n)
	ts := g.TimestampMs(n)
	ev.Kind = g.p.KindOf(n)
	switch ev.Kind {
	case KindPerson:
		g.person(n, &r, ts, &ev.Person, a)
	case KindAuction:
		g.auction(n, &r, ts, &ev.Auction, a)
	default:
		g.bid(n, &r, ts, &ev.Bid, a)
	}
}

func (g *Generator) person(n int64, r *rng, ts int64, p *Person, a *Arena) {
	p.ID = g.p.lastBase0PersonID(n) + FirstPersonID
	p.Name = fullNames[r.intn(len(firstNames))*len(lastNames)+r.intn(len(lastNames))]
	// email: nextString(7) "@" nextString(5) ".com"
	a.begin(32)
	a.randString(r, 7)
	a.byte('@')
	a.randString(r, 5)
	a.bytes(".com")
	p.EmailAddress = a.end()
	// credit card: four groups of four digits
	a.begin(19)
	for i := range 4 {
		if i > 0 {
			a.byte(' ')
		}
		d := r.intn(10000)
		a.byte(byte('0' + d/1000))
		a.byte(byte('0' + d/100%10))
		a.byte(byte('0' + d/10%10))
		a.byte(byte('0' + d%10))
	}
	p.CreditCard = a.end()
	p.City = usCities[r.intn(len(usCities))]
	p.State = usStates[r.intn(len(usStates))]
	size := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State)
	p.Extra = a.extra(r, size, g.cfg.Shape.PersonAvgSize)
	p.DateTime = ts
}

func (g *Generator) auction(n int64, r *rng, ts int64, au *Auction, a *Arena) {
	au.ID = g.p.lastBase0AuctionID(n) + FirstAuctionID
	var seller int64
	if r.intn(g.cfg.Shape.HotSellersRatio) > 0 {
		// The first person of the batch of the last 100 people.
		seller = (g.p.lastBase0PersonID(n) / hotSellerRatio) * hotSellerRatio
	} else {
		seller = g.p.nextBase0PersonID(n, r)
	}
	au.Seller = seller + FirstPersonID
	au.Category = FirstCategoryID + int64(r.intn(numCategories))
	au.InitialBid = nextPrice(r)
	au.DateTime = ts
	au.Expires = ts + g.nextAuctionLengthMs(n, r, ts)
	a.begin(20)
	a.randString(r, 20)
	au.ItemName = a.trimmedEnd()
	a.begin(100)
	a.randString(r, 100)
	au.Description = a.trimmedEnd()
	au.Reserve = au.InitialBid + nextPrice(r)
	size := 8 + len(au.ItemName) + len(au.Description) + 8 + 8 + 8 + 8 + 8
	au.Extra = a.extra(r, size, g.cfg.Shape.AuctionAvgSize)
}

func (g *Generator) bid(n int64, r *rng, ts int64, b *Bid, a *Arena) {
	var auction int64
	if r.intn(g.cfg.Shape.HotAuctionRatio) > 0 {
		// The first auction of the batch of the last 100 auctions.
		auction = (g.p.lastBase0AuctionID(n) / hotAuctionRatio100) * hotAuctionRatio100
	} else {
		auction = g.p.nextBase0AuctionID(n, r)
	}
	b.Auction = auction + FirstAuctionID
	var bidder int64
	if r.intn(g.cfg.Shape.HotBiddersRatio) > 0 {
		// The second person of the batch of the last 100 people, so
		// that hot bidders and hot sellers differ.
		bidder = (g.p.lastBase0PersonID(n)/hotBidderRatio100)*hotBidderRatio100 + 1
	} else {
		bidder = g.p.nextBase0PersonID(n, r)
	}
	b.Bidder = bidder + FirstPersonID
	b.Price = nextPrice(r)
	if r.intn(hotChannelsRatio) > 0 {
		i := r.intn(len(HotChannels))
		b.Channel, b.URL = HotChannels[i], g.hotURLs[i]
	} else {
		i := r.intn(channelsNumber)
		b.Channel, b.URL = g.channelNam[i], g.channelURL[i]
	}
	b.DateTime = ts
	b.Extra = a.extra(r, 8+8+8+8, g.cfg.Shape.BidAvgSize)
}

// nextAuctionLengthMs is the reference's: a length whose mean is the
// time until numInFlightAuctions more auctions have been generated.
func (g *Generator) nextAuctionLengthMs(n int64, r *rng, ts int64) int64 {
	numEventsForAuctions := numInFlightAuction * g.p.Total() / max(g.p.Auction, 1)
	futureAuction := g.TimestampMs(n + numEventsForAuctions)
	horizon := futureAuction - ts
	return 1 + r.int64n(max(horizon*2, 1))
}

// lastBase0PersonID is the id (from 0) of the last person generated at or
// before event n.
func (p Proportions) lastBase0PersonID(n int64) int64 {
	epoch := n / p.Total()
	offset := n % p.Total()
	if offset >= p.Person {
		offset = p.Person - 1
	}
	return epoch*p.Person + offset
}

// lastBase0AuctionID is the id (from 0) of the last auction generated at
// or before event n.
func (p Proportions) lastBase0AuctionID(n int64) int64 {
	epoch := n / p.Total()
	offset := n % p.Total()
	switch {
	case offset < p.Person:
		epoch--
		offset = p.Auction - 1
	case offset >= p.Person+p.Auction:
		offset = p.Auction - 1
	default:
		offset -= p.Person
	}
	return epoch*p.Auction + offset
}

// nextBase0PersonID picks one of the active people, or one of a few not
// yet created.
func (p Proportions) nextBase0PersonID(n int64, r *rng) int64 {
	numPeople := p.lastBase0PersonID(n) + 1
	active := min(numPeople, numActivePeople)
	return numPeople - active + r.int64n(active+personIDLead)
}

// nextBase0AuctionID picks one of the auctions likely still in flight,
// or one of a few not yet created.
func (p Proportions) nextBase0AuctionID(n int64, r *rng) int64 {
	maxA := p.lastBase0AuctionID(n)
	minA := max(maxA-numInFlightAuction, 0)
	return minA + r.int64n(maxA-minA+1+auctionIDLead)
}

// nextPrice is log-uniform between 100 and 100,000,000 cents:
// round(10^(6u) * 100), with 10^x computed as e^(x ln 10).
func nextPrice(r *rng) int64 {
	return int64(math.Round(math.Exp(r.float64()*6*math.Ln10) * 100))
}

// baseURL is the reference's getBaseUrl: three path segments of up to
// four characters, '_' standing in for the space of nextString.
func baseURL(r *rng) string {
	var b []byte
	b = append(b, "https://www.nexmark.com/"...)
	for range 3 {
		n := minStringLength + r.intn(5-minStringLength)
		for range n {
			if r.intn(13) == 0 {
				b = append(b, '_')
			} else {
				b = append(b, byte('a'+r.intn(26)))
			}
		}
		b = append(b, '/')
	}
	b = append(b, "item.htm?query=1"...)
	return string(b)
}

func reverseBits32(x int32) int32 {
	u := uint32(x)
	var out uint32
	for range 32 {
		out = out<<1 | u&1
		u >>= 1
	}
	return int32(out)
}

// absInt32 is Java's Math.abs on an int, which leaves MinInt32 alone.
func absInt32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// ---------------------------------------------------------------------------
// Random numbers

// rng is a SplitMix64 stream. It is small enough to live on the stack.
type rng struct{ s uint64 }

func newRNG(seed, n int64) rng {
	r := rng{s: uint64(seed)*0x9E3779B97F4A7C15 ^ uint64(n)*0xD1B54A32D192ED03}
	r.next() // decorrelate neighbouring event numbers
	return r
}

func (r *rng) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// intn returns a number in [0, n) by multiply-shift; the bias, at most
// n/2^64, is far below anything a query could observe.
func (r *rng) intn(n int) int { return int(r.int64n(int64(n))) }

func (r *rng) int64n(n int64) int64 {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int64(hi)
}

func (r *rng) float64() float64 { return float64(r.next()>>11) * (1.0 / (1 << 53)) }

// ---------------------------------------------------------------------------
// Strings

// Arena hands out strings carved from large byte blocks, so that a chunk
// of events costs a few allocations rather than one per string. A block
// is never written again once a string points into it (a string that
// outgrows its block's room makes append copy it to a fresh array, which
// leaves earlier strings untouched). The zero Arena is ready to use; it
// must not be nil.
type Arena struct {
	buf   []byte
	start int
}

const arenaBlock = 64 << 10

// begin starts a string of at most about hint bytes (it may grow).
func (a *Arena) begin(hint int) {
	if cap(a.buf)-len(a.buf) < hint {
		a.buf = make([]byte, 0, max(arenaBlock, hint))
	}
	a.start = len(a.buf)
}

func (a *Arena) byte(c byte)        { a.buf = append(a.buf, c) }
func (a *Arena) bytes(s string)     { a.buf = append(a.buf, s...) }
func (a *Arena) cur() []byte        { return a.buf[a.start:] }
func (a *Arena) truncate(to int)    { a.buf = a.buf[:a.start+to] }
func (a *Arena) discardFront(k int) { a.start += k }

// end returns the string built since begin.
func (a *Arena) end() string {
	b := a.buf[a.start:]
	if len(b) == 0 {
		return ""
	}
	// The bytes are never modified again: later strings only append
	// past them, and a full block is replaced, not reused.
	return unsafe.String(&b[0], len(b))
}

// trimmedEnd is end with leading and trailing spaces removed, as Java's
// String.trim does for the reference's nextString.
func (a *Arena) trimmedEnd() string {
	b := a.cur()
	i := 0
	for i < len(b) && b[i] == ' ' {
		i++
	}
	j := len(b)
	for j > i && b[j-1] == ' ' {
		j--
	}
	a.truncate(j)
	a.discardFront(i)
	return a.end()
}

// randString appends the reference's nextString: 3 to maxLength-1
// characters, each a space with probability 1/13, else a lower-case
// letter. (Callers trim, as the reference does, where it matters.)
func (a *Arena) randString(r *rng, maxLength int) {
	n := minStringLength + r.intn(maxLength-minStringLength)
	for range n {
		if r.intn(13) == 0 {
			a.byte(' ')
		} else {
			a.byte(byte('a' + r.intn(26)))
		}
	}
}

// extra is the reference's nextExtra: a string of lower-case letters
// whose length brings the event to about desired bytes on average
// (uniform within ±20%).
func (a *Arena) extra(r *rng, current, desired int) string {
	if current > desired {
		return ""
	}
	desired -= current
	delta := int(math.Round(float64(desired) * 0.2))
	size := desired - delta
	if delta != 0 {
		size += r.intn(2 * delta)
	}
	a.begin(size)
	start := len(a.buf)
	a.buf = a.buf[:start+size]
	b := a.buf[start:]
	// Each letter takes the integer part of 26 times a 64-bit fraction,
	// which keeps the rest as the next fraction; a draw gives ten letters
	// (26^10 < 2^47, so each is still close to uniform).
	for i := 0; i < len(b); {
		x := r.next()
		for k := 0; k < 10 && i < len(b); k++ {
			hi, lo := bits.Mul64(x, 26)
			b[i] = byte('a' + hi)
			x = lo
			i++
		}
	}
	return a.end()
}
