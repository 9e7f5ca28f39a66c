package kafka_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/streamsql/streamsql/connectors/kafka"
	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
	"github.com/twmb/franz-go/pkg/kgo"
)

// srcSyncBuffer is a bytes.Buffer safe for a print sink's goroutines and
// the test reading it.
type srcSyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *srcSyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *srcSyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// srcRunSQL runs statements in a fresh session and returns the last job.
func srcRunSQL(t *testing.T, out *srcSyncBuffer, sql string) *engine.Job {
	t.Helper()
	s := engine.NewSession(out)
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	var job *engine.Job
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		if r.Job != nil {
			job = r.Job
		}
	}
	if job == nil {
		t.Fatal("no job started")
	}
	// A test that fails while the job runs must not remove its
	// directories under it: stop it first (cleanups run last-in first-out,
	// after the job's own, before t.TempDir's removal).
	t.Cleanup(func() { job.Cancel(); _ = job.Wait() })
	return job
}

type srcAgg struct{ n, total int64 }

var srcPrintLine = regexp.MustCompile(`^(?:\d+> )?(\+I|-U|\+U|-D)\[(\d+), (\d+), (\d+)\]$`)

// fold applies print-sink output to the upsert view of (user, n, total).
func srcFold(out string, view map[int64]srcAgg) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := srcPrintLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		u, _ := strconv.ParseInt(m[2], 10, 64)
		n, _ := strconv.ParseInt(m[3], 10, 64)
		s, _ := strconv.ParseInt(m[4], 10, 64)
		switch m[1] {
		case "+I", "+U":
			view[u] = srcAgg{n, s}
		case "-D":
			delete(view, u)
		}
	}
}

func srcWriteBills(t *testing.T, addr, topic string, bills ...[3]int64) {
	t.Helper()
	srcWriteBillsBatched(t, addr, topic, 5000, bills...)
}

// srcWriteBillsBatched writes bills in record batches of at most batch.
func srcWriteBillsBatched(t *testing.T, addr, topic string, batch int, bills ...[3]int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &kafkago.Writer{Addr: kafkago.TCP(addr), Topic: topic, RequiredAcks: kafkago.RequireAll,
		Balancer:  kafkago.BalancerFunc(func(m kafkago.Message, _ ...int) int { return m.Partition }),
		BatchSize: batch, BatchTimeout: time.Millisecond}
	defer w.Close()
	ms := make([]kafkago.Message, len(bills))
	for i, b := range bills {
		ms[i] = kafkago.Message{Partition: int(b[0]), Value: []byte(fmt.Sprintf(`{"user_id": %d, "cents": %d}`, b[1], b[2]))}
	}
	if err := w.WriteMessages(ctx, ms...); err != nil {
		t.Fatal(err)
	}
}

// srcBillsDDL: bill_id is never set nor used, so the scan is narrowed to
// (user_id, cents) and the source runs inside the planner's projecting
// wrapper, which must pass checkpoint events through.
const srcBillsDDL = `
CREATE TABLE bills (bill_id BIGINT, user_id BIGINT, cents BIGINT) WITH (
  'connector' = 'kafka', 'topic' = 'bills', 'properties.bootstrap.servers' = '%s',
  'properties.group.id' = 'billing',
  'scan.startup.mode' = 'earliest-offset', %s 'format' = 'json', 'scan.parallelism' = '2');
CREATE TABLE totals (user_id BIGINT, n BIGINT, total BIGINT, PRIMARY KEY (user_id) NOT ENFORCED) WITH ('connector' = 'print');
INSERT INTO totals SELECT user_id, COUNT(*), SUM(cents) FROM bills GROUP BY user_id;
`

// TestSQLJobOverFourPartitions runs a bounded SQL job over a
// four-partition topic at source parallelism 2, with a transaction that
// aborts in the middle of partition 1. The totals, by hand:
//
//	user 1: 100 (p0) + 250 (p1) + 50 (p3)        = 400 in 3 bills
//	user 2: 10 (p0) + 20 (p2)                    =  30 in 2 bills
//	user 3: 1000 (p1) + 1 (p2) + 2 (p2) + 3 (p3) = 1006 in 4 bills
//	the aborted 9999 of user 1 (p1) is not read (read_committed).
func TestSQLJobOverFourPartitions(t *testing.T) {
	b, err := broker.Start(broker.Config{Topics: []string{"bills"}, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	srcWriteBills(t, b.Addr(), "bills", [3]int64{0, 1, 100}, [3]int64{0, 2, 10}, [3]int64{1, 1, 250})
	tx, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID("sql"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	ctx := context.Background()
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := tx.ProduceSync(ctx, &kgo.Record{Topic: "bills", Partition: 1, Value: []byte(`{"user_id": 1, "cents": 9999}`)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := tx.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	srcWriteBills(t, b.Addr(), "bills", [3]int64{1, 3, 1000}, [3]int64{2, 2, 20}, [3]int64{2, 3, 1}, [3]int64{2, 3, 2},
		[3]int64{3, 1, 50}, [3]int64{3, 3, 3})

	var out srcSyncBuffer
	job := srcRunSQL(t, &out, fmt.Sprintf("SET 'parallelism.default' = '2';\n"+srcBillsDDL, b.Addr(), "'scan.bounded.mode' = 'latest-offset',"))
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	view := map[int64]srcAgg{}
	srcFold(out.String(), view)
	want := map[int64]srcAgg{1: {3, 400}, 2: {2, 30}, 3: {4, 1006}}
	if fmt.Sprint(view) != fmt.Sprint(want) {
		t.Fatalf("totals %v, want %v\noutput:\n%s", view, want, out.String())
	}
	if in, _ := job.Records(); in != 9 {
		t.Fatalf("the source emitted %d rows, want 9", in)
	}
}

// TestSQLRestoreFromCheckpoint: a checkpointed unbounded job reads the
// first half of the input; once a checkpoint has completed after it read
// everything, the job is killed (cancelled: only checkpoints survive),
// the second half is written, and the job is submitted again. It must
// resume from the stored offsets: it reads exactly the second half (no
// row twice, none skipped), and the totals equal those computed straight
// from the input.
func TestSQLRestoreFromCheckpoint(t *testing.T) {
	b, err := broker.Start(broker.Config{Topics: []string{"bills"}, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const n = 8000
	var bills [][3]int64
	want := map[int64]srcAgg{}
	for i := int64(0); i < n; i++ {
		u, c := i%13, i%101+1
		bills = append(bills, [3]int64{i % 4, u, c})
		a := want[u]
		a.n++
		a.total += c
		want[u] = a
	}
	srcWriteBills(t, b.Addr(), "bills", bills[:n/2]...)
	dir := t.TempDir()
	sql := fmt.Sprintf(`SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'kafka-restore';
SET 'execution.checkpointing.interval' = '50 ms';
SET 'state.checkpoints.dir' = '%s';
`, dir) + fmt.Sprintf(srcBillsDDL, b.Addr(), "")

	var out1 srcSyncBuffer
	j1 := srcRunSQL(t, &out1, sql)
	srcWaitUntil(t, func() bool { in, _ := j1.Records(); return in == n/2 })
	// A checkpoint that starts after everything was read holds the end
	// offsets; wait for two more to complete to be sure one did.
	st, _ := j1.CheckpointStats()
	srcWaitUntil(t, func() bool { s, _ := j1.CheckpointStats(); return s.Completed >= st.Completed+2 })
	// Completed checkpoints' offsets are committed to the group (for
	// monitoring): each partition's end, n/8 records each.
	srcWaitUntil(t, func() bool {
		return srcGroupOffsets(t, b.Addr(), "billing", "bills", 4) == fmt.Sprint([]int64{n / 8, n / 8, n / 8, n / 8})
	})
	j1.Cancel()
	_ = j1.Wait()

	srcWriteBills(t, b.Addr(), "bills", bills[n/2:]...)
	var out2 srcSyncBuffer
	j2 := srcRunSQL(t, &out2, sql)
	srcWaitUntil(t, func() bool { in, _ := j2.Records(); return in >= n/2 })
	time.Sleep(300 * time.Millisecond) // would any extra row show up?
	in, _ := j2.Records()
	st2, _ := j2.CheckpointStats()
	j2.Cancel()
	_ = j2.Wait()
	if st2.RestoredFrom == "" {
		t.Fatal("the second run did not restore")
	}
	if in != n/2 {
		t.Fatalf("the restored run read %d rows, want exactly the %d written since", in, n/2)
	}
	view := map[int64]srcAgg{}
	srcFold(out1.String(), view)
	srcFold(out2.String(), view)
	if fmt.Sprint(view) != fmt.Sprint(want) {
		t.Fatalf("totals %v\nwant   %v", view, want)
	}
}

func srcWaitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	// A safety net, not a timing assertion: under the race detector on
	// a loaded machine a restored run takes a minute.
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// srcGroupOffsets reads a group's committed offsets of topic's partitions.
func srcGroupOffsets(t *testing.T, addr, group, topic string, partitions int) string {
	t.Helper()
	c := &kafkago.Client{Addr: kafkago.TCP(addr)}
	ps := make([]int, partitions)
	for i := range ps {
		ps[i] = i
	}
	res, err := c.OffsetFetch(context.Background(), &kafkago.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: ps}})
	if err != nil {
		return err.Error()
	}
	offs := make([]int64, partitions)
	for _, p := range res.Topics[topic] {
		offs[p.Partition] = p.CommittedOffset
	}
	return fmt.Sprint(offs)
}

// TestSQLWatermarkPushDown: the planner hands the table's WATERMARK to
// the Kafka source, which keeps a watermark per partition. Partition 0
// holds 3000 events at 100 s .. 103 s, partition 1 five events at 1 s ..
// 5 s; one subtask reads both, partition 0's first. A per-subtask
// watermark would pass 100 s after the first chunk and drop partition 1's
// events as late. By hand, 10-second tumbling windows:
//
//	[00:00:00, 00:00:10)  5 events (partition 1)
//	[00:01:40, 00:01:50)  3000 events (partition 0)
func TestSQLWatermarkPushDown(t *testing.T) {
	b, err := broker.Start(broker.Config{Topics: []string{"ev"}, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &kafkago.Writer{Addr: kafkago.TCP(b.Addr()), Topic: "ev", RequiredAcks: kafkago.RequireAll,
		Balancer:  kafkago.BalancerFunc(func(m kafkago.Message, _ ...int) int { return m.Partition }),
		BatchSize: 5000, BatchTimeout: time.Millisecond}
	defer w.Close()
	var ms []kafkago.Message
	at := func(p int, d time.Duration) kafkago.Message {
		return kafkago.Message{Partition: p, Value: []byte(fmt.Sprintf(`{"k": 1, "ts": "%s"}`, t0.Add(d).Format("2006-01-02 15:04:05.000")))}
	}
	for i := 0; i < 3000; i++ {
		ms = append(ms, at(0, 100*time.Second+time.Duration(i)*time.Millisecond))
	}
	for i := 1; i <= 5; i++ {
		ms = append(ms, at(1, time.Duration(i)*time.Second))
	}
	if err := w.WriteMessages(ctx, ms...); err != nil {
		t.Fatal(err)
	}
	var out srcSyncBuffer
	job := srcRunSQL(t, &out, fmt.Sprintf(`
CREATE TABLE ev (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'kafka', 'topic' = 'ev', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', 'format' = 'json', 'scan.parallelism' = '1');
CREATE TABLE counts (ws TIMESTAMP(3), n BIGINT) WITH ('connector' = 'print');
INSERT INTO counts SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
  GROUP BY window_start, window_end;
`, b.Addr()))
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(out.String())
	for _, want := range []string{"+I[2026-01-01 00:00:00.000, 5]", "+I[2026-01-01 00:01:40.000, 3000]"} {
		if !strings.Contains(got, want) {
			t.Fatalf("output lacks %s:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "+I["); n != 2 {
		t.Fatalf("%d windows, want 2:\n%s", n, got)
	}
}

// slowBuffer is a print sink target that slows the job down (every
// hundredth write sleeps), so that checkpoints are taken mid-stream.
type slowBuffer struct {
	srcSyncBuffer
	writes atomic.Int64
}

func (s *slowBuffer) Write(p []byte) (int, error) {
	if s.writes.Add(1)%100 == 0 {
		time.Sleep(time.Millisecond)
	}
	return s.srcSyncBuffer.Write(p)
}

// TestSQLCrashMidStream: the checkpointed job is killed while it is still
// reading (after its first completed checkpoint), then submitted again.
// The second run restores state and offsets from the newest checkpoint;
// rows after it are read again, rows before it are not. The totals,
// folded from both runs' output, must equal those computed from the
// input: a row read twice would count twice (the restored state already
// holds it), a skipped row would be missing.
//
// The first checkpoint can, rarely, land only after every row was read;
// the resume then proves nothing, so such an attempt is repeated (up to
// five times) rather than passed.
func TestSQLCrashMidStream(t *testing.T) {
	for attempt := 1; ; attempt++ {
		if sqlCrashMidStream(t) || t.Failed() {
			return
		}
		if attempt == 5 {
			t.Fatal("in 5 attempts the first checkpoint never landed mid-stream")
		}
		t.Logf("attempt %d: the first checkpoint came after the last row; again", attempt)
	}
}

// sqlCrashMidStream runs one attempt; it reports false when the restored
// run had nothing left to read.
func sqlCrashMidStream(t *testing.T) bool {
	b, err := broker.Start(broker.Config{Topics: []string{"bills"}, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const n = 40000
	var bills [][3]int64
	want := map[int64]srcAgg{}
	for i := int64(0); i < n; i++ {
		u, c := i%13, i%101+1
		bills = append(bills, [3]int64{i % 4, u, c})
		a := want[u]
		a.n++
		a.total += c
		want[u] = a
	}
	// Small record batches and small fetches (a few dozen records a
	// round) make reading take a while, so that checkpoints land
	// mid-stream.
	srcWriteBillsBatched(t, b.Addr(), "bills", 50, bills...)
	defer kafka.SetPartitionMaxBytes(2048)()
	sql := fmt.Sprintf(`SET 'parallelism.default' = '2';
SET 'pipeline.name' = 'kafka-crash';
SET 'execution.checkpointing.interval' = '50 ms';
SET 'state.checkpoints.dir' = '%s';
`, t.TempDir()) + fmt.Sprintf(srcBillsDDL, b.Addr(), "")

	out1 := &slowBuffer{}
	s := engine.NewSession(out1)
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	var j1 *engine.Job
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		if r.Job != nil {
			j1 = r.Job
		}
	}
	t.Cleanup(func() { j1.Cancel(); _ = j1.Wait() })
	srcWaitUntil(t, func() bool { st, _ := j1.CheckpointStats(); return st.Completed >= 1 })
	j1.Cancel()
	_ = j1.Wait()
	in1, _ := j1.Records()

	var out2 srcSyncBuffer
	j2 := srcRunSQL(t, &out2, sql)
	srcWaitUntil(t, func() bool {
		view := map[int64]srcAgg{}
		srcFold(out1.String(), view)
		srcFold(out2.String(), view)
		return fmt.Sprint(view) == fmt.Sprint(want)
	})
	time.Sleep(200 * time.Millisecond) // would anything more arrive?
	in2, _ := j2.Records()
	st2, _ := j2.CheckpointStats()
	j2.Cancel()
	_ = j2.Wait()
	if st2.RestoredFrom == "" {
		t.Fatal("the second run did not restore")
	}
	if in2 == 0 {
		return false
	}
	if in2 < 0 || in2 >= n {
		t.Fatalf("the second run read %d rows; it should resume mid-stream", in2)
	}
	view := map[int64]srcAgg{}
	srcFold(out1.String(), view)
	srcFold(out2.String(), view)
	if fmt.Sprint(view) != fmt.Sprint(want) {
		t.Fatalf("totals %v\nwant   %v", view, want)
	}
	t.Logf("first run read %d rows, the restored run %d", in1, in2)
	return true
}
