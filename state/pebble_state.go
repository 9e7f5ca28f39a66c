package state

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble"
	"github.com/google/btree"
)

// Cache policy (both state kinds): the cache holds decoded values, so an
// operator that Gets a pointer, mutates the object and Puts it again
// changes the cached object itself, and the Codec runs only when a dirty
// entry leaves the cache: at Snapshot, at Close and at eviction. Put and
// Delete never read the DB; a Get miss reads it (unless the store's key
// filter says the key has nothing there) and caches the answer, absent
// or not. Deleting what was never written writes nothing. The cache is
// one LRU list per store, bounded by PebbleOptions.CacheEntries; when it
// overflows, the least recently used sixteenth is evicted and its dirty
// entries are written in one batch.
//
// Map state is write-back too, per key: the cache holds some or all of a
// key's map entries. A map known to be held entirely ("complete": loaded
// by a Range, or a key with nothing in the DB) is ranged in memory; any
// other Range merges the DB's entries under the key's prefix with the
// cached ones in map-key order, cached entries winning, and loads them so
// that the next Range is served from memory. Clear drops the cached
// entries and range-deletes the key's prefix at the next write.

// ---- value state ----

type pvEntry[T any] struct {
	node    lruNode
	v       T
	wt      int64 // write time (ms) with a TTL; 0 = stamp at flush
	present bool
	dirty   bool
	inDB    bool // the DB may hold a value for the key
}

type pebbleValue[T any] struct {
	s      *PebbleStore
	name   string
	prefix []byte
	codec  Codec[T]
	m      map[string]*pvEntry[T]
}

func newPebbleValue[T any](s *PebbleStore, name string, c Codec[T]) (ValueState[T], error) {
	if c == nil {
		return nil, fmt.Errorf("state: operator %s: state %q has no codec", s.id, name)
	}
	v := &pebbleValue[T]{s: s, name: name, prefix: statePrefix(name), codec: c, m: map[string]*pvEntry[T]{}}
	s.addState(v)
	return v, nil
}

func (p *pebbleValue[T]) Get(key []byte) (T, bool, error) {
	var zero T
	s := p.s
	if err := s.check(); err != nil {
		return zero, false, err
	}
	if e := p.m[string(key)]; e != nil {
		s.touch(&e.node)
		if e.present && s.ttl > 0 && s.expired(e.wt, s.nowMS()) {
			e.v, e.present, e.dirty = zero, false, e.inDB
		}
		return e.v, e.present, nil
	}
	e := &pvEntry[T]{}
	s.kbuf = appendStateKey(s.kbuf[:0], p.prefix, key)
	var raw []byte
	var found bool
	var err error
	if s.mayExist(s.kbuf) {
		raw, found, err = s.get(s.kbuf)
	}
	switch {
	case err != nil:
		return zero, false, fmt.Errorf("state: operator %s: reading %s: %w", s.id, p.name, err)
	case !found:
	default:
		wt, payload, err := splitValue(raw)
		if err != nil {
			return zero, false, fmt.Errorf("state: operator %s: reading %s: %w", s.id, p.name, err)
		}
		e.inDB = true
		if s.expired(wt, s.nowMS()) {
			e.dirty = true // delete it from the DB
			break
		}
		v, err := p.codec.Decode(payload)
		if err != nil {
			return zero, false, fmt.Errorf("state: operator %s: decoding %s: %w", s.id, p.name, err)
		}
		e.v, e.present, e.wt = v, true, wt
	}
	e.node.st, e.node.key, e.node.units = p, string(key), 1
	p.m[e.node.key] = e
	s.pushFront(&e.node)
	return e.v, e.present, s.maybeEvict(&e.node)
}

func (p *pebbleValue[T]) set(key []byte, v T, present bool) error {
	s := p.s
	if err := s.check(); err != nil {
		return err
	}
	e := p.m[string(key)]
	if e == nil {
		s.kbuf = appendStateKey(s.kbuf[:0], p.prefix, key)
		e = &pvEntry[T]{inDB: s.mayExist(s.kbuf)}
		e.node.st, e.node.key, e.node.units = p, string(key), 1
		p.m[e.node.key] = e
		s.pushFront(&e.node)
	} else {
		s.touch(&e.node)
	}
	// Deleting a key the DB does not hold writes nothing.
	e.v, e.present, e.dirty = v, present, present || e.inDB
	if present && s.ttl > 0 {
		e.wt = s.nowMS()
	} else {
		e.wt = 0
	}
	return s.maybeEvict(&e.node)
}

func (p *pebbleValue[T]) Put(key []byte, v T) error { return p.set(key, v, true) }

func (p *pebbleValue[T]) Delete(key []byte) error {
	var zero T
	return p.set(key, zero, false)
}

// write puts e into b if it is dirty.
func (p *pebbleValue[T]) write(e *pvEntry[T], b *pebble.Batch, now int64) error {
	if !e.dirty {
		return nil
	}
	s := p.s
	s.kbuf = appendStateKey(s.kbuf[:0], p.prefix, []byte(e.node.key))
	var err error
	if e.present {
		if e.wt == 0 {
			e.wt = now
		}
		s.vbuf = appendValue(s.vbuf[:0], e.wt, p.codec, e.v)
		err = b.Set(s.kbuf, s.vbuf, nil)
		s.written(s.kbuf)
	} else {
		err = b.Delete(s.kbuf, nil)
	}
	if err != nil {
		return fmt.Errorf("state: operator %s: writing %s: %w", s.id, p.name, err)
	}
	e.dirty, e.inDB = false, e.present
	return nil
}

func (p *pebbleValue[T]) evict(n *lruNode, b *pebble.Batch, now int64) error {
	e := p.m[n.key]
	delete(p.m, n.key)
	return p.write(e, b, now)
}

func (p *pebbleValue[T]) flush(b *pebble.Batch, now int64) error {
	for _, e := range p.m {
		if err := p.write(e, b, now); err != nil {
			return err
		}
		if err := p.s.spill(b); err != nil {
			return err
		}
	}
	return nil
}

// ---- map state ----

// pmItem is one cached map entry.
type pmItem[V any] struct {
	mk      []byte // never modified once set
	v       V
	wt      int64
	present bool
	dirty   bool
	inDB    bool // the DB may hold the entry
}

// pmEntry is the cached part of one key's map.
type pmEntry[V any] struct {
	node lruNode
	t    *btree.BTreeG[*pmItem[V]]
	// complete: t holds every live entry of the map, so an entry not in
	// t does not exist and Range needs no DB read.
	complete bool
	// cleared: the map was cleared since the last write; the DB's entries
	// are to be range-deleted before the dirty items are written.
	cleared bool
	dirty   bool // some item is dirty, or cleared
}

type pebbleMap[V any] struct {
	s      *PebbleStore
	name   string
	prefix []byte
	codec  Codec[V]
	m      map[string]*pmEntry[V]
	probe  pmItem[V]
	free   *btree.FreeListG[*pmItem[V]]
}

func lessItem[V any](a, b *pmItem[V]) bool { return bytes.Compare(a.mk, b.mk) < 0 }

func newPebbleMap[V any](s *PebbleStore, name string, c Codec[V]) (MapState[V], error) {
	if c == nil {
		return nil, fmt.Errorf("state: operator %s: state %q has no codec", s.id, name)
	}
	m := &pebbleMap[V]{s: s, name: name, prefix: statePrefix(name), codec: c, m: map[string]*pmEntry[V]{},
		free: btree.NewFreeListG[*pmItem[V]](btree.DefaultFreeListSize)}
	s.addState(m)
	return m, nil
}

// entry returns key's cached map, creating an empty incomplete one.
func (p *pebbleMap[V]) entry(key []byte) *pmEntry[V] {
	if e := p.m[string(key)]; e != nil {
		p.s.touch(&e.node)
		return e
	}
	e := &pmEntry[V]{t: btree.NewWithFreeListG(8, lessItem[V], p.free)}
	// A key the DB has no entries of is complete from the start.
	p.s.kbuf = appendStateKey(p.s.kbuf[:0], p.prefix, key)
	e.complete = !p.s.mayExist(p.s.kbuf)
	e.node.st, e.node.key, e.node.units = p, string(key), 1
	p.m[e.node.key] = e
	p.s.pushFront(&e.node)
	return e
}

func (p *pebbleMap[V]) find(e *pmEntry[V], mk []byte) *pmItem[V] {
	p.probe.mk = mk
	it, _ := e.t.Get(&p.probe)
	p.probe.mk = nil
	return it
}

// insert adds a new item to e.
func (p *pebbleMap[V]) insert(e *pmEntry[V], it *pmItem[V]) {
	e.t.ReplaceOrInsert(it)
	p.s.grow(&e.node, 1)
}

// live reports whether it is present and not expired at now; an expired
// item becomes a dirty deletion.
func (p *pebbleMap[V]) live(e *pmEntry[V], it *pmItem[V], now int64) bool {
	if !it.present {
		return false
	}
	if p.s.ttl > 0 && p.s.expired(it.wt, now) {
		var zero V
		it.v, it.present, it.dirty = zero, false, it.inDB
		e.dirty = e.dirty || it.inDB
		return false
	}
	return true
}

func (p *pebbleMap[V]) now() int64 {
	if p.s.ttl > 0 {
		return p.s.nowMS()
	}
	return 0
}

func (p *pebbleMap[V]) Get(key, mk []byte) (V, bool, error) {
	var zero V
	s := p.s
	if err := s.check(); err != nil {
		return zero, false, err
	}
	e := p.entry(key)
	if it := p.find(e, mk); it != nil {
		if !p.live(e, it, p.now()) {
			return zero, false, nil
		}
		return it.v, true, nil
	}
	if e.complete {
		return zero, false, s.maybeEvict(&e.node)
	}
	it := &pmItem[V]{mk: bytes.Clone(mk)}
	s.kbuf = append(appendStateKey(s.kbuf[:0], p.prefix, key), mk...)
	var raw []byte
	var found bool
	var err error
	if s.mayExist(s.kbuf) { // an entry never written is not read for
		raw, found, err = s.get(s.kbuf)
	}
	switch {
	case err != nil:
		return zero, false, fmt.Errorf("state: operator %s: reading %s: %w", s.id, p.name, err)
	case !found:
	default:
		wt, payload, err := splitValue(raw)
		if err != nil {
			return zero, false, fmt.Errorf("state: operator %s: reading %s: %w", s.id, p.name, err)
		}
		v, err := p.codec.Decode(payload)
		if err != nil {
			return zero, false, fmt.Errorf("state: operator %s: decoding %s: %w", s.id, p.name, err)
		}
		it.v, it.present, it.wt, it.inDB = v, true, wt, true
	}
	p.insert(e, it)
	ok := p.live(e, it, p.now())
	if !ok {
		it.v = zero
	}
	return it.v, ok, s.maybeEvict(&e.node)
}

func (p *pebbleMap[V]) Put(key, mk []byte, v V) error {
	s := p.s
	if err := s.check(); err != nil {
		return err
	}
	e := p.entry(key)
	it := p.find(e, mk)
	if it == nil {
		// Not in a complete map: not in the DB either.
		it = &pmItem[V]{mk: bytes.Clone(mk), inDB: !e.complete}
		p.insert(e, it)
	}
	it.v, it.present, it.dirty, it.wt = v, true, true, p.now()
	e.dirty = true
	return s.maybeEvict(&e.node)
}

func (p *pebbleMap[V]) Delete(key, mk []byte) error {
	s := p.s
	if err := s.check(); err != nil {
		return err
	}
	e := p.entry(key)
	it := p.find(e, mk)
	switch {
	case it != nil && it.inDB:
		var zero V
		it.v, it.present, it.dirty, it.wt = zero, false, true, 0
	case it != nil && e.complete:
		// Never written: forget it.
		e.t.Delete(it)
		s.grow(&e.node, -1)
		return s.maybeEvict(&e.node)
	case it != nil:
		var zero V
		it.v, it.present, it.dirty, it.wt = zero, false, false, 0
		return s.maybeEvict(&e.node)
	case e.complete:
		// Not in a complete map: nothing to delete.
		return s.maybeEvict(&e.node)
	default:
		p.insert(e, &pmItem[V]{mk: bytes.Clone(mk), dirty: true, inDB: true})
	}
	e.dirty = true
	return s.maybeEvict(&e.node)
}

func (p *pebbleMap[V]) Clear(key []byte) error {
	s := p.s
	if err := s.check(); err != nil {
		return err
	}
	e := p.entry(key)
	n := e.t.Len()
	e.t.Clear(true)
	s.grow(&e.node, -n)
	// A range deletion only if the DB may hold entries of the key.
	s.kbuf = appendStateKey(s.kbuf[:0], p.prefix, key)
	if e.cleared || s.mayExist(s.kbuf) {
		e.cleared, e.dirty = true, true
	}
	e.complete = true
	return s.maybeEvict(&e.node)
}

// Range visits the live entries of key's map in ascending map-key order.
// A map the cache holds completely is ranged in memory. Otherwise the
// DB's entries under the key's prefix are merged with the cached items
// (which win), and loaded into the cache as they go by, so that the
// next Range of the key is served from memory — unless the map turns
// out to be larger than a quarter of the cache, in which case the rest
// is streamed and the map stays incomplete.
func (p *pebbleMap[V]) Range(key []byte, fn func(mapKey []byte, v V) bool) error {
	s := p.s
	if err := s.check(); err != nil {
		return err
	}
	e := p.entry(key)
	s.pinned++
	err := func() error {
		defer func() { s.pinned-- }()
		return p.rangeEntry(e, key, fn)
	}()
	if err != nil {
		return err
	}
	return s.maybeEvict(&e.node)
}

func (p *pebbleMap[V]) rangeEntry(e *pmEntry[V], key []byte, fn func(mapKey []byte, v V) bool) error {
	s := p.s
	now := p.now()
	if e.complete {
		e.t.Ascend(func(it *pmItem[V]) bool {
			if !p.live(e, it, now) {
				return true
			}
			return fn(it.mk, it.v)
		})
		return nil
	}
	// The cached items, in order, to merge with the DB's.
	cached := make([]*pmItem[V], 0, e.t.Len())
	e.t.Ascend(func(it *pmItem[V]) bool {
		cached = append(cached, it)
		return true
	})
	prefix := appendStateKey(nil, p.prefix, key)
	if !s.mayExist(prefix) {
		e.complete = true
		return p.rangeEntry(e, key, fn)
	}
	iter, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return fmt.Errorf("state: operator %s: reading %s: %w", s.id, p.name, err)
	}
	// Once fn has stopped, the rest of a small map is still loaded, so
	// that the map becomes complete: a top-N operator ranges over the
	// first entries of the same key again and again.
	retain := true
	limit := max(s.opts.CacheEntries/4, 16)
	stopped := false
	visit := func(it *pmItem[V]) {
		if !stopped && p.live(e, it, now) && !fn(it.mk, it.v) {
			stopped = true
		}
	}
	i := 0
	// emit visits the cached items before mk (all of them when mk is nil).
	emit := func(mk []byte) {
		for ; i < len(cached) && (mk == nil || bytes.Compare(cached[i].mk, mk) < 0); i++ {
			visit(cached[i])
		}
	}
	var derr error
	for ok := iter.First(); ok && (retain || !stopped); ok = iter.Next() {
		mk := iter.Key()[len(prefix):]
		emit(mk)
		if i < len(cached) && bytes.Equal(cached[i].mk, mk) {
			// The cached item overrides the DB's entry.
			visit(cached[i])
			i++
			continue
		}
		raw, err := iter.ValueAndErr()
		if err != nil {
			derr = err
			break
		}
		wt, payload, err := splitValue(raw)
		if err != nil {
			derr = err
			break
		}
		it := &pmItem[V]{mk: bytes.Clone(mk), wt: wt, inDB: true}
		if s.expired(wt, now) {
			// Delete it from the DB at the next write of this map.
			it.dirty = true
			p.insert(e, it)
			e.dirty = true
			continue
		}
		v, err := p.codec.Decode(payload)
		if err != nil {
			derr = fmt.Errorf("decoding: %w", err)
			break
		}
		it.v, it.present = v, true
		if retain && e.t.Len() < limit {
			p.insert(e, it)
		} else {
			retain = false
		}
		visit(it)
	}
	if err := iter.Close(); err != nil && derr == nil {
		derr = err
	}
	if derr != nil {
		return fmt.Errorf("state: operator %s: reading %s: %w", s.id, p.name, derr)
	}
	emit(nil)
	if retain {
		e.complete = true
		p.dropAbsent(e)
	}
	return nil
}

// dropAbsent removes the clean absent items of a complete map: the map
// being complete says they do not exist.
func (p *pebbleMap[V]) dropAbsent(e *pmEntry[V]) {
	var gone []*pmItem[V]
	e.t.Ascend(func(it *pmItem[V]) bool {
		if !it.present && !it.dirty {
			gone = append(gone, it)
		}
		return true
	})
	for _, it := range gone {
		e.t.Delete(it)
	}
	p.s.grow(&e.node, -len(gone))
}

// write puts e's dirty items into b.
func (p *pebbleMap[V]) write(e *pmEntry[V], b *pebble.Batch, now int64) error {
	if !e.dirty {
		return nil
	}
	s := p.s
	prefix := appendStateKey(nil, p.prefix, []byte(e.node.key))
	if e.cleared {
		if err := b.DeleteRange(prefix, prefixEnd(prefix), nil); err != nil {
			return fmt.Errorf("state: operator %s: clearing %s: %w", s.id, p.name, err)
		}
		e.cleared = false
	}
	var err error
	wrote := false
	e.t.Ascend(func(it *pmItem[V]) bool {
		if !it.dirty {
			return true
		}
		s.kbuf = append(append(s.kbuf[:0], prefix...), it.mk...)
		if it.present {
			if it.wt == 0 {
				it.wt = now
			}
			s.vbuf = appendValue(s.vbuf[:0], it.wt, p.codec, it.v)
			err = b.Set(s.kbuf, s.vbuf, nil)
			s.written(s.kbuf)
			wrote = true
		} else {
			err = b.Delete(s.kbuf, nil)
		}
		if err != nil {
			err = fmt.Errorf("state: operator %s: writing %s: %w", s.id, p.name, err)
			return false
		}
		it.dirty, it.inDB = false, it.present
		return true
	})
	if wrote {
		s.written(prefix)
	}
	if err != nil {
		return err
	}
	e.dirty = false
	return nil
}

func (p *pebbleMap[V]) evict(n *lruNode, b *pebble.Batch, now int64) error {
	e := p.m[n.key]
	delete(p.m, n.key)
	err := p.write(e, b, now)
	e.t.Clear(true)
	return err
}

func (p *pebbleMap[V]) flush(b *pebble.Batch, now int64) error {
	for _, e := range p.m {
		if !e.dirty {
			continue
		}
		if err := p.write(e, b, now); err != nil {
			return err
		}
		if e.complete {
			p.dropAbsent(e)
		}
		if err := p.s.spill(b); err != nil {
			return err
		}
	}
	return nil
}
