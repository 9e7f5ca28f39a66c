package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"unsafe"
)

// MemoryStore keeps state in Go maps on the heap, for jobs without
// checkpointing and for tests. HashMapStore is the in-memory backend of
// checkpointed jobs: the same tables, split by key group.
type MemoryStore struct {
	id    string
	names map[string]bool
	slabs *slabs // the map keys of its map states
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store for operator id.
func NewMemoryStore(id string) *MemoryStore {
	return &MemoryStore{id: id, names: map[string]bool{}, slabs: newSlabs()}
}

// OperatorID implements Store.
func (s *MemoryStore) OperatorID() string { return s.id }

// Backend implements Store.
func (s *MemoryStore) Backend() string { return "memory" }

// Checkpoint implements Store. A memory store without states (that of a
// stateless operator) has nothing to save; one with states cannot be
// checkpointed, and says so.
func (s *MemoryStore) Checkpoint(dir string) (SnapshotInfo, error) { return checkpointNow(s, dir) }

// Snapshot implements Store, like Checkpoint.
func (s *MemoryStore) Snapshot(string, bool) (SnapshotWrite, error) {
	if len(s.names) == 0 {
		return func() (SnapshotInfo, error) { return SnapshotInfo{}, nil }, nil
	}
	return nil, fmt.Errorf("state: operator %s keeps its state in memory, which cannot be checkpointed", s.id)
}

// Close implements Store: the maps are left to the garbage collector.
func (s *MemoryStore) Close() error { return nil }

func (s *MemoryStore) register(name string) error {
	if s.names[name] {
		return fmt.Errorf("state: operator %s registers state %q twice", s.id, name)
	}
	s.names[name] = true
	return nil
}

// memValue keeps keys of up to smallKeyLen bytes — the common case: a
// key of one numeric, date or time column, or of a short string — with
// small values in a flat hash table that holds key and value inline, so
// that a lookup usually reads one or two adjacent cache lines and
// overwriting a key allocates nothing. Other keys and values live in a
// map of boxed values, so that overwriting one is a map lookup plus a
// store, with no allocation for the key.
type memValue[T any] struct {
	tab   *flatTable[T] // nil when T is too large to hold inline
	boxed map[string]*T
}

// maxInlineValue is the largest value size kept in a flat table.
const maxInlineValue = 128

func newMemValue[T any]() *memValue[T] {
	s := &memValue[T]{boxed: map[string]*T{}}
	var zero T
	if unsafe.Sizeof(zero) <= maxInlineValue {
		s.tab = newFlatTable[T]()
	}
	return s
}

func (s *memValue[T]) Get(key []byte) (T, bool, error) {
	if s.tab != nil && len(key) <= smallKeyLen {
		if sh, i := s.tab.find(makeSmallKey(key)); sh != nil {
			return sh.e[i].v, true, nil
		}
		var zero T
		return zero, false, nil
	}
	if p := s.boxed[string(key)]; p != nil {
		return *p, true, nil
	}
	var zero T
	return zero, false, nil
}

func (s *memValue[T]) Put(key []byte, v T) error {
	if s.tab != nil && len(key) <= smallKeyLen {
		s.tab.put(makeSmallKey(key), v)
		return nil
	}
	if p := s.boxed[string(key)]; p != nil {
		*p = v
		return nil
	}
	// A new box, rather than &v: taking v's address would move v to the
	// heap on every call, including overwrites.
	p := new(T)
	*p = v
	s.boxed[string(key)] = p
	return nil
}

func (s *memValue[T]) Delete(key []byte) error {
	if s.tab != nil && len(key) <= smallKeyLen {
		s.tab.delete(makeSmallKey(key))
		return nil
	}
	delete(s.boxed, string(key))
	return nil
}

// smallKeyLen is the longest key a flat table holds.
const smallKeyLen = 15

// smallKey is a key of up to smallKeyLen bytes, zero padded, with its
// length plus one in the last byte: keys that differ only in trailing
// zero bytes stay apart, and the zero smallKey marks an empty slot.
type smallKey [smallKeyLen + 1]byte

func makeSmallKey(key []byte) smallKey {
	var k smallKey
	copy(k[:smallKeyLen], key)
	k[smallKeyLen] = byte(len(key) + 1)
	return k
}

// flatTable is a hash table of small keys with the values inline. A
// directory indexed by the top bits of a key's hash (extendible hashing)
// leads to shards of at most maxShardSlots slots; a shard is an
// open-addressing table with linear probing on the low bits of the hash
// and backward-shift deletion (no tombstones). A full shard splits in
// two instead of the whole table growing, so that a growth step costs
// little however many keys there are. The table remembers where the key
// it last found or stored is, so that the usual Get-modify-Put of one
// key probes once.
type flatTable[T any] struct {
	dir          []*flatShard[T] // 1<<depth long; a shard of depth d appears 1<<(depth-d) times
	depth        uint
	seed0, seed1 uint64 // random per table, against collision flooding
	lastS        *flatShard[T]
	lastI        int // slot of the last key found or stored in lastS, if not nil
}

// flatShard holds the keys whose hashes start with its depth bits.
type flatShard[T any] struct {
	e     []flatEntry[T] // a power of two long, or empty
	n     int            // keys held
	depth uint
}

type flatEntry[T any] struct {
	k smallKey // zero: empty slot
	v T
}

// maxShardSlots is the size from which a full shard splits.
const maxShardSlots = 4096

func newFlatTable[T any]() *flatTable[T] {
	return &flatTable[T]{dir: []*flatShard[T]{{}}, seed0: rand.Uint64(), seed1: rand.Uint64()}
}

func (t *flatTable[T]) hash(k *smallKey) uint64 {
	hi, lo := bits.Mul64(binary.LittleEndian.Uint64(k[:8])^t.seed0, binary.LittleEndian.Uint64(k[8:])^t.seed1)
	return hi ^ lo
}

// slot returns the shard for k and the slot holding k, or else the
// empty slot where probing for k stopped (-1 if the shard has no slots),
// and whether k is there.
func (t *flatTable[T]) slot(k smallKey) (*flatShard[T], int, bool) {
	if s := t.lastS; s != nil && s.e[t.lastI].k == k {
		return s, t.lastI, true
	}
	h := t.hash(&k)
	s := t.dir[h>>(64-t.depth)] // a shift by 64 is 0
	if len(s.e) == 0 {
		return s, -1, false
	}
	mask := len(s.e) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		switch s.e[i].k {
		case k:
			t.lastS, t.lastI = s, i
			return s, i, true
		case smallKey{}:
			return s, i, false
		}
	}
}

// find returns k's shard and slot, or nil.
func (t *flatTable[T]) find(k smallKey) (*flatShard[T], int) {
	if s, i, ok := t.slot(k); ok {
		return s, i
	}
	return nil, 0
}

func (t *flatTable[T]) put(k smallKey, v T) {
	s, i, ok := t.slot(k)
	if !ok {
		for 4*(s.n+1) > 3*len(s.e) {
			t.enlarge(s)
			s, i, _ = t.slot(k)
		}
		s.e[i].k = k
		s.n++
		t.lastS, t.lastI = s, i
	}
	s.e[i].v = v
}

func (t *flatTable[T]) delete(k smallKey) {
	s, i, ok := t.slot(k)
	if !ok {
		return
	}
	t.lastS = nil
	s.n--
	mask := len(s.e) - 1
	// Backward shift: move later entries of the probe run into the hole
	// when their home slot is not after it.
	for {
		s.e[i] = flatEntry[T]{}
		j := i
		for {
			j = (j + 1) & mask
			if s.e[j].k == (smallKey{}) {
				return
			}
			h := int(t.hash(&s.e[j].k)) & mask
			if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
				break
			}
		}
		s.e[i] = s.e[j]
		i = j
	}
}

// enlarge makes room in full shard s: it doubles s up to maxShardSlots,
// then splits it.
func (t *flatTable[T]) enlarge(s *flatShard[T]) {
	t.lastS = nil
	if len(s.e) < maxShardSlots || s.depth == 64 {
		old := s.e
		s.e, s.n = make([]flatEntry[T], max(16, 2*len(old))), 0
		for o := range old {
			if old[o].k != (smallKey{}) {
				t.insert(s, &old[o])
			}
		}
		return
	}
	if s.depth == t.depth {
		dir := make([]*flatShard[T], 2*len(t.dir))
		for i, x := range t.dir {
			dir[2*i], dir[2*i+1] = x, x
		}
		t.dir, t.depth = dir, t.depth+1
	}
	// The hash bit after s's prefix sends each key to a or b.
	halves := [2]*flatShard[T]{
		{e: make([]flatEntry[T], len(s.e)), depth: s.depth + 1},
		{e: make([]flatEntry[T], len(s.e)), depth: s.depth + 1},
	}
	for o := range s.e {
		if s.e[o].k != (smallKey{}) {
			h := t.hash(&s.e[o].k)
			t.insert(halves[h>>(63-s.depth)&1], &s.e[o])
		}
	}
	for i, x := range t.dir {
		if x == s {
			t.dir[i] = halves[i>>(t.depth-1-s.depth)&1]
		}
	}
}

// insert puts entry e, whose key s does not hold, into s, which has room.
func (t *flatTable[T]) insert(s *flatShard[T], e *flatEntry[T]) {
	mask := len(s.e) - 1
	i := int(t.hash(&e.k)) & mask
	for s.e[i].k != (smallKey{}) {
		i = (i + 1) & mask
	}
	s.e[i] = *e
	s.n++
}

// memMap keeps the entries under each key as a short list of sorted
// blocks. A block packs its map keys back to back in one byte buffer
// and keeps the values inline in an array of slots ordered by map key,
// so that an entry costs its map key's bytes plus one slot, and a key
// with few entries costs a map slot and three small allocations. (A
// B-tree per key with a string per map key cost about 300 bytes per key
// and 50 per entry more: Nexmark q4 and q9 keep ten million join rows.)
// A block splits at memBlockSlots entries, so that inserting into a key
// with many entries moves at most a block; a block that ends its key's
// list gets the entries appended after its last one to itself, or to a
// new block once full, so that ascending inserts fill blocks.
//
// The blocks' buffers of map keys come from the store's slabs, outside
// the Go heap (slab.go): a block frees its buffer when it replaces or
// drops it.
type memMap[V any] struct {
	m     map[string][]memBlock[V]
	slabs *slabs
}

type memBlock[V any] struct {
	buf   []byte       // the map keys of slots, and dead bytes; from the slabs
	slots []memSlot[V] // ascending by map key
	dead  int          // bytes of buf no slot refers to
}

type memSlot[V any] struct {
	off, n uint32 // the map key is buf[off : off+n]
	v      V
}

// memBlockSlots is the size at which a block splits.
const memBlockSlots = 128

func newMemMap[V any](sl *slabs) *memMap[V] {
	return &memMap[V]{m: map[string][]memBlock[V]{}, slabs: sl}
}

func (b *memBlock[V]) key(i int) []byte {
	s := &b.slots[i]
	return b.buf[s.off : s.off+s.n : s.off+s.n]
}

// search returns the slot of mk in b, or where it would go, and whether
// it is there.
func (b *memBlock[V]) search(mk []byte) (int, bool) {
	lo, hi := 0, len(b.slots)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(b.key(m), mk); {
		case c == 0:
			return m, true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return lo, false
}

// findBlock returns the block of blocks whose range holds mk: the last
// one whose first map key is not above mk, or the first.
func findBlock[V any](blocks []memBlock[V], mk []byte) int {
	lo, hi := 1, len(blocks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if bytes.Compare(blocks[m].key(0), mk) <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// insert puts mk with v at slot i of b. Offsets are 32 bits: a block
// holds up to 4 GiB of map keys.
func (b *memBlock[V]) insert(sl *slabs, i int, mk []byte, v V) error {
	if uint64(len(b.buf))+uint64(len(mk)) > math.MaxUint32 {
		return fmt.Errorf("state: map keys of %d and %d bytes do not fit in one block of a map state", len(b.buf), len(mk))
	}
	off := uint32(len(b.buf))
	b.buf = append(sl.grow(b.buf, len(mk)), mk...)
	b.slots = slices.Insert(b.slots, i, memSlot[V]{off: off, n: uint32(len(mk)), v: v})
	return nil
}

// compact rewrites b's buffer without dead bytes.
func (b *memBlock[V]) compact(sl *slabs) {
	buf := sl.alloc(b.live())
	for i := range b.slots {
		s := &b.slots[i]
		k := b.buf[s.off : s.off+s.n]
		s.off = uint32(len(buf))
		buf = append(buf, k...)
	}
	sl.free(b.buf)
	b.buf, b.dead = buf, 0
}

// split moves the upper half of b's slots, from slot i, into a new block.
func (b *memBlock[V]) split(sl *slabs, i int) memBlock[V] {
	var nb memBlock[V]
	nb.slots = make([]memSlot[V], 0, len(b.slots)-i)
	n := 0
	for j := i; j < len(b.slots); j++ {
		n += int(b.slots[j].n)
	}
	nb.buf = sl.alloc(n)
	for j := i; j < len(b.slots); j++ {
		k := b.key(j)
		nb.slots = append(nb.slots, memSlot[V]{off: uint32(len(nb.buf)), n: uint32(len(k)), v: b.slots[j].v})
		nb.buf = append(nb.buf, k...)
	}
	clear(b.slots[i:])
	b.slots = b.slots[:i]
	b.compact(sl)
	return nb
}

// live is the bytes of b's map keys.
func (b *memBlock[V]) live() int {
	n := 0
	for i := range b.slots {
		n += int(b.slots[i].n)
	}
	return n
}

func (s *memMap[V]) Get(key, mk []byte) (V, bool, error) {
	var zero V
	blocks := s.m[string(key)]
	if len(blocks) == 0 {
		return zero, false, nil
	}
	b := &blocks[findBlock(blocks, mk)]
	if i, ok := b.search(mk); ok {
		return b.slots[i].v, true, nil
	}
	return zero, false, nil
}

func (s *memMap[V]) Put(key, mk []byte, v V) error {
	blocks := s.m[string(key)]
	if len(blocks) == 0 {
		var b memBlock[V]
		if err := b.insert(s.slabs, 0, mk, v); err != nil {
			return err
		}
		s.m[string(key)] = []memBlock[V]{b}
		return nil
	}
	bi := findBlock(blocks, mk)
	b := &blocks[bi]
	i, ok := b.search(mk)
	if ok {
		b.slots[i].v = v
		return nil
	}
	if uint64(len(b.buf))+uint64(len(mk)) > math.MaxUint32 {
		// Checked before a split, which must not be left half done.
		return fmt.Errorf("state: map keys of %d and %d bytes do not fit in one block of a map state", len(b.buf), len(mk))
	}
	if len(b.slots) < memBlockSlots {
		return b.insert(s.slabs, i, mk, v)
	}
	// b is full. Past the end of the last block: a new block, so that
	// ascending inserts leave full blocks behind. Otherwise b splits in
	// two halves and mk goes into the one its place is in.
	var nb memBlock[V]
	var err error
	if bi == len(blocks)-1 && i == len(b.slots) {
		err = nb.insert(s.slabs, 0, mk, v)
	} else {
		half := len(b.slots) / 2
		nb = b.split(s.slabs, half)
		if i <= half {
			err = b.insert(s.slabs, i, mk, v)
		} else {
			err = nb.insert(s.slabs, i-half, mk, v)
		}
	}
	if err != nil {
		return err
	}
	s.m[string(key)] = slices.Insert(blocks, bi+1, nb)
	return nil
}

func (s *memMap[V]) Delete(key, mk []byte) error {
	blocks := s.m[string(key)]
	if len(blocks) == 0 {
		return nil
	}
	bi := findBlock(blocks, mk)
	b := &blocks[bi]
	i, ok := b.search(mk)
	if !ok {
		return nil
	}
	b.dead += int(b.slots[i].n)
	b.slots = slices.Delete(b.slots, i, i+1)
	switch {
	case len(b.slots) == 0 && len(blocks) == 1:
		s.slabs.free(b.buf)
		delete(s.m, string(key))
	case len(b.slots) == 0:
		s.slabs.free(b.buf)
		s.m[string(key)] = slices.Delete(blocks, bi, bi+1)
	case 2*b.dead > len(b.buf):
		b.compact(s.slabs)
	}
	return nil
}

func (s *memMap[V]) Range(key []byte, fn func(mk []byte, v V) bool) error {
	for bi, blocks := 0, s.m[string(key)]; bi < len(blocks); bi++ {
		b := &blocks[bi]
		for i := range b.slots {
			if !fn(b.key(i), b.slots[i].v) {
				return nil
			}
		}
	}
	return nil
}

func (s *memMap[V]) Clear(key []byte) error {
	blocks, ok := s.m[string(key)]
	if !ok {
		return nil
	}
	for bi := range blocks {
		s.slabs.free(blocks[bi].buf)
	}
	delete(s.m, string(key))
	return nil
}

// each calls fn with every key and value of s, in no order. It only
// reads s, so it may run on another goroutine while nobody writes s.
func (s *memValue[T]) each(fn func(key []byte, v *T)) {
	if t := s.tab; t != nil {
		var prev *flatShard[T]
		for _, sh := range t.dir {
			if sh == prev {
				continue // a shard appears in consecutive directory slots
			}
			prev = sh
			for i := range sh.e {
				if k := &sh.e[i].k; *k != (smallKey{}) {
					fn(k[:k[smallKeyLen]-1], &sh.e[i].v)
				}
			}
		}
	}
	for k, p := range s.boxed {
		fn([]byte(k), p)
	}
}

// each calls fn with every key, map key and value of s, in no order. It
// only reads s.
func (s *memMap[V]) each(fn func(key, mk []byte, v V)) {
	for k, blocks := range s.m {
		for bi := range blocks {
			b := &blocks[bi]
			for i := range b.slots {
				fn([]byte(k), b.key(i), b.slots[i].v)
			}
		}
	}
}
