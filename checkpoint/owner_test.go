package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/internal/s3test"
	"github.com/streamsql/streamsql/state"
)

type strCodec struct{}

func (strCodec) Encode(dst []byte, v string) []byte { return append(dst, v...) }
func (strCodec) Decode(b []byte) (string, error)    { return string(b), nil }

// testOwner is one run of a task: a coordinator on the task's store, a
// job driven by hand (a source and a stateful node with one value), as
// a worker's run of a cluster task would be.
type testOwner struct {
	t    *testing.T
	name string
	c    *Coordinator
	f    *fakeJob
	g    *dataflow.Graph
	st   state.Store
	val  state.ValueState[string]
}

func ownerGraph() *dataflow.Graph {
	g := &dataflow.Graph{Name: "task"}
	g.AddNode(&dataflow.Node{Name: "src", Parallelism: 1, NewSource: func(int) (dataflow.Source, error) { return nil, nil }})
	g.AddNode(&dataflow.Node{Name: "agg", Parallelism: 1, Stateful: true, NewOperator: func(int) (dataflow.Operator, error) { return nil, nil }})
	return g
}

// startOwner starts a run on loc, restoring what the store offers, with
// owner epochs (owned) or without (the layout before them).
func startOwner(t *testing.T, loc, name string, owned bool) *testOwner {
	t.Helper()
	g := ownerGraph()
	c, err := New(Config{JobName: "task", Dir: loc, Interval: 1, Retained: 1, Backend: "hashmap", PlanHash: "p",
		Owned: owned, Owner: name, Log: slog.New(slog.DiscardHandler)}, g)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	o := &testOwner{t: t, name: name, c: c, g: g, f: &fakeJob{t: t, c: c, g: g, done: make(chan struct{})}}
	c.job = o.f
	o.st = c.NewStore(g.Nodes[1], 0)
	if o.val, err = state.NewValueState[string](o.st, "v", strCodec{}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(o.stop)
	return o
}

func (o *testOwner) stop() {
	select {
	case <-o.f.done:
		return
	default:
	}
	close(o.f.done)
	o.c.closeStores()
}

// restored is the value the run restored ("" for none).
func (o *testOwner) restored() string {
	v, _, err := o.val.Get([]byte("k"))
	if err != nil {
		o.t.Fatalf("%s: %v", o.name, err)
	}
	return v
}

// checkpoint sets the value to v and takes a checkpoint, returning what
// the job was asked to do meanwhile.
func (o *testOwner) checkpoint(v string) []string {
	o.t.Helper()
	// One key changes with every checkpoint; the others never do, so
	// a bucket store shares their files with the checkpoint before.
	if err := o.val.Put([]byte("k"), v); err != nil {
		o.t.Fatal(err)
	}
	for i := range 8 {
		if err := o.val.Put(fmt.Appendf(nil, "static-%d", i), "s"); err != nil {
			o.t.Fatal(err)
		}
	}
	id, err := o.c.trigger(nil, false)
	if err != nil {
		return []string{"trigger: " + err.Error()}
	}
	b := dataflow.Barrier{CheckpointID: id}
	o.c.SourceBarrier(b, o.g.Nodes[0], 0, []byte(v))
	if err := o.c.SnapshotSubtask(b, o.g.Nodes[1], 0, o.st, func(int64) {}); err != nil {
		o.c.Decline(b, o.g.Nodes[1], 0, err)
		o.f.log("snapshot: %v", err)
	}
	o.c.writes.Wait()
	o.c.inflight.Wait()
	o.f.mu.Lock()
	defer o.f.mu.Unlock()
	ev := o.f.events
	o.f.events = nil
	return ev
}

func committed(ev []string) bool {
	for _, e := range ev {
		if strings.HasPrefix(e, "notify ") {
			return true
		}
	}
	return false
}

// TestTwoOwnersInterleave replays what the crash loop saw: the group
// gives a task to a new worker while its old worker, stalled, still runs
// it, and both write checkpoints into the task's store. The new owner's
// checkpoint must stay readable and be what a third run restores; the
// stale owner must commit nothing once the new one has started. The same
// interleaving without owner epochs shows each of these going wrong, so
// the test can fail.
func TestTwoOwnersInterleave(t *testing.T) {
	stores := map[string]func(t *testing.T) string{
		"dir":  func(t *testing.T) string { return t.TempDir() },
		"file": func(t *testing.T) string { return "file://" + t.TempDir() },
		"s3": func(t *testing.T) string {
			return s3test.Start(t, "ckpt").Location("job/s1-p0")
		},
	}
	for _, kind := range []string{"dir", "file", "s3"} {
		for _, owned := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/owned=%v", kind, owned), func(t *testing.T) {
				problems := interleave(t, stores[kind](t), owned)
				if owned && len(problems) > 0 {
					t.Fatalf("with owner epochs:\n%s", strings.Join(problems, "\n"))
				}
				if !owned && len(problems) == 0 {
					t.Fatalf("without owner epochs the interleaving went right: the test cannot tell fencing from its absence")
				}
				t.Logf("problems: %q", problems)
			})
		}
	}
}

// interleave runs the two owners and returns what went wrong.
func interleave(t *testing.T, loc string, owned bool) []string {
	var problems []string
	a := startOwner(t, loc, "A", owned)
	for _, v := range []string{"a1", "a2"} {
		if ev := a.checkpoint(v); !committed(ev) {
			t.Fatalf("A's checkpoint %s: %q", v, ev)
		}
	}
	// B takes over while A still runs.
	b := startOwner(t, loc, "B", owned)
	if got := b.restored(); got != "a2" {
		t.Fatalf("B restored %q, want a2", got)
	}
	// A's late checkpoint: it must not commit (its output would be
	// duplicated by B, which replays from a2).
	if ev := a.checkpoint("a3"); committed(ev) {
		problems = append(problems, fmt.Sprintf("the stale owner committed its checkpoint after the new owner started: %q", ev))
	} else if owned && !strings.Contains(strings.Join(ev, " "), "fenced") {
		problems = append(problems, fmt.Sprintf("the stale owner was not stopped as fenced: %q", ev))
	}
	if ev := b.checkpoint("b3"); !committed(ev) {
		problems = append(problems, fmt.Sprintf("the new owner's checkpoint did not commit: %q", ev))
	}
	// The stale owner goes on a little longer (it prunes, if it thinks
	// it may), then B writes its next checkpoint.
	a.checkpoint("a4")
	a.stop()
	if ev := b.checkpoint("b4"); !committed(ev) {
		problems = append(problems, fmt.Sprintf("the new owner's second checkpoint did not commit: %q", ev))
	}
	b.stop()
	// A third run must restore B's newest checkpoint.
	c, err := New(Config{JobName: "task", Dir: loc, Interval: 1, Retained: 1, Backend: "hashmap", PlanHash: "p",
		Owned: owned, Owner: "C", Log: slog.New(slog.DiscardHandler)}, ownerGraph())
	if err != nil {
		return append(problems, "C: "+err.Error())
	}
	defer c.closeStores()
	if c.restr == nil {
		return append(problems, "C restored nothing")
	}
	st := c.NewStore(ownerGraph().Nodes[1], 0)
	if fs, ok := st.(*state.FailedStore); ok {
		return append(problems, "C cannot restore its state: "+fs.Err.Error())
	}
	val, err := state.NewValueState[string](st, "v", strCodec{})
	if err != nil {
		return append(problems, err.Error())
	}
	got, _, err := val.Get([]byte("k"))
	if err != nil {
		return append(problems, "C reading its state: "+err.Error())
	}
	if got != "b4" {
		problems = append(problems, fmt.Sprintf("C restored %q, want the new owner's b4", got))
	}
	if pos := c.RestorePosition(c.g.Nodes[0], 0); string(pos) != "b4" {
		problems = append(problems, fmt.Sprintf("C's source position is %q, want b4", pos))
	}
	return problems
}

// TestClaimIsExclusive has many runs claim epochs of one store at once:
// every epoch goes to exactly one of them.
func TestClaimIsExclusive(t *testing.T) {
	for _, kind := range []string{"dir", "file", "s3"} {
		t.Run(kind, func(t *testing.T) {
			loc := t.TempDir()
			switch kind {
			case "file":
				loc = "file://" + loc
			case "s3":
				loc = s3test.Start(t, "ckpt").Location("job/s0-p0")
			}
			ctx := context.Background()
			const n = 8
			got := make([]int64, n)
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					st, err := OpenStore(ctx, loc)
					if err != nil {
						errs <- err
						return
					}
					defer st.Close()
					e, _, err := claim(ctx, st, fmt.Sprint(i))
					if err != nil {
						errs <- err
						return
					}
					got[i] = e
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			seen := map[int64]bool{}
			for _, e := range got {
				if e <= 0 || seen[e] {
					t.Fatalf("epochs %v: not one each", got)
				}
				seen[e] = true
			}
		})
	}
}

// TestFencedErrorIsRecognised: the worker tells a fenced task from a
// failed one by the sentinel.
func TestFencedErrorIsRecognised(t *testing.T) {
	st, err := OpenStore(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e1, _, err := claim(ctx, st, "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkOwner(ctx, st, e1); err != nil {
		t.Fatalf("the only owner is fenced: %v", err)
	}
	if _, _, err := claim(ctx, st, "b"); err != nil {
		t.Fatal(err)
	}
	if err := checkOwner(ctx, st, e1); !errors.Is(err, ErrFenced) {
		t.Fatalf("after a newer claim: %v", err)
	}
}
