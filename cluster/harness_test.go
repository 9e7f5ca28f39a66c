package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/examples/nexmark"
	"github.com/streamsql/streamsql/parser"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The tests run a job twice over an embedded broker: once as an
// ordinary single-process job, once as a cluster job with every task in
// a goroutine of this process (runCluster), and compare what each wrote
// into its own output topic, read back read_committed by an independent
// client (franz-go).

const (
	testEvents = 10000
	testRate   = 200 // events per second of event time: 10,000 events span 50 s
	firstEvent = "2024-01-01 23:59:40"
)

func startBroker(t testing.TB) *broker.Broker {
	t.Helper()
	b, err := broker.Start(broker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nexmarkDDL is examples/nexmark/ddl.sql reading n events spread over
// n/testRate seconds of event time; tps > 0 limits the wall-clock rate.
func nexmarkDDL(t testing.TB, n, tps int) string {
	extra := []string{"'first-event.time' = '" + firstEvent + "'", "'seed' = '1'"}
	if tps > 0 {
		extra = append(extra, fmt.Sprintf("'tps' = '%d'", tps))
	}
	ddl, err := nexmark.Configure(int64(n), strconv.Itoa(testRate), extra...)
	if err != nil {
		t.Fatal(err)
	}
	return ddl
}

// nexmarkQuery is examples/nexmark/<q>.sql writing into a Kafka topic,
// exactly once, as JSON.
func nexmarkQuery(t testing.TB, q string) string {
	return readFile(t, filepath.Join("..", "examples", "nexmark", q+".sql"))
}

func mustReplace(t testing.TB, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("the text no longer contains %q", old)
	}
	return strings.ReplaceAll(s, old, new)
}

// toKafka replaces the blackhole sink of sql by an exactly-once Kafka
// sink writing JSON into topic.
func toKafka(t testing.TB, sql, addr, topic string) string {
	return mustReplace(t, sql, "'connector' = 'blackhole'", fmt.Sprintf(
		"'connector' = 'kafka', 'topic' = '%s', 'properties.bootstrap.servers' = '%s', 'format' = 'json', "+
			"'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = '%s'", topic, addr, topic))
}

// runSingle runs sql as one ordinary job of a session and returns what
// it wrote to topic.
func runSingle(t testing.TB, addr, sql, topic string) []string {
	t.Helper()
	s := engine.NewSession(io.Discard)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts {
		r, err := s.Execute(ctx, st)
		if err != nil {
			t.Fatalf("%s: %v", st.Text, err)
		}
		if r.Job != nil {
			if err := r.Job.Wait(); err != nil {
				t.Fatalf("job: %v", err)
			}
		}
	}
	return readTopic(t, addr, topic)
}

// clusterSettings are the SET statements of a cluster job.
func clusterSettings(t testing.TB, partitions int, interval string) string {
	return fmt.Sprintf("SET 'execution.checkpointing.interval' = '%s';\nSET 'state.checkpoints.dir' = '%s';\nSET 'cluster.partitions' = '%d';\n",
		interval, t.TempDir(), partitions)
}

// runAll runs every task of j in a goroutine of its own until all have
// returned; interfere, when set, runs meanwhile and may cancel and rerun
// tasks through the runner it is given.
func runAll(t testing.TB, j *Job, timeout time.Duration, interfere func(r *taskSet)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ts := &taskSet{j: j, ctx: ctx, cancels: map[TaskID]context.CancelFunc{}, errs: map[TaskID]error{}}
	for _, id := range j.Tasks() {
		ts.start(id)
	}
	if interfere != nil {
		interfere(ts)
	}
	ts.wg.Wait()
	for id, err := range ts.errs {
		if err != nil {
			t.Errorf("task %s: %v", id, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// taskSet is a set of running tasks of one job.
type taskSet struct {
	j       *Job
	ctx     context.Context
	wg      sync.WaitGroup
	mu      sync.Mutex
	cancels map[TaskID]context.CancelFunc
	errs    map[TaskID]error
	// ended lists every run's error, in the order the runs returned.
	ended map[TaskID][]error
}

func (ts *taskSet) start(id TaskID) {
	ctx, cancel := context.WithCancel(ts.ctx)
	done := make(chan struct{})
	ts.mu.Lock()
	ts.cancels[id] = func() { cancel(); <-done }
	ts.mu.Unlock()
	ts.wg.Add(1)
	go func() {
		defer ts.wg.Done()
		defer close(done)
		err := ts.j.RunTask(ctx, id)
		ts.mu.Lock()
		ts.errs[id] = err
		if ts.ended == nil {
			ts.ended = map[TaskID][]error{}
		}
		ts.ended[id] = append(ts.ended[id], err)
		ts.mu.Unlock()
	}()
}

// kill cancels task id and waits until it has returned; it reports
// whether the task was still running (not finished by itself).
func (ts *taskSet) kill(id TaskID) bool {
	ts.mu.Lock()
	c := ts.cancels[id]
	ts.mu.Unlock()
	c()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	err := ts.errs[id]
	ts.errs[id] = nil
	return errors.Is(err, context.Canceled)
}

// runCluster compiles sql as a cluster job and runs it.
func runCluster(t testing.TB, addr, file, sql, topic string, interfere func(*taskSet)) []string {
	t.Helper()
	j, err := Compile(context.Background(), Config{Script: sql, File: file, BootstrapServers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("job %s, fingerprint %s:\n%s", j.Name(), j.Fingerprint(), j.Describe())
	runAll(t, j, 3*time.Minute, interfere)
	return readTopic(t, addr, topic)
}

// readTopic reads every committed record of topic with franz-go.
func readTopic(t testing.TB, addr, topic string) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []string
	// Until two consecutive empty polls: kfake answers at once, so an
	// empty poll after 50 ms of waiting means the end of the stable log.
	empty := 0
	deadline := time.Now().Add(30 * time.Second)
	for empty < 2 && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			out = append(out, string(r.Value))
		})
		for _, e := range fs.Errors() {
			if !errors.Is(e.Err, context.DeadlineExceeded) {
				t.Fatalf("reading %s: %v", topic, e.Err)
			}
		}
		if n == 0 {
			empty++
		} else {
			empty = 0
		}
	}
	return out
}

// sameMultiset fails t unless got and want hold the same rows as many
// times each.
func sameMultiset(t testing.TB, got, want []string) {
	t.Helper()
	count := map[string]int{}
	for _, r := range want {
		count[r]++
	}
	for _, r := range got {
		count[r]--
	}
	var missing, extra []string
	for r, n := range count {
		for ; n > 0; n-- {
			missing = append(missing, r)
		}
		for ; n < 0; n++ {
			extra = append(extra, r)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing)+len(extra) > 0 {
		t.Fatalf("the result differs from the expected one (%d rows against %d): %d missing, e.g. %v; %d extra, e.g. %v",
			len(got), len(want), len(missing), missing[:min(3, len(missing))], len(extra), extra[:min(3, len(extra))])
	}
}
