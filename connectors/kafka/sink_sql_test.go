package kafka_test

// End-to-end tests of the exactly-once Kafka sink through the SQL engine:
// datagen → INSERT INTO a 'kafka' table with checkpoints every 100 ms,
// read back by franz-go (tests only) at read_committed, an independent
// client.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	_ "github.com/streamsql/streamsql/connectors/kafka" // registers 'kafka' and 'upsert-kafka'
	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
	"github.com/twmb/franz-go/pkg/kgo"
)

// eoJob writes k = 1..rows from a datagen sequence to topic out, exactly
// once, at sink parallelism 2.
const eoJob = `
SET 'pipeline.name' = 'kafka-eo';
SET 'execution.checkpointing.interval' = '100 ms';
SET 'state.checkpoints.dir' = '%s';
SET 'parallelism.default' = '2';
CREATE TABLE seq (k BIGINT) WITH ('connector' = 'datagen', 'scan.parallelism' = '1', 'rows-per-second' = '%d',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '%d');
CREATE TABLE sink_out (k BIGINT, tag STRING) WITH ('connector' = 'kafka', 'topic' = 'out',
  'properties.bootstrap.servers' = '%s', 'format' = 'json', 'scan.startup.mode' = 'earliest-offset',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'eo-test',
  'properties.transaction.timeout.ms' = '%d');
INSERT INTO sink_out SELECT k, 'x' FROM seq;
`

func runSQL(t testing.TB, sql string) (*engine.Job, error) {
	t.Helper()
	var out bytes.Buffer
	s := engine.NewSession(&out)
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	var job *engine.Job
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			return nil, err
		}
		if r.Job != nil {
			job = r.Job
		}
	}
	if job == nil {
		t.Fatal("no job started")
	}
	return job, nil
}

// readRecords reads topic with franz-go. With first it returns after
// the first records, else at the end of the log. Every caller expects
// records, so the first ones may take up to 60 s to arrive (a loaded
// machine, the race detector); once records flow, four empty polls in a
// row (2 s) mark the end of the log.
func readRecords(t *testing.T, addr, topic string, committed, first bool) []*kgo.Record {
	t.Helper()
	level := kgo.ReadUncommitted()
	if committed {
		level = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(level),
		kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	startDeadline := time.Now().Add(60 * time.Second)
	for empty := 0; empty < 4; {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			out = append(out, r)
		})
		for _, e := range fs.Errors() {
			if !errors.Is(e.Err, context.DeadlineExceeded) {
				t.Fatal(e.Err)
			}
		}
		if n > 0 && first {
			break
		}
		switch {
		case n > 0:
			empty = 0
		case len(out) > 0 || time.Now().After(startDeadline):
			empty++
		}
	}
	return out
}

// readKs reads topic out and returns how often each k occurs, and the
// number of records.
func readKs(t *testing.T, addr string, committed bool, first ...bool) (map[int64]int, int) {
	t.Helper()
	rs := readRecords(t, addr, "out", committed, len(first) > 0 && first[0])
	count := map[int64]int{}
	for _, r := range rs {
		var v struct {
			K   int64  `json:"k"`
			Tag string `json:"tag"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.Tag != "x" {
			t.Fatalf("record %q: %v", r.Value, err)
		}
		count[v.K]++
	}
	return count, len(rs)
}

// checkExactlyOnce fails unless count holds 1..rows, each once.
func checkExactlyOnce(t *testing.T, count map[int64]int, rows int) {
	t.Helper()
	var missing, dup []int64
	for k := int64(1); k <= int64(rows); k++ {
		switch c := count[k]; {
		case c == 0:
			missing = append(missing, k)
		case c > 1:
			dup = append(dup, k)
		}
	}
	if len(count) != rows || len(missing) > 0 || len(dup) > 0 {
		t.Fatalf("read_committed: %d distinct keys, want %d; %d missing (first %v), %d duplicated (first %v)",
			len(count), rows, len(missing), head(missing), len(dup), head(dup))
	}
}

func head(xs []int64) []int64 { return xs[:min(len(xs), 5)] }

// TestExactlyOnceSQL: a bounded job with checkpoints every 100 ms. While
// it runs, read_committed already sees rows (commits follow completed
// checkpoints, not only the end of the input); at the end it sees
// 1..rows, each exactly once.
func TestExactlyOnceSQL(t *testing.T) {
	b, err := broker.Start(broker.Config{Topics: []string{"out"}, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const rows = 40000 // 4 s at 10,000 rows/s
	j, err := runSQL(t, fmt.Sprintf(eoJob, t.TempDir(), 10000, rows, b.Addr(), 60000))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	mid, _ := readKs(t, b.Addr(), true, true)
	select {
	case <-j.Done():
		t.Fatal("the job ended before the mid-run read; slow the source down")
	default:
	}
	if len(mid) == 0 {
		t.Fatal("nothing committed while the job runs: commits do not follow checkpoints")
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	count, _ := readKs(t, b.Addr(), true)
	checkExactlyOnce(t, count, rows)
	t.Logf("mid-run %d rows committed; at the end %d", len(mid), len(count))
}

// TestExactlyOnceSQLRestart: the job is stopped mid-stream (the process
// "dies": the open transaction is aborted, pre-committed ones stay open
// on the broker), then a fresh session restores it from its latest
// checkpoint: it commits the stored transactions, fences the rest, and
// replays the source from the checkpointed position. read_committed
// sees 1..rows with no duplicate and no gap, although the log holds the
// aborted attempts too.
func TestExactlyOnceSQLRestart(t *testing.T) {
	b, err := broker.Start(broker.Config{Topics: []string{"out"}, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dir := t.TempDir()
	const rows = 30000
	j1, err := runSQL(t, fmt.Sprintf(eoJob, dir, 20000, rows, b.Addr(), 60000))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	select {
	case <-j1.Done():
		t.Fatal("the first run ended before it was stopped")
	default:
	}
	j1.Cancel()
	_ = j1.Wait()
	before, _ := readKs(t, b.Addr(), true)
	maxBefore := int64(0)
	for k := range before {
		maxBefore = max(maxBefore, k)
	}
	t.Logf("before the restart: %d rows committed, the highest %d", len(before), maxBefore)

	j2, err := runSQL(t, fmt.Sprintf(eoJob, dir, 0, rows, b.Addr(), 60000))
	if err != nil {
		t.Fatal(err)
	}
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	count, _ := readKs(t, b.Addr(), true)
	checkExactlyOnce(t, count, rows)
	_, uncommitted := readKs(t, b.Addr(), false)
	t.Logf("committed before the stop: %d; log records (with aborted ones): %d; committed at the end: %d",
		len(before), uncommitted, len(count))
	if len(before) == 0 || len(before) >= rows {
		t.Fatalf("the stop came at %d of %d rows committed: not mid-stream", len(before), rows)
	}
}

// TestTransactionTimeoutCheckedAtJobStart: a transaction timeout below
// twice the checkpoint interval fails the INSERT before any row is
// written, naming both settings.
func TestTransactionTimeoutCheckedAtJobStart(t *testing.T) {
	_, err := runSQL(t, fmt.Sprintf(eoJob, t.TempDir(), 10, 10, "127.0.0.1:1", 150))
	if err == nil || !strings.Contains(err.Error(), "'properties.transaction.timeout.ms' (150 ms) must be at least twice 'execution.checkpointing.interval' (100ms)") {
		t.Fatalf("got %v", err)
	}
}

// TestAtLeastOnceAndNoneSQL: the Writer-based guarantees deliver every
// row of a bounded job (each once, since nothing fails here).
func TestAtLeastOnceAndNoneSQL(t *testing.T) {
	for _, g := range []string{"at-least-once", "none"} {
		t.Run(g, func(t *testing.T) {
			b, err := broker.Start(broker.Config{Topics: []string{"out"}, Partitions: 3})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			const rows = 5000
			sql := strings.Replace(fmt.Sprintf(eoJob, t.TempDir(), 0, rows, b.Addr(), 60000),
				"'sink.delivery-guarantee' = 'exactly-once'", "'sink.delivery-guarantee' = '"+g+"'", 1)
			j, err := runSQL(t, sql)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Wait(); err != nil {
				t.Fatal(err)
			}
			count, _ := readKs(t, b.Addr(), false)
			checkExactlyOnce(t, count, rows)
		})
	}
}

// TestUpsertKafkaSQL: a grouped aggregate (updates) written exactly once
// to upsert-kafka, keyed by the primary key. Folding the committed
// records per key (the last value wins, as an upsert reader does) gives
// the totals computed here directly from the input.
func TestUpsertKafkaSQL(t *testing.T) {
	b, err := broker.Start(broker.Config{Topics: []string{"agg"}, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const rows = 20000
	j, err := runSQL(t, fmt.Sprintf(`
SET 'pipeline.name' = 'kafka-upsert';
SET 'execution.checkpointing.interval' = '100 ms';
SET 'state.checkpoints.dir' = '%s';
SET 'parallelism.default' = '2';
CREATE TABLE seq (k BIGINT) WITH ('connector' = 'datagen', 'scan.parallelism' = '1', 'rows-per-second' = '20000',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '%d');
CREATE TABLE agg (g BIGINT, n BIGINT, s BIGINT, PRIMARY KEY (g) NOT ENFORCED) WITH ('connector' = 'upsert-kafka',
  'topic' = 'agg', 'properties.bootstrap.servers' = '%s', 'key.format' = 'json', 'value.format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'up-test',
  'properties.transaction.timeout.ms' = '60000');
INSERT INTO agg SELECT k %% 7, COUNT(*), SUM(k) FROM seq GROUP BY k %% 7;
`, t.TempDir(), rows, b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	type total struct{ N, S int64 }
	ref := map[int64]total{}
	for k := int64(1); k <= rows; k++ {
		r := ref[k%7]
		r.N++
		r.S += k
		ref[k%7] = r
	}
	view := map[int64]total{}
	updates := 0
	for _, r := range readRecords(t, b.Addr(), "agg", true, false) {
		var key struct{ G int64 }
		if err := json.Unmarshal(r.Key, &key); err != nil {
			t.Fatalf("key %q: %v", r.Key, err)
		}
		if r.Value == nil {
			delete(view, key.G)
			continue
		}
		var v struct {
			G, N, S int64
		}
		if err := json.Unmarshal(r.Value, &v); err != nil || v.G != key.G {
			t.Fatalf("value %q for key %q: %v", r.Value, r.Key, err)
		}
		view[key.G] = total{v.N, v.S}
		updates++
	}
	if len(view) != len(ref) {
		t.Fatalf("%d keys, want %d: %v", len(view), len(ref), view)
	}
	for g, want := range ref {
		if view[g] != want {
			t.Fatalf("key %d: %+v, want %+v", g, view[g], want)
		}
	}
	t.Logf("%d upserts folded into %d keys", updates, len(view))
}

// TestCrashBetweenPreCommitAndCommit kills the job at the worst moment
// of two-phase commit: a child process (this test binary) runs the job
// with twophase's test hook STREAMSQL_TEST_CRASH_BEFORE_COMMIT, which
// exits the process once a checkpoint has completed and its transactions
// are pre-committed but none is committed yet. The restarted job (in
// this process, from the same checkpoint directory) must commit them
// from the checkpoint: read_committed then sees 1..rows exactly once.
func TestCrashBetweenPreCommitAndCommit(t *testing.T) {
	b, err := broker.Start(broker.Config{Topics: []string{"out"}, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dir := t.TempDir()
	const rows = 30000
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STREAMSQL_TEST_CRASH_BEFORE_COMMIT=3",
		"KAFKA_SINK_CHILD_SQL="+fmt.Sprintf(eoJob, dir, 20000, rows, b.Addr(), 60000))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 137 {
		t.Fatalf("the child should exit with 137 at the test hook; got %v\n%s", err, out)
	}
	before, _ := readKs(t, b.Addr(), true)
	_, logged := readKs(t, b.Addr(), false)
	if logged <= len(before) {
		t.Fatalf("after the crash the log holds %d records and %d are committed: no pre-committed transaction was left open", logged, len(before))
	}
	j, err := runSQL(t, fmt.Sprintf(eoJob, dir, 0, rows, b.Addr(), 60000))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	count, _ := readKs(t, b.Addr(), true)
	checkExactlyOnce(t, count, rows)
	t.Logf("at the crash: %d committed, %d in the log; after the restart: %d committed", len(before), logged, len(count))
}

// TestCrashChildProcess is the child of TestCrashBetweenPreCommitAndCommit;
// it does nothing unless started by it.
func TestCrashChildProcess(t *testing.T) {
	sql := os.Getenv("KAFKA_SINK_CHILD_SQL")
	if sql == "" {
		return
	}
	j, err := runSQL(t, sql)
	if err != nil {
		t.Fatal(err)
	}
	_ = j.Wait()
	t.Fatal("the job ended without reaching the crash hook")
}

// BenchmarkKafkaSinkSQL measures a whole job per delivery guarantee:
// datagen → INSERT INTO a 'kafka' table (JSON, 3 partitions, sink
// parallelism 2), checkpoints every 100 ms, against the local broker in
// this process. One op is one row.
func BenchmarkKafkaSinkSQL(b *testing.B) {
	for _, g := range []string{"exactly-once", "at-least-once", "none"} {
		b.Run(g, func(b *testing.B) {
			br, err := broker.Start(broker.Config{Topics: []string{"out"}, Partitions: 3})
			if err != nil {
				b.Fatal(err)
			}
			defer br.Close()
			rows := max(b.N, 1000)
			sql := strings.Replace(fmt.Sprintf(eoJob, b.TempDir(), 0, rows, br.Addr(), 60000),
				"'sink.delivery-guarantee' = 'exactly-once'", "'sink.delivery-guarantee' = '"+g+"'", 1)
			b.ResetTimer()
			start := time.Now()
			j, err := runSQL(b, sql)
			if err != nil {
				b.Fatal(err)
			}
			if err := j.Wait(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
		})
	}
}
