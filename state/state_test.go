package state

import (
	"fmt"
	"testing"
)

type intCodec struct{}

func (intCodec) Encode(dst []byte, v int) []byte { return fmt.Appendf(dst, "%d", v) }
func (intCodec) Decode(b []byte) (int, error) {
	var v int
	_, err := fmt.Sscanf(string(b), "%d", &v)
	return v, err
}

func TestValueState(t *testing.T) {
	s := NewMemoryStore("op")
	v, err := NewValueState[int](s, "v", intCodec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewValueState[int](s, "v", intCodec{}); err == nil {
		t.Fatal("registering a state name twice must fail")
	}
	key := []byte("k1")
	if _, ok, _ := v.Get(key); ok {
		t.Fatal("empty state has a value")
	}
	_ = v.Put(key, 7)
	key[1] = '2' // the state must not keep the caller's slice
	if x, ok, _ := v.Get([]byte("k1")); !ok || x != 7 {
		t.Fatalf("Get(k1) = %v, %v", x, ok)
	}
	if _, ok, _ := v.Get([]byte("k2")); ok {
		t.Fatal("k2 was never put")
	}
	_ = v.Put([]byte("k1"), 8)
	if x, _, _ := v.Get([]byte("k1")); x != 8 {
		t.Fatalf("overwrite: %d", x)
	}
	_ = v.Delete([]byte("k1"))
	if _, ok, _ := v.Get([]byte("k1")); ok {
		t.Fatal("deleted key still there")
	}
}

func TestMapStateRangesInKeyOrder(t *testing.T) {
	s := NewMemoryStore("op")
	m, err := NewMapState[int](s, "m", intCodec{})
	if err != nil {
		t.Fatal(err)
	}
	for i, mk := range []string{"c", "a", "b", "ab"} {
		_ = m.Put([]byte("k"), []byte(mk), i)
	}
	_ = m.Put([]byte("other"), []byte("z"), 9)
	var got []string
	_ = m.Range([]byte("k"), func(mk []byte, v int) bool {
		got = append(got, fmt.Sprintf("%s=%d", mk, v))
		return true
	})
	if fmt.Sprint(got) != "[a=1 ab=3 b=2 c=0]" {
		t.Fatalf("Range order: %v", got)
	}
	_ = m.Delete([]byte("k"), []byte("ab"))
	if _, ok, _ := m.Get([]byte("k"), []byte("ab")); ok {
		t.Fatal("deleted entry still there")
	}
	n := 0
	_ = m.Range([]byte("k"), func([]byte, int) bool { n++; return n < 2 })
	if n != 2 {
		t.Fatalf("Range did not stop when fn returned false: %d calls", n)
	}
	_ = m.Clear([]byte("k"))
	if _, ok, _ := m.Get([]byte("k"), []byte("a")); ok {
		t.Fatal("Clear left entries")
	}
	if v, ok, _ := m.Get([]byte("other"), []byte("z")); !ok || v != 9 {
		t.Fatal("Clear touched another key")
	}
}

func TestKeyGroupRangesPartitionAllGroups(t *testing.T) {
	for _, p := range []int{1, 2, 3, 4, 7, 128} {
		seen := 0
		for s := 0; s < p; s++ {
			r := RangeFor(s, p)
			for kg := r.Start; kg < r.End; kg++ {
				if SubtaskFor(kg, p) != s {
					t.Fatalf("p=%d: key group %d is in subtask %d's range but maps to %d", p, kg, s, SubtaskFor(kg, p))
				}
				seen++
			}
		}
		if seen != MaxParallelism {
			t.Fatalf("p=%d: ranges cover %d key groups", p, seen)
		}
	}
}
