package twophase

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// extSystem is a fake external system with transactions: each has a
// name, rows and a status. Only committed rows are visible.
type extSystem struct {
	mu        sync.Mutex
	txns      map[string]*extTxn
	failNext  int   // commits to fail before succeeding
	permanent error // if set, commits fail with it, permanently
	commits   int
}

type extTxn struct {
	rows   []string
	status string // open, prepared, committed, aborted
}

func newExt() *extSystem { return &extSystem{txns: map[string]*extTxn{}} }

func (e *extSystem) visible() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, t := range e.txns {
		if t.status == "committed" {
			out = append(out, t.rows...)
		}
	}
	sort.Strings(out)
	return out
}

func (e *extSystem) statuses() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := map[string]string{}
	for n, t := range e.txns {
		m[n] = t.status
	}
	return m
}

// handler names transactions "<sink>-<subtask>-<seq>".
type handler struct {
	e    *extSystem
	info SubtaskInfo
}

func (h *handler) Open(_ context.Context, info SubtaskInfo) error { h.info = info; return nil }
func (h *handler) BeginTransaction(_ context.Context, seq int64) (Transaction, error) {
	name := fmt.Sprintf("%s-%d-%d", h.info.SinkName, h.info.Subtask, seq)
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	if t, ok := h.e.txns[name]; ok && t.status != "aborted" {
		return nil, fmt.Errorf("transaction %s reused while %s", name, t.status)
	}
	h.e.txns[name] = &extTxn{status: "open"}
	return name, nil
}
func (h *handler) Write(_ context.Context, txn Transaction, c *dyntable.Chunk) error {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	t := h.e.txns[txn.(string)]
	for _, ch := range c.Changes {
		t.rows = append(t.rows, ch.Row[0].Str())
	}
	return nil
}
func (h *handler) PreCommit(_ context.Context, txn Transaction) ([]byte, error) {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	h.e.txns[txn.(string)].status = "prepared"
	return []byte(txn.(string)), nil
}
func (h *handler) Commit(_ context.Context, handle []byte) error {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	if h.e.permanent != nil {
		return Permanent(h.e.permanent)
	}
	if h.e.failNext > 0 {
		h.e.failNext--
		return errors.New("connection refused")
	}
	t := h.e.txns[string(handle)]
	switch t.status {
	case "prepared":
		t.status = "committed"
		h.e.commits++
	case "committed": // idempotent
	default:
		return fmt.Errorf("commit of %s in state %s", handle, t.status)
	}
	return nil
}
func (h *handler) Abort(_ context.Context, txn Transaction) error {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	h.e.txns[txn.(string)].status = "aborted"
	return nil
}
func (h *handler) RecoverAndCommit(ctx context.Context, handle []byte) error {
	return h.Commit(ctx, handle)
}
func (h *handler) RecoverAndAbort(_ context.Context, r Recovered) error {
	h.e.mu.Lock()
	defer h.e.mu.Unlock()
	prefix := fmt.Sprintf("%s-%d-", h.info.SinkName, r.Subtask)
	for n, t := range h.e.txns {
		if strings.HasPrefix(n, prefix) && t.status != "committed" {
			t.status = "aborted"
		}
	}
	return nil
}
func (h *handler) Close() error { return nil }

// sub is one sink subtask over a real Pebble store, so that "restart
// from checkpoint n" restores exactly what the runtime would.
type sub struct {
	*Operator
	store   *state.PebbleStore
	kgs     state.KeyGroupRange
	root    string
	snaps   map[int64]string // checkpoint id -> snapshot dir
	subtask int
}

var storeSeq int

func open(t *testing.T, e *extSystem, root string, subtask, p int, restore ...*sub) *sub {
	t.Helper()
	storeSeq++
	kgs := state.RangeFor(subtask, p)
	work := filepath.Join(root, fmt.Sprintf("work%d", storeSeq))
	if len(restore) > 0 {
		var srcs []state.RestoreSource
		for _, r := range restore {
			id := int64(0)
			for c := range r.snaps {
				id = max(id, c)
			}
			srcs = append(srcs, state.RestoreSource{Dir: r.snaps[id], KeyGroups: r.kgs})
		}
		if err := state.RestorePebble(work, srcs, kgs, state.PebbleOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := state.OpenPebbleStore(work, "sink", kgs, state.PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	o := NewOperator("s", &handler{e: e}, Options{RetryTimeout: 2 * time.Second, InitialBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	if err := o.Open(&dataflow.OpContext{Ctx: context.Background(), JobName: "j", Subtask: subtask, Parallelism: p, State: st}); err != nil {
		t.Fatal(err)
	}
	return &sub{Operator: o, store: st, kgs: kgs, root: root, snaps: map[int64]string{}, subtask: subtask}
}

func write(t *testing.T, o *sub, rows ...string) {
	t.Helper()
	c := &dyntable.Chunk{}
	for _, r := range rows {
		c.Changes = append(c.Changes, dyntable.Change{Kind: dyntable.Insert, Row: types.Row{types.NewString(r)}})
	}
	if err := o.ProcessChunk(0, c, nil); err != nil {
		t.Fatal(err)
	}
}

// barrier runs what the runtime does on barrier id: the operator's
// snapshot, then the store's.
func barrier(t *testing.T, o *sub, id int64) {
	t.Helper()
	if err := o.SnapshotState(dataflow.Barrier{CheckpointID: id}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(o.root, fmt.Sprintf("ckpt-%d-%d-%d", storeSeq, o.subtask, id))
	if _, err := o.store.Checkpoint(dir); err != nil {
		t.Fatal(err)
	}
	o.snaps[id] = dir
}

func notify(t *testing.T, o *sub, id int64) {
	t.Helper()
	if err := o.NotifyCheckpointComplete(id); err != nil {
		t.Fatal(err)
	}
}

func eq(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// Rows become visible only when the checkpoint that covers them
// completes, and in checkpoint order.
func TestCommitOnCompletionOnly(t *testing.T) {
	e := newExt()
	o := open(t, e, t.TempDir(), 0, 1)
	write(t, o, "a")
	barrier(t, o, 1)
	write(t, o, "b")
	eq(t, "before any completion", e.visible(), nil)
	barrier(t, o, 2)
	barrier(t, o, 3) // nothing written since 2: no empty transaction
	notify(t, o, 1)
	eq(t, "after 1", e.visible(), []string{"a"})
	notify(t, o, 3) // 2 was superseded by 3: commits 2's transaction too
	eq(t, "after 3", e.visible(), []string{"a", "b"})
	if len(e.txns) != 2 {
		t.Fatalf("transactions: %v, want 2", e.statuses())
	}
}

// A crash after the checkpoint completed but before the commit: the
// restarted subtask commits what the checkpoint holds and aborts what
// was written after it.
func TestRecoverCommitsCheckpointedAbortsLater(t *testing.T) {
	e := newExt()
	o := open(t, e, t.TempDir(), 0, 1)
	write(t, o, "a")
	barrier(t, o, 1)
	notify(t, o, 1)
	write(t, o, "b")
	barrier(t, o, 2)                  // checkpoint 2 completes, but the process dies before the commit
	write(t, o, "c")                  // after checkpoint 2: must never become visible
	o2 := open(t, e, o.root, 0, 1, o) // restored from checkpoint 2
	eq(t, "after recovery", e.visible(), []string{"a", "b"})
	if st := e.statuses()["s-0-2"]; st != "aborted" {
		t.Fatalf("transaction after the checkpoint is %q, want aborted", st)
	}
	// The restarted subtask reuses number 2 (aborted) for its next
	// transaction and carries on.
	write(t, o2, "c")
	barrier(t, o2, 3)
	notify(t, o2, 3)
	eq(t, "after replay", e.visible(), []string{"a", "b", "c"})
}

// A commit that fails transiently is retried until it succeeds.
func TestCommitRetries(t *testing.T) {
	e := newExt()
	e.failNext = 3
	o := open(t, e, t.TempDir(), 0, 1)
	write(t, o, "a")
	barrier(t, o, 1)
	notify(t, o, 1)
	eq(t, "after retries", e.visible(), []string{"a"})
}

// A permanent failure, or one that outlasts the retry timeout, fails the
// job with the transaction named; the handle stays in the checkpoint,
// so a restart commits it.
func TestCommitFailureFailsJobLosesNothing(t *testing.T) {
	e := newExt()
	o := open(t, e, t.TempDir(), 0, 1)
	write(t, o, "a")
	barrier(t, o, 1)
	e.permanent = errors.New("transaction lost")
	err := o.NotifyCheckpointComplete(1)
	if err == nil || !strings.Contains(err.Error(), "transaction lost") || !strings.Contains(err.Error(), "checkpoint 1") {
		t.Fatalf("error %v, want the permanent failure naming checkpoint 1", err)
	}
	e.permanent = nil
	o = open(t, e, o.root, 0, 1, o) // the restart commits checkpoint 1's transaction
	eq(t, "after restart", e.visible(), []string{"a"})

	// A transient failure that outlasts the retry timeout (2 s here).
	write(t, o, "b")
	barrier(t, o, 2)
	e.failNext = 1 << 30
	err = o.NotifyCheckpointComplete(2)
	if err == nil || !strings.Contains(err.Error(), "still failing") {
		t.Fatalf("error %v, want a retry timeout", err)
	}
	e.failNext = 0
	open(t, e, o.root, 0, 1, o)
	eq(t, "after second restart", e.visible(), []string{"a", "b"})
}

// At the end of a bounded input everything is committed.
func TestFinishCommits(t *testing.T) {
	e := newExt()
	o := open(t, e, t.TempDir(), 0, 1)
	write(t, o, "a")
	barrier(t, o, 1)
	write(t, o, "b")
	if err := o.Finish(nil); err != nil {
		t.Fatal(err)
	}
	eq(t, "after finish", e.visible(), []string{"a", "b"})
}

// Records of two subtasks restored at parallelism 1 are both found and
// recovered.
func TestRecoverAfterRescale(t *testing.T) {
	e := newExt()
	root := t.TempDir()
	o0 := open(t, e, root, 0, 2)
	o1 := open(t, e, root, 1, 2)
	write(t, o0, "a")
	write(t, o1, "b")
	barrier(t, o0, 1)
	barrier(t, o1, 1)
	write(t, o1, "late")
	open(t, e, root, 0, 1, o0, o1)
	eq(t, "after rescaled recovery", e.visible(), []string{"a", "b"})
	if st := e.statuses()["s-1-1"]; st != "aborted" {
		t.Fatalf("former subtask 1's later transaction is %q, want aborted", st)
	}
}

// Key groups: each (subtask, parallelism) record key is owned by that
// subtask.
func TestRecordKeyInRange(t *testing.T) {
	for p := 1; p <= state.MaxParallelism; p++ {
		for s := 0; s < p; s++ {
			if kg := state.KeyGroup(recordKey(s, p)); state.SubtaskFor(kg, p) != s {
				t.Fatalf("record key of %d/%d is in key group %d, owned by %d", s, p, kg, state.SubtaskFor(kg, p))
			}
		}
	}
}

// At the end of input the pending transactions are committed before the
// open one is pre-committed: a handler that writes at pre-commit (XA)
// would otherwise wait on locks the pending ones hold. The fake system
// refuses a prepare while another transaction is prepared.
func TestFinishCommitsPendingBeforeLastPreCommit(t *testing.T) {
	e := newExt()
	o := open(t, e, t.TempDir(), 0, 1)
	o.Operator.h = &lockingHandler{handler: handler{e: e, info: SubtaskInfo{SinkName: "s"}}}
	write(t, o, "a")
	barrier(t, o, 1) // a is prepared; checkpoint 1 never completes
	write(t, o, "b")
	if err := o.Finish(nil); err != nil {
		t.Fatal(err)
	}
	eq(t, "after finish", e.visible(), []string{"a", "b"})
}

type lockingHandler struct{ handler }

func (h *lockingHandler) PreCommit(ctx context.Context, txn Transaction) ([]byte, error) {
	h.e.mu.Lock()
	for n, t := range h.e.txns {
		if t.status == "prepared" {
			h.e.mu.Unlock()
			return nil, fmt.Errorf("would block on the locks of prepared transaction %s", n)
		}
	}
	h.e.mu.Unlock()
	return h.handler.PreCommit(ctx, txn)
}
