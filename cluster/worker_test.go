package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	connkafka "github.com/streamsql/streamsql/connectors/kafka"
	"github.com/streamsql/streamsql/connectors/kafka/broker"
)

// tracker is the truth the membership tests check: which worker runs
// which task, and every time a task was started while it still ran
// somewhere.
type tracker struct {
	mu       sync.Mutex
	running  map[TaskID]string
	overlaps []string
	fail     map[TaskID]error // RunTask returns it at once
}

func newTracker() *tracker {
	return &tracker{running: map[TaskID]string{}, fail: map[TaskID]error{}}
}

// fakeRunner runs a job of stages×parts tasks that do nothing until
// cancelled, and take a while to stop, as a real task that finishes its
// checkpoint would: a protocol that started a moved task before its old
// owner stopped it would be caught.
type fakeRunner struct {
	worker        string
	stages, parts int
	tr            *tracker
}

func (f *fakeRunner) Tasks() []TaskID {
	var ts []TaskID
	for s := range f.stages {
		for p := range f.parts {
			ts = append(ts, TaskID{s, p})
		}
	}
	return ts
}

func (f *fakeRunner) RunTask(ctx context.Context, id TaskID) error {
	f.tr.mu.Lock()
	if err := f.tr.fail[id]; err != nil {
		if errors.Is(err, connkafka.ErrFenced) {
			delete(f.tr.fail, id) // once
		}
		f.tr.mu.Unlock()
		return err
	}
	if w, ok := f.tr.running[id]; ok {
		f.tr.overlaps = append(f.tr.overlaps, fmt.Sprintf("%s started on %s while running on %s", id, f.worker, w))
	}
	f.tr.running[id] = f.worker
	f.tr.mu.Unlock()
	<-ctx.Done()
	time.Sleep(300 * time.Millisecond)
	f.tr.mu.Lock()
	if f.tr.running[id] == f.worker {
		delete(f.tr.running, id)
	}
	f.tr.mu.Unlock()
	return ctx.Err()
}

type testWorker struct {
	name   string
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	gens   []int32
	last   []TaskID
}

type testCluster struct {
	t      *testing.T
	addr   string
	tr     *tracker
	stages int
	parts  int
	ws     []*testWorker
}

func newTestCluster(t *testing.T, stages, parts int) *testCluster {
	b, err := broker.Start(broker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return &testCluster{t: t, addr: b.Addr(), tr: newTracker(), stages: stages, parts: parts}
}

func (c *testCluster) start(name, fp string) *testWorker {
	ctx, cancel := context.WithCancel(context.Background())
	w := &testWorker{name: name, cancel: cancel, done: make(chan error, 1)}
	cfg := WorkerConfig{
		Brokers: []string{c.addr}, Job: "j", Fingerprint: fp, Name: name,
		Runner: &fakeRunner{worker: name, stages: c.stages, parts: c.parts, tr: c.tr},
		Log:    slog.New(slog.NewTextHandler(testWriter{c.t}, nil)),
		Observe: func(g int32, running []TaskID) {
			w.mu.Lock()
			w.gens = append(w.gens, g)
			w.last = running
			w.mu.Unlock()
		},
	}
	go func() { w.done <- RunWorker(ctx, cfg) }()
	c.ws = append(c.ws, w)
	c.t.Cleanup(func() { cancel(); <-w.done })
	return w
}

// stop stops w the clean way and checks that it returned nil.
func (c *testCluster) stop(w *testWorker) {
	w.cancel()
	select {
	case err := <-w.done:
		if err != nil {
			c.t.Fatalf("worker %s: %v", w.name, err)
		}
		w.done <- nil // for the cleanup
	case <-time.After(time.Minute):
		c.t.Fatalf("worker %s did not stop", w.name)
	}
}

// waitSpread waits until every task runs, on the given workers only,
// with per-worker counts as even as can be.
func (c *testCluster) waitSpread(workers ...string) map[string][]TaskID {
	c.t.Helper()
	n := c.stages * c.parts
	deadline := time.Now().Add(2 * time.Minute)
	var last map[string][]TaskID
	for time.Now().Before(deadline) {
		c.tr.mu.Lock()
		per := map[string][]TaskID{}
		for id, w := range c.tr.running {
			per[w] = append(per[w], id)
		}
		total := len(c.tr.running)
		over := slices.Clone(c.tr.overlaps)
		c.tr.mu.Unlock()
		if len(over) > 0 {
			c.t.Fatalf("a task ran twice at once: %v", over)
		}
		last = per
		ok := total == n
		for w, ts := range per {
			if !slices.Contains(workers, w) || len(ts) < n/len(workers) || len(ts) > (n+len(workers)-1)/len(workers) {
				ok = false
			}
		}
		if ok {
			return per
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("tasks not spread over %v in time; running: %v", workers, last)
	return nil
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func TestWorkersSpreadMoveAndTakeOver(t *testing.T) {
	c := newTestCluster(t, 2, 3) // 6 tasks
	a, b := c.start("a", "fp1"), c.start("b", "fp1")
	w3 := c.start("c", "fp1")
	per := c.waitSpread("a", "b", "c")
	t.Logf("3 workers: %v", per)

	// A worker leaving: its tasks move to the two others, and the tasks
	// that stayed were not restarted.
	before := map[TaskID]string{}
	for w, ts := range per {
		for _, id := range ts {
			before[id] = w
		}
	}
	c.stop(w3)
	per = c.waitSpread("a", "b")
	for w, ts := range per {
		for _, id := range ts {
			if before[id] != "c" && before[id] != w {
				t.Errorf("task %s moved from %s to %s although its worker stayed", id, before[id], w)
			}
		}
	}

	// Joining workers take some: 4 workers, 6 tasks → 2,2,1,1.
	c.start("d", "fp1")
	c.start("e", "fp1")
	per = c.waitSpread("a", "b", "d", "e")
	t.Logf("4 workers: %v", per)
	_, _ = a, b
}

func TestWorkerFingerprintMismatchRefused(t *testing.T) {
	c := newTestCluster(t, 1, 2)
	c.start("a", "fp1")
	c.waitSpread("a")
	x := c.start("x", "fp2")
	select {
	case err := <-x.done:
		if err == nil || !strings.Contains(err.Error(), "job file differs") || !strings.Contains(err.Error(), "fp2") {
			t.Fatalf("want a clear job-file mismatch error, got %v", err)
		}
		x.done <- nil
		t.Log(err)
	case <-time.After(2 * time.Minute):
		t.Fatal("a worker with another plan was not refused")
	}
	c.waitSpread("a") // the running worker is untouched
}

// Fingerprints sharing the protocol name's prefix get past the broker;
// the leader's balancer refuses the member whose plan differs.
func TestWorkerFingerprintMismatchRefusedByLeader(t *testing.T) {
	c := newTestCluster(t, 1, 2)
	c.start("a", "0123456789abcdef-one")
	c.waitSpread("a")
	x := c.start("x", "0123456789abcdef-two")
	select {
	case err := <-x.done:
		if err == nil || !strings.Contains(err.Error(), "refused this worker") || !strings.Contains(err.Error(), "0123456789abcdef-two") {
			t.Fatalf("want a clear refusal, got %v", err)
		}
		x.done <- nil
		t.Log(err)
	case <-time.After(2 * time.Minute):
		t.Fatal("a worker with another plan was not refused")
	}
	c.waitSpread("a")
}

func TestWorkersMoreThanTasksIdle(t *testing.T) {
	c := newTestCluster(t, 1, 2)
	c.start("a", "fp1")
	c.start("b", "fp1")
	c.start("c", "fp1")
	per := c.waitSpread("a", "b", "c")
	if len(per) != 2 {
		t.Fatalf("2 tasks on %d workers: %v", len(per), per)
	}
	// The third is idle, and says so through Observe (and its log).
	var idle *testWorker
	for _, w := range c.ws {
		if _, ok := per[w.name]; !ok {
			idle = w
		}
	}
	deadline := time.Now().Add(time.Minute)
	for {
		idle.mu.Lock()
		seen := len(idle.gens) > 0 && len(idle.last) == 0
		idle.mu.Unlock()
		if seen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle worker saw no generation")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// It takes over when a busy worker leaves.
	for _, w := range c.ws {
		if w != idle {
			c.stop(w)
			break
		}
	}
	var rest []string
	for _, w := range c.ws {
		if w.cancel != nil {
			rest = append(rest, w.name)
		}
	}
	per = c.waitSpread(rest...)
	if _, ok := per[idle.name]; !ok {
		t.Fatalf("the idle worker took no task: %v", per)
	}
}

func TestWorkerUnreachableBroker(t *testing.T) {
	start := time.Now()
	err := RunWorker(context.Background(), WorkerConfig{
		Brokers: []string{"127.0.0.1:1"}, Job: "j", Fingerprint: "f",
		Runner:         &fakeRunner{stages: 1, parts: 1, tr: newTracker()},
		Log:            slog.New(slog.NewTextHandler(io.Discard, nil)),
		ConnectTimeout: 3 * time.Second,
	})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the Kafka brokers 127.0.0.1:1 within 3s") {
		t.Fatalf("want a clear unreachable-broker error, got %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("took %s", d)
	}
}

func TestWorkerTaskFailureStopsWorker(t *testing.T) {
	c := newTestCluster(t, 1, 2)
	c.tr.fail[TaskID{0, 1}] = errors.New("checkpoint store 'file:///ro' is not writable")
	w := c.start("a", "fp1")
	select {
	case err := <-w.done:
		if err == nil || !strings.Contains(err.Error(), "cluster: job j: task s0-p1: checkpoint store 'file:///ro' is not writable") {
			t.Fatalf("got %v", err)
		}
		w.done <- nil
	case <-time.After(2 * time.Minute):
		t.Fatal("a failing task did not stop the worker")
	}
	c.tr.mu.Lock()
	defer c.tr.mu.Unlock()
	if len(c.tr.running) != 0 {
		t.Fatalf("tasks left running: %v", slices.Collect(maps.Keys(c.tr.running)))
	}
}

// A task fenced by another worker's producer is not a failure of the
// worker: it stops its tasks, rejoins, and runs what it is given again.
func TestWorkerFencedTaskRejoins(t *testing.T) {
	c := newTestCluster(t, 1, 2)
	c.tr.fail[TaskID{0, 1}] = fmt.Errorf("cluster: task s0-p1: sink: %w", connkafka.ErrFenced)
	w := c.start("a", "fp1")
	c.waitSpread("a")
	select {
	case err := <-w.done:
		t.Fatalf("the worker ended: %v", err)
		w.done <- nil
	default:
	}
	w.mu.Lock()
	gens := len(w.gens)
	w.mu.Unlock()
	if gens < 2 {
		t.Fatalf("the worker did not rejoin after the fenced task: %d generations", gens)
	}
}
