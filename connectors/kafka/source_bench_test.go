package kafka

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// benchEvents is the input of BenchmarkSource: bills as JSON, about 90
// bytes each, over 4 partitions of the local broker.
const benchEvents = 400_000

var (
	benchOnce   sync.Once
	benchBroker *brokerHandle
)

type brokerHandle struct {
	addr string
	err  error
}

// benchTopic writes the input once per process.
func benchTopic(b *testing.B) string {
	benchOnce.Do(func() {
		bk, err := startBenchBroker()
		if err != nil {
			benchBroker = &brokerHandle{err: err}
			return
		}
		benchBroker = &brokerHandle{addr: bk}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		w := &kafkago.Writer{Addr: kafkago.TCP(bk), Topic: "bench", RequiredAcks: kafkago.RequireAll,
			Balancer: toPartition{}, BatchSize: 10000, BatchBytes: 8 << 20, BatchTimeout: time.Millisecond}
		defer w.Close()
		ms := make([]kafkago.Message, 0, 10000)
		for i := 0; i < benchEvents; i++ {
			ms = append(ms, kafkago.Message{Partition: i % 4, Value: fmt.Appendf(nil,
				`{"bill_id": %d, "user_id": %d, "cents": %d, "ts": "2026-01-01 00:%02d:%02d.000"}`, i, i%10007, i%5000, i/60%60, i%60)})
			if len(ms) == cap(ms) || i == benchEvents-1 {
				if err := w.WriteMessages(ctx, ms...); err != nil {
					benchBroker.err = err
					return
				}
				ms = ms[:0]
			}
		}
	})
	if benchBroker.err != nil {
		b.Fatal(benchBroker.err)
	}
	return benchBroker.addr
}

// counter is a SourceOutput that only counts.
type counter struct {
	dataflow.NoControl
	n atomic.Int64
}

func (c *counter) Emit(ch *dyntable.Chunk) error { c.n.Add(int64(len(ch.Changes))); return nil }
func (c *counter) EmitWatermark(int64) error     { return nil }

// BenchmarkSource reads the whole topic (Kafka → fetch → read_committed
// filter → JSON decode → chunks) with one or two subtasks and reports
// events/s. Run: go test -bench Source -run XXX ./connectors/kafka
func BenchmarkSource(b *testing.B) {
	addr := benchTopic(b)
	for _, p := range []int{1, 2} {
		b.Run(fmt.Sprintf("parallelism=%d", p), func(b *testing.B) {
			tbl := &connectors.Table{Name: "bills", Options: map[string]string{
				"connector": "kafka", "topic": "bench", "properties.bootstrap.servers": addr,
				"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset", "format": "json"},
				Columns: []connectors.Column{{Name: "bill_id", Type: types.TypeBigInt}, {Name: "user_id", Type: types.TypeBigInt},
					{Name: "cents", Type: types.TypeBigInt}, {Name: "ts", Type: types.Type{ID: types.Timestamp, Precision: 3}}}}
			sc, err := newScan(tbl)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				var c counter
				var wg sync.WaitGroup
				errs := make([]error, p)
				for s := 0; s < p; s++ {
					src, _ := sc.Create(s, p)
					if err := src.Open(&dataflow.OpContext{Subtask: s, Parallelism: p}); err != nil {
						b.Fatal(err)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer src.Close()
						errs[s] = src.Run(context.Background(), &c)
					}()
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						b.Fatal(err)
					}
				}
				if c.n.Load() != benchEvents {
					b.Fatalf("read %d events, want %d", c.n.Load(), benchEvents)
				}
			}
			b.ReportMetric(float64(benchEvents)*float64(b.N)/time.Since(start).Seconds(), "events/s")
		})
	}
}

func startBenchBroker() (string, error) {
	bk, err := broker.Start(broker.Config{Topics: []string{"bench"}, Partitions: 4})
	if err != nil {
		return "", err
	}
	// The broker lives until the test binary exits.
	return bk.Addr(), nil
}
