package twophase

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/internal/metrics"
	"github.com/streamsql/streamsql/state"
)

// pendingTxn is a pre-committed transaction waiting for its checkpoint.
type pendingTxn struct {
	Checkpoint int64  `json:"checkpoint"`
	Seq        int64  `json:"seq"`
	Handle     []byte `json:"handle"`
	// preCommitted is when PreCommit returned, for the commit latency.
	preCommitted time.Time
}

// record is what a subtask keeps in checkpoint state.
type record struct {
	Subtask     int          `json:"subtask"`
	Parallelism int          `json:"parallelism"`
	NextSeq     int64        `json:"next_seq"`
	Pending     []pendingTxn `json:"pending"`
	Extra       []byte       `json:"extra,omitempty"`
}

type recordCodec struct{}

func (recordCodec) Encode(dst []byte, r *record) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		// A record holds only ints and byte slices; Marshal cannot fail.
		panic("twophase: encoding the state record: " + err.Error())
	}
	return append(dst, b...)
}

func (recordCodec) Decode(b []byte) (*record, error) {
	r := &record{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("twophase: corrupt state record: %w", err)
	}
	return r, nil
}

// Operator runs a Handler as a sink subtask (a dataflow.Operator that
// pre-commits in SnapshotState and commits in NotifyCheckpointComplete).
// Create one per subtask with NewOperator.
type Operator struct {
	dataflow.BaseOperator
	h    Handler
	opts Options
	name string

	ctx     context.Context
	crashAt int // test.crash.before-commit (dataflow.TestHooks)
	log     *slog.Logger
	st      state.ValueState[*record]
	info    SubtaskInfo

	txn     Transaction // the open transaction, nil between a barrier and the next row
	txnSeq  int64
	nextSeq int64
	pending []pendingTxn
	failed  error // a failed pre-commit: the job must restart
}

// NewOperator wraps h. sinkName names the sink in errors and transaction
// names (use the table name).
func NewOperator(sinkName string, h Handler, o Options) *Operator {
	if o.RetryTimeout == 0 {
		o = DefaultOptions()
	}
	return &Operator{h: h, opts: o, name: sinkName}
}

// Open restores the subtask's record, if the job was restored from a
// checkpoint, and recovers its transactions before any row is written.
func (o *Operator) Open(oc *dataflow.OpContext) error {
	o.ctx = oc.Context()
	o.log = oc.Logger()
	o.info = SubtaskInfo{JobName: oc.JobName, SinkName: o.name, Subtask: oc.Subtask, Parallelism: oc.Parallelism, Epoch: oc.Epoch}
	o.crashAt = oc.Hooks.CrashBeforeCommit
	st, err := state.NewValueState[*record](oc.State, "twophase", recordCodec{})
	if err != nil {
		return err
	}
	o.st = st
	if err := o.h.Open(o.ctx, o.info); err != nil {
		return fmt.Errorf("sink %s: %w", o.name, err)
	}
	return o.recover(oc.Subtask, oc.Parallelism)
}

// recover finds the records of every former subtask whose key falls in
// this subtask's key-group range, commits their handles and aborts what
// they opened after the checkpoint. Keys of records are deterministic
// per (subtask, parallelism), so trying every possible former
// parallelism finds them all; each is owned by exactly one new subtask.
func (o *Operator) recover(subtask, p int) error {
	mine := state.RangeFor(subtask, p)
	for fp := 1; fp <= state.MaxParallelism; fp++ {
		for fs := 0; fs < fp; fs++ {
			key := recordKey(fs, fp)
			if !mine.Contains(state.KeyGroup(key)) {
				continue
			}
			r, ok, err := o.st.Get(key)
			if err != nil {
				return fmt.Errorf("sink %s: reading restored transactions: %w", o.name, err)
			}
			if !ok {
				continue
			}
			if err := o.recoverRecord(r); err != nil {
				return err
			}
			if fs != subtask || fp != p {
				if err := o.st.Delete(key); err != nil {
					return err
				}
			} else if r.NextSeq > o.nextSeq {
				// Continue numbering where the checkpoint left off; the
				// numbers after it were just aborted and may be reused.
				o.nextSeq = r.NextSeq
			}
		}
	}
	return nil
}

func (o *Operator) recoverRecord(r *record) error {
	rec := Recovered{Subtask: r.Subtask, Parallelism: r.Parallelism, NextSeq: r.NextSeq, Extra: r.Extra}
	for _, pt := range r.Pending {
		rec.Handles = append(rec.Handles, pt.Handle)
		what := fmt.Sprintf("sink %s: committing transaction %d of checkpoint %d on recovery", o.name, pt.Seq, pt.Checkpoint)
		if err := retry(o.ctx, o.opts, what, func() error { return o.h.RecoverAndCommit(o.ctx, pt.Handle) }, o.onRetry(what)); err != nil {
			return err
		}
	}
	what := fmt.Sprintf("sink %s: aborting transactions opened after the checkpoint by former subtask %d/%d", o.name, r.Subtask, r.Parallelism)
	if err := retry(o.ctx, o.opts, what, func() error { return o.h.RecoverAndAbort(o.ctx, rec) }, o.onRetry(what)); err != nil {
		return err
	}
	o.log.Info("sink recovered transactions from the checkpoint", "sink", o.name,
		"committed", len(r.Pending), "former_subtask", r.Subtask, "former_parallelism", r.Parallelism)
	return nil
}

func (o *Operator) onRetry(what string) func(int, error) {
	return func(attempt int, err error) {
		o.log.Warn("retrying", "what", what, "attempt", attempt, "error", err)
	}
}

// recordKey is the state key of subtask s at parallelism p: the first
// of "twophase/<s>/<p>/<i>" (i = 0, 1, ...) whose key group subtask s
// owns at p. The keys of every (s, p) are computed once per process.
func recordKey(s, p int) []byte {
	recordKeysOnce.Do(func() {
		recordKeys = make([][][]byte, state.MaxParallelism+1)
		for p := 1; p <= state.MaxParallelism; p++ {
			recordKeys[p] = make([][]byte, p)
			for s := 0; s < p; s++ {
				r := state.RangeFor(s, p)
				for i := 0; ; i++ {
					k := []byte("twophase/" + strconv.Itoa(s) + "/" + strconv.Itoa(p) + "/" + strconv.Itoa(i))
					if r.Contains(state.KeyGroup(k)) {
						recordKeys[p][s] = k
						break
					}
				}
			}
		}
	})
	return recordKeys[p][s]
}

var (
	recordKeysOnce sync.Once
	recordKeys     [][][]byte // [parallelism][subtask]
)

// ProcessChunk writes the chunk into the open transaction, beginning one
// if needed.
func (o *Operator) ProcessChunk(_ int, c *dyntable.Chunk, _ dataflow.Collector) error {
	if o.failed != nil {
		return o.failed
	}
	if c.Len() == 0 {
		return nil
	}
	txn, err := o.Transaction()
	if err != nil {
		return err
	}
	if err := o.h.Write(o.ctx, txn, c); err != nil {
		return fmt.Errorf("sink %s: writing to transaction %d: %w", o.name, o.txnSeq, err)
	}
	return nil
}

// Transaction returns the open transaction, beginning one if none is
// open. ProcessChunk writes into it; an operator that wraps this one
// calls it to write, through its Handler, what is not a change into
// the same transaction (a cluster stage's watermark markers), between
// two of the Operator's calls on the same goroutine.
func (o *Operator) Transaction() (Transaction, error) {
	if o.failed != nil {
		return nil, o.failed
	}
	if o.txn == nil {
		txn, err := o.h.BeginTransaction(o.ctx, o.nextSeq)
		if err != nil {
			return nil, fmt.Errorf("sink %s: beginning transaction %d: %w", o.name, o.nextSeq, err)
		}
		o.txn, o.txnSeq = txn, o.nextSeq
		o.nextSeq++
	}
	return o.txn, nil
}

// ProcessWatermark passes the watermark to a Handler that is a
// WatermarkHandler; sinks end the dataflow, so nothing goes on.
func (o *Operator) ProcessWatermark(wm int64, _ dataflow.Collector) error {
	if w, ok := o.h.(WatermarkHandler); ok {
		w.Watermark(wm)
	}
	return nil
}

// preCommit pre-commits the open transaction as part of checkpoint id.
func (o *Operator) preCommit(id int64) error {
	if o.txn == nil {
		return nil
	}
	h, err := o.h.PreCommit(o.ctx, o.txn)
	if err != nil {
		return fmt.Errorf("sink %s: pre-committing transaction %d: %w", o.name, o.txnSeq, err)
	}
	o.pending = append(o.pending, pendingTxn{Checkpoint: id, Seq: o.txnSeq, Handle: h, preCommitted: time.Now()})
	o.txn = nil
	return nil
}

// SnapshotState pre-commits the open transaction and stores every
// pending handle in checkpoint b's state. An error declines checkpoint b;
// the transaction then stays pending and is committed with the next
// checkpoint that completes.
func (o *Operator) SnapshotState(b dataflow.Barrier) error {
	if err := o.preCommit(b.CheckpointID); err != nil {
		// The transaction is in an unknown state: the checkpoint is
		// declined, and the job fails on the next call, so that recovery
		// aborts the transaction cleanly.
		o.failed = err
		return err
	}
	r := &record{Subtask: o.info.Subtask, Parallelism: o.info.Parallelism, NextSeq: o.nextSeq,
		Pending: append([]pendingTxn(nil), o.pending...)}
	if x, ok := o.h.(Extras); ok {
		r.Extra = x.Extra()
	}
	return o.st.Put(recordKey(o.info.Subtask, o.info.Parallelism), r)
}

// NotifyCheckpointComplete commits every pending transaction of
// checkpoints up to id, in order.
func (o *Operator) NotifyCheckpointComplete(id int64) error {
	if o.failed != nil {
		return o.failed
	}
	if len(o.pending) == 0 || o.pending[0].Checkpoint > id {
		return nil
	}
	crashBeforeCommit(o.log, o.name, o.crashAt)
	return o.commitUpTo(id)
}

func (o *Operator) commitUpTo(id int64) error {
	for len(o.pending) > 0 && o.pending[0].Checkpoint <= id {
		pt := o.pending[0]
		what := fmt.Sprintf("sink %s: committing transaction %d of checkpoint %d", o.name, pt.Seq, pt.Checkpoint)
		if err := retry(o.ctx, o.opts, what, func() error { return o.h.Commit(o.ctx, pt.Handle) }, o.onRetry(what)); err != nil {
			return fmt.Errorf("%w; the transaction stays in the checkpoint and is committed when the job restarts", err)
		}
		metrics.SinkCommitLatency.Observe(time.Since(pt.preCommitted).Seconds())
		o.pending = o.pending[1:]
	}
	return nil
}

// Finish commits everything at the end of a bounded input: no later
// checkpoint will come to do it. The pending transactions are committed
// before the open one is pre-committed: a pre-commit that writes (XA
// writes its rows at PreCommit) could otherwise wait on a row lock that
// a pending transaction holds, for a commit only this goroutine makes.
func (o *Operator) Finish(dataflow.Collector) error {
	if o.failed != nil {
		return o.failed
	}
	const end = int64(1) << 62
	if err := o.commitUpTo(end); err != nil {
		return err
	}
	if err := o.preCommit(end); err != nil {
		return err
	}
	if err := o.commitUpTo(end); err != nil {
		return err
	}
	if e, ok := o.h.(EndOfInputHandler); ok {
		return e.EndOfInput(o.ctx)
	}
	return nil
}

// Close aborts the open transaction, if any. Pre-committed transactions
// are left alone: they belong to checkpoints, and the restarted job
// commits or aborts them.
func (o *Operator) Close() error {
	var err error
	if o.txn != nil {
		// The job is stopping; its context may already be cancelled.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = o.h.Abort(ctx, o.txn)
		cancel()
		o.txn = nil
	}
	if cerr := o.h.Close(); err == nil {
		err = cerr
	}
	return err
}

// crashBeforeCommit is the kill -9 test's hook for the worst moment of
// two-phase commit: the checkpoint is complete, the transactions are
// prepared, and none is committed yet. at = k > 0 (the job's
// dataflow.TestHooks.CrashBeforeCommit, from the session option
// test.crash.before-commit) exits the process at this process's k-th
// commit round.
var commitRounds atomic.Int64

func crashBeforeCommit(log *slog.Logger, sink string, at int) {
	if at <= 0 {
		return
	}
	if n := commitRounds.Add(1); n == int64(at) {
		log.Warn("test hook: exiting between pre-commit and commit", "sink", sink)
		os.Exit(137)
	}
}
