package checkpoint

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/state"
)

// fakeJob is a job the test drives by hand. It logs what the coordinator
// asks of it; onTrigger lists what its sources do synchronously inside
// TriggerBarrier (acknowledge or decline), which is the tightest
// interleaving a real job can produce.
type fakeJob struct {
	t         *testing.T
	c         *Coordinator
	g         *dataflow.Graph
	mu        sync.Mutex
	events    []string
	atEnd     bool
	released  bool
	onTrigger []string
	barrier   dataflow.Barrier
	done      chan struct{}
}

func (f *fakeJob) log(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, fmt.Sprintf(format, args...))
}

func (f *fakeJob) TriggerBarrier(b dataflow.Barrier) error {
	f.mu.Lock()
	released := f.released
	f.barrier = b
	f.mu.Unlock()
	if released {
		return dataflow.ErrSourceFinished
	}
	f.log("barrier %d", b.CheckpointID)
	for _, action := range f.onTrigger {
		f.do(action)
	}
	return nil
}

func (f *fakeJob) SourcesAtEnd() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.atEnd
}

func (f *fakeJob) ReleaseFinishedSources() {
	f.mu.Lock()
	already := f.released
	f.released = true
	f.mu.Unlock()
	if !already {
		f.log("release sources")
	}
}

func (f *fakeJob) NotifyCheckpointComplete(id int64) error {
	f.log("notify %d", id)
	return nil
}

func (f *fakeJob) Done() <-chan struct{} { return f.done }

func (f *fakeJob) Fail(err error) { f.log("fail %v", err) }

// do runs one action line: "ack <node>/<subtask>" or "decline <node>/<subtask>".
func (f *fakeJob) do(line string) {
	verb, target, _ := strings.Cut(strings.TrimSpace(line), " ")
	name, sub, _ := strings.Cut(target, "/")
	subtask, err := strconv.Atoi(sub)
	if err != nil {
		f.t.Fatalf("bad subtask in %q", line)
	}
	var n *dataflow.Node
	for _, cand := range f.g.Nodes {
		if cand.Name == name {
			n = cand
		}
	}
	if n == nil {
		f.t.Fatalf("no node %q", name)
	}
	f.mu.Lock()
	b := f.barrier
	f.mu.Unlock()
	switch verb {
	case "ack":
		if n.NewSource != nil {
			f.c.SourceBarrier(b, n, subtask, []byte("pos"))
			return
		}
		if err := f.c.SnapshotSubtask(b, n, subtask, state.NewMemoryStore(target), func(int64) {}); err != nil {
			f.log("snapshot %s: %v", target, err)
		}
	case "decline":
		f.c.Decline(b, n, subtask, fmt.Errorf("%s says no", target))
	default:
		f.t.Fatalf("unknown action %q", line)
	}
}

// TestCoordinator runs testdata/coordinator. Commands:
//
//	job interval=<d> [timeout=<d>] [min-pause=<d>]   a new coordinator; input: "<name> parallelism=<n> [source]" per node
//	tick [by=<d>]                                    advance the clock and run one beat of the loop
//	ack | decline                                    input: "<node>/<subtask>" lines, for the current barrier
//	on-trigger                                       input: actions run inside every later TriggerBarrier
//	at-end                                           every source now waits at the end of its input
//	stats                                            the coordinator's figures
//
// Each command prints what the job was asked to do and what the
// coordinator logged, in order.
func TestCoordinator(t *testing.T) {
	var f *fakeJob
	var logs *bytes.Buffer
	var now time.Time
	flush := func() string {
		f.c.writes.Wait()   // snapshots are written on goroutines of their own
		f.c.inflight.Wait() // and so are completions
		f.mu.Lock()
		out := append([]string(nil), f.events...)
		f.events = nil
		f.mu.Unlock()
		for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			if l != "" {
				out = append(out, "log: "+l)
			}
		}
		logs.Reset()
		if len(out) == 0 {
			return "ok\n"
		}
		return strings.Join(out, "\n") + "\n"
	}
	datadriven.RunTest(t, "testdata/coordinator", func(t *testing.T, d *datadriven.TestData) string {
		dur := func(key string) time.Duration {
			if !d.HasArg(key) {
				return 0
			}
			var s string
			d.ScanArgs(t, key, &s)
			v, err := time.ParseDuration(s)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		switch d.Cmd {
		case "job":
			g := &dataflow.Graph{Name: "test"}
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				fields := strings.Fields(line)
				n := &dataflow.Node{Name: fields[0]}
				for _, fl := range fields[1:] {
					switch {
					case strings.HasPrefix(fl, "parallelism="):
						n.Parallelism, _ = strconv.Atoi(strings.TrimPrefix(fl, "parallelism="))
					case fl == "source":
						n.NewSource = func(int) (dataflow.Source, error) { return nil, nil }
					default:
						t.Fatalf("unknown node attribute %q", fl)
					}
				}
				if n.NewSource == nil {
					n.NewOperator = func(int) (dataflow.Operator, error) { return nil, nil }
				}
				g.AddNode(n)
			}
			logs = &bytes.Buffer{}
			log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo,
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey || a.Key == "job" {
						return slog.Attr{}
					}
					return a
				}}))
			c, err := New(Config{JobName: "test", Dir: t.TempDir(), Interval: dur("interval"), Timeout: dur("timeout"),
				MinPause: dur("min-pause"), Log: log}, g)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			c.clock = func() time.Time { return now }
			fj := &fakeJob{t: t, c: c, g: g, done: make(chan struct{})}
			f = fj
			c.job = fj
			c.next = now.Add(c.cfg.Interval)
			t.Cleanup(func() { close(fj.done); c.closeStores() })
			return "ok\n"
		case "tick":
			by := dur("by")
			if by == 0 {
				by = f.c.cfg.Interval
			}
			now = now.Add(by)
			f.c.tick(now)
			return flush()
		case "ack", "decline":
			for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
				f.do(d.Cmd + " " + line)
			}
			return flush()
		case "on-trigger":
			f.onTrigger = slices.DeleteFunc(strings.Split(strings.TrimSpace(d.Input), "\n"), func(s string) bool { return s == "" })
			return "ok\n"
		case "at-end":
			f.mu.Lock()
			f.atEnd = true
			f.mu.Unlock()
			return "ok\n"
		case "stats":
			s := f.c.Stats()
			f.c.mu.Lock()
			pending := "none"
			if f.c.pending != nil {
				pending = strconv.FormatInt(f.c.pending.id, 10)
			}
			f.c.mu.Unlock()
			return fmt.Sprintf("completed=%d failed=%d last=%d pending=%s\n", s.Completed, s.Failed, s.LastID, pending)
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}
