package mysql

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dyntable"
)

// The exactly-once sink's transactions are XA transactions named
//
//	formatID 0x5353514C ("SSQL")
//	gtrid    "streamsql:<job>:<sink table>"   (hashed if over 64 bytes)
//	bqual    "<subtask>.<parallelism>:<seq>.<attempt>"           in one process
//	         "<subtask>.<parallelism>:e<epoch>:<seq>.<attempt>"  a cluster task
//
// so that XA RECOVER can tell this job's and this sink's transactions
// from any other application's, and each subtask's from its siblings'.
// seq is the framework's transaction number; attempt counts retries of a
// prepare that failed on a broken connection (the retry starts a fresh
// transaction with the same rows under a new name). epoch is the task
// run's owner epoch (twophase.SubtaskInfo.Epoch): a cluster task's
// former owner, dropped by the group while it still runs, restored the
// same checkpoint and numbers its transactions as the new owner does;
// without the epoch both would XA START the same xid (XAER_DUPID), or
// one would commit or roll back the other's. XA has no fencing of its
// own: the checkpoint store's owner check keeps a former owner from
// committing (checkpoint/owner.go), and recovery here works on every
// epoch of the task up to the run's own, never on a newer owner's.
//
// Life of a transaction:
//
//	BeginTransaction   in memory only: a buffer of changes, compacted by key
//	PreCommit          dedicated connection: XA START, multi-row writes,
//	                   XA END, XA PREPARE; the connection is kept aside
//	Commit             XA COMMIT on that connection, which then goes back
//	                   to the pool; after a failure, on a fresh one
//	Abort              drops the buffer: nothing reached the server
//
// Writing only at the barrier keeps row locks short and, crucially,
// never blocks the sink on its own prepared transaction: transaction n+1
// updating a key prepared in n would wait for n's commit, which arrives
// on the same goroutine. The notification of checkpoint n reaches the
// sink before barrier n+1 (the coordinator runs one checkpoint at a
// time), so by the time n+1 writes, n is committed. The price is memory:
// one checkpoint interval's changes (distinct keys, for a keyed table).
//
// "Unknown XID" (1397) from XA COMMIT is ambiguous. MariaDB answers it
// both for a transaction that is not prepared (already committed, or
// rolled back) and for one prepared but still attached to another live
// connection. XA RECOVER tells them apart: it lists the attached ones.
// A handle exists only once XA PREPARE succeeded, so a handle whose xid
// is not listed was committed — by an earlier attempt whose answer was
// lost, or before a crash. A listed one is still attached to a
// connection the server has not yet seen die: its connection is killed
// (if it is ours) and the commit retried.
const xaFormatID = 0x5353514C

// ownLockWait is innodb_lock_wait_timeout, in seconds, for a transaction
// written while an earlier one of the same subtask is still prepared (a
// variable for tests).
var ownLockWait = 5

// xid names one XA transaction; it is also the handle stored in the
// checkpoint (as JSON), with the server connection that prepared it.
type xid struct {
	Gtrid  string `json:"g"`
	Bqual  string `json:"b"`
	ConnID int64  `json:"c,omitempty"`
	// Empty marks a transaction without changes (every change was a -U),
	// which never reached the server.
	Empty bool `json:"e,omitempty"`
}

// sql renders the xid for XA statements as hex literals, which need no
// quoting.
func (x xid) sql() string {
	return fmt.Sprintf("X'%s',X'%s',%d", hex.EncodeToString([]byte(x.Gtrid)), hex.EncodeToString([]byte(x.Bqual)), xaFormatID)
}

func (x xid) String() string { return x.Gtrid + "/" + x.Bqual }

// gtridFor is this job's and sink's global transaction id.
func gtridFor(job, sink string) string {
	g := "streamsql:" + job + ":" + sink
	if len(g) <= 64 {
		return g
	}
	h := fnv.New64a()
	h.Write([]byte(g))
	return g[:64-17] + "~" + fmt.Sprintf("%016x", h.Sum64())
}

// subtaskPrefix starts the bqual of every transaction of one subtask.
func subtaskPrefix(subtask, parallelism int) string {
	return strconv.Itoa(subtask) + "." + strconv.Itoa(parallelism) + ":"
}

// bqualFor names attempt of transaction seq of a subtask.
func bqualFor(info twophase.SubtaskInfo, seq int64, attempt int) string {
	b := subtaskPrefix(info.Subtask, info.Parallelism)
	if info.Epoch > 0 {
		b += "e" + strconv.FormatInt(info.Epoch, 10) + ":"
	}
	return b + strconv.FormatInt(seq, 10) + "." + strconv.Itoa(attempt)
}

// parseBqual reads the epoch (0 when absent) and seq of rest, a bqual
// after its subtask prefix.
func parseBqual(rest string) (epoch, seq int64, ok bool) {
	if e, r, found := strings.Cut(rest, ":"); found {
		n, err := strconv.ParseInt(strings.TrimPrefix(e, "e"), 10, 64)
		if err != nil || !strings.HasPrefix(e, "e") {
			return 0, 0, false
		}
		epoch, rest = n, r
	}
	s, _, _ := strings.Cut(rest, ".")
	seq, err := strconv.ParseInt(s, 10, 64)
	return epoch, seq, err == nil
}

// xaHandler is the twophase.Handler of one sink subtask.
type xaHandler struct {
	cfg   *config
	t     *connectors.Table
	shape *dbconn.Table
	pool  *pool
	log   *slog.Logger
	info  twophase.SubtaskInfo
	gtrid string

	cleaned bool // this subtask's leftover xids were rolled back
	// olderLeft: a former owner's prepared xids were attached to a live
	// connection (it still runs, or the server has not yet seen it die);
	// every pre-commit tries again to roll them back, since they hold
	// row locks this run's writes would wait for.
	olderLeft bool
	// held maps a prepared xid's bqual to the connection that prepared
	// it, kept aside until the commit.
	held map[string]*dedicated
	// unsure are xids whose XA PREPARE failed on a broken connection: the
	// server may or may not have prepared them.
	unsure []xid
}

var _ twophase.Handler = (*xaHandler)(nil)

func newXAHandler(cfg *config, t *connectors.Table, shape *dbconn.Table) *xaHandler {
	return &xaHandler{cfg: cfg, t: t, shape: shape, held: map[string]*dedicated{}, log: slog.Default()}
}

// xaTxn is an open transaction: the changes buffered since the barrier.
type xaTxn struct {
	seq int64
	buf *buffer
}

func (h *xaHandler) Open(ctx context.Context, info twophase.SubtaskInfo) error {
	h.info = info
	h.gtrid = gtridFor(info.JobName, info.SinkName)
	p, err := newPool(h.cfg)
	if err != nil {
		return err
	}
	h.pool = p
	err = retryWrite(ctx, h.cfg.maxRetries, func() error {
		c, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		return checkSchema(c, p.db, h.cfg, h.t)
	})
	return h.cfg.redact(err)
}

func (h *xaHandler) BeginTransaction(_ context.Context, seq int64) (twophase.Transaction, error) {
	return &xaTxn{seq: seq, buf: newBuffer(h.shape)}, nil
}

func (h *xaHandler) Write(_ context.Context, txn twophase.Transaction, c *dyntable.Chunk) error {
	return txn.(*xaTxn).buf.add(c)
}

// PreCommit writes and prepares the transaction, retrying on broken
// connections under new names (the server rolls back an unprepared XA
// transaction whose connection died).
func (h *xaHandler) PreCommit(ctx context.Context, txn twophase.Transaction) ([]byte, error) {
	t := txn.(*xaTxn)
	if t.buf.len() == 0 {
		return json.Marshal(xid{Empty: true})
	}
	if !h.cleaned {
		// Before this subtask's first transaction: roll back what an
		// earlier run of this subtask left prepared and no checkpoint
		// owns (the framework's recovery, which ran in Open, committed
		// what the restored checkpoint owns).
		err := retryWrite(ctx, h.cfg.maxRetries, func() (err error) {
			h.olderLeft, err = h.rollbackOwn(ctx, h.info.Subtask, h.info.Parallelism, -1, false)
			return err
		})
		if err != nil {
			return nil, h.cfg.redact(err)
		}
		h.cleaned = true
	}
	attempt := -1
	var last error
	prepared := false // last came from prepare, not from resolveUnsure
	var x xid
	out, err := backoff.Retry(ctx, func() ([]byte, error) {
		attempt++
		if h.olderLeft {
			// Before every attempt: the former owner's connection may
			// have gone since, and its row locks with it.
			left, err := h.rollbackOwn(ctx, h.info.Subtask, h.info.Parallelism, -1, true)
			if err != nil {
				last, prepared = err, false
				return nil, err
			}
			h.olderLeft = left
		}
		// A prepare that failed ambiguously may have succeeded after all.
		if ux, ok, err := h.resolveUnsure(ctx); err != nil {
			last, prepared = err, false
			return nil, err
		} else if ok {
			t.buf.reset()
			return marshalXID(ux)
		}
		x = xid{Gtrid: h.gtrid, Bqual: bqualFor(h.info, t.seq, attempt)}
		last, prepared = h.prepare(ctx, x, t.buf), true
		if last == nil {
			t.buf.reset()
			x.ConnID = h.held[x.Bqual].id
			return marshalXID(x)
		}
		if !isTransient(last) {
			return nil, backoff.Permanent(last)
		}
		return nil, last
	}, backoff.WithBackOff(newBackoff()), backoff.WithMaxTries(uint(h.cfg.maxRetries)), backoff.WithMaxElapsedTime(0),
		backoff.WithNotify(func(err error, _ time.Duration) {
			if prepared {
				h.log.Warn("mysql sink: XA transaction failed before commit; retrying with a new transaction",
					"sink", h.info.SinkName, "xid", x.String(), "attempt", attempt+1, "error", h.cfg.redact(err))
			}
		}))
	if err != nil && last != nil && err != last {
		return nil, fmt.Errorf("%w (last error: %v)", err, h.cfg.redact(last))
	}
	if err != nil {
		return nil, h.cfg.redact(err)
	}
	return out, nil
}

// marshalXID encodes x for the checkpoint; a failure is not retried.
func marshalXID(x xid) ([]byte, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return nil, backoff.Permanent(err)
	}
	return b, nil
}

// prepare runs one XA transaction up to PREPARE on a dedicated
// connection, which is kept in held on success.
func (h *xaHandler) prepare(ctx context.Context, x xid, buf *buffer) error {
	c, cancel := context.WithTimeout(ctx, opTimeout)
	d, err := h.pool.dedicated(c)
	cancel()
	if err != nil {
		return err
	}
	exec := func(q string) error { return execTimeout(ctx, d.conn, q, nil) }
	started := false
	fail := func(err error) error {
		if started && !isTransient(err) {
			// A clean failure (bad data, say): end and roll back, so the
			// connection can be reused.
			e1 := exec("XA END " + x.sql())
			e2 := exec("XA ROLLBACK " + x.sql())
			if e1 == nil && e2 == nil {
				d.release()
				return err
			}
		}
		d.discard() // the server rolls back an unprepared XA transaction of a dead connection
		return err
	}
	// While an earlier transaction of this sink is still prepared, its row
	// locks can only be released by its commit, which comes on this very
	// goroutine: waiting for them would wait forever. That happens when
	// its checkpoint was aborted, or when the notice of its completion
	// arrives after the next barrier. Wait briefly, then fail clearly.
	wait := "DEFAULT"
	if len(h.held) > 0 || h.olderLeft {
		// Or a former owner's prepared transaction holds locks: fail
		// fast, and the next attempt tries to roll it back again.
		wait = strconv.Itoa(ownLockWait)
	}
	if err := exec("SET SESSION innodb_lock_wait_timeout = " + wait); err != nil {
		return fail(err)
	}
	if err := exec("XA START " + x.sql()); err != nil {
		return fail(err)
	}
	started = true
	if err := buf.flush(ctx, d.conn, h.cfg.maxRows); err != nil {
		if errNumber(err) == 1205 && len(h.held) > 0 {
			err = fmt.Errorf("a write waits for a row lock held by this sink's own prepared transaction of an earlier checkpoint, "+
				"which is not yet committed (its checkpoint did not complete, or its completion arrived after the next barrier); "+
				"failing so that recovery resolves it (%v)", err)
		}
		return fail(err)
	}
	if err := exec("XA END " + x.sql()); err != nil {
		return fail(err)
	}
	if err := exec("XA PREPARE " + x.sql()); err != nil {
		if isTransient(err) {
			h.unsure = append(h.unsure, x)
			d.discard()
			return err
		}
		return fail(err)
	}
	h.held[x.Bqual] = d
	return nil
}

// resolveUnsure settles xids whose PREPARE failed on a broken
// connection: one the server lists as prepared is adopted as this
// transaction's; the others are rolled back (if they are there at all).
func (h *xaHandler) resolveUnsure(ctx context.Context) (xid, bool, error) {
	if len(h.unsure) == 0 {
		return xid{}, false, nil
	}
	listed, err := h.recover(ctx)
	if err != nil {
		return xid{}, false, err
	}
	var adopted *xid
	for _, x := range h.unsure {
		if !listed[x.Bqual] {
			continue
		}
		if adopted == nil {
			adopted = &x
			continue
		}
		// Two attempts prepared: keep the first, roll back the other.
		if err := h.rollback(ctx, x); err != nil {
			return xid{}, false, err
		}
	}
	h.unsure = nil
	if adopted == nil {
		return xid{}, false, nil
	}
	h.log.Info("mysql sink: a prepare whose answer was lost had succeeded", "sink", h.info.SinkName, "xid", adopted.String())
	return *adopted, true, nil
}

// recover lists the bquals of this job's and sink's prepared
// transactions (XA RECOVER, filtered by format and gtrid).
func (h *xaHandler) recover(ctx context.Context) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rows, err := h.pool.db.QueryContext(ctx, "XA RECOVER")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var format, gl, bl int64
		var data []byte
		if err := rows.Scan(&format, &gl, &bl, &data); err != nil {
			return nil, err
		}
		if format != xaFormatID || gl+bl > int64(len(data)) || gl < 0 || bl < 0 {
			continue
		}
		if string(data[:gl]) == h.gtrid {
			out[string(data[gl:gl+bl])] = true
		}
	}
	return out, rows.Err()
}

// rollback rolls back a prepared xid; an unknown one is already gone.
func (h *xaHandler) rollback(ctx context.Context, x xid) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	_, err := h.pool.db.ExecContext(ctx, "XA ROLLBACK "+x.sql())
	if errNumber(err) == 1397 {
		return nil
	}
	return err
}

// rollbackOwn rolls back every prepared transaction of former subtask
// s/p of this run's owner epoch or an older one (only the older ones
// with onlyOlder), warning about those of this epoch numbered below
// nextSeq (a restored checkpoint should have owned them; nextSeq < 0
// warns about none). A newer owner's transactions are never touched:
// this run is then the stale one. It reports whether an older epoch's
// transaction was left, attached to a live connection.
func (h *xaHandler) rollbackOwn(ctx context.Context, s, p int, nextSeq int64, onlyOlder bool) (olderLeft bool, err error) {
	listed, err := h.recover(ctx)
	if err != nil {
		return false, err
	}
	prefix := subtaskPrefix(s, p)
	for b := range listed {
		rest, ok := strings.CutPrefix(b, prefix)
		if !ok {
			continue
		}
		if _, held := h.held[b]; held {
			continue // this run's own, waiting for its checkpoint
		}
		epoch, seq, parsed := parseBqual(rest)
		if !parsed {
			continue // not a name of this sink's
		}
		if epoch > h.info.Epoch || (onlyOlder && epoch == h.info.Epoch) {
			continue
		}
		if epoch == h.info.Epoch && seq < nextSeq {
			h.log.Warn("mysql sink: rolling back a prepared transaction numbered before the restored checkpoint's",
				"sink", h.info.SinkName, "bqual", b, "next_seq", nextSeq)
		}
		c, cancel := context.WithTimeout(ctx, opTimeout)
		_, err := h.pool.db.ExecContext(c, "XA ROLLBACK "+xid{Gtrid: h.gtrid, Bqual: b}.sql())
		cancel()
		switch {
		case errNumber(err) == 1397:
			// Listed, yet unknown to this connection: it is attached to a
			// live connection — a zombie of an earlier run, or a running
			// job under the same name. Never roll back a live job's
			// transaction; a zombie's goes when its connection dies (and
			// a former owner's is tried again at the next pre-commit).
			h.log.Warn("mysql sink: a prepared transaction of this job name is attached to a live connection; left alone",
				"sink", h.info.SinkName, "bqual", b)
			olderLeft = olderLeft || epoch < h.info.Epoch
		case err != nil:
			return olderLeft, err
		default:
			h.log.Info("mysql sink: rolled back a transaction no checkpoint owns", "sink", h.info.SinkName, "bqual", b)
		}
	}
	return olderLeft, nil
}

// Commit commits a prepared transaction; see the type comment for the
// meaning of "Unknown XID".
func (h *xaHandler) Commit(ctx context.Context, handle []byte) error {
	var x xid
	if err := json.Unmarshal(handle, &x); err != nil {
		return twophase.Permanent(fmt.Errorf("mysql sink: corrupt transaction handle: %w", err))
	}
	if x.Empty {
		return nil
	}
	if d, ok := h.held[x.Bqual]; ok {
		c, cancel := context.WithTimeout(ctx, opTimeout)
		_, err := d.conn.ExecContext(c, "XA COMMIT "+x.sql())
		cancel()
		if err == nil {
			delete(h.held, x.Bqual)
			d.release()
			return nil
		}
		// Whatever went wrong, this connection is done with: closing it
		// detaches the prepared transaction, which any connection can
		// then commit.
		delete(h.held, x.Bqual)
		d.discard()
		if rb := rolledBack(err); rb != nil {
			return rb
		}
		if errNumber(err) != 1397 {
			return h.cfg.redact(err)
		}
	}
	return h.commitDetached(ctx, x)
}

// rolledBack turns the XA_RB* errors, which mean the server rolled the
// transaction back, into a permanent error.
func rolledBack(err error) error {
	switch errNumber(err) {
	case 1402, 1613, 1614:
		return twophase.Permanent(fmt.Errorf("the server rolled back the prepared transaction, its rows are lost: %w", err))
	}
	return nil
}

// commitDetached commits x from any pooled connection.
func (h *xaHandler) commitDetached(ctx context.Context, x xid) error {
	c, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	_, err := h.pool.db.ExecContext(c, "XA COMMIT "+x.sql())
	if err == nil {
		return nil
	}
	if rb := rolledBack(err); rb != nil {
		return rb
	}
	if errNumber(err) != 1397 {
		return h.cfg.redact(err)
	}
	listed, lerr := h.recover(c)
	if lerr != nil {
		return h.cfg.redact(lerr)
	}
	if !listed[x.Bqual] {
		// Not prepared anywhere: committed earlier (a handle exists only
		// after a successful PREPARE).
		h.log.Info("mysql sink: transaction was already committed", "sink", h.info.SinkName, "xid", x.String())
		return nil
	}
	// Prepared, but attached to a connection the server still thinks
	// alive (ours, cut off by the network, or a killed process's whose
	// socket has not yet timed out). Kill it if it is ours, and retry.
	h.killOwner(c, x)
	return fmt.Errorf("mysql sink: prepared transaction %s is still attached to server connection %d; retrying", x, x.ConnID)
}

// killOwner kills the server connection that prepared x, if it still
// exists and belongs to the sink's user.
func (h *xaHandler) killOwner(ctx context.Context, x xid) {
	if x.ConnID == 0 {
		return
	}
	var user string
	err := h.pool.db.QueryRowContext(ctx, "SELECT USER FROM information_schema.PROCESSLIST WHERE ID = ?", x.ConnID).Scan(&user)
	if err != nil || user != h.cfg.dsn.User {
		return
	}
	if _, err := h.pool.db.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(x.ConnID, 10)); err == nil {
		h.log.Warn("mysql sink: killed the server connection holding a prepared transaction", "sink", h.info.SinkName, "xid", x.String(), "connection", x.ConnID)
	}
}

// Abort drops the buffered changes: nothing was sent yet.
func (h *xaHandler) Abort(_ context.Context, txn twophase.Transaction) error {
	txn.(*xaTxn).buf.reset()
	return nil
}

func (h *xaHandler) RecoverAndCommit(ctx context.Context, handle []byte) error {
	return h.Commit(ctx, handle)
}

// RecoverAndAbort rolls back every prepared transaction of former
// subtask r that the restored checkpoint did not own; other subtasks',
// other sinks' and other applications' xids are left alone.
func (h *xaHandler) RecoverAndAbort(ctx context.Context, r twophase.Recovered) error {
	left, err := h.rollbackOwn(ctx, r.Subtask, r.Parallelism, r.NextSeq, false)
	h.olderLeft = h.olderLeft || left
	return h.cfg.redact(err)
}

// Close releases the connections. Prepared transactions stay prepared on
// the server (closing detaches them): they belong to checkpoints.
func (h *xaHandler) Close() error {
	for b, d := range h.held {
		d.discard()
		delete(h.held, b)
	}
	if h.pool == nil {
		return nil
	}
	return h.pool.close()
}
