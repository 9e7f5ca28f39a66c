package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// srcBroker runs a local broker with the given topics for one test.
func srcBroker(t testing.TB, partitions int, topics ...string) *broker.Broker {
	t.Helper()
	b, err := broker.Start(broker.Config{Topics: topics, Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// toPartition sends each message to the partition it names.
type toPartition struct{}

func (toPartition) Balance(m kafkago.Message, _ ...int) int { return m.Partition }

// srcMsg is a record to produce: a value for a partition, at a time.
type srcMsg struct {
	p     int
	value string
	at    time.Time // zero: now
}

// produce writes msgs with a plain kafka-go Writer, in order.
func produce(t testing.TB, addr, topic string, msgs ...srcMsg) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: topic, RequiredAcks: kafkago.RequireAll,
		Balancer: toPartition{}, BatchSize: 10000, BatchTimeout: time.Millisecond}
	defer w.Close()
	ms := make([]kafkago.Message, len(msgs))
	for i, m := range msgs {
		ms[i] = kafkago.Message{Partition: m.p, Value: []byte(m.value), Time: m.at}
	}
	if err := w.WriteMessages(ctx, ms...); err != nil {
		t.Fatal(err)
	}
}

// srcTable is a table of (id BIGINT, v STRING) read from topic.
func srcTable(addr, topic string, opts ...string) *connectors.Table {
	o := map[string]string{
		"connector":                    "kafka",
		"topic":                        topic,
		"properties.bootstrap.servers": addr,
		"scan.startup.mode":            "earliest-offset",
		"scan.bounded.mode":            "latest-offset",
		"format":                       "json",
	}
	for i := 0; i+1 < len(opts); i += 2 {
		if opts[i+1] == "" {
			delete(o, opts[i])
		} else {
			o[opts[i]] = opts[i+1]
		}
	}
	return &connectors.Table{Name: "t", Options: o, Columns: []connectors.Column{
		{Name: "id", Type: types.TypeBigInt}, {Name: "v", Type: types.TypeString}}}
}

// recorder is a SourceOutput that keeps the changes and, as the
// checkpoint coordinator does, takes the position inside Emit.
type recorder struct {
	dataflow.NoControl
	mu        sync.Mutex
	src       *Source
	rows      []string // "+I[1, a]"
	positions [][]byte // after each chunk
	ends      []int    // len(rows) after each chunk
	idle      int      // EmitWatermark calls
}

func (r *recorder) Emit(c *dyntable.Chunk) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range c.Changes {
		r.rows = append(r.rows, dyntable.FormatChange(ch, []types.Type{types.TypeBigInt, types.TypeString}))
	}
	pos, err := r.src.SnapshotPosition(0)
	if err != nil {
		return err
	}
	r.positions = append(r.positions, pos)
	r.ends = append(r.ends, len(r.rows))
	return nil
}

func (r *recorder) EmitWatermark(int64) error {
	r.mu.Lock()
	r.idle++
	r.mu.Unlock()
	return nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.rows...)
}

// openSource creates and opens subtask of parallelism of t's source.
func openSource(t testing.TB, tbl *connectors.Table, subtask, parallelism int) *Source {
	t.Helper()
	c, err := connectors.Lookup("kafka")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := c.(connectors.SourceConnector).NewScan(tbl, &connectors.Env{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := sc.Create(subtask, parallelism)
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*Source)
	if err := s.Open(&dataflow.OpContext{Subtask: subtask, Parallelism: parallelism}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// readAll runs a bounded source to its end.
func readAll(t testing.TB, s *Source) (*recorder, error) {
	t.Helper()
	r := &recorder{src: s}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.Run(ctx, r)
	return r, err
}

// rowsOf formats values as the recorder does: "+I[<id>, <v>]".
func rowsOf(vs ...string) []string {
	var out []string
	for _, v := range vs {
		var id int
		fmt.Sscanf(v, `{"id":%d`, &id)
		v := v[strings.Index(v, `"v":"`)+5 : strings.LastIndex(v, `"`)]
		out = append(out, fmt.Sprintf("+I[%d, %s]", id, v))
	}
	return out
}

func sorted(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}

func sameRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	g, w := sorted(got), sorted(want)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("%s:\n got  %q\n want %q", what, g, w)
	}
}

func js(id int, v string) string { return fmt.Sprintf(`{"id":%d,"v":"%s"}`, id, v) }

// TestStartupModes reads a two-partition topic with each startup mode.
// Partition 0 holds ids 1..3 at t0+0s, +1s, +2s; partition 1 ids 4..5 at
// t0+0.5s, +1.5s. Offsets are 0.. within each partition.
func TestStartupModes(t *testing.T) {
	b := srcBroker(t, 2, "s")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sec := func(f float64) time.Time { return t0.Add(time.Duration(f * float64(time.Second))) }
	produce(t, b.Addr(), "s",
		srcMsg{0, js(1, "a"), sec(0)}, srcMsg{0, js(2, "b"), sec(1)}, srcMsg{0, js(3, "c"), sec(2)},
		srcMsg{1, js(4, "d"), sec(0.5)}, srcMsg{1, js(5, "e"), sec(1.5)})
	all := rowsOf(js(1, "a"), js(2, "b"), js(3, "c"), js(4, "d"), js(5, "e"))

	read := func(opts ...string) ([]string, error) {
		s := openSource(t, srcTable(b.Addr(), "s", opts...), 0, 1)
		r, err := readAll(t, s)
		return r.got(), err
	}
	t.Run("earliest-offset", func(t *testing.T) {
		got, err := read()
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "earliest", got, all)
	})
	t.Run("timestamp", func(t *testing.T) {
		// From t0+1s: ids 2, 3 (partition 0) and 5 (partition 1).
		got, err := read("scan.startup.mode", "timestamp", "scan.startup.timestamp-millis", fmt.Sprint(sec(1).UnixMilli()))
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "timestamp", got, rowsOf(js(2, "b"), js(3, "c"), js(5, "e")))
		// After every record: nothing.
		got, err = read("scan.startup.mode", "timestamp", "scan.startup.timestamp-millis", fmt.Sprint(sec(10).UnixMilli()))
		if err != nil || len(got) != 0 {
			t.Fatalf("timestamp after the end: %q, %v", got, err)
		}
	})
	t.Run("specific-offsets", func(t *testing.T) {
		// Partition 0 from offset 2 (id 3); partition 1 is not named: earliest.
		got, err := read("scan.startup.mode", "specific-offsets", "scan.startup.specific-offsets", "partition:0,offset:2")
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "specific", got, rowsOf(js(3, "c"), js(4, "d"), js(5, "e")))
	})
	t.Run("bounded-specific-offsets", func(t *testing.T) {
		// End before offset 1 in partition 0 (only id 1) and before offset 2 in partition 1 (ids 4, 5).
		got, err := read("scan.bounded.mode", "specific-offsets", "scan.bounded.specific-offsets", "partition:0,offset:1;partition:1,offset:2")
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "bounded specific", got, rowsOf(js(1, "a"), js(4, "d"), js(5, "e")))
	})
	t.Run("group-offsets", func(t *testing.T) {
		// No committed offset and the default reset 'none': an error naming the group.
		_, err := read("scan.startup.mode", "group-offsets", "properties.group.id", "g1")
		if err == nil || !strings.Contains(err.Error(), "group 'g1' has no committed offset") {
			t.Fatalf("want a missing-offset error, got %v", err)
		}
		got, err := read("scan.startup.mode", "group-offsets", "properties.group.id", "g1", "properties.auto.offset.reset", "earliest")
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "group reset earliest", got, all)
		// Commit partition 0 at 1 and partition 1 at 2 (its end), then read: ids 2, 3.
		c := &kafkago.Client{Addr: kafkago.TCP(b.Addr())}
		res, err := c.OffsetCommit(context.Background(), &kafkago.OffsetCommitRequest{GroupID: "g2", GenerationID: -1,
			Topics: map[string][]kafkago.OffsetCommit{"s": {{Partition: 0, Offset: 1}, {Partition: 1, Offset: 2}}}})
		if err != nil {
			t.Fatal(err)
		}
		for _, ps := range res.Topics {
			for _, p := range ps {
				if p.Error != nil {
					t.Fatal(p.Error)
				}
			}
		}
		got, err = read("scan.startup.mode", "group-offsets", "properties.group.id", "g2")
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "group-offsets", got, rowsOf(js(2, "b"), js(3, "c")))
	})
	t.Run("latest-offset", func(t *testing.T) {
		// Unbounded from the end: only records written after the start.
		s := openSource(t, srcTable(b.Addr(), "s", "scan.startup.mode", "latest-offset", "scan.bounded.mode", ""), 0, 1)
		if s.sc.Bounded() {
			t.Fatal("an unbounded table reports Bounded")
		}
		r := &recorder{src: s}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx, r) }()
		// Wait until the start offsets are resolved: the first idle round.
		waitFor(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.idle > 0 })
		produce(t, b.Addr(), "s", srcMsg{p: 1, value: js(6, "f")}, srcMsg{p: 0, value: js(7, "g")})
		waitFor(t, func() bool { return len(r.got()) >= 2 })
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Run after cancel: %v", err)
		}
		sameRows(t, "latest", r.got(), rowsOf(js(6, "f"), js(7, "g")))
	})
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPartitionAssignment: partition i of a topic goes to subtask i mod p;
// the subtasks together read every row once.
func TestPartitionAssignment(t *testing.T) {
	b := srcBroker(t, 4, "a4")
	var msgs []srcMsg
	var want []string
	for i := 0; i < 40; i++ {
		msgs = append(msgs, srcMsg{p: i % 4, value: js(i, fmt.Sprintf("p%d", i%4))})
		want = append(want, fmt.Sprintf("+I[%d, p%d]", i, i%4))
	}
	produce(t, b.Addr(), "a4", msgs...)
	var got []string
	for sub := 0; sub < 3; sub++ {
		s := openSource(t, srcTable(b.Addr(), "a4"), sub, 3)
		var parts []int32
		for _, sp := range s.splits {
			parts = append(parts, sp.partition)
		}
		wantParts := map[int][]int32{0: {0, 3}, 1: {1}, 2: {2}}[sub]
		if fmt.Sprint(parts) != fmt.Sprint(wantParts) {
			t.Fatalf("subtask %d reads partitions %v, want %v", sub, parts, wantParts)
		}
		r, err := readAll(t, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range r.got() {
			p := int32(row[len(row)-2] - '0')
			if !contains32(wantParts, p) {
				t.Fatalf("subtask %d read %s of partition %d", sub, row, p)
			}
		}
		got = append(got, r.got()...)
	}
	sameRows(t, "all subtasks", got, want)
}

func contains32(xs []int32, x int32) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestMalformedRecords: by default a malformed record fails the source
// with its topic, partition and offset; with json.ignore-parse-errors it
// is skipped and counted.
func TestMalformedRecords(t *testing.T) {
	b := srcBroker(t, 2, "m")
	produce(t, b.Addr(), "m",
		srcMsg{p: 1, value: js(1, "a")}, srcMsg{p: 1, value: js(2, "b")},
		srcMsg{p: 1, value: `{"id": 3, "v": "c"`}, // offset 2 of partition 1: no closing brace
		srcMsg{p: 1, value: `{"id": "x", "v": "d"}`}, srcMsg{p: 0, value: js(5, "e")}, srcMsg{p: 1, value: js(6, "f")})
	s := openSource(t, srcTable(b.Addr(), "m"), 0, 1)
	_, err := readAll(t, s)
	var rerr *RecordError
	if !errors.As(err, &rerr) || rerr.Topic != "m" || rerr.Partition != 1 || rerr.Offset != 2 {
		t.Fatalf("want a RecordError at m/1/2, got %v", err)
	}
	for _, want := range []string{"topic 'm'", "partition 1", "offset 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not name %s", err, want)
		}
	}
	before := testCounterValue(t, "m")
	s = openSource(t, srcTable(b.Addr(), "m", "json.ignore-parse-errors", "true"), 0, 1)
	r, err := readAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "skipping", r.got(), rowsOf(js(1, "a"), js(2, "b"), js(5, "e"), js(6, "f")))
	if s.SkippedRecords() != 2 {
		t.Fatalf("skipped %d, want 2", s.SkippedRecords())
	}
	if d := testCounterValue(t, "m") - before; d != 2 {
		t.Fatalf("the metric counted %v, want 2", d)
	}
}

// testCounterValue reads the skipped-records counter of topic.
func testCounterValue(t testing.TB, topic string) float64 {
	t.Helper()
	var m dto.Metric
	if err := skippedRecords.WithLabelValues(topic).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestSubtaskWithoutPartitions: with more subtasks than partitions, an
// unbounded subtask that reads nothing stays up (a finished source would
// end the job's checkpoints) and keeps offering the runtime chances to
// inject barriers; a bounded one ends at once.
func TestSubtaskWithoutPartitions(t *testing.T) {
	b := srcBroker(t, 2, "few")
	s := openSource(t, srcTable(b.Addr(), "few", "scan.bounded.mode", ""), 2, 3)
	if len(s.splits) != 0 {
		t.Fatalf("subtask 2 of 3 reads %d partitions of 2", len(s.splits))
	}
	r := &recorder{src: s}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, r) }()
	waitFor(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.idle >= 3 })
	select {
	case err := <-done:
		t.Fatalf("the unbounded subtask ended: %v", err)
	default:
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %v", err)
	}
	if _, err := readAll(t, openSource(t, srcTable(b.Addr(), "few"), 2, 3)); err != nil {
		t.Fatal(err)
	}
}
