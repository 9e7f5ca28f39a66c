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

// memValue keeps keys of up to smallKeyLen bytes — the common case:
// a key of one numeric column — inline in a map with the value
// next to them, so that a lookup touches no memory outside the map and
// overwriting an existing key allocates nothing. Longer keys live in a
// map of boxed values, so that overwriting one is a lookup plus a store,
// with no allocation for the key.
type memValue[T any] struct {
	small map[smallKey]T
	m     map[string]*T
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
	return &memValue[T]{small: map[smallKey]T{}, m: map[string]*T{}}
}

func (s *memValue[T]) Get(key []byte) (T, bool, error) {
	if len(key) <= smallKeyLen {
		v, ok := s.small[makeSmallKey(key)]
		return v, ok, nil
	}
	if p := s.m[string(key)]; p != nil {
		return *p, true, nil
	}
	var zero T
	return zero, false, nil
}

func (s *memValue[T]) Put(key []byte, v T) error {
	if len(key) <= smallKeyLen {
		s.small[makeSmallKey(key)] = v
		return nil
	}
	if p := s.m[string(key)]; p != nil {
		*p = v
		return nil
	}
	s.m[string(key)] = &v
	return nil
}

func (s *memValue[T]) Delete(key []byte) error {
	if len(key) <= smallKeyLen {
		delete(s.small, makeSmallKey(key))
		return nil
	}
	delete(s.m, string(key))
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
