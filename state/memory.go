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
// map lookup plus a store, with no allocation for the key.
type memValue[T any] struct{ m map[string]*T }

func newMemValue[T any]() *memValue[T] { return &memValue[T]{m: map[string]*T{}} }

func (s *memValue[T]) Get(key []byte) (T, bool, error) {
	if p := s.m[string(key)]; p != nil {
		return *p, true, nil
	}
	var zero T
	return zero, false, nil
}

func (s *memValue[T]) Put(key []byte, v T) error {
	if p := s.m[string(key)]; p != nil {
		*p = v
		return nil
	}
	s.m[string(key)] = &v
	return nil
}

func (s *memValue[T]) Delete(key []byte) error {
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
