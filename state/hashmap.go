package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// HashMapStore is the in-memory backend of checkpointed jobs, Flink's
// HashMapStateBackend: state lives in Go maps (the tables of
// MemoryStore), one table per state and key group, and takes part in
// checkpoints in the canonical format (canonical.go).
//
// Snapshots are asynchronous, with per-key-group copy-on-access:
//
//   - Snapshot (on the operator's goroutine, at the barrier) only marks
//     the key groups written since the previous snapshot as frozen, and
//     hard-links the previous snapshot's files of the others: a
//     snapshot is incremental by changed key group;
//   - the SnapshotWrite (on another goroutine) copies each frozen key
//     group into the canonical encoding, thaws it, and writes the files;
//   - the operator goes on meanwhile. When it touches a key group that
//     is still frozen (Get, Put, Delete, Range, Clear), it first copies
//     that key group itself, as the barrier left it, and thaws it. A
//     read thaws too, because an operator may change a value it got
//     in place before it Puts it back.
//
// A frozen key group is copied by whoever takes its mutex first, exactly
// once; the atomic frozen flag lets the operator skip the mutex when the
// key group is not frozen. Copies encode values with the states' Codecs,
// so what the snapshot holds is independent of later changes to the Go
// values.
//
// Like MemoryStore, a HashMapStore and its states are used from one
// goroutine, apart from the SnapshotWrite.
type HashMapStore struct {
	id    string
	kgs   KeyGroupRange
	clock func() time.Time
	names map[string]bool
	// states in registration order; appended to only by register, and a
	// snapshot keeps the slice it saw.
	states []hmState
	// restored holds the entries of a restore per state name until the
	// state is created (its Codec decodes them); a name never created
	// keeps its entries, which later snapshots carry on.
	restored map[string][]rawEntry
	slabs    *slabs // the map keys of its map states, in every key group

	dirty    [MaxParallelism]bool // written since the last snapshot (operator's goroutine)
	frozen   [MaxParallelism]atomic.Bool
	mu       [MaxParallelism]sync.Mutex
	copies   [MaxParallelism]*kgCopy // taken by the operator, for the SnapshotWrite (under mu)
	inflight *hmSnap                 // the snapshot being written, if any

	// Owned by the snapshot being written, then by the next Snapshot
	// once it has waited for it (async): the files of the last snapshot
	// written, per key group, all in prevDir.
	prev    [MaxParallelism]ckptFile
	prevDir string
	resync  bool // the last write failed: the next snapshot writes every key group
	async   sync.WaitGroup
	closed  bool
}

var _ Store = (*HashMapStore)(nil)

// hmState is what the store needs of a state.
type hmState interface {
	// appendKG appends the canonical records of key group kg to c.
	appendKG(c *kgCopy, kg int, now int64)
	// load adds a restored entry: a state key's key and map key, and a
	// value in the canonical layout.
	load(key, mk, v []byte) error
	// keyPrefix is the prefix of the state's keys: [len(name)][name].
	keyPrefix() []byte
}

// rawEntry is a restored entry not yet decoded.
type rawEntry struct {
	kg           int
	key, mk, val []byte
}

// hmSnap is one snapshot of a HashMapStore being written.
type hmSnap struct {
	dir string
	now int64
	// parts are the states and the restored entries of states not
	// created, in ascending order of their key prefix: a key-group
	// file holds one state after the other, in that order.
	parts  []snapPart
	kgs    []int      // the frozen key groups
	linked []ckptFile // files hard-linked from the previous snapshot
}

// snapPart is a state, or the restored entries of a state not created.
type snapPart struct {
	prefix []byte
	st     hmState
	raw    []rawEntry
}

// kgCopy is a key group's records, in the key-group file layout, in the
// order they were copied.
type kgCopy struct {
	buf        []byte
	kbuf, vbuf []byte
}

func (c *kgCopy) add(k, v []byte) { c.buf = appendRecord(c.buf, k, v) }

// NewHashMapStore returns an empty in-memory store for operator id that
// owns key groups kgs; clock (nil = time.Now) stamps the entries of its
// snapshots with a write time.
func NewHashMapStore(id string, kgs KeyGroupRange, clock func() time.Time) (*HashMapStore, error) {
	if !validRange(kgs) {
		return nil, fmt.Errorf("state: operator %s: invalid key-group range [%d, %d)", id, kgs.Start, kgs.End)
	}
	if clock == nil {
		clock = time.Now
	}
	return &HashMapStore{id: id, kgs: kgs, clock: clock, names: map[string]bool{}, restored: map[string][]rawEntry{}, slabs: newSlabs()}, nil
}

// RestoreHashMap returns a store for operator id that owns key groups kgs,
// holding the entries of those key groups from the snapshots of the
// previous run, in either format (a hashmap or Pebble checkpoint, or a
// savepoint of either backend). The sources that intersect kgs must not
// overlap and must cover it; each is verified against its manifest.
func RestoreHashMap(id string, sources []RestoreSource, kgs KeyGroupRange, clock func() time.Time) (*HashMapStore, error) {
	s, err := NewHashMapStore(id, kgs, clock)
	if err != nil {
		return nil, err
	}
	used, err := pickSources("operator "+id, sources, kgs)
	if err != nil {
		return nil, err
	}
	opts := PebbleOptions{}.withDefaults()
	cache := newBlockCache(opts)
	defer cache.Unref()
	for _, src := range used {
		m, err := openCheckpoint(src)
		if err != nil {
			return nil, fmt.Errorf("state: restore from checkpoint %s: %w", src.Dir, err)
		}
		lo, hi := max(src.KeyGroups.Start, kgs.Start), min(src.KeyGroups.End, kgs.End)
		err = forEachEntry(src.Dir, m, lo, hi, opts, cache, func(k, v []byte) error {
			name, kg, key, mk, err := splitEntryKey(k)
			if err != nil {
				return err
			}
			if len(v) < 8 {
				return fmt.Errorf("value of %q is shorter than its header", k)
			}
			s.restored[name] = append(s.restored[name], rawEntry{kg: kg, key: bytes.Clone(key), mk: bytes.Clone(mk), val: bytes.Clone(v)})
			s.dirty[kg] = true
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("state: restore from checkpoint %s: %w", src.Dir, err)
		}
	}
	return s, nil
}

// splitEntryKey splits a state key: [len(name)][name][kg][uvarint len][key][mk].
func splitEntryKey(k []byte) (name string, kg int, key, mk []byte, err error) {
	p, err := stateName(k)
	if err != nil {
		return "", 0, nil, nil, err
	}
	kg = int(binary.BigEndian.Uint16(k[len(p):]))
	rest := k[len(p)+2:]
	l, n := binary.Uvarint(rest)
	if n <= 0 || l > uint64(len(rest)-n) || kg >= MaxParallelism {
		return "", 0, nil, nil, fmt.Errorf("malformed key %q", k)
	}
	return string(p[1:]), kg, rest[n : n+int(l)], rest[n+int(l):], nil
}

// pickSources returns the sources that intersect kgs, in key-group
// order, after checking that they do not overlap and cover kgs.
func pickSources(what string, sources []RestoreSource, kgs KeyGroupRange) ([]RestoreSource, error) {
	var used []RestoreSource
	for _, s := range sources {
		if !validRange(s.KeyGroups) {
			return nil, fmt.Errorf("state: restore from %s: invalid key-group range [%d, %d)", s.Dir, s.KeyGroups.Start, s.KeyGroups.End)
		}
		if s.KeyGroups.Start < kgs.End && kgs.Start < s.KeyGroups.End {
			used = append(used, s)
		}
	}
	slices.SortFunc(used, func(a, b RestoreSource) int { return a.KeyGroups.Start - b.KeyGroups.Start })
	next := kgs.Start
	for i, s := range used {
		if i > 0 && s.KeyGroups.Start < used[i-1].KeyGroups.End {
			return nil, fmt.Errorf("state: restore into %s: sources %s and %s overlap", what, used[i-1].Dir, s.Dir)
		}
		if s.KeyGroups.Start > next {
			break
		}
		next = max(next, s.KeyGroups.End)
	}
	if next < kgs.End {
		return nil, fmt.Errorf("state: restore into %s: no source holds key groups from %d (restoring [%d, %d))", what, next, kgs.Start, kgs.End)
	}
	return used, nil
}

// OperatorID implements Store.
func (s *HashMapStore) OperatorID() string { return s.id }

// Backend implements Store.
func (s *HashMapStore) Backend() string { return "hashmap" }

// KeyGroups returns the key groups the store owns.
func (s *HashMapStore) KeyGroups() KeyGroupRange { return s.kgs }

func (s *HashMapStore) register(name string) error {
	return registerName(s.id, s.names, s.closed, name)
}

// addState adds a new state and hands it its restored entries.
func (s *HashMapStore) addState(name string, st hmState) error {
	s.states = append(s.states, st)
	raw := s.restored[name]
	delete(s.restored, name)
	for _, e := range raw {
		if err := st.load(e.key, e.mk, e.val); err != nil {
			return fmt.Errorf("state: operator %s: restoring state %q: %w", s.id, name, err)
		}
	}
	return nil
}

// read returns key's key group, copying it first if a snapshot still
// needs it as the barrier left it.
func (s *HashMapStore) read(key []byte) int {
	kg := KeyGroup(key)
	if s.frozen[kg].Load() {
		s.thaw(kg, s.inflight)
	}
	return kg
}

// write is read for a change: the key group is dirty.
func (s *HashMapStore) write(key []byte) int {
	kg := s.read(key)
	s.dirty[kg] = true
	return kg
}

// thaw copies frozen key group kg for snap, once.
func (s *HashMapStore) thaw(kg int, snap *hmSnap) {
	s.mu[kg].Lock()
	if s.frozen[kg].Load() {
		s.copies[kg] = copyKG(snap, kg)
		s.frozen[kg].Store(false)
	}
	s.mu[kg].Unlock()
}

// take returns the copy of frozen key group kg for snap, copying it now
// unless the operator has done so.
func (s *HashMapStore) take(kg int, snap *hmSnap) *kgCopy {
	s.mu[kg].Lock()
	defer s.mu[kg].Unlock()
	if s.frozen[kg].Load() {
		// Thawed only once copied: until then the operator waits here.
		c := copyKG(snap, kg)
		s.frozen[kg].Store(false)
		return c
	}
	c := s.copies[kg]
	s.copies[kg] = nil
	return c
}

// copyKG encodes key group kg of every state, and the restored entries
// of states not created, in canonical records: state by state in key
// prefix order, each state's records in no particular order (readers
// sort them: forEachCanonical).
func copyKG(snap *hmSnap, kg int) *kgCopy {
	c := &kgCopy{}
	for _, p := range snap.parts {
		if p.st != nil {
			p.st.appendKG(c, kg, snap.now)
			continue
		}
		for _, e := range p.raw {
			if e.kg == kg {
				c.kbuf = append(appendStateKeyKG(c.kbuf[:0], p.prefix, kg, e.key), e.mk...)
				c.add(c.kbuf, e.val)
			}
		}
	}
	return c
}

// appendStateKeyKG is appendStateKey for a key of key group kg.
func appendStateKeyKG(dst, p []byte, kg int, key []byte) []byte {
	dst = append(dst, p...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(kg))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	return append(dst, key...)
}

// Checkpoint implements Store: a snapshot, written at once.
func (s *HashMapStore) Checkpoint(dir string) (SnapshotInfo, error) { return checkpointNow(s, dir) }

// Snapshot implements Store. The format is canonical whether asked or
// not: it is the backend's native format too.
func (s *HashMapStore) Snapshot(dir string, _ bool) (SnapshotWrite, error) {
	s.async.Wait()
	if s.closed {
		return nil, fmt.Errorf("state: operator %s: store is closed", s.id)
	}
	if len(s.names) == 0 && len(s.restored) == 0 {
		return func() (SnapshotInfo, error) { return SnapshotInfo{}, nil }, nil
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("state: operator %s: snapshot directory %s already exists", s.id, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("state: operator %s: %w", s.id, err)
	}
	snap := &hmSnap{dir: dir, now: s.clock().UnixMilli()}
	for _, st := range s.states {
		snap.parts = append(snap.parts, snapPart{prefix: st.keyPrefix(), st: st})
	}
	for name, raw := range s.restored {
		snap.parts = append(snap.parts, snapPart{prefix: statePrefix(name), raw: raw})
	}
	slices.SortFunc(snap.parts, func(a, b snapPart) int { return bytes.Compare(a.prefix, b.prefix) })
	resync := s.resync
	for kg := range MaxParallelism {
		if !s.dirty[kg] && !resync {
			p := s.prev[kg]
			if p.name == "" {
				continue // empty at the last snapshot, and since
			}
			if os.Link(filepath.Join(s.prevDir, p.name), filepath.Join(dir, p.name)) == nil {
				snap.linked = append(snap.linked, p)
				continue
			}
			// The previous snapshot is gone (aborted): copy the key group.
		}
		s.dirty[kg] = false
		snap.kgs = append(snap.kgs, kg)
		s.frozen[kg].Store(true)
	}
	s.inflight = snap
	s.async.Add(1)
	return func() (SnapshotInfo, error) {
		defer s.async.Done()
		info, err := s.writeSnap(snap)
		if err != nil {
			return info, fmt.Errorf("state: operator %s: snapshot into %s: %w", s.id, dir, err)
		}
		return info, nil
	}, nil
}

// writeSnap is the SnapshotWrite of snap.
func (s *HashMapStore) writeSnap(snap *hmSnap) (info SnapshotInfo, err error) {
	info.Dir = snap.dir
	done := 0
	defer func() {
		if err != nil {
			// Thaw what is left, and start over at the next snapshot.
			for _, kg := range snap.kgs[done:] {
				s.take(kg, snap)
			}
			s.resync = true
		}
	}()
	files := slices.Clone(snap.linked)
	for _, f := range files {
		info.TotalBytes += f.size
	}
	written := map[int]ckptFile{}
	for _, kg := range snap.kgs {
		c := s.take(kg, snap)
		done++
		if len(c.buf) == 0 {
			continue
		}
		w, err := createKGFile(snap.dir, kg)
		if err != nil {
			return info, err
		}
		if err := w.write(c.buf); err != nil {
			w.abort()
			return info, err
		}
		f, err := w.finish()
		if err != nil {
			return info, err
		}
		files = append(files, f)
		written[kg] = f
		info.TotalBytes += f.size
		info.NewBytes += f.size
	}
	slices.SortFunc(files, func(a, b ckptFile) int { return bytes.Compare([]byte(a.name), []byte(b.name)) })
	n, err := writeManifest(snap.dir, canonicalHeader, s.id, s.kgs, files)
	if err != nil {
		return info, err
	}
	info.TotalBytes += n
	info.NewBytes += n
	for _, kg := range snap.kgs {
		s.prev[kg] = written[kg]
	}
	s.prevDir, s.resync = snap.dir, false
	return info, nil
}

// Close implements Store: it waits for a snapshot being written; the
// maps are left to the garbage collector.
func (s *HashMapStore) Close() error {
	s.async.Wait()
	s.closed = true
	return nil
}

// canonCodec encodes values in the canonical value layout,
// [write time, 8 bytes][payload]. A state's Codec is used through
// plainCanon unless it is one itself (the TTL wrapper's, whose values
// carry their write time).
type canonCodec[T any] interface {
	encodeCanonical(dst []byte, v T, now int64) []byte
	decodeCanonical(b []byte) (T, error)
}

type plainCanon[T any] struct{ c Codec[T] }

func (p plainCanon[T]) encodeCanonical(dst []byte, v T, now int64) []byte {
	return p.c.Encode(binary.BigEndian.AppendUint64(dst, uint64(now)), v)
}

func (p plainCanon[T]) decodeCanonical(b []byte) (T, error) {
	if len(b) < 8 {
		var zero T
		return zero, errors.New("stored value shorter than its header")
	}
	return p.c.Decode(bytes.Clone(b[8:]))
}

func canonOf[T any](c Codec[T]) canonCodec[T] {
	if cc, ok := any(c).(canonCodec[T]); ok {
		return cc
	}
	return plainCanon[T]{c}
}

// ---- value state ----

type hmValue[T any] struct {
	s      *HashMapStore
	prefix []byte
	codec  canonCodec[T]
	tabs   [MaxParallelism]*memValue[T]
}

func newHMValue[T any](s *HashMapStore, name string, c Codec[T]) (ValueState[T], error) {
	if c == nil {
		return nil, fmt.Errorf("state: operator %s: state %q has no codec", s.id, name)
	}
	v := &hmValue[T]{s: s, prefix: statePrefix(name), codec: canonOf(c)}
	return v, s.addState(name, v)
}

func (p *hmValue[T]) Get(key []byte) (T, bool, error) {
	if t := p.tabs[p.s.read(key)]; t != nil {
		return t.Get(key)
	}
	var zero T
	return zero, false, nil
}

func (p *hmValue[T]) Put(key []byte, v T) error {
	kg := p.s.write(key)
	t := p.tabs[kg]
	if t == nil {
		t = newMemValue[T]()
		p.tabs[kg] = t
	}
	return t.Put(key, v)
}

func (p *hmValue[T]) Delete(key []byte) error {
	if t := p.tabs[p.s.write(key)]; t != nil {
		return t.Delete(key)
	}
	return nil
}

func (p *hmValue[T]) appendKG(c *kgCopy, kg int, now int64) {
	t := p.tabs[kg]
	if t == nil {
		return
	}
	t.each(func(key []byte, v *T) {
		c.kbuf = appendStateKeyKG(c.kbuf[:0], p.prefix, kg, key)
		c.vbuf = p.codec.encodeCanonical(c.vbuf[:0], *v, now)
		c.add(c.kbuf, c.vbuf)
	})
}

func (p *hmValue[T]) keyPrefix() []byte { return p.prefix }

func (p *hmValue[T]) load(key, mk, v []byte) error {
	if len(mk) > 0 {
		return fmt.Errorf("key %q has a map key: the snapshot holds a map state under this name", key)
	}
	x, err := p.codec.decodeCanonical(v)
	if err != nil {
		return err
	}
	return p.Put(key, x)
}

// ---- map state ----

type hmMap[V any] struct {
	s      *HashMapStore
	prefix []byte
	codec  canonCodec[V]
	tabs   [MaxParallelism]*memMap[V]
}

func newHMMap[V any](s *HashMapStore, name string, c Codec[V]) (MapState[V], error) {
	if c == nil {
		return nil, fmt.Errorf("state: operator %s: state %q has no codec", s.id, name)
	}
	m := &hmMap[V]{s: s, prefix: statePrefix(name), codec: canonOf(c)}
	return m, s.addState(name, m)
}

func (p *hmMap[V]) Get(key, mk []byte) (V, bool, error) {
	if t := p.tabs[p.s.read(key)]; t != nil {
		return t.Get(key, mk)
	}
	var zero V
	return zero, false, nil
}

func (p *hmMap[V]) Put(key, mk []byte, v V) error {
	kg := p.s.write(key)
	t := p.tabs[kg]
	if t == nil {
		t = newMemMap[V](p.s.slabs)
		p.tabs[kg] = t
	}
	return t.Put(key, mk, v)
}

func (p *hmMap[V]) Delete(key, mk []byte) error {
	if t := p.tabs[p.s.write(key)]; t != nil {
		return t.Delete(key, mk)
	}
	return nil
}

func (p *hmMap[V]) Range(key []byte, fn func(mapKey []byte, v V) bool) error {
	if t := p.tabs[p.s.read(key)]; t != nil {
		return t.Range(key, fn)
	}
	return nil
}

func (p *hmMap[V]) Clear(key []byte) error {
	if t := p.tabs[p.s.write(key)]; t != nil {
		return t.Clear(key)
	}
	return nil
}

func (p *hmMap[V]) appendKG(c *kgCopy, kg int, now int64) {
	t := p.tabs[kg]
	if t == nil {
		return
	}
	t.each(func(key, mk []byte, v V) {
		c.kbuf = append(appendStateKeyKG(c.kbuf[:0], p.prefix, kg, key), mk...)
		c.vbuf = p.codec.encodeCanonical(c.vbuf[:0], v, now)
		c.add(c.kbuf, c.vbuf)
	})
}

func (p *hmMap[V]) keyPrefix() []byte { return p.prefix }

func (p *hmMap[V]) load(key, mk, v []byte) error {
	x, err := p.codec.decodeCanonical(v)
	if err != nil {
		return err
	}
	return p.Put(key, mk, x)
}
