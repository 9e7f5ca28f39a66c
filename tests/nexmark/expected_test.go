package nexmark_test

import (
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/nexmark"
)

// The expected results, computed from the generated events with plain
// Go: maps, loops and sorts, nothing of the engine. Each function states
// the query's meaning it implements.

type input struct {
	persons  []nexmark.Person
	auctions []nexmark.Auction
	bids     []nexmark.Bid
}

func split(evs []nexmark.Event) input {
	var in input
	for _, e := range evs {
		switch e.Kind {
		case nexmark.KindPerson:
			in.persons = append(in.persons, e.Person)
		case nexmark.KindAuction:
			in.auctions = append(in.auctions, e.Auction)
		default:
			in.bids = append(in.bids, e.Bid)
		}
	}
	return in
}

const second = 1000 // ms

func day(ms int64) string    { return time.UnixMilli(ms).UTC().Format("2006-01-02") }
func minute(ms int64) string { return time.UnixMilli(ms).UTC().Format("15:04") }

// floorTo is the start of the window of size w containing ms (ms >= 0).
func floorTo(ms, w int64) int64 { return ms / w * w }

func bidRow(b nexmark.Bid) string {
	return row(b.Auction, b.Bidder, b.Price, ts(b.DateTime), b.Extra)
}

func fullBidRow(b nexmark.Bid, more ...any) string {
	return row(append([]any{b.Auction, b.Bidder, b.Price, b.Channel, b.URL, ts(b.DateTime), b.Extra}, more...)...)
}

// q0: every bid.
func expectQ0(in input) (out []string) {
	for _, b := range in.bids {
		out = append(out, bidRow(b))
	}
	return
}

// q1: every bid with price * 0.908, exact in thousandths.
func expectQ1(in input) (out []string) {
	for _, b := range in.bids {
		out = append(out, row(b.Auction, b.Bidder, dec3(b.Price*908), ts(b.DateTime), b.Extra))
	}
	return
}

// q2: bids on every 123rd auction.
func expectQ2(in input) (out []string) {
	for _, b := range in.bids {
		if b.Auction%123 == 0 {
			out = append(out, row(b.Auction, b.Price))
		}
	}
	return
}

// q3: auctions of category 10 joined with their seller when the seller
// lives in OR, ID or CA.
func expectQ3(in input) (out []string) {
	persons := map[int64]nexmark.Person{}
	for _, p := range in.persons {
		persons[p.ID] = p
	}
	for _, a := range in.auctions {
		p, ok := persons[a.Seller]
		if ok && a.Category == 10 && (p.State == "OR" || p.State == "ID" || p.State == "CA") {
			out = append(out, row(p.Name, p.City, p.State, a.ID))
		}
	}
	return
}

// winningBids maps each auction to its bids made within the auction's
// lifetime [dateTime, expires], both ends included.
func bidsInLifetime(in input) map[int64][]nexmark.Bid {
	life := map[int64]nexmark.Auction{}
	for _, a := range in.auctions {
		life[a.ID] = a
	}
	m := map[int64][]nexmark.Bid{}
	for _, b := range in.bids {
		if a, ok := life[b.Auction]; ok && b.DateTime >= a.DateTime && b.DateTime <= a.Expires {
			m[a.ID] = append(m[a.ID], b)
		}
	}
	return m
}

// winner is the highest bid, the earliest among equal prices. It fails
// the test if two bids tie on both, since the query's result would then
// not be unique.
func winner(t *testing.T, bs []nexmark.Bid) nexmark.Bid {
	best := bs[0]
	for _, b := range bs[1:] {
		if b.Price > best.Price || (b.Price == best.Price && b.DateTime < best.DateTime) {
			best = b
		}
	}
	n := 0
	for _, b := range bs {
		if b.Price == best.Price && b.DateTime == best.DateTime {
			n++
		}
	}
	if n > 1 {
		t.Fatalf("auction %d has %d bids tied on price and time; the expected result is not unique", best.Auction, n)
	}
	return best
}

// q4: per category, the average (truncated) of the auctions' highest bid
// within their lifetime.
func expectQ4(in input) (out []string) {
	inLife := bidsInLifetime(in)
	sum, cnt := map[int64]int64{}, map[int64]int64{}
	for _, a := range in.auctions {
		bs := inLife[a.ID]
		if len(bs) == 0 {
			continue
		}
		m := bs[0].Price
		for _, b := range bs {
			m = max(m, b.Price)
		}
		sum[a.Category] += m
		cnt[a.Category]++
	}
	for c := range sum {
		out = append(out, row(c, sum[c]/cnt[c]))
	}
	return
}

// q5: for each 10 s window sliding by 2 s, the auctions with the most
// bids in it.
func expectQ5(in input) (out []string) {
	type key struct{ auction, start int64 }
	count := map[key]int64{}
	maxn := map[int64]int64{}
	for _, b := range in.bids {
		last := floorTo(b.DateTime, 2*second)
		for s := last - 8*second; s <= last; s += 2 * second {
			k := key{b.Auction, s}
			count[k]++
			maxn[s] = max(maxn[s], count[k])
		}
	}
	for k, n := range count {
		if n >= maxn[k.start] {
			out = append(out, row(k.auction, n))
		}
	}
	return
}

// q6 (rewritten, see CHANGES.md): per seller, the average (truncated) of
// the winning prices of their 10 most recently won auctions, ordered by
// the winning bid's time.
func expectQ6(t *testing.T, in input) (out []string) {
	inLife := bidsInLifetime(in)
	won := map[int64][]nexmark.Bid{}
	for _, a := range in.auctions {
		if bs := inLife[a.ID]; len(bs) > 0 {
			won[a.Seller] = append(won[a.Seller], winner(t, bs))
		}
	}
	for seller, ws := range won {
		sort.Slice(ws, func(i, j int) bool { return ws[i].DateTime > ws[j].DateTime })
		for i := 1; i < len(ws) && i <= 10; i++ {
			if ws[i].DateTime == ws[i-1].DateTime {
				t.Fatalf("seller %d won two auctions with bids at the same time; the expected result is not unique", seller)
			}
		}
		ws = ws[:min(10, len(ws))]
		var sum int64
		for _, w := range ws {
			sum += w.Price
		}
		out = append(out, row(seller, sum/int64(len(ws))))
	}
	return
}

// q7: the bids priced at the maximum of a 10 s tumbling window whose time
// lies in [window end - 10 s, window end], both ends included.
func expectQ7(in input) (out []string) {
	maxPrice := map[int64]int64{} // window start -> max price
	for _, b := range in.bids {
		s := floorTo(b.DateTime, 10*second)
		if m, ok := maxPrice[s]; !ok || b.Price > m {
			maxPrice[s] = b.Price
		}
	}
	for s, m := range maxPrice {
		end := s + 10*second
		for _, b := range in.bids {
			if b.Price == m && b.DateTime >= end-10*second && b.DateTime <= end {
				out = append(out, bidRow(b))
			}
		}
	}
	return
}

// q8: people who registered in a 10 s tumbling window and opened an
// auction in the same window, with the window's start.
func expectQ8(in input) (out []string) {
	type key struct{ seller, start int64 }
	sold := map[key]bool{}
	for _, a := range in.auctions {
		sold[key{a.Seller, floorTo(a.DateTime, 10*second)}] = true
	}
	for _, p := range in.persons {
		s := floorTo(p.DateTime, 10*second)
		if sold[key{p.ID, s}] {
			out = append(out, row(p.ID, p.Name, ts(s)))
		}
	}
	return
}

// q9: each auction with its winning bid (highest price, then earliest).
func expectQ9(t *testing.T, in input) (out []string) {
	inLife := bidsInLifetime(in)
	for _, a := range in.auctions {
		bs := inLife[a.ID]
		if len(bs) == 0 {
			continue
		}
		b := winner(t, bs)
		out = append(out, row(a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve, ts(a.DateTime), ts(a.Expires),
			a.Seller, a.Category, a.Extra, b.Auction, b.Bidder, b.Price, ts(b.DateTime), b.Extra))
	}
	return
}

// q10: every bid with its day and hour:minute.
func expectQ10(in input) (out []string) {
	for _, b := range in.bids {
		out = append(out, row(b.Auction, b.Bidder, b.Price, ts(b.DateTime), b.Extra, day(b.DateTime), minute(b.DateTime)))
	}
	return
}

// q11: per bidder, sessions of bids no more than 10 s apart (Flink's
// windows [t, t + 10 s) merge when they touch), with the bid count, the
// first bid's time and the last bid's time + 10 s.
func expectQ11(in input) (out []string) {
	byBidder := map[int64][]int64{}
	for _, b := range in.bids {
		byBidder[b.Bidder] = append(byBidder[b.Bidder], b.DateTime)
	}
	for bidder, times := range byBidder {
		slices.Sort(times)
		start, last, n := times[0], times[0], int64(1)
		for _, tm := range times[1:] {
			if tm <= last+10*second {
				last, n = tm, n+1
				continue
			}
			out = append(out, row(bidder, n, ts(start), ts(last+10*second)))
			start, last, n = tm, tm, 1
		}
		out = append(out, row(bidder, n, ts(start), ts(last+10*second)))
	}
	return
}

// q12 runs on processing time, so its windows depend on the wall clock;
// what is fixed is that every bid is counted in exactly one window of its
// bidder: per bidder, the window counts sum to the bidder's bids.
func expectQ12(in input) (out []string) {
	n := map[int64]int64{}
	for _, b := range in.bids {
		n[b.Bidder]++
	}
	for bidder, c := range n {
		out = append(out, row(bidder, c))
	}
	return
}

// sumQ12 folds the engine's q12 rows (bidder|count|start|end) the same
// way.
func sumQ12(t *testing.T, rows []string) (out []string) {
	n := map[int64]int64{}
	for _, r := range rows {
		f := strings.Split(r, "|")
		bidder, err1 := strconv.ParseInt(f[0], 10, 64)
		c, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || len(f) != 4 {
			t.Fatalf("q12: malformed row %q", r)
		}
		n[bidder] += c
	}
	for bidder, c := range n {
		out = append(out, row(bidder, c))
	}
	return
}

// q13: every bid with the side input's value for auction mod 10,000; the
// side input maps k to the string of k.
func expectQ13(in input) (out []string) {
	for _, b := range in.bids {
		out = append(out, row(b.Auction, b.Bidder, b.Price, ts(b.DateTime), strconv.FormatInt(b.Auction%10000, 10)))
	}
	return
}

// q14: bids whose euro price (price * 0.908) lies strictly between
// 1,000,000 and 50,000,000, with a time-of-day class and the number of
// 'c' in extra.
func expectQ14(in input) (out []string) {
	for _, b := range in.bids {
		euro := b.Price * 908 // thousandths
		if euro <= 1_000_000_000 || euro >= 50_000_000_000 {
			continue
		}
		h := time.UnixMilli(b.DateTime).UTC().Hour()
		kind := "otherTime"
		switch {
		case h >= 8 && h <= 18:
			kind = "dayTime"
		case h <= 6 || h >= 20:
			kind = "nightTime"
		}
		out = append(out, row(b.Auction, b.Bidder, dec3(euro), kind, ts(b.DateTime), b.Extra, strings.Count(b.Extra, "c")))
	}
	return
}

// rankOf is the price band of q15-q17: 1 below 10,000, 2 below
// 1,000,000, 3 above.
func rankOf(price int64) int {
	switch {
	case price < 10000:
		return 1
	case price < 1000000:
		return 2
	}
	return 3
}

// stats are q15's and q16's counters: bids, distinct bidders and distinct
// auctions, overall ([0]) and per price band ([1..3]).
type stats struct {
	bids     [4]int64
	bidders  [4]map[int64]bool
	auctions [4]map[int64]bool
	minute   string
}

func (s *stats) add(b nexmark.Bid) {
	for _, i := range []int{0, rankOf(b.Price)} {
		if s.bidders[i] == nil {
			s.bidders[i], s.auctions[i] = map[int64]bool{}, map[int64]bool{}
		}
		s.bids[i]++
		s.bidders[i][b.Bidder] = true
		s.auctions[i][b.Auction] = true
	}
	s.minute = max(s.minute, minute(b.DateTime))
}

func (s *stats) values() []any {
	var v []any
	for i := range 4 {
		v = append(v, s.bids[i])
	}
	for i := range 4 {
		v = append(v, len(s.bidders[i]))
	}
	for i := range 4 {
		v = append(v, len(s.auctions[i]))
	}
	return v
}

// q15: per day, the stats of all bids.
func expectQ15(in input) (out []string) {
	m := map[string]*stats{}
	for _, b := range in.bids {
		d := day(b.DateTime)
		if m[d] == nil {
			m[d] = &stats{}
		}
		m[d].add(b)
	}
	for d, s := range m {
		out = append(out, row(append([]any{d}, s.values()...)...))
	}
	return
}

// q16: per channel and day, the latest hour:minute and the stats.
func expectQ16(in input) (out []string) {
	type key struct{ channel, day string }
	m := map[key]*stats{}
	for _, b := range in.bids {
		k := key{b.Channel, day(b.DateTime)}
		if m[k] == nil {
			m[k] = &stats{}
		}
		m[k].add(b)
	}
	for k, s := range m {
		out = append(out, row(append([]any{k.channel, k.day, s.minute}, s.values()...)...))
	}
	return
}

// q17: per auction and day, bid counts per band and price min, max,
// truncated average and sum.
func expectQ17(in input) (out []string) {
	type key struct {
		auction int64
		day     string
	}
	type agg struct{ n, r1, r2, r3, lo, hi, sum int64 }
	m := map[key]*agg{}
	for _, b := range in.bids {
		k := key{b.Auction, day(b.DateTime)}
		a := m[k]
		if a == nil {
			a = &agg{lo: b.Price, hi: b.Price}
			m[k] = a
		}
		a.n++
		switch rankOf(b.Price) {
		case 1:
			a.r1++
		case 2:
			a.r2++
		default:
			a.r3++
		}
		a.lo, a.hi, a.sum = min(a.lo, b.Price), max(a.hi, b.Price), a.sum+b.Price
	}
	for k, a := range m {
		out = append(out, row(k.auction, k.day, a.n, a.r1, a.r2, a.r3, a.lo, a.hi, a.sum/a.n, a.sum))
	}
	return
}

// q18: the latest bid of each bidder on each auction.
func expectQ18(t *testing.T, in input) (out []string) {
	type key struct{ bidder, auction int64 }
	last := map[key]nexmark.Bid{}
	tie := map[key]bool{}
	for _, b := range in.bids {
		k := key{b.Bidder, b.Auction}
		l, ok := last[k]
		switch {
		case !ok || b.DateTime > l.DateTime:
			last[k], tie[k] = b, false
		case b.DateTime == l.DateTime:
			tie[k] = true
		}
	}
	for _, k := range slices.Collect(maps.Keys(last)) {
		if tie[k] {
			t.Fatalf("bidder %d bid twice on auction %d at its latest time; the expected result is not unique", k.bidder, k.auction)
		}
		out = append(out, fullBidRow(last[k]))
	}
	return
}

// q19: the 10 highest bids of each auction, numbered from 1.
func expectQ19(t *testing.T, in input) (out []string) {
	by := map[int64][]nexmark.Bid{}
	for _, b := range in.bids {
		by[b.Auction] = append(by[b.Auction], b)
	}
	for auction, bs := range by {
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].Price > bs[j].Price })
		for i := 1; i < len(bs) && i <= 10; i++ {
			if bs[i].Price == bs[i-1].Price {
				t.Fatalf("auction %d has two bids of %d among its top 10; the expected numbering is not unique", auction, bs[i].Price)
			}
		}
		for i := 0; i < len(bs) && i < 10; i++ {
			out = append(out, fullBidRow(bs[i], int64(i+1)))
		}
	}
	return
}

// q20: every bid joined with its auction when the auction is of
// category 10.
func expectQ20(in input) (out []string) {
	auctions := map[int64]nexmark.Auction{}
	for _, a := range in.auctions {
		if a.Category == 10 {
			auctions[a.ID] = a
		}
	}
	for _, b := range in.bids {
		if a, ok := auctions[b.Auction]; ok {
			out = append(out, fullBidRow(b, a.ItemName, a.Description, a.InitialBid, a.Reserve, ts(a.DateTime),
				ts(a.Expires), a.Seller, a.Category, a.Extra))
		}
	}
	return
}

// channelIDParam finds the value of a channel_id parameter that starts
// the URL or follows an '&', up to the next '&'.
func channelIDParam(url string) (string, bool) {
	for i := 0; ; {
		j := strings.Index(url[i:], "channel_id=")
		if j < 0 {
			return "", false
		}
		j += i
		if j == 0 || url[j-1] == '&' {
			v := url[j+len("channel_id="):]
			if k := strings.IndexByte(v, '&'); k >= 0 {
				v = v[:k]
			}
			return v, true
		}
		i = j + 1
	}
}

// q21: bids from the four named channels, with their fixed ids, and bids
// whose URL carries a channel_id, with that id.
func expectQ21(in input) (out []string) {
	ids := map[string]string{"apple": "0", "google": "1", "facebook": "2", "baidu": "3"}
	for _, b := range in.bids {
		id, named := ids[strings.ToLower(b.Channel)]
		param, found := channelIDParam(b.URL)
		if !named && !found {
			continue
		}
		if !named {
			id = param
		}
		out = append(out, row(b.Auction, b.Bidder, b.Price, b.Channel, id))
	}
	return
}

// q22: every bid with the URL's path segments 3, 4 and 5 (0-based, split
// on '/'), NULL when there is no such segment.
func expectQ22(in input) (out []string) {
	for _, b := range in.bids {
		parts := strings.Split(b.URL, "/")
		seg := func(i int) any {
			if i < len(parts) {
				return parts[i]
			}
			return nil
		}
		out = append(out, row(b.Auction, b.Bidder, b.Price, b.Channel, seg(3), seg(4), seg(5)))
	}
	return
}
