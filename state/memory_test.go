package state

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMemMapBlocks checks the block lists of memMap against a plain Go
// map: random puts, overwrites and deletes under few keys, with enough
// entries per key that blocks split, fill up by ascending inserts and
// empty again; Get, Range (order and early stop) and each must agree.
func TestMemMapBlocks(t *testing.T) {
	for _, pattern := range []string{"random", "ascending", "descending"} {
		t.Run(pattern, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			m := newMemMap[int](newSlabs())
			want := map[string]map[string]int{}
			keys := []string{"a", "bb", ""}
			seq := 0
			mapKey := func() string {
				switch pattern {
				case "ascending":
					seq++
					return fmt.Sprintf("%08d", seq)
				case "descending":
					seq++
					return fmt.Sprintf("%08d", 1e7-seq)
				}
				// Short and long map keys, some shared prefixes, some repeats.
				return fmt.Sprintf("%d%s", r.IntN(3000), string(make([]byte, r.IntN(40))))
			}
			for step := range 20000 {
				k := keys[r.IntN(len(keys))]
				if want[k] == nil {
					want[k] = map[string]int{}
				}
				switch op := r.IntN(10); {
				case op < 7:
					mk := mapKey()
					if err := m.Put([]byte(k), []byte(mk), step); err != nil {
						t.Fatal(err)
					}
					want[k][mk] = step
				case op < 9:
					// Delete an existing entry (or a missing one).
					var mk string
					for x := range want[k] {
						mk = x
						break
					}
					if r.IntN(4) == 0 {
						mk = "missing"
					}
					if err := m.Delete([]byte(k), []byte(mk)); err != nil {
						t.Fatal(err)
					}
					delete(want[k], mk)
				default:
					if r.IntN(50) == 0 {
						if err := m.Clear([]byte(k)); err != nil {
							t.Fatal(err)
						}
						want[k] = map[string]int{}
					}
				}
				if step%997 == 0 || step == 19999 {
					checkMemMap(t, m, want)
					checkSlabs(t, m)
				}
			}
			checkSlabs(t, m)
			for _, k := range keys {
				if err := m.Clear([]byte(k)); err != nil {
					t.Fatal(err)
				}
			}
			if live := m.slabs.m.live; live != 0 {
				t.Errorf("the slabs hold %d bytes of buffers once every key is cleared", live)
			}
			if n := len(m.m[keys[0]]); n < 3 && len(want[keys[0]]) > 3*memBlockSlots {
				t.Errorf("key %q holds %d entries in %d blocks: blocks did not split", keys[0], len(want[keys[0]]), n)
			}
		})
	}
}

func checkMemMap(t *testing.T, m *memMap[int], want map[string]map[string]int) {
	t.Helper()
	for k, w := range want {
		var sorted []string
		for mk := range w {
			sorted = append(sorted, mk)
		}
		slices.Sort(sorted)
		var got []string
		if err := m.Range([]byte(k), func(mk []byte, v int) bool {
			if v != w[string(mk)] {
				t.Fatalf("key %q, map key %q: Range gives %d, want %d", k, mk, v, w[string(mk)])
			}
			got = append(got, string(mk))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, sorted) {
			t.Fatalf("key %q: Range visits %d map keys, want %d in ascending order", k, len(got), len(sorted))
		}
		for mk, v := range w {
			g, ok, err := m.Get([]byte(k), []byte(mk))
			if err != nil || !ok || g != v {
				t.Fatalf("key %q: Get(%q) = %d, %v, %v; want %d", k, mk, g, ok, err, v)
			}
		}
		if _, ok, _ := m.Get([]byte(k), []byte("missing")); ok {
			t.Fatalf("key %q: Get of a missing map key finds it", k)
		}
		if len(sorted) > 2 {
			n := 0
			_ = m.Range([]byte(k), func([]byte, int) bool { n++; return n < 2 })
			if n != 2 {
				t.Fatalf("key %q: Range went on after fn returned false (%d calls)", k, n)
			}
		}
	}
	n := 0
	m.each(func(key, mk []byte, v int) {
		if w, ok := want[string(key)][string(mk)]; !ok || w != v {
			t.Fatalf("each gives %q/%q = %d, not in the reference", key, mk, v)
		}
		n++
	})
	total := 0
	for _, w := range want {
		total += len(w)
	}
	if n != total {
		t.Fatalf("each visits %d entries, want %d", n, total)
	}
}

// checkSlabs checks that the slabs have handed out exactly the buffers
// m's blocks hold: none leaked, none freed twice.
func checkSlabs(t *testing.T, m *memMap[int]) {
	t.Helper()
	var held int64
	for _, blocks := range m.m {
		for _, b := range blocks {
			held += int64(cap(b.buf))
		}
	}
	if live := m.slabs.m.live; live != held {
		t.Fatalf("the slabs have %d bytes of buffers out, the blocks hold %d", live, held)
	}
}
