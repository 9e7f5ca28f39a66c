package broker

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

// TestProduceConsume checks that the local broker speaks the protocol
// kafka-go uses: a topic created here is written and read back.
func TestProduceConsume(t *testing.T) {
	b, err := Start(Config{Topics: []string{"t"}, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := &kafka.Writer{Addr: kafka.TCP(b.Addr()), Topic: "t", RequiredAcks: kafka.RequireAll, Balancer: &kafka.Hash{}}
	defer w.Close()
	if err := w.WriteMessages(ctx, kafka.Message{Key: []byte("k"), Value: []byte("v1")}); err != nil {
		t.Fatal(err)
	}
	c := &kafka.Client{Addr: kafka.TCP(b.Addr())}
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{"t"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(md.Topics) != 1 || len(md.Topics[0].Partitions) != 2 {
		t.Fatalf("metadata: %+v", md.Topics)
	}
	var got []string
	for p := 0; p < 2; p++ {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{b.Addr()}, Topic: "t", Partition: p, MaxWait: 100 * time.Millisecond})
		r.SetOffset(0)
		rctx, rc := context.WithTimeout(ctx, time.Second)
		m, err := r.ReadMessage(rctx)
		rc()
		if err == nil {
			got = append(got, string(m.Value))
		}
		r.Close()
	}
	if len(got) != 1 || got[0] != "v1" {
		t.Fatalf("read back %q, want [v1]", got)
	}
}
