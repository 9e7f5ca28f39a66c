package kafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/streamsql/streamsql/connectors/kafka/broker"
)

// METADATA columns read each record's topic, partition, offset and
// timestamp (Flink's keys), in their declared places among the physical
// and computed columns, and a watermark may be declared on the timestamp.
// The expected rows follow from the records written: partition p holds
// offsets 0.. in order, each record's timestamp is the one it was written
// with.
func TestSQLMetadataColumns(t *testing.T) {
	b, err := broker.Start(broker.Config{Topics: []string{"md"}, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &kafkago.Writer{Addr: kafkago.TCP(b.Addr()), Topic: "md", RequiredAcks: kafkago.RequireAll,
		Balancer:  kafkago.BalancerFunc(func(m kafkago.Message, _ ...int) int { return m.Partition }),
		BatchSize: 10, BatchTimeout: time.Millisecond}
	defer w.Close()
	msgs := []kafkago.Message{
		{Partition: 0, Time: t0.Add(1 * time.Second), Value: []byte(`{"k": 1}`)},
		{Partition: 0, Time: t0.Add(2 * time.Second), Value: []byte(`{"k": 2}`)},
		{Partition: 1, Time: t0.Add(3 * time.Second), Value: []byte(`{"k": 3}`)},
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	var out srcSyncBuffer
	job := srcRunSQL(t, &out, fmt.Sprintf(`
CREATE TABLE md (
  ts TIMESTAMP(3) METADATA FROM 'timestamp',
  k BIGINT,
  p INT METADATA FROM 'partition' VIRTUAL,
  `+"`offset`"+` BIGINT METADATA VIRTUAL,
  topic STRING METADATA VIRTUAL,
  k2 AS k * 2,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'kafka', 'topic' = 'md', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json', 'scan.parallelism' = '1');
CREATE TABLE sink (ts TIMESTAMP(3), k BIGINT, p INT, o BIGINT, topic STRING, k2 BIGINT) WITH ('connector' = 'print');
INSERT INTO sink SELECT * FROM md;
`, b.Addr()))
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(out.String())
	for _, want := range []string{
		"+I[2026-01-01 00:00:01.000, 1, 0, 0, md, 2]",
		"+I[2026-01-01 00:00:02.000, 2, 0, 1, md, 4]",
		"+I[2026-01-01 00:00:03.000, 3, 1, 0, md, 6]",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("output lacks %s:\n%s", want, got)
		}
	}
}
