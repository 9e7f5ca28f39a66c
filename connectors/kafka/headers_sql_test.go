package kafka_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The 'headers' metadata column reads a record's headers as a
// MAP<STRING, BYTES>, as Flink's Kafka connector does: no headers is an
// empty map (never NULL), a repeated key keeps its last value, a null
// header value is NULL. The records are written by franz-go, an
// independent client, so the expectations follow from what it wrote.
func TestSQLHeadersRead(t *testing.T) {
	b, err := broker.Start(broker.Config{Topics: []string{"hd"}, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic("hd"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recs := []*kgo.Record{
		{Value: []byte(`{"k": 1}`), Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("abc")}, {Key: "bin", Value: []byte{0, 0xff}}}},
		{Value: []byte(`{"k": 2}`)},
		{Value: []byte(`{"k": 3}`), Headers: []kgo.RecordHeader{{Key: "trace", Value: []byte("1")}, {Key: "n", Value: nil}, {Key: "trace", Value: []byte("2")}}},
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var out srcSyncBuffer
	job := srcRunSQL(t, &out, fmt.Sprintf(`
CREATE TABLE hd (
  k BIGINT,
  h MAP<STRING, BYTES> METADATA FROM 'headers' VIRTUAL
) WITH (
  'connector' = 'kafka', 'topic' = 'hd', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json');
CREATE TABLE sink (k BIGINT, n INT, trace BYTES, bin BYTES, nnull BOOLEAN, hasn BOOLEAN) WITH ('connector' = 'print');
INSERT INTO sink SELECT k, CARDINALITY(h), h['trace'], h['bin'], h['n'] IS NULL, h IS NULL FROM hd;
`, b.Addr()))
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	sort.Strings(got)
	want := []string{
		"+I[1, 2, x'616263', x'00ff', true, false]",
		"+I[2, 0, NULL, NULL, true, false]",
		"+I[3, 2, x'32', NULL, true, false]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// An INSERT writes the 'headers' and 'timestamp' metadata columns that
// are not VIRTUAL, in their declared places, as Flink's sink does: a
// NULL map writes no headers, an entry whose value is NULL is left out,
// the timestamp becomes the record's. Checked with franz-go reading the
// topic, for the at-least-once writer and the exactly-once one (two code
// paths).
func TestSQLHeadersWrite(t *testing.T) {
	for _, guarantee := range []string{"at-least-once", "exactly-once"} {
		t.Run(guarantee, func(t *testing.T) {
			b, err := broker.Start(broker.Config{Topics: []string{"out"}, Partitions: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			job, err := runSQL(t, fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'state.checkpoints.dir' = '%s';
CREATE TABLE src (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '3',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '3');
CREATE TABLE dst (
  k BIGINT,
  h MAP<STRING, BYTES> METADATA FROM 'headers',
  part INT METADATA FROM 'partition' VIRTUAL,
  ts TIMESTAMP(3) METADATA FROM 'timestamp',
  tag STRING
) WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = '%s', 'format' = 'json',
  'sink.delivery-guarantee' = '%s', 'sink.transactional-id-prefix' = 'hd-test');
INSERT INTO dst SELECT k,
  CASE WHEN k = 1 THEN MAP['trace', CAST('abc' AS BYTES), 'skip', CAST(NULL AS BYTES)]
       WHEN k = 2 THEN MAP['a', X'00ff'] END,
  TIMESTAMPADD(SECOND, CAST(k AS INT), TIMESTAMP '2026-01-01 00:00:00'),
  'x'
FROM src;
`, t.TempDir(), b.Addr(), guarantee))
			if err != nil {
				t.Fatal(err)
			}
			if err := job.Wait(); err != nil {
				t.Fatal(err)
			}
			rs := readRecords(t, b.Addr(), "out", true, false)
			var got []string
			for _, r := range rs {
				var hs []string
				for _, h := range r.Headers {
					hs = append(hs, fmt.Sprintf("%s=%x", h.Key, h.Value))
				}
				got = append(got, fmt.Sprintf("%s %s [%s]", r.Value, r.Timestamp.UTC().Format("15:04:05.000"), strings.Join(hs, " ")))
			}
			sort.Strings(got)
			want := []string{
				`{"k":1,"tag":"x"} 00:00:01.000 [trace=616263]`,
				`{"k":2,"tag":"x"} 00:00:02.000 [a=00ff]`,
				`{"k":3,"tag":"x"} 00:00:03.000 []`,
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// A metadata column the sink cannot write ('partition', 'offset',
// 'topic') must be VIRTUAL in a table that is inserted into.
func TestSQLMetadataNotWritable(t *testing.T) {
	_, err := runSQL(t, `
CREATE TABLE src (k BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1');
CREATE TABLE dst (k BIGINT, o BIGINT METADATA FROM 'offset')
WITH ('connector' = 'kafka', 'topic' = 'out', 'properties.bootstrap.servers' = 'localhost:1', 'format' = 'json');
INSERT INTO dst SELECT k, 1 FROM src;
`)
	if err == nil || !strings.Contains(err.Error(), "metadata column 'o' (METADATA FROM 'offset') cannot be written by connector 'kafka'") {
		t.Fatalf("got %v", err)
	}
}
