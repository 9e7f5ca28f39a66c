package state

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"unsafe"

	"github.com/google/btree"
)

// MemoryStore keeps state in Go maps on the heap. It is the default for
// jobs without checkpointing and for tests.
type MemoryStore struct {
	id    string
	names map[string]bool
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store for operator id.
func NewMemoryStore(id string) *MemoryStore {
	return &MemoryStore{id: id, names: map[string]bool{}}
}

// OperatorID implements Store.
func (s *MemoryStore) OperatorID() string { return s.id }

// Backend implements Store.
func (s *MemoryStore) Backend() string { return "memory" }

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
		if i := s.tab.find(makeSmallKey(key)); i >= 0 {
			return s.tab.e[i].v, true, nil
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

// flatTable is an open-addressing hash table with linear probing and
// backward-shift deletion (no tombstones), keys and values inline. It
// remembers the slot of the last key it found or stored, so that the
// usual Get-modify-Put of one key probes once.
type flatTable[T any] struct {
	e            []flatEntry[T] // a power of two long, or empty
	n            int            // keys held
	seed0, seed1 uint64         // random per table, against collision flooding
	last         int            // slot of the last key found or stored; -1: none
}

type flatEntry[T any] struct {
	k smallKey // zero: empty slot
	v T
}

func newFlatTable[T any]() *flatTable[T] {
	return &flatTable[T]{seed0: rand.Uint64(), seed1: rand.Uint64(), last: -1}
}

func (t *flatTable[T]) hash(k *smallKey) uint64 {
	hi, lo := bits.Mul64(binary.LittleEndian.Uint64(k[:8])^t.seed0, binary.LittleEndian.Uint64(k[8:])^t.seed1)
	return hi ^ lo
}

// slot returns the slot holding k, or else the empty slot where probing
// for k stopped (-1 if the table has no slots), and whether k is there.
func (t *flatTable[T]) slot(k smallKey) (int, bool) {
	if t.last >= 0 && t.e[t.last].k == k {
		return t.last, true
	}
	if len(t.e) == 0 {
		return -1, false
	}
	mask := len(t.e) - 1
	for i := int(t.hash(&k)) & mask; ; i = (i + 1) & mask {
		switch t.e[i].k {
		case k:
			t.last = i
			return i, true
		case smallKey{}:
			return i, false
		}
	}
}

// find returns the slot holding k, or -1.
func (t *flatTable[T]) find(k smallKey) int {
	if i, ok := t.slot(k); ok {
		return i
	}
	return -1
}

func (t *flatTable[T]) put(k smallKey, v T) {
	i, ok := t.slot(k)
	if !ok {
		if 4*(t.n+1) > 3*len(t.e) {
			t.grow()
			i, _ = t.slot(k)
		}
		t.e[i].k = k
		t.n++
		t.last = i
	}
	t.e[i].v = v
}

func (t *flatTable[T]) delete(k smallKey) {
	i, ok := t.slot(k)
	if !ok {
		return
	}
	t.last = -1
	t.n--
	mask := len(t.e) - 1
	// Backward shift: move later entries of the probe run into the hole
	// when their home slot is not after it.
	for {
		t.e[i] = flatEntry[T]{}
		j := i
		for {
			j = (j + 1) & mask
			if t.e[j].k == (smallKey{}) {
				return
			}
			h := int(t.hash(&t.e[j].k)) & mask
			if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
				break
			}
		}
		t.e[i] = t.e[j]
		i = j
	}
}

func (t *flatTable[T]) grow() {
	old := t.e
	t.e = make([]flatEntry[T], max(16, 2*len(old)))
	t.last = -1
	mask := len(t.e) - 1
	for o := range old {
		if old[o].k == (smallKey{}) {
			continue
		}
		i := int(t.hash(&old[o].k)) & mask
		for t.e[i].k != (smallKey{}) {
			i = (i + 1) & mask
		}
		t.e[i] = old[o]
	}
}

type memEntry[V any] struct {
	k string
	v V
}

type memMap[V any] struct {
	m map[string]*btree.BTreeG[memEntry[V]]
}

func newMemMap[V any]() *memMap[V] { return &memMap[V]{m: map[string]*btree.BTreeG[memEntry[V]]{}} }

func lessEntry[V any](a, b memEntry[V]) bool { return a.k < b.k }

func (s *memMap[V]) Get(key, mk []byte) (V, bool, error) {
	var zero V
	t := s.m[string(key)]
	if t == nil {
		return zero, false, nil
	}
	e, ok := t.Get(memEntry[V]{k: string(mk)})
	return e.v, ok, nil
}

func (s *memMap[V]) Put(key, mk []byte, v V) error {
	t := s.m[string(key)]
	if t == nil {
		t = btree.NewG[memEntry[V]](8, lessEntry[V])
		s.m[string(key)] = t
	}
	t.ReplaceOrInsert(memEntry[V]{k: string(mk), v: v})
	return nil
}

func (s *memMap[V]) Delete(key, mk []byte) error {
	t := s.m[string(key)]
	if t == nil {
		return nil
	}
	t.Delete(memEntry[V]{k: string(mk)})
	if t.Len() == 0 {
		delete(s.m, string(key))
	}
	return nil
}

func (s *memMap[V]) Range(key []byte, fn func(mk []byte, v V) bool) error {
	t := s.m[string(key)]
	if t == nil {
		return nil
	}
	t.Ascend(func(e memEntry[V]) bool { return fn([]byte(e.k), e.v) })
	return nil
}

func (s *memMap[V]) Clear(key []byte) error {
	delete(s.m, string(key))
	return nil
}
