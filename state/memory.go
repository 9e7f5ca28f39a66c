package state

import (
	"fmt"

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

// memValue boxes each value so that overwriting an existing key is a
// map lookup plus a store, with no allocation for the key. Keys of up to
// smallKeyLen bytes — the common case: a key of one numeric column — are
// held inline in the map, so that a lookup reads no key bytes outside
// it. The box of the last key looked up or stored is remembered, so the
// usual Get-modify-Put of one key costs one lookup.
type memValue[T any] struct {
	small map[smallKey]*T
	m     map[string]*T

	last    smallKey // key of lastBox, when lastLen >= 0
	lastLen int      // -1: no remembered box
	lastBox *T
}

// smallKeyLen is the longest key held inline.
const smallKeyLen = 15

// smallKey is a key of up to smallKeyLen bytes, zero padded, with its
// length in the last byte so that keys differing only in trailing zero
// bytes stay apart. At 16 bytes it gets the runtime's fast 128-bit hash
// and equality.
type smallKey [smallKeyLen + 1]byte

func makeSmallKey(key []byte) smallKey {
	var k smallKey
	copy(k[:smallKeyLen], key)
	k[smallKeyLen] = byte(len(key))
	return k
}

func newMemValue[T any]() *memValue[T] {
	return &memValue[T]{small: map[smallKey]*T{}, m: map[string]*T{}, lastLen: -1}
}

// box returns the box of key, or nil.
func (s *memValue[T]) box(key []byte) *T {
	if len(key) > smallKeyLen {
		return s.m[string(key)]
	}
	k := makeSmallKey(key)
	if s.lastLen >= 0 && k == s.last {
		return s.lastBox
	}
	p := s.small[k]
	if p != nil {
		s.last, s.lastLen, s.lastBox = k, len(key), p
	}
	return p
}

func (s *memValue[T]) Get(key []byte) (T, bool, error) {
	if p := s.box(key); p != nil {
		return *p, true, nil
	}
	var zero T
	return zero, false, nil
}

func (s *memValue[T]) Put(key []byte, v T) error {
	if p := s.box(key); p != nil {
		*p = v
		return nil
	}
	// A new box, rather than &v: taking v's address would move v to the
	// heap on every call, including overwrites.
	p := new(T)
	*p = v
	if len(key) > smallKeyLen {
		s.m[string(key)] = p
		return nil
	}
	k := makeSmallKey(key)
	s.small[k] = p
	s.last, s.lastLen, s.lastBox = k, len(key), p
	return nil
}

func (s *memValue[T]) Delete(key []byte) error {
	if len(key) > smallKeyLen {
		delete(s.m, string(key))
		return nil
	}
	k := makeSmallKey(key)
	if s.lastLen >= 0 && k == s.last {
		s.lastLen, s.lastBox = -1, nil
	}
	delete(s.small, k)
	return nil
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
