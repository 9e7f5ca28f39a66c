// Package state owns keyed operator state: the interfaces operators use
// (value state and ordered map state, addressed by an encoded key) and the
// backends behind them.
//
// Operators only ever see ValueState and MapState. The backend decides
// where the data lives: the in-memory backend keeps typed Go values in
// maps; a persistent backend keeps them in Pebble behind a write-back
// cache and uses the Codec to serialize at checkpoint time. Because the
// Codec is given when the state is created, operators do not change when
// the backend does.
//
// Keys are byte strings produced by types.EncodeKey. A state never
// retains the caller's key slice: it copies what it stores.
//
// Lifecycle: the runtime creates one Store per operator subtask before
// Operator.Open; the operator creates its states in Open, uses them only
// from its own goroutine, and never after Close. States are not safe for
// concurrent use.
package state

import "fmt"

// Codec serializes state values. The in-memory backend never calls it;
// persistent backends do, at flush time.
type Codec[T any] interface {
	Encode(dst []byte, v T) []byte
	Decode(b []byte) (T, error)
}

// ValueState holds one value per key.
type ValueState[T any] interface {
	// Get returns the value for key and whether it exists.
	Get(key []byte) (T, bool, error)
	// Put sets the value for key. The state owns v afterwards: the caller
	// must not modify it unless it Puts it again.
	Put(key []byte, v T) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(key []byte) error
}

// MapState holds an ordered map per key: (key, mapKey) -> value.
type MapState[V any] interface {
	Get(key, mapKey []byte) (V, bool, error)
	Put(key, mapKey []byte, v V) error
	Delete(key, mapKey []byte) error
	// Range visits the entries under key in ascending byte order of the
	// map key until fn returns false. fn must not modify the state.
	Range(key []byte, fn func(mapKey []byte, v V) bool) error
	// Clear removes every entry under key.
	Clear(key []byte) error
}

// Store is one operator subtask's state namespace. Names must be unique
// within a store; a persistent backend prefixes every key with the
// operator id and the state name.
//
// Lifecycle: the runtime creates the store before Operator.Open. Once the
// operator has aligned a checkpoint barrier and put its extra state into
// the store, the runtime calls Snapshot on the operator's goroutine and
// runs the SnapshotWrite it returns on another goroutine while the
// operator goes on (an asynchronous snapshot); a store has at most one
// snapshot being written, and Snapshot first waits for the previous one.
// Close comes once the job has stopped; it waits for a snapshot still
// being written.
type Store interface {
	// OperatorID identifies the owning operator in the job graph.
	OperatorID() string
	// Backend returns the backend kind, for diagnostics ("memory").
	Backend() string
	// Snapshot takes the synchronous part of a snapshot of the store's
	// state into dir, which must not exist, and returns the part that
	// writes it. canonical asks for the backend-independent format
	// (canonical.go), which savepoints use; otherwise the backend writes
	// its native format. A store that holds no state writes nothing: its
	// SnapshotWrite returns SnapshotInfo{} (Dir empty).
	Snapshot(dir string, canonical bool) (SnapshotWrite, error)
	// Checkpoint takes a native snapshot into dir and waits for it to be
	// written: Snapshot followed by its SnapshotWrite.
	Checkpoint(dir string) (SnapshotInfo, error)
	// Close releases the store. Closing twice is a no-op.
	Close() error
	register(name string) error
}

// NewValueState creates the named value state in s.
func NewValueState[T any](s Store, name string, c Codec[T]) (ValueState[T], error) {
	if err := s.register(name); err != nil {
		return nil, err
	}
	return newValueState(s, name, c)
}

// newValueState creates the state of an already registered name.
func newValueState[T any](s Store, name string, c Codec[T]) (ValueState[T], error) {
	if t, ok := s.(*TTLStore); ok {
		return newTTLValue(t, name, c)
	}
	return newBaseValueState(s, name, c)
}

// newBaseValueState creates the state in a backend store (not a wrapper).
func newBaseValueState[T any](s Store, name string, c Codec[T]) (ValueState[T], error) {
	switch s := s.(type) {
	case *MemoryStore:
		return newMemValue[T](), nil
	case *PebbleStore:
		return newPebbleValue(s, name, c)
	case *HashMapStore:
		return newHMValue(s, name, c)
	}
	return nil, fmt.Errorf("state: unsupported store %T", s)
}

// NewMapState creates the named map state in s.
func NewMapState[V any](s Store, name string, c Codec[V]) (MapState[V], error) {
	if err := s.register(name); err != nil {
		return nil, err
	}
	return newMapState(s, name, c)
}

// newMapState creates the state of an already registered name.
func newMapState[V any](s Store, name string, c Codec[V]) (MapState[V], error) {
	if t, ok := s.(*TTLStore); ok {
		return newTTLMap(t, name, c)
	}
	return newBaseMapState(s, name, c)
}

// newBaseMapState creates the state in a backend store (not a wrapper).
func newBaseMapState[V any](s Store, name string, c Codec[V]) (MapState[V], error) {
	switch s := s.(type) {
	case *MemoryStore:
		return newMemMap[V](s.slabs), nil
	case *PebbleStore:
		return newPebbleMap(s, name, c)
	case *HashMapStore:
		return newHMMap(s, name, c)
	}
	return nil, fmt.Errorf("state: unsupported store %T", s)
}

// registerName records that a store's operator registers the state name,
// which must be new to that store and 1 to 255 bytes long (the name is a
// key prefix with a length byte). Both backends call it, so they accept
// and refuse the same names.
func registerName(operator string, names map[string]bool, closed bool, name string) error {
	if closed {
		return fmt.Errorf("state: operator %s: store is closed", operator)
	}
	if name == "" || len(name) > 255 {
		return fmt.Errorf("state: operator %s: state name %q must have 1 to 255 bytes", operator, name)
	}
	if names[name] {
		return fmt.Errorf("state: operator %s registers state %q twice", operator, name)
	}
	names[name] = true
	return nil
}
