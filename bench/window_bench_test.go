package bench

import (
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/window"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Window aggregation throughput, end to end: nexmark bids -> watermark
// assigner -> window aggregation -> blackhole, parallelism 1. One op is
// one generated event (46 of 50 events are bids). Event times are spaced
// 0.1 ms apart (first-event.rate 10,000/s), so a 10 s window holds about
// 92,000 bids over about 2,000 distinct auctions.
func benchWindowSQL(b *testing.B, query string) {
	events := max(b.N, 1)
	sql := fmt.Sprintf(`
CREATE TABLE bid (auction BIGINT, price BIGINT, dateTime TIMESTAMP(3),
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '%d', 'first-event.rate' = '10000');
CREATE TABLE snk (auction BIGINT, ws TIMESTAMP(3), c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
%s`, events, query)
	b.ResetTimer()
	runScript(b, sql)
	b.StopTimer()
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkTumbleWindowCount is Nexmark q7's shape without the join:
// COUNT and SUM per auction per 10 s tumbling window.
func BenchmarkTumbleWindowCount(b *testing.B) {
	benchWindowSQL(b, `INSERT INTO snk SELECT auction, window_start, COUNT(*), SUM(price)
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;`)
}

// BenchmarkHopWindowCount is Nexmark q5's inner query: COUNT per auction
// per HOP window of 10 s sliding by 2 s (five windows per row, one
// slice per row).
func BenchmarkHopWindowCount(b *testing.B) {
	benchWindowSQL(b, `INSERT INTO snk SELECT auction, window_start, COUNT(*), SUM(price)
FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;`)
}

// The operator alone, fed prebuilt chunks of 1,024 rows (1,000 keys, one
// row every 0.1 ms) with a watermark after each chunk: what the window
// aggregation itself costs per row, in memory state.
func benchWindowOp(b *testing.B, win window.WindowSpec) {
	op, err := window.NewWindowAgg(window.WindowAggSpec{Window: win, TimeCol: 2, Keys: []int{0},
		Aggs: []operators.AggCall{
			{Kind: operators.AggCountStar, ResultType: types.TypeBigInt.WithNotNull(true)},
			{Kind: operators.AggSum, Arg: 1, ArgType: types.TypeBigInt, ResultType: types.TypeBigInt},
		},
		Out: []window.WindowOutCol{{Kind: window.WinKey}, {Kind: window.WinStart}, {Kind: window.WinEnd}}})
	if err != nil {
		b.Fatal(err)
	}
	if err := op.Open(&dataflow.OpContext{Parallelism: 1, State: state.NewMemoryStore("bench")}); err != nil {
		b.Fatal(err)
	}
	const chunk = 1024
	var out discard
	b.ResetTimer()
	ts := int64(1_700_000_000_000_000_000)
	for n := 0; n < b.N; n += chunk {
		c := &dyntable.Chunk{Changes: make([]dyntable.Change, 0, chunk)}
		for i := 0; i < chunk; i++ {
			ts += 100_000 // 0.1 ms
			k := int64((n + i) * 7919 % 1000)
			c.Changes = append(c.Changes, dyntable.Change{Kind: dyntable.Insert,
				Row: types.Row{types.NewInt(k), types.NewInt(k), types.NewTimestamp(ts)}})
		}
		if err := op.ProcessChunk(0, c, &out); err != nil {
			b.Fatal(err)
		}
		if err := op.ProcessWatermark(ts-4e9, &out); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

type discard struct{ rows int }

func (d *discard) Emit(c *dyntable.Chunk) { d.rows += len(c.Changes) }

func (*discard) EmitWatermark(int64) error { return nil }

func BenchmarkTumbleWindowOperator(b *testing.B) {
	benchWindowOp(b, window.WindowSpec{Kind: window.WindowTumble, Size: 10e9})
}

func BenchmarkHopWindowOperator(b *testing.B) {
	benchWindowOp(b, window.WindowSpec{Kind: window.WindowHop, Size: 10e9, Slide: 2e9})
}

// BenchmarkSessionWindowCount is Nexmark q11's shape: bids per bidder
// per session with a 10 s gap (the legacy GROUP BY SESSION form).
func BenchmarkSessionWindowCount(b *testing.B) {
	events := max(b.N, 1)
	sql := fmt.Sprintf(`
CREATE TABLE bid (bidder BIGINT, dateTime TIMESTAMP(3),
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '%d', 'first-event.rate' = '10000');
CREATE TABLE snk (bidder BIGINT, c BIGINT, s TIMESTAMP(3)) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT bidder, COUNT(*), SESSION_START(dateTime, INTERVAL '10' SECOND)
FROM bid GROUP BY bidder, SESSION(dateTime, INTERVAL '10' SECOND);`, events)
	b.ResetTimer()
	runScript(b, sql)
	b.StopTimer()
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
