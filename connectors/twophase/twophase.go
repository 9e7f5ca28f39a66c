// Package twophase is the two-phase-commit sink framework: the one way
// every exactly-once sink in streamsql (Kafka transactions, MySQL XA,
// filesystem part files) reaches exactly-once end to end, and the way a
// user adds their own.
//
// It follows Flink's TwoPhaseCommitSinkFunction. A sink supplies a
// Handler, which knows how to open, write, pre-commit, commit and abort
// one transaction of its external system. The framework's Operator owns
// the protocol:
//
//   - rows go into the current transaction, begun lazily on the first
//     row after a barrier (an idle sink opens no empty transactions);
//   - on barrier n the operator pre-commits the current transaction
//     (after PreCommit, Commit must be able to succeed) and stores its
//     handle, with every handle still waiting for commit, in checkpoint
//     n's state;
//   - when checkpoint n completes everywhere, it commits every pending
//     transaction of checkpoints <= n, in order, retrying with backoff;
//     a commit that keeps failing fails the job, and the handle stays in
//     the checkpoint, so the restarted job commits it: nothing is lost;
//   - on restart it commits the handles of the restored checkpoint
//     (RecoverAndCommit; commits are idempotent, some may have been
//     committed before the crash) and then aborts whatever this subtask
//     opened after that checkpoint (RecoverAndAbort);
//   - at the end of a bounded input the job takes a final checkpoint
//     once every source has ended (dataflow.Options.FinalCheckpoint), so
//     the tail is committed like any other checkpoint; Finish then finds
//     nothing left. Without checkpointing, or if the final checkpoint
//     keeps failing, Finish pre-commits and commits what is left.
//
// The state record of a subtask is kept in keyed state under a key that
// falls in the subtask's key-group range, so the checkpoint machinery
// (Pebble or memory) covers it like any operator state. On restore at a
// different parallelism every old subtask's record is found by exactly
// one new subtask, which recovers it.
package twophase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/streamsql/streamsql/dyntable"
)

// Transaction is a Handler's open transaction; the framework never looks
// inside it.
type Transaction any

// SubtaskInfo identifies one sink subtask, for naming transactions
// (transactional ids, XA xids, part-file names) so that this job's
// transactions are never confused with another's.
type SubtaskInfo struct {
	JobName     string
	SinkName    string // the sink table's name
	Subtask     int
	Parallelism int
	// Epoch is the owner epoch of the run in cluster mode (a task run
	// by a new owner while its former one may still be running gets a
	// higher one), 0 in one process. A handler whose system does not
	// fence a former owner (MySQL XA) names its transactions with it.
	Epoch int64
}

// Recovered is what a restored checkpoint holds for one former subtask.
type Recovered struct {
	// Subtask and Parallelism are the former subtask's; they differ from
	// the current ones after rescaling.
	Subtask, Parallelism int
	// Handles are the pre-committed transactions the checkpoint still
	// owed a commit, in checkpoint order.
	Handles [][]byte
	// NextSeq is the sequence number the former subtask would have given
	// its next transaction: anything it opened at or after NextSeq was
	// opened after the checkpoint and must be aborted.
	NextSeq int64
	// Extra is the former subtask's Handler.Extra at the checkpoint.
	Extra []byte
}

// Handler is the system-specific half of a two-phase-commit sink. One
// Handler serves one sink subtask.
//
// Call order: Open once; then RecoverAndCommit for each restored handle
// and RecoverAndAbort once (both only when the job restarts from a
// checkpoint); then any sequence of BeginTransaction, Write, PreCommit,
// Commit, and Abort, all from the subtask's goroutine; Close once,
// always. ctx is cancelled when the job stops.
type Handler interface {
	// Open connects to the external system.
	Open(ctx context.Context, info SubtaskInfo) error
	// BeginTransaction opens a transaction. seq numbers this subtask's
	// transactions from 0, increasing, and is stable across a restore:
	// handlers build deterministic transaction names from it.
	BeginTransaction(ctx context.Context, seq int64) (Transaction, error)
	// Write adds the chunk's changes to txn. It may buffer.
	Write(ctx context.Context, txn Transaction, c *dyntable.Chunk) error
	// PreCommit flushes txn so that Commit can no longer fail for lack of
	// data (XA PREPARE, a flushed Kafka transaction, a closed temp file),
	// and returns the handle that commits it, which goes into the
	// checkpoint. No further Write follows for txn.
	PreCommit(ctx context.Context, txn Transaction) ([]byte, error)
	// Commit commits a pre-committed transaction. It is idempotent:
	// committing a transaction that is already committed succeeds. An
	// error wrapped with Permanent is not retried.
	Commit(ctx context.Context, handle []byte) error
	// Abort rolls back an open (not pre-committed) transaction.
	Abort(ctx context.Context, txn Transaction) error
	// RecoverAndCommit commits a handle from the restored checkpoint,
	// which may already be committed.
	RecoverAndCommit(ctx context.Context, handle []byte) error
	// RecoverAndAbort aborts every transaction the former subtask r may
	// have opened after the checkpoint (those numbered from r.NextSeq
	// on, or simply all of its transactions that are not committed).
	// It runs after every RecoverAndCommit of r.
	RecoverAndAbort(ctx context.Context, r Recovered) error
	// Close releases connections. It does not commit or abort pending
	// transactions: the ones pre-committed belong to checkpoints.
	Close() error
}

// Extras is an optional interface of Handlers that keep a little state
// of their own in the checkpoint (the size of a transactional-id pool,
// say). Extra is called after each PreCommit; its result comes back in
// Recovered.Extra.
type Extras interface {
	Extra() []byte
}

// WatermarkHandler is an optional interface of Handlers that act on event
// time (the filesystem sink's partition-time commit). Watermark is called
// from the subtask's goroutine, between Writes, with each new watermark
// of the sink's input: every row of event time below wm has been written.
type WatermarkHandler interface {
	Watermark(wm int64)
}

// EndOfInputHandler is an optional interface of Handlers: EndOfInput is
// called once when a bounded input has ended and every transaction is
// committed (the filesystem sink then commits its last partitions).
type EndOfInputHandler interface {
	EndOfInput(ctx context.Context) error
}

// permanent marks an error that retrying cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent wraps err so that the framework stops retrying a commit and
// fails the job at once (the transaction was lost by the external
// system, for example after a broker-side transaction timeout).
func Permanent(err error) error { return permanent{err} }

// IsPermanent reports whether err was wrapped with Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// Options tune the framework.
type Options struct {
	// RetryTimeout bounds how long a failing commit is retried before
	// the job fails (the handle stays in the checkpoint either way).
	RetryTimeout time.Duration
	// InitialBackoff and MaxBackoff shape the retry delays.
	InitialBackoff, MaxBackoff time.Duration
}

// DefaultOptions retries commits for up to five minutes.
func DefaultOptions() Options {
	return Options{RetryTimeout: 5 * time.Minute, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 5 * time.Second}
}

// retry runs fn until it succeeds, returns a Permanent error, ctx ends,
// or the retry timeout passes. It reports the attempts made.
func retry(ctx context.Context, o Options, what string, fn func() error, onRetry func(attempt int, err error)) error {
	attempt := 0
	var last error
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		attempt++
		last = fn()
		if last != nil && IsPermanent(last) {
			return struct{}{}, backoff.Permanent(last)
		}
		return struct{}{}, last
	},
		backoff.WithBackOff(&backoff.ExponentialBackOff{InitialInterval: o.InitialBackoff, Multiplier: 2, MaxInterval: o.MaxBackoff}),
		backoff.WithMaxElapsedTime(o.RetryTimeout),
		backoff.WithNotify(func(err error, _ time.Duration) {
			if onRetry != nil {
				onRetry(attempt, err)
			}
		}))
	switch {
	case err == nil:
		return nil
	case IsPermanent(last):
		return fmt.Errorf("%s: %w", what, last)
	case ctx.Err() != nil && err != last:
		return fmt.Errorf("%s: %w (job stopping; last error: %v)", what, err, last)
	}
	return fmt.Errorf("%s: still failing after %d attempts over %s: %w", what, attempt, o.RetryTimeout, last)
}
