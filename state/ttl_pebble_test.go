package state

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestMemoryTTL: the TTL wrapper gives the memory backend the same
// semantics as the Pebble backend's built-in TTL.
func TestMemoryTTL(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := WithTTL(NewMemoryStore("op"), time.Minute, clk.now)
	if s.OperatorID() != "op" || s.Backend() != "memory" {
		t.Fatalf("wrapper identity: %s %s", s.OperatorID(), s.Backend())
	}
	v, err := NewValueState[int64](s, "v", i64Codec{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMapState[int64](s, "m", i64Codec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewValueState[int64](s, "v", i64Codec{}); err == nil {
		t.Fatal("registering a state name twice must fail")
	}
	testTTL(t, clk, v, m, func() {})
	if WithTTL(NewMemoryStore("x"), 0, nil).Backend() != "memory" {
		t.Fatal("WithTTL(0) must return the store itself")
	}
}

// TestMemoryTTLEagerCleanup: keys written once and never read again are
// deleted from the wrapped memory state by later Puts, and CleanUp
// deletes all of them.
func TestMemoryTTLEagerCleanup(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	s := WithTTL(NewMemoryStore("op"), time.Minute, clk.now).(*TTLStore)
	vs, _ := NewValueState[int64](s, "v", i64Codec{})
	ms, _ := NewMapState[int64](s, "m", i64Codec{})
	v, m := vs.(*ttlValue[int64]), ms.(*ttlMap[int64])
	const n = 1000
	for i := 0; i < n; i++ {
		k := []byte(fmt.Sprintf("old%d", i))
		_ = v.Put(k, int64(i))
		_ = v.Put(k, int64(i)) // rewriting does not queue a key twice
		_ = m.Put(k, []byte("e"), int64(i))
	}
	if v.q.Len() != n || m.q.Len() != n {
		t.Fatalf("queues hold %d and %d entries, want %d", v.q.Len(), m.q.Len(), n)
	}
	clk.advance(time.Minute)
	// A key deleted and written again is queued anew; its stale queue
	// entry must not delete the new value.
	_ = v.Delete([]byte("old0"))
	_ = v.Put([]byte("old0"), 7)
	for i := 0; i < n; i++ {
		k := []byte(fmt.Sprintf("new%d", i))
		_ = v.Put(k, int64(i))
		_ = m.Put(k, []byte("e"), int64(i))
	}
	for i := 0; i < n; i++ {
		k := []byte(fmt.Sprintf("old%d", i))
		if _, ok, _ := v.inner.Get(k); ok && i != 0 {
			t.Fatalf("expired %s still stored", k)
		}
		if _, ok, _ := m.inner.Get(k, []byte("e")); ok {
			t.Fatalf("expired %s/e still stored", k)
		}
	}
	if x, ok, _ := v.Get([]byte("old0")); !ok || x != 7 {
		t.Fatalf("old0, rewritten, is gone: %v %v", x, ok)
	}
	// Left: the new keys and old0's new entry; its stale one is gone.
	if v.q.Len() != n+1 || m.q.Len() != n {
		t.Fatalf("queues hold %d and %d entries, want %d and %d", v.q.Len(), m.q.Len(), n+1, n)
	}
	clk.advance(time.Minute)
	if err := s.CleanUp(); err != nil {
		t.Fatal(err)
	}
	if v.q.Len() != 0 || m.q.Len() != 0 {
		t.Fatalf("after CleanUp the queues hold %d and %d entries", v.q.Len(), m.q.Len())
	}
	for i := 0; i < n; i++ {
		if _, ok, _ := v.inner.Get([]byte(fmt.Sprintf("new%d", i))); ok {
			t.Fatal("CleanUp left an expired value")
		}
	}
}

// TestTTLWrapperOnPebble: the wrapper also works on a persistent store,
// with its codec.
func TestTTLWrapperOnPebble(t *testing.T) {
	root := t.TempDir()
	clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	ps := openTestStore(t, filepath.Join(root, "w"), allGroups, PebbleOptions{CacheEntries: 2})
	defer ps.Close()
	s := WithTTL(ps, time.Minute, clk.now)
	v, err := NewValueState[int64](s, "v", i64Codec{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMapState[int64](s, "m", i64Codec{})
	if err != nil {
		t.Fatal(err)
	}
	testTTL(t, clk, v, m, func() {
		if _, err := ps.Checkpoint(filepath.Join(root, fmt.Sprint(clk.t.UnixMilli()))); err != nil {
			t.Fatal(err)
		}
	})
}
