package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// tjDiscard drops output and accepts the held-back watermarks.
type tjDiscard struct{ rows int }

func (d *tjDiscard) Emit(c *dyntable.Chunk)    { d.rows += c.Len() }
func (d *tjDiscard) EmitWatermark(int64) error { return nil }

// BenchmarkIntervalJoinOperator drives the interval join operator alone:
// 1,000 keys, rows alternating between the sides in chunks of 256, one
// row per millisecond of event time per side, bounds l.ts - r.ts in
// [-1 s, +1 s] (so each row meets about 2 rows of the other side with its
// key), and a watermark 100 ms behind after every chunk, which keeps
// about 2,000 rows per side in state. One op is one input row.
func BenchmarkIntervalJoinOperator(b *testing.B) {
	for _, backend := range []string{"memory", "pebble"} {
		b.Run(backend, func(b *testing.B) {
			var st state.Store
			if backend == "memory" {
				st = state.NewMemoryStore("ij")
			} else {
				ps, err := state.OpenPebbleStore(b.TempDir(), "ij", state.RangeFor(0, 1), state.PebbleOptions{})
				if err != nil {
					b.Fatal(err)
				}
				defer ps.Close()
				st = ps
			}
			op := operators.NewIntervalJoin(operators.IntervalJoinSpec{
				Join:     operators.JoinSpec{Type: operators.InnerJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 3, RightWidth: 3},
				LeftTime: 1, RightTime: 1, Lower: -int64(time.Second), Upper: int64(time.Second),
			})
			if err := op.Open(&dataflow.OpContext{Parallelism: 1, State: st}); err != nil {
				b.Fatal(err)
			}
			out := &tjDiscard{}
			const chunk = 256
			base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
			b.ResetTimer()
			for i := 0; i < b.N; i += chunk {
				side := (i / chunk) % 2
				c := &dyntable.Chunk{}
				for k := i; k < i+chunk && k < b.N; k++ {
					ts := base + int64(k/2)*int64(time.Millisecond)
					c.Append(dyntable.Insert, types.Row{types.NewInt(int64(k % 1000)), types.NewTimestamp(ts), types.NewString("payload")})
				}
				if err := op.ProcessChunk(side, c, out); err != nil {
					b.Fatal(err)
				}
				wm := base + int64(i/2)*int64(time.Millisecond) - 100*int64(time.Millisecond)
				if err := op.ProcessWatermark(wm, out); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(out.rows)/float64(b.N), "out/row")
			_ = op.Close()
		})
	}
}

// BenchmarkIntervalJoinNexmark is an end-to-end SQL interval join over
// the Nexmark generator: bids joined with their auction when placed within
// 10 s of its creation, into a blackhole sink, at parallelism 1. One op
// is one generated event (person, auction or bid).
func BenchmarkIntervalJoinNexmark(b *testing.B) {
	events := max(b.N, 1000)
	sql := fmt.Sprintf(`
CREATE TABLE auction (id BIGINT, seller BIGINT, dateTime TIMESTAMP(3),
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
  WITH ('connector' = 'nexmark', 'table' = 'auction', 'events.num' = '%[1]d', 'first-event.rate' = '10000000');
CREATE TABLE bid (auction BIGINT, price BIGINT, dateTime TIMESTAMP(3),
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
  WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '%[1]d', 'first-event.rate' = '10000000');
CREATE TABLE snk (id BIGINT, seller BIGINT, price BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT a.id, a.seller, b.price FROM auction a JOIN bid b
  ON a.id = b.auction AND b.dateTime BETWEEN a.dateTime AND a.dateTime + INTERVAL '10' SECOND;`, events)
	b.ResetTimer()
	runScript(b, sql)
	b.StopTimer()
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
