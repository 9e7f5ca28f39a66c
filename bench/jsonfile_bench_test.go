package bench

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

var jsonRows = flag.Int("jsonfile.rows", 2_000_000, "lines of the JSON file of BenchmarkJSONFileGroupBy")

// writeBidsFile writes n JSON lines of Nexmark-like bids, the same for
// the same n: 10,000 auctions, prices up to 10,000,000, four channels.
func writeBidsFile(tb testing.TB, dir string, n int) string {
	tb.Helper()
	p := filepath.Join(dir, "bids.json")
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	channels := []string{"Google", "Facebook", "Baidu", "Apple"}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		auction := 1000 + rng.Int64N(10_000)
		bidder := 2000 + rng.Int64N(100_000)
		price := 1 + rng.Int64N(10_000_000)
		ch := channels[rng.IntN(len(channels))]
		ts := base.Add(time.Duration(i) * time.Millisecond).Format("2006-01-02 15:04:05.000")
		fmt.Fprintf(w, `{"auction":%d,"bidder":%d,"price":%d,"channel":"%s","url":"https://www.nexmark.com/%s/item.htm?query=1&channel_id=%d","dateTime":"%s","extra":"%x"}`+"\n",
			auction, bidder, price, ch, ch, rng.IntN(1<<20), ts, rng.Uint64())
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return p
}

// aggState is COUNT(*) and MAX(price) of one auction.
type aggState struct{ count, max int64 }

// bidRecord holds the fields the query needs; goccy/go-json skips the
// others. This is the strictest yardstick: a hand-written program for
// this query decodes nothing else.
type bidRecord struct {
	Auction int64 `json:"auction"`
	Price   int64 `json:"price"`
}

// handLoop is the yardstick: read the lines, decode each with goccy/go-json
// into a struct, keep COUNT and MAX per auction in a map.
func handLoop(tb testing.TB, path string) (map[int64]aggState, int) {
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	out := map[int64]aggState{}
	n := 0
	var rec bidRecord
	for sc.Scan() {
		if err := gojson.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatal(err)
		}
		s := out[rec.Auction]
		s.count++
		if s.count == 1 || rec.Price > s.max {
			s.max = rec.Price
		}
		out[rec.Auction] = s
		n++
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out, n
}

const bidsDDL = `
CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
  dateTime TIMESTAMP(3), extra STRING)
WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE snk (auction BIGINT, c BIGINT, m BIGINT) WITH ('connector' = 'blackhole');
`

const bidsQuery = `SELECT auction, COUNT(*), MAX(price) FROM bids GROUP BY auction`

// engineResult runs bidsQuery as a SELECT and materializes its changelog
// into the final table, for the check against the loop.
func engineResult(tb testing.TB, path string) map[int64]aggState {
	s := engine.NewSession(io.Discard)
	stmts, err := parser.Parse(fmt.Sprintf(bidsDDL, path) + bidsQuery + ";")
	if err != nil {
		tb.Fatal(err)
	}
	var r *engine.Result
	for _, st := range stmts {
		if r, err = s.Execute(context.Background(), st); err != nil {
			tb.Fatal(err)
		}
	}
	if r.Query == nil {
		tb.Fatal("the query gave no result to run")
	}
	table := dyntable.NewTable(nil)
	err = r.Query.Run(context.Background(), func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			if err := table.Apply(ch); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	out := map[int64]aggState{}
	for _, row := range table.Rows() {
		k := row[0].Int()
		if _, dup := out[k]; dup {
			tb.Fatalf("auction %d twice in the engine's result", k)
		}
		out[k] = aggState{count: row[1].Int(), max: row[2].Int()}
	}
	return out
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkJSONFileGroupBy is issue 12's JSON file pipeline: the same
// file of JSON lines (-jsonfile.rows bids, 2,000,000 by default) read by
// a hand-written goccy/go-json loop and by the engine running
//
//	INSERT INTO snk SELECT auction, COUNT(*), MAX(price) FROM bids GROUP BY auction
//
// (filesystem source, blackhole sink, parallelism 1), one after the other
// in each iteration. It reports rows/s of both (wall clock), rows per CPU
// second of both (the engine's goroutines may use more than one core),
// and the ratios engine time ÷ loop time. Each side's time ends with a
// forced collection of its garbage. Before timing, the engine's final
// materialized result of the same SELECT must equal the loop's map.
//
//	go test -run=NONE -bench=JSONFileGroupBy -benchtime=3x ./bench
func BenchmarkJSONFileGroupBy(b *testing.B) {
	path := writeBidsFile(b, b.TempDir(), *jsonRows)
	want, n := handLoop(b, path)
	if n != *jsonRows {
		b.Fatalf("the loop read %d lines, want %d", n, *jsonRows)
	}
	got := engineResult(b, path)
	if len(got) != len(want) {
		b.Fatalf("the engine gives %d auctions, the loop %d", len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			b.Fatalf("auction %d: the engine gives %+v (present %v), the loop %+v", k, g, ok, w)
		}
	}
	insert := fmt.Sprintf(bidsDDL, path) + "INSERT INTO snk " + bidsQuery + ";"
	var loopWall, loopCPU, engWall, engCPU time.Duration
	b.ResetTimer()
	for range b.N {
		// Each side ends with a collection, so that it pays for its own
		// garbage rather than leaving it to be collected in the other's time.
		runtime.GC()
		t0, c0 := time.Now(), cpuTime()
		if _, m := handLoop(b, path); m != n {
			b.Fatalf("the loop read %d lines, want %d", m, n)
		}
		runtime.GC()
		t1, c1 := time.Now(), cpuTime()
		runScript(b, insert)
		runtime.GC()
		t2, c2 := time.Now(), cpuTime()
		loopWall, loopCPU = loopWall+t1.Sub(t0), loopCPU+c1-c0
		engWall, engCPU = engWall+t2.Sub(t1), engCPU+c2-c1
	}
	b.StopTimer()
	rows := float64(n * b.N)
	b.ReportMetric(rows/loopWall.Seconds(), "loop-rows/s")
	b.ReportMetric(rows/engWall.Seconds(), "engine-rows/s")
	b.ReportMetric(engWall.Seconds()/loopWall.Seconds(), "ratio")
	b.ReportMetric(rows/loopCPU.Seconds(), "loop-rows/cpu-s")
	b.ReportMetric(rows/engCPU.Seconds(), "engine-rows/cpu-s")
	b.ReportMetric(engCPU.Seconds()/loopCPU.Seconds(), "cpu-ratio")
}
