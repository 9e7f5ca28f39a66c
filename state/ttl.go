package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"time"
)

// TTLStore wraps a store so that its states expire values not written
// for longer than a TTL (table.exec.state.ttl), with Flink's semantics:
// the clock restarts on create and write only (OnCreateAndWrite), and an
// expired value is never returned (NeverReturnExpired). It is meant for
// the in-memory backend; a PebbleStore has the same built in
// (PebbleOptions.TTL), with cleanup that survives a restore.
//
// Expired values are removed lazily when read, and eagerly: every state
// keeps a queue of its keys in write order, and each Put examines the
// oldest two whose TTL has passed, deleting those not written since, so
// that keys nobody reads again do not pile up. CleanUp runs the eager
// pass to the end. Like the states, a TTLStore is used from one
// goroutine.
type TTLStore struct {
	inner    Store
	ttl      int64 // ms
	clock    func() time.Time
	seq      uint64
	cleaners []func(now int64, n int) error
}

var _ Store = (*TTLStore)(nil)

// WithTTL returns store with a TTL on every state created in it from now
// on; clock nil means time.Now. With ttl <= 0 it returns store itself.
func WithTTL(store Store, ttl time.Duration, clock func() time.Time) Store {
	if ttl <= 0 {
		return store
	}
	if clock == nil {
		clock = time.Now
	}
	return &TTLStore{inner: store, ttl: max(ttl.Milliseconds(), 1), clock: clock}
}

// OperatorID implements Store.
func (s *TTLStore) OperatorID() string { return s.inner.OperatorID() }

// Backend implements Store.
func (s *TTLStore) Backend() string { return s.inner.Backend() }

// Inner returns the wrapped store.
func (s *TTLStore) Inner() Store { return s.inner }

// Checkpoint implements Store: the inner store's checkpoint.
func (s *TTLStore) Checkpoint(dir string) (SnapshotInfo, error) { return s.inner.Checkpoint(dir) }

// Snapshot implements Store: the inner store's snapshot.
func (s *TTLStore) Snapshot(dir string, canonical bool) (SnapshotWrite, error) {
	return s.inner.Snapshot(dir, canonical)
}

// Close implements Store.
func (s *TTLStore) Close() error { return s.inner.Close() }

func (s *TTLStore) register(name string) error { return s.inner.register(name) }

// CleanUp deletes every expired value that the queues of the states
// reach: all values written longer than the TTL ago and not since.
func (s *TTLStore) CleanUp() error {
	now := s.now()
	for _, c := range s.cleaners {
		if err := c(now, -1); err != nil {
			return err
		}
	}
	return nil
}

func (s *TTLStore) now() int64 { return s.clock().UnixMilli() }

func (s *TTLStore) expired(wt, now int64) bool { return wt+s.ttl <= now }

// nextSeq numbers a queue entry.
func (s *TTLStore) nextSeq() uint64 {
	s.seq++
	return s.seq
}

// ttlVal is a value with its write time and the number of its entry in
// the expiry queue (0: none).
type ttlVal[T any] struct {
	v   T
	wt  int64
	seq uint64
}

// ttlCodec stores a ttlVal in a persistent inner store: write time, then
// the value. The queue number is not kept: after a restore the queue is
// empty, and a value enters it again when next written.
type ttlCodec[T any] struct{ c Codec[T] }

func (c ttlCodec[T]) Encode(dst []byte, v ttlVal[T]) []byte {
	dst = binary.AppendVarint(dst, v.wt)
	return c.c.Encode(dst, v.v)
}

func (c ttlCodec[T]) Decode(b []byte) (ttlVal[T], error) {
	wt, n := binary.Varint(b)
	if n <= 0 {
		return ttlVal[T]{}, errors.New("state: corrupt TTL value header")
	}
	v, err := c.c.Decode(b[n:])
	return ttlVal[T]{v: v, wt: wt}, err
}

// encodeCanonical implements canonCodec: in a snapshot of the hashmap
// backend, the write time goes into the entry header, where the Pebble
// backend keeps it, so that either backend restores the other's TTLs.
func (c ttlCodec[T]) encodeCanonical(dst []byte, v ttlVal[T], _ int64) []byte {
	return c.c.Encode(binary.BigEndian.AppendUint64(dst, uint64(v.wt)), v.v)
}

// decodeCanonical implements canonCodec.
func (c ttlCodec[T]) decodeCanonical(b []byte) (ttlVal[T], error) {
	if len(b) < 8 {
		return ttlVal[T]{}, errors.New("state: stored value shorter than its header")
	}
	v, err := c.c.Decode(bytes.Clone(b[8:]))
	return ttlVal[T]{v: v, wt: int64(binary.BigEndian.Uint64(b))}, err
}

// ttlQueue is a FIFO of keys to look at when their TTL has passed.
type ttlQueue struct {
	q    []ttlQueued
	head int
}

type ttlQueued struct {
	key, mk  string
	seq      uint64
	deadline int64
}

func (q *ttlQueue) push(e ttlQueued) { q.q = append(q.q, e) }

// pop returns the first entry if its deadline has passed.
func (q *ttlQueue) pop(now int64) (ttlQueued, bool) {
	if q.head == len(q.q) || q.q[q.head].deadline > now {
		return ttlQueued{}, false
	}
	e := q.q[q.head]
	q.q[q.head] = ttlQueued{}
	q.head++
	if q.head == len(q.q) {
		q.q, q.head = q.q[:0], 0
	} else if q.head >= 1024 && q.head*2 >= len(q.q) {
		n := copy(q.q, q.q[q.head:])
		clear(q.q[n:])
		q.q, q.head = q.q[:n], 0
	}
	return e, true
}

// Len returns the number of queued entries.
func (q *ttlQueue) Len() int { return len(q.q) - q.head }

// eagerPerPut is how many due queue entries each Put examines: more than
// one, so that the queue shrinks whenever entries are due.
const eagerPerPut = 2

// ---- value state ----

type ttlValue[T any] struct {
	s     *TTLStore
	inner ValueState[ttlVal[T]]
	q     ttlQueue
}

func newTTLValue[T any](s *TTLStore, name string, c Codec[T]) (ValueState[T], error) {
	var ic Codec[ttlVal[T]]
	if c != nil {
		ic = ttlCodec[T]{c}
	}
	in, err := newBaseValueState(s.inner, name, ic)
	if err != nil {
		return nil, err
	}
	v := &ttlValue[T]{s: s, inner: in}
	s.cleaners = append(s.cleaners, v.cleanup)
	return v, nil
}

func (t *ttlValue[T]) Get(key []byte) (T, bool, error) {
	var zero T
	x, ok, err := t.inner.Get(key)
	if err != nil || !ok {
		return zero, false, err
	}
	if t.s.expired(x.wt, t.s.now()) {
		return zero, false, t.inner.Delete(key)
	}
	return x.v, true, nil
}

func (t *ttlValue[T]) Put(key []byte, v T) error {
	now := t.s.now()
	old, ok, err := t.inner.Get(key)
	if err != nil {
		return err
	}
	x := ttlVal[T]{v: v, wt: now, seq: old.seq}
	if !ok || old.seq == 0 {
		x.seq = t.s.nextSeq()
		t.q.push(ttlQueued{key: string(key), seq: x.seq, deadline: now + t.s.ttl})
	}
	if err := t.inner.Put(key, x); err != nil {
		return err
	}
	return t.cleanup(now, eagerPerPut)
}

func (t *ttlValue[T]) Delete(key []byte) error { return t.inner.Delete(key) }

// cleanup examines up to n due queue entries (all when n < 0).
func (t *ttlValue[T]) cleanup(now int64, n int) error {
	for ; n != 0; n-- {
		e, ok := t.q.pop(now)
		if !ok {
			return nil
		}
		x, ok, err := t.inner.Get([]byte(e.key))
		if err != nil {
			return err
		}
		switch {
		case !ok || x.seq != e.seq:
			// Deleted, or deleted and written again (queued anew).
		case t.s.expired(x.wt, now):
			if err := t.inner.Delete([]byte(e.key)); err != nil {
				return err
			}
		default:
			e.deadline = x.wt + t.s.ttl
			t.q.push(e)
		}
	}
	return nil
}

// ---- map state ----

type ttlMap[V any] struct {
	s     *TTLStore
	inner MapState[ttlVal[V]]
	q     ttlQueue
}

func newTTLMap[V any](s *TTLStore, name string, c Codec[V]) (MapState[V], error) {
	var ic Codec[ttlVal[V]]
	if c != nil {
		ic = ttlCodec[V]{c}
	}
	in, err := newBaseMapState(s.inner, name, ic)
	if err != nil {
		return nil, err
	}
	m := &ttlMap[V]{s: s, inner: in}
	s.cleaners = append(s.cleaners, m.cleanup)
	return m, nil
}

func (t *ttlMap[V]) Get(key, mk []byte) (V, bool, error) {
	var zero V
	x, ok, err := t.inner.Get(key, mk)
	if err != nil || !ok {
		return zero, false, err
	}
	if t.s.expired(x.wt, t.s.now()) {
		return zero, false, t.inner.Delete(key, mk)
	}
	return x.v, true, nil
}

func (t *ttlMap[V]) Put(key, mk []byte, v V) error {
	now := t.s.now()
	old, ok, err := t.inner.Get(key, mk)
	if err != nil {
		return err
	}
	x := ttlVal[V]{v: v, wt: now, seq: old.seq}
	if !ok || old.seq == 0 {
		x.seq = t.s.nextSeq()
		t.q.push(ttlQueued{key: string(key), mk: string(mk), seq: x.seq, deadline: now + t.s.ttl})
	}
	if err := t.inner.Put(key, mk, x); err != nil {
		return err
	}
	return t.cleanup(now, eagerPerPut)
}

func (t *ttlMap[V]) Delete(key, mk []byte) error { return t.inner.Delete(key, mk) }

func (t *ttlMap[V]) Clear(key []byte) error { return t.inner.Clear(key) }

func (t *ttlMap[V]) Range(key []byte, fn func(mapKey []byte, v V) bool) error {
	now := t.s.now()
	var expired [][]byte
	err := t.inner.Range(key, func(mk []byte, x ttlVal[V]) bool {
		if t.s.expired(x.wt, now) {
			expired = append(expired, append([]byte(nil), mk...))
			return true
		}
		return fn(mk, x.v)
	})
	if err != nil {
		return err
	}
	for _, mk := range expired {
		if err := t.inner.Delete(key, mk); err != nil {
			return err
		}
	}
	return nil
}

func (t *ttlMap[V]) cleanup(now int64, n int) error {
	for ; n != 0; n-- {
		e, ok := t.q.pop(now)
		if !ok {
			return nil
		}
		key, mk := []byte(e.key), []byte(e.mk)
		x, ok, err := t.inner.Get(key, mk)
		if err != nil {
			return err
		}
		switch {
		case !ok || x.seq != e.seq:
		case t.s.expired(x.wt, now):
			if err := t.inner.Delete(key, mk); err != nil {
				return err
			}
		default:
			e.deadline = x.wt + t.s.ttl
			t.q.push(e)
		}
	}
	return nil
}
