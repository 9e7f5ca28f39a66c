package kafka

import (
	"strconv"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dyntable"
)

// BenchmarkTxnProducer measures the transactional producer alone against
// the local broker: 100-byte values with 8-byte keys, 4 partitions, a
// transaction (AddPartitionsToTxn, RawProduce, EndTxn) every 10,000
// records, as a sink checkpointing every ~100 ms at 100K records/s would.
// One op is one record; records/s is the figure to compare.
func BenchmarkTxnProducer(b *testing.B) {
	br := startBroker(b, 4)
	ctx := ctxT(b)
	c := kafkaClient([]string{br.Addr()}, 30*time.Second)
	p, err := newTxnProducer(ctx, c, "out", 4, "bench-0-0", time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 100)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	part := newPartitioner("default", 0)
	const perTxn = 10000
	b.SetBytes(108)
	b.ResetTimer()
	start := time.Now()
	inTxn := 0
	for i := 0; i < b.N; i++ {
		if inTxn == 0 {
			if err := p.begin(); err != nil {
				b.Fatal(err)
			}
		}
		key := []byte(strconv.Itoa(10000000 + i%1000000))
		if err := p.add(ctx, part.partition(key, 4), key, value, nil, time.Time{}); err != nil {
			b.Fatal(err)
		}
		if inTxn++; inTxn == perTxn || i == b.N-1 {
			h, err := p.preCommit(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if err := endTxn(ctx, c, h, true); err != nil {
				b.Fatal(err)
			}
			inTxn = 0
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}

// BenchmarkTxnSinkWrite measures the exactly-once sink's handler: JSON
// encoding of (BIGINT, STRING) rows, murmur2 partitioning over 4
// partitions and the producer, with a commit every 10 chunks of 1,000.
func BenchmarkTxnSinkWrite(b *testing.B) {
	br := startBroker(b, 4)
	ctx := ctxT(b)
	cfg, err := parseSinkConfig(sinkTable(br.Addr(), "key.fields", "k", "key.format", "json"), false)
	if err != nil {
		b.Fatal(err)
	}
	h := newTxnHandler(cfg)
	if err := h.Open(ctx, twophase.SubtaskInfo{JobName: "bench", SinkName: "out"}); err != nil {
		b.Fatal(err)
	}
	chunks := make([]*dyntable.Chunk, 10)
	for i := range chunks {
		chunks[i] = rowsChunk(dyntable.Insert, i*1000, (i+1)*1000)
	}
	b.ResetTimer()
	start := time.Now()
	rows := 0
	for i := 0; i < b.N; i++ {
		txn, err := h.BeginTransaction(ctx, int64(i))
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range chunks {
			if err := h.Write(ctx, txn, c); err != nil {
				b.Fatal(err)
			}
			rows += c.Len()
		}
		hd, err := h.PreCommit(ctx, txn)
		if err != nil {
			b.Fatal(err)
		}
		_ = h.Extra()
		if err := h.Commit(ctx, hd); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "records/s")
}
