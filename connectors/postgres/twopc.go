package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/connectors/internal/changebuf"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dyntable"
)

// The exactly-once sink's transactions are prepared transactions named
//
//	streamsql:<job>:<sink table>:<subtask>.<parallelism>:<seq>.<attempt>
//
// (the job and sink part hashed when long: a name has at most 200
// bytes), so that pg_prepared_xacts tells this job's and this sink's
// transactions from any other's, and each subtask's from its siblings'.
// seq is the framework's transaction number; attempt counts retries of a
// prepare that failed on a broken connection.
//
// Life of a transaction:
//
//	BeginTransaction   in memory only: a buffer of changes, compacted by key
//	PreCommit          BEGIN, multi-row writes, PREPARE TRANSACTION; the
//	                   session is then free again (PostgreSQL detaches a
//	                   prepared transaction from its session)
//	Commit             COMMIT PREPARED, from any session
//	Abort              drops the buffer: nothing reached the server
//
// Writing only at the barrier keeps row locks short and never blocks the
// sink on its own prepared transaction (see connectors/mysql/xa.go: the
// same reasoning holds). Should a write still wait on a row locked by
// this sink's earlier prepared transaction (its checkpoint did not
// complete), lock_timeout turns the wait into an error and recovery
// resolves it.
//
// "prepared transaction ... does not exist" (42704) from COMMIT PREPARED
// means it was committed already (a handle exists only once PREPARE
// succeeded, and only recovery rolls back, and only transactions no
// checkpoint owns): an earlier attempt whose answer was lost, or a commit
// before a crash.

// ownLockWait bounds a write's wait for a row lock while one of this
// sink's prepared transactions is not yet committed.
var ownLockWait = 5 * time.Second

// handle is what the checkpoint stores for a prepared transaction.
type handle struct {
	GID   string `json:"g,omitempty"`
	Empty bool   `json:"e,omitempty"` // no changes: nothing was prepared
}

// gidPrefix is this job's and sink's part of every transaction name.
func gidPrefix(job, sink string) string {
	g := "streamsql:" + job + ":" + sink + ":"
	if len(g) <= 150 {
		return g
	}
	h := fnv.New64a()
	h.Write([]byte(g))
	return g[:150-18] + "~" + fmt.Sprintf("%016x", h.Sum64()) + ":"
}

// subtaskPrefix follows gidPrefix in the names of one subtask.
func subtaskPrefix(subtask, parallelism int) string {
	return strconv.Itoa(subtask) + "." + strconv.Itoa(parallelism) + ":"
}

// pcHandler is the twophase.Handler of one sink subtask.
type pcHandler struct {
	target
	log    *slog.Logger
	info   twophase.SubtaskInfo
	prefix string

	cleaned bool // this subtask's leftovers were rolled back
	// prepared counts this run's prepared transactions not yet committed.
	prepared map[string]bool
	// unsure are names whose PREPARE failed on a broken connection: the
	// server may or may not have prepared them.
	unsure []string
}

var _ twophase.Handler = (*pcHandler)(nil)

// pcTxn is an open transaction: the changes buffered since the barrier.
type pcTxn struct {
	seq int64
	buf *changebuf.Buffer
}

// Open connects, checks the table, and checks that the server can
// prepare transactions at all.
func (h *pcHandler) Open(ctx context.Context, info twophase.SubtaskInfo) error {
	h.info = info
	h.log = slog.Default()
	h.prefix = gidPrefix(info.JobName, info.SinkName)
	h.prepared = map[string]bool{}
	if err := h.open(ctx, 4); err != nil {
		return err
	}
	var max string
	if err := h.pool.QueryRow(ctx, "SHOW max_prepared_transactions").Scan(&max); err != nil {
		return h.errorf("%w", err)
	}
	if max == "0" {
		return h.errorf("'sink.semantic' = 'exactly-once' needs prepared transactions, and the server's max_prepared_transactions is 0; " +
			"set it in postgresql.conf (at least twice the sink's parallelism) and restart PostgreSQL, or use 'sink.semantic' = 'upsert'")
	}
	return nil
}

func (h *pcHandler) BeginTransaction(_ context.Context, seq int64) (twophase.Transaction, error) {
	return &pcTxn{seq: seq, buf: changebuf.New(h.t.PrimaryKey)}, nil
}

func (h *pcHandler) Write(_ context.Context, txn twophase.Transaction, c *dyntable.Chunk) error {
	return txn.(*pcTxn).buf.Add("jdbc sink", c)
}

// PreCommit writes and prepares the transaction, retrying on broken
// connections under new names (the server rolls back an unprepared
// transaction whose session died).
func (h *pcHandler) PreCommit(ctx context.Context, txn twophase.Transaction) ([]byte, error) {
	t := txn.(*pcTxn)
	if t.buf.Len() == 0 {
		return json.Marshal(handle{Empty: true})
	}
	if !h.cleaned {
		// Before this subtask's first transaction: roll back what an
		// earlier run of this subtask left prepared and no checkpoint owns
		// (recovery, in Open, committed what the checkpoint owns).
		if err := retry(ctx, h.cfg.maxRetries, func() error { return h.rollbackOwn(ctx, h.info.Subtask, h.info.Parallelism) }); err != nil {
			return nil, h.errorf("%w", err)
		}
		h.cleaned = true
	}
	attempt := -1
	var last error
	gid := ""
	out, err := backoff.Retry(ctx, func() ([]byte, error) {
		attempt++
		// A prepare that failed ambiguously may have succeeded after all.
		if g, ok, err := h.resolveUnsure(ctx); err != nil {
			last, gid = err, ""
			return nil, err
		} else if ok {
			t.buf.Reset()
			return json.Marshal(handle{GID: g})
		}
		gid = h.prefix + subtaskPrefix(h.info.Subtask, h.info.Parallelism) + strconv.FormatInt(t.seq, 10) + "." + strconv.Itoa(attempt)
		if last = h.prepare(ctx, gid, t.buf); last == nil {
			t.buf.Reset()
			h.prepared[gid] = true
			return json.Marshal(handle{GID: gid})
		}
		if !isTransient(last) {
			return nil, backoff.Permanent(last)
		}
		return nil, last
	}, backoff.WithBackOff(newBackoff()), backoff.WithMaxTries(uint(h.cfg.maxRetries)), backoff.WithMaxElapsedTime(0),
		backoff.WithNotify(func(err error, _ time.Duration) {
			if gid != "" {
				h.log.Warn("jdbc sink: transaction failed before commit; retrying with a new transaction",
					"sink", h.info.SinkName, "gid", gid, "attempt", attempt+1, "error", h.cfg.redact(err))
			}
		}))
	if err != nil && last != nil && err != last {
		return nil, h.errorf("preparing a transaction: %w (last error: %v)", err, last)
	}
	if err != nil {
		return nil, h.errorf("preparing a transaction: %w", err)
	}
	return out, nil
}

// prepare runs one transaction up to PREPARE TRANSACTION.
func (h *pcHandler) prepare(ctx context.Context, gid string, buf *changebuf.Buffer) error {
	c, err := h.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	// The transaction block is run by hand, not as a pgx.Tx: PREPARE
	// TRANSACTION ends it, which pgx.Tx does not know.
	if err := execTimeout(ctx, c, "BEGIN", nil); err != nil {
		return err
	}
	fail := func(err error) error {
		if isTransient(err) {
			c.Conn().PgConn().Close(context.Background()) // the server rolls back a dead session's transaction
		} else {
			_ = execTimeout(context.Background(), c, "ROLLBACK", nil)
		}
		return err
	}
	if len(h.prepared) > 0 {
		if err := execTimeout(ctx, c, fmt.Sprintf("SET LOCAL lock_timeout = %d", ownLockWait.Milliseconds()), nil); err != nil {
			return fail(err)
		}
	}
	if err := flush(ctx, c, h.shape, buf, h.cfg.maxRows); err != nil {
		if sqlState(err) == "55P03" && len(h.prepared) > 0 {
			err = fmt.Errorf("a write waits for a row lock held by this sink's own prepared transaction of an earlier checkpoint, "+
				"which is not yet committed (its checkpoint did not complete); failing so that recovery resolves it (%v)", err)
			return fail(twophase.Permanent(err))
		}
		return fail(err)
	}
	err = execTimeout(ctx, c, "PREPARE TRANSACTION "+quoteLiteral(gid), nil)
	if err != nil && isTransient(err) {
		// Sent, but the answer was lost: prepared or not, resolveUnsure
		// finds out.
		h.unsure = append(h.unsure, gid)
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// listed returns the names of this job's and sink's prepared
// transactions in this database that start with prefix.
func (h *pcHandler) listed(ctx context.Context, prefix string) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rows, err := h.pool.Query(ctx, "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() AND starts_with(gid, $1)", prefix)
	if err != nil {
		return nil, err
	}
	gids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, g := range gids {
		out[g] = true
	}
	return out, nil
}

// resolveUnsure settles names whose PREPARE failed on a broken
// connection: one the server lists as prepared is adopted as this
// transaction's; the others are rolled back (if they are there at all).
func (h *pcHandler) resolveUnsure(ctx context.Context) (string, bool, error) {
	if len(h.unsure) == 0 {
		return "", false, nil
	}
	l, err := h.listed(ctx, h.prefix+subtaskPrefix(h.info.Subtask, h.info.Parallelism))
	if err != nil {
		return "", false, err
	}
	adopted := ""
	for _, g := range h.unsure {
		if !l[g] {
			continue
		}
		if adopted == "" {
			adopted = g
			continue
		}
		if err := h.exec(ctx, "ROLLBACK PREPARED "+quoteLiteral(g)); err != nil && sqlState(err) != "42704" {
			return "", false, err
		}
	}
	h.unsure = nil
	if adopted == "" {
		return "", false, nil
	}
	h.prepared[adopted] = true
	h.log.Info("jdbc sink: a prepare whose answer was lost had succeeded", "sink", h.info.SinkName, "gid", adopted)
	return adopted, true, nil
}

func (h *pcHandler) exec(ctx context.Context, q string) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	_, err := h.pool.Exec(ctx, q)
	return err
}

// rollbackOwn rolls back every prepared transaction of former subtask
// s/p that this run did not prepare itself.
func (h *pcHandler) rollbackOwn(ctx context.Context, s, p int) error {
	l, err := h.listed(ctx, h.prefix+subtaskPrefix(s, p))
	if err != nil {
		return err
	}
	for g := range l {
		if h.prepared[g] {
			continue
		}
		err := h.exec(ctx, "ROLLBACK PREPARED "+quoteLiteral(g))
		switch {
		case sqlState(err) == "42704": // gone meanwhile
		case err != nil:
			return err
		default:
			h.log.Info("jdbc sink: rolled back a prepared transaction no checkpoint owns", "sink", h.info.SinkName, "gid", g)
		}
	}
	return nil
}

// Commit commits a prepared transaction; see the type comment for the
// meaning of "does not exist".
func (h *pcHandler) Commit(ctx context.Context, b []byte) error {
	var x handle
	if err := json.Unmarshal(b, &x); err != nil {
		return twophase.Permanent(fmt.Errorf("jdbc sink: corrupt transaction handle: %w", err))
	}
	if x.Empty {
		return nil
	}
	err := h.exec(ctx, "COMMIT PREPARED "+quoteLiteral(x.GID))
	if sqlState(err) == "42704" {
		h.log.Info("jdbc sink: transaction was already committed", "sink", h.info.SinkName, "gid", x.GID)
		err = nil
	}
	if err != nil {
		return h.cfg.redact(err)
	}
	delete(h.prepared, x.GID)
	return nil
}

// Abort drops the buffered changes: nothing was sent yet.
func (h *pcHandler) Abort(_ context.Context, txn twophase.Transaction) error {
	txn.(*pcTxn).buf.Reset()
	return nil
}

func (h *pcHandler) RecoverAndCommit(ctx context.Context, b []byte) error { return h.Commit(ctx, b) }

// RecoverAndAbort rolls back every prepared transaction of former
// subtask r that the restored checkpoint did not own (recovery committed
// the owned ones just before); other subtasks', sinks' and applications'
// are left alone.
func (h *pcHandler) RecoverAndAbort(ctx context.Context, r twophase.Recovered) error {
	return h.cfg.redact(h.rollbackOwn(ctx, r.Subtask, r.Parallelism))
}

// Close releases the connections. Prepared transactions stay prepared on
// the server: they belong to checkpoints.
func (h *pcHandler) Close() error { return h.close() }
