package kafka

// The exactly-once Kafka sink: a twophase.Handler over the transactional
// producer (producer.go).
//
// Transactional ids. Each subtask owns a pool of ids,
// <sink.transactional-id-prefix>-<subtask>-<k>, k = 0, 1, ..., reused
// across checkpoints (an id per checkpoint would leave the broker one
// producer-state entry per checkpoint forever). A transaction takes the
// lowest free id. An id is not free while its transaction is open or
// pre-committed and not yet committed; checkpoints may be declined, so
// several may be pending, and the pool grows as needed. Its size goes
// into every checkpoint (twophase Extras).
//
// An id is also not free right after its commit: the latest completed
// checkpoint may still list the committed handle (the commit happened
// after that checkpoint's snapshot), and a restart from it commits the
// handle again with EndTxn, which must find no newer transaction on the
// id: it would commit that one instead. So a committed id is free again
// only once a checkpoint snapshotted after the commit has completed; the
// handler learns of completions from the commits themselves (a commit
// of a transaction pre-committed at snapshot s means a checkpoint at or
// after s completed).
//
// Recovery (after a restart from a checkpoint): RecoverAndCommit commits
// the stored handles with EndTxn directly; InitProducerID first would
// abort them. RecoverAndAbort then runs InitProducerID on every id the
// former subtask ever used (the checkpoint's pool size, then on until an
// id the broker has never seen, epoch 0), which fences zombies and aborts
// whatever they left open, except the ids just committed: by the rule
// above, nothing was opened on them after the checkpoint. The probe
// leaves one never-used id initialised, which joins the pool: the pool
// grows by one id per recovery, a few bytes of broker state each.
//
// Rescaling. Restored at another parallelism, former subtask s's record
// may be recovered by a new subtask other than s, while new subtask s
// uses the ids <prefix>-s-k. That is safe because the runtime opens
// every operator, and so runs every recovery, before any row flows: the
// pending transactions are committed before new subtask s opens one.
// The ids committed in recovery are noted in a process-wide registry
// (committedInRecovery), so that new subtask s too keeps them out of use
// until a checkpoint of this run completes (the rule above).

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dyntable"
)

// poolID is one transactional id of the subtask's pool.
type poolID struct {
	p    *txnProducer // its session in this process; nil until first used
	busy bool         // a transaction is open or pending commit
	// preSnap is the snapshot number at which the pending transaction
	// was pre-committed.
	preSnap int64
	// releasedAfter: a committed id is free once a checkpoint of
	// snapshot number >= releasedAfter has completed; 0 when free.
	releasedAfter int64
}

// txnHandler implements twophase.Handler and twophase.Extras.
type txnHandler struct {
	cfg    *sinkConfig
	info   twophase.SubtaskInfo
	tr     *kafka.Transport
	client *kafka.Client
	nparts int
	part   *partitioner
	enc    *recordEncoder

	pool []*poolID
	// snap counts this process's snapshots (Extra calls); completed is
	// the highest snapshot number known to belong to a completed
	// checkpoint.
	snap, completed int64
	// recovered are the transactional ids committed by RecoverAndCommit.
	recovered map[string]bool
	// begun is set by the first BeginTransaction, which first takes the
	// ids other subtasks committed in recovery out of use.
	begun bool
	// records, when set, turns a chunk into records in place of the
	// table's formats and partitioner (a cluster stage's exchange writer,
	// exchange.go).
	records RecordsFunc
}

var (
	_ twophase.Handler = (*txnHandler)(nil)
	_ twophase.Extras  = (*txnHandler)(nil)
)

func newTxnHandler(cfg *sinkConfig) *txnHandler {
	return &txnHandler{cfg: cfg, recovered: map[string]bool{}}
}

// kafkaTxn is an open transaction: pool index and session.
type kafkaTxn struct {
	k int
	p *txnProducer
}

// poolExtra is the handler's part of a checkpoint.
type poolExtra struct {
	Pool int `json:"pool"`
}

func (h *txnHandler) tid(subtask, k int) string {
	return h.cfg.prefix + "-" + strconv.Itoa(subtask) + "-" + strconv.Itoa(k)
}

// Open connects and reads the topic's partition count. It initialises
// no producer: that would abort transactions recovery must commit.
func (h *txnHandler) Open(ctx context.Context, info twophase.SubtaskInfo) error {
	h.info = info
	h.tr = &kafka.Transport{}
	h.client = &kafka.Client{Addr: kafka.TCP(h.cfg.servers...), Timeout: 30 * time.Second, Transport: h.tr}
	n, err := partitionCount(ctx, h.client, h.cfg.topic)
	if err != nil {
		return err
	}
	h.nparts = n
	if h.records == nil {
		h.part = newPartitioner(h.cfg.partitioner, info.Subtask)
		h.enc = newRecordEncoder(h.cfg)
	}
	return nil
}

// BeginTransaction takes the lowest free id of the pool, growing it if
// none is free, and opens a transaction on it.
func (h *txnHandler) BeginTransaction(ctx context.Context, _ int64) (twophase.Transaction, error) {
	if !h.begun {
		h.begun = true
		for _, k := range committedInRecovery.indexes(h.registryKey(), h.tid(h.info.Subtask, 0)) {
			for len(h.pool) <= k {
				h.pool = append(h.pool, &poolID{})
			}
			h.pool[k].releasedAfter = max(h.pool[k].releasedAfter, h.snap+1)
		}
	}
	k := -1
	for i, id := range h.pool {
		if !id.busy && h.completed >= id.releasedAfter {
			k = i
			break
		}
	}
	if k < 0 {
		k = len(h.pool)
		h.pool = append(h.pool, &poolID{})
	}
	id := h.pool[k]
	if id.p == nil || id.p.broken != nil {
		p, err := newTxnProducer(ctx, h.client, h.cfg.topic, h.nparts, h.tid(h.info.Subtask, k), h.cfg.txnTimeout)
		if err != nil {
			return nil, err
		}
		p.handle.Subtask, p.handle.Index = h.info.Subtask, k
		id.p = p
	}
	if err := id.p.begin(); err != nil {
		return nil, err
	}
	id.busy, id.releasedAfter = true, 0
	return &kafkaTxn{k: k, p: id.p}, nil
}

// Write encodes the chunk's changes and buffers them per partition;
// full batches are sent at once.
func (h *txnHandler) Write(ctx context.Context, txn twophase.Transaction, c *dyntable.Chunk) error {
	t := txn.(*kafkaTxn)
	if h.records != nil {
		now := time.Now() // the records' timestamp: when they were written
		return h.records(c, h.nparts, func(partition int, key, value []byte) error {
			return t.p.add(ctx, partition, key, value, nil, now)
		})
	}
	for _, ch := range h.enc.prepare(c).Changes {
		key, value, err := h.enc.encode(ch)
		if err != nil {
			return err
		}
		hs, ts := h.enc.metadata(ch.Row)
		if err := t.p.add(ctx, h.part.partition(key, h.nparts), key, value, hs, ts); err != nil {
			return err
		}
	}
	return nil
}

// PreCommit sends what is buffered; the transaction stays open on the
// broker until Commit.
func (h *txnHandler) PreCommit(ctx context.Context, txn twophase.Transaction) ([]byte, error) {
	t := txn.(*kafkaTxn)
	hd, err := t.p.preCommit(ctx)
	if err != nil {
		return nil, err
	}
	// Extra follows in the same snapshot and counts it.
	h.pool[t.k].preSnap = h.snap + 1
	return json.Marshal(hd)
}

func decodeHandle(b []byte) (txnHandle, error) {
	var hd txnHandle
	if err := json.Unmarshal(b, &hd); err != nil || hd.TransactionalID == "" {
		return hd, fmt.Errorf("kafka: corrupt transaction handle %q", b)
	}
	return hd, nil
}

// commit ends a pre-committed transaction with EndTxn(commit). A
// fencing answer means the broker no longer has the transaction: it
// aborted it (transaction timeout) or a newer producer fenced the id.
// Its rows are lost; retrying cannot help, so the error is permanent.
func (h *txnHandler) commit(ctx context.Context, hd txnHandle) error {
	if hd.Empty {
		return nil
	}
	err := endTxn(ctx, h.client, hd, true)
	if err == nil {
		return nil
	}
	if isFencing(err) {
		return twophase.Permanent(fmt.Errorf("%w: transaction of transactional id '%s' (producer id %d, epoch %d) of sink '%s' on topic '%s': the broker answered %v. "+
			"It most likely stayed open longer than 'properties.transaction.timeout.ms' (%d ms) and the broker aborted it; raise the timeout (up to the broker's transaction.max.timeout.ms) or checkpoint more often",
			ErrTxnLost, hd.TransactionalID, hd.ProducerID, hd.Epoch, h.cfg.table.Name, h.cfg.topic, err, h.cfg.txnTimeout.Milliseconds()))
	}
	return fmt.Errorf("kafka: committing the transaction of '%s': %w", hd.TransactionalID, err)
}

// Commit commits a pending transaction and releases its id (see the
// file comment for when it is free again).
func (h *txnHandler) Commit(ctx context.Context, handle []byte) error {
	hd, err := decodeHandle(handle)
	if err != nil {
		return twophase.Permanent(err)
	}
	if err := h.commit(ctx, hd); err != nil {
		return err
	}
	if hd.Subtask == h.info.Subtask && hd.Index < len(h.pool) {
		id := h.pool[hd.Index]
		if id.busy && id.p != nil && id.p.handle.ProducerID == hd.ProducerID && id.p.handle.Epoch == hd.Epoch {
			h.completed = max(h.completed, id.preSnap)
			id.busy = false
			id.releasedAfter = h.snap + 1
		}
	}
	return nil
}

// Abort aborts an open transaction; its id is free again at once (no
// checkpoint holds a handle of it).
func (h *txnHandler) Abort(ctx context.Context, txn twophase.Transaction) error {
	t := txn.(*kafkaTxn)
	err := t.p.abort(ctx)
	id := h.pool[t.k]
	id.busy, id.releasedAfter = false, 0
	if err != nil {
		id.p = nil // re-initialising the id aborts whatever is left
	}
	return err
}

// RecoverAndCommit commits a handle of the restored checkpoint with
// EndTxn directly, from this new process.
func (h *txnHandler) RecoverAndCommit(ctx context.Context, handle []byte) error {
	hd, err := decodeHandle(handle)
	if err != nil {
		return twophase.Permanent(err)
	}
	if err := h.commit(ctx, hd); err != nil {
		return err
	}
	h.recovered[hd.TransactionalID] = true
	committedInRecovery.add(h.registryKey(), hd.TransactionalID)
	if hd.Subtask == h.info.Subtask {
		// Not free before a checkpoint of this process completes: a
		// restart before that commits this handle again.
		for len(h.pool) <= hd.Index {
			h.pool = append(h.pool, &poolID{})
		}
		h.pool[hd.Index].releasedAfter = h.snap + 1
	}
	return nil
}

// RecoverAndAbort fences every id the former subtask r ever used, except
// those just committed, aborting their open transactions.
func (h *txnHandler) RecoverAndAbort(ctx context.Context, r twophase.Recovered) error {
	var x poolExtra
	if len(r.Extra) > 0 {
		if err := json.Unmarshal(r.Extra, &x); err != nil {
			return twophase.Permanent(fmt.Errorf("kafka: corrupt pool record %q: %w", r.Extra, err))
		}
	}
	for k := 0; ; k++ {
		tid := h.tid(r.Subtask, k)
		if h.recovered[tid] {
			continue
		}
		p, err := newTxnProducer(ctx, h.client, h.cfg.topic, h.nparts, tid, h.cfg.txnTimeout)
		if err != nil {
			return err
		}
		if r.Subtask == h.info.Subtask {
			// Keep the fresh session for this subtask's own pool.
			p.handle.Subtask, p.handle.Index = r.Subtask, k
			for len(h.pool) <= k {
				h.pool = append(h.pool, &poolID{})
			}
			h.pool[k].p = p
		}
		// Epoch 0: the broker had never seen the id, so the former
		// subtask never used it, nor any id after it (pools grow one id
		// at a time).
		if k >= x.Pool && p.handle.Epoch == 0 {
			return nil
		}
	}
}

// Extra records the pool size in the checkpoint; it is called once per
// snapshot, after PreCommit.
func (h *txnHandler) Extra() []byte {
	h.snap++
	b, _ := json.Marshal(poolExtra{Pool: len(h.pool)})
	return b
}

func (h *txnHandler) Close() error {
	if h.tr != nil {
		h.tr.CloseIdleConnections()
	}
	return nil
}

// registryKey names this sink's ids in committedInRecovery.
func (h *txnHandler) registryKey() string { return h.info.JobName + "\x00" + h.cfg.prefix }

// recoveryRegistry is the set of transactional ids committed by
// RecoverAndCommit in this process, per job and prefix. All recoveries
// of a job run before its first row (the runtime opens every operator
// first), so a subtask's first BeginTransaction sees them all.
type recoveryRegistry struct {
	mu  sync.Mutex
	ids map[string]map[string]bool
}

var committedInRecovery = &recoveryRegistry{ids: map[string]map[string]bool{}}

func (r *recoveryRegistry) add(key, tid string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids[key] == nil {
		r.ids[key] = map[string]bool{}
	}
	r.ids[key][tid] = true
}

// indexes returns the pool indexes k of the ids registered under key
// that are <base without its final 0><k>, i.e. one subtask's ids.
func (r *recoveryRegistry) indexes(key, base string) []int {
	prefix := strings.TrimSuffix(base, "0")
	r.mu.Lock()
	defer r.mu.Unlock()
	var ks []int
	for tid := range r.ids[key] {
		if rest, ok := strings.CutPrefix(tid, prefix); ok {
			if k, err := strconv.Atoi(rest); err == nil {
				ks = append(ks, k)
			}
		}
	}
	return ks
}
