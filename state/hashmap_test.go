package state

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func newHMTest(t testing.TB, kgs KeyGroupRange) *HashMapStore {
	t.Helper()
	s, err := NewHashMapStore("op", kgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func hmStates(t testing.TB, s Store) (ValueState[*box], MapState[int64]) {
	t.Helper()
	v, err := NewValueState[*box](s, "v", boxCodec{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMapState[int64](s, "m", i64Codec{})
	if err != nil {
		t.Fatal(err)
	}
	return v, m
}

// fillMap puts, for the keys "mkey<i>" of kgs, i%5 entries e<j> -> i*10+j.
func fillMap(t testing.TB, m MapState[int64], kgs KeyGroupRange, n int) map[string][]entry {
	t.Helper()
	want := map[string][]entry{}
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("mkey%d", i)
		if !kgs.Contains(KeyGroup([]byte(k))) {
			continue
		}
		for j := 0; j < i%5; j++ {
			mk := fmt.Sprintf("e%d", j)
			if err := m.Put([]byte(k), []byte(mk), int64(i*10+j)); err != nil {
				t.Fatal(err)
			}
			want[k] = append(want[k], entry{mk, int64(i*10 + j)})
		}
	}
	return want
}

// checkStore checks that v and m hold exactly the wanted entries of
// key groups kgs, probing every wanted key of any key group.
func checkStore(t testing.TB, what string, v ValueState[*box], m MapState[int64], kgs KeyGroupRange, want map[string]box, wantMap map[string][]entry) int {
	t.Helper()
	n := 0
	for k, w := range want {
		b, ok, err := v.Get([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if !kgs.Contains(KeyGroup([]byte(k))) {
			if ok {
				t.Fatalf("%s: holds %q of key group %d outside [%d, %d)", what, k, KeyGroup([]byte(k)), kgs.Start, kgs.End)
			}
			continue
		}
		n++
		if !ok || *b != w {
			t.Fatalf("%s: Get(%q) = %v %v, want %v", what, k, b, ok, w)
		}
	}
	for k, w := range wantMap {
		var got []entry
		if err := m.Range([]byte(k), func(mk []byte, v int64) bool { got = append(got, entry{string(mk), v}); return true }); err != nil {
			t.Fatal(err)
		}
		if !kgs.Contains(KeyGroup([]byte(k))) {
			w = nil
		}
		if !slices.Equal(got, w) {
			t.Fatalf("%s: Range(%q) = %v, want %v", what, k, got, w)
		}
	}
	return n
}

// TestHashMapAsyncSnapshot: the operator changes the state between the
// synchronous part of a snapshot and its write, while the write runs on
// another goroutine — overwriting values, mutating a value it got in
// place and putting it back, deleting keys, clearing maps — and the
// snapshot still holds the state as the barrier left it.
func TestHashMapAsyncSnapshot(t *testing.T) {
	root := t.TempDir()
	s := newHMTest(t, allGroups)
	v, m := hmStates(t, s)
	want := fillValues(t, v, allGroups, 20_000)
	wantMap := fillMap(t, m, allGroups, 2000)
	for round := 0; round < 3; round++ {
		dir := filepath.Join(root, fmt.Sprintf("c%d", round))
		w, err := s.Snapshot(dir, false)
		if err != nil {
			t.Fatal(err)
		}
		var info SnapshotInfo
		var werr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, werr = w()
		}()
		next, nextMap := maps.Clone(want), maps.Clone(wantMap)
		for i := round; i < 20_000; i += 3 {
			k := fmt.Sprintf("key%d", i)
			switch i % 4 {
			case 0: // in place, then Put: the GroupAgg pattern
				b, ok, _ := v.Get([]byte(k))
				if !ok {
					continue
				}
				b.n += 1000
				b.s += "!"
				_ = v.Put([]byte(k), b)
				next[k] = *b
			case 1:
				_ = v.Delete([]byte(k))
				delete(next, k)
			case 2:
				b := &box{n: int64(-i), s: "new"}
				_ = v.Put([]byte(k), b)
				next[k] = *b
			}
		}
		for i := round; i < 2000; i += 7 {
			k := fmt.Sprintf("mkey%d", i)
			_ = m.Clear([]byte(k))
			delete(nextMap, k)
			_ = m.Put([]byte(k), []byte("z"), int64(i))
			nextMap[k] = []entry{{"z", int64(i)}}
		}
		wg.Wait()
		if werr != nil {
			t.Fatal(werr)
		}
		if info.Dir != dir || info.TotalBytes == 0 {
			t.Fatalf("snapshot info %+v", info)
		}
		r, err := RestoreHashMap("op", []RestoreSource{{dir, allGroups}}, allGroups, nil)
		if err != nil {
			t.Fatal(err)
		}
		rv, rm := hmStates(t, r)
		checkStore(t, "restored "+filepath.Base(dir), rv, rm, allGroups, want, wantMap)
		// Nothing more: a deleted key of the live state must not be there
		// either, and nothing that was never put.
		if _, ok, _ := rv.Get([]byte("key-never")); ok {
			t.Fatal("restored a key never put")
		}
		checkStore(t, "live", v, m, allGroups, next, nextMap)
		want, wantMap = next, nextMap
	}
}

// TestHashMapIncremental: a snapshot writes only the key groups changed
// since the previous one and hard-links the files of the others; when
// the previous snapshot is gone (aborted), it writes them again.
func TestHashMapIncremental(t *testing.T) {
	root := t.TempDir()
	s := newHMTest(t, allGroups)
	v, _ := hmStates(t, s)
	want := fillValues(t, v, allGroups, 10_000)
	i1, err := s.Checkpoint(filepath.Join(root, "c1"))
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := v.Get([]byte("key77"))
	b.s = "changed"
	_ = v.Put([]byte("key77"), b)
	want["key77"] = *b
	i2, err := s.Checkpoint(filepath.Join(root, "c2"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first: total %d B new %d B; one key changed: total %d B new %d B", i1.TotalBytes, i1.NewBytes, i2.TotalBytes, i2.NewBytes)
	if i1.NewBytes != i1.TotalBytes || i1.TotalBytes < 100_000 {
		t.Fatalf("first snapshot: %+v", i1)
	}
	// One key group of 128 changed: about 1/128 of the bytes are new.
	if i2.NewBytes*20 > i2.TotalBytes {
		t.Fatalf("incremental snapshot not small: %+v", i2)
	}
	changed := kgFileName(KeyGroup([]byte("key77")))
	other := kgFileName((KeyGroup([]byte("key77")) + 1) % MaxParallelism)
	same := func(name string) bool {
		a, err1 := os.Stat(filepath.Join(root, "c1", name))
		b, err2 := os.Stat(filepath.Join(root, "c2", name))
		return err1 == nil && err2 == nil && os.SameFile(a, b)
	}
	if same(changed) || !same(other) {
		t.Fatalf("the changed key group's file must be new (shared: %v), the others shared (shared: %v)", same(changed), same(other))
	}
	// c2 stands alone once c1 is gone.
	if err := os.RemoveAll(i1.Dir); err != nil {
		t.Fatal(err)
	}
	r, err := RestoreHashMap("op", []RestoreSource{{i2.Dir, allGroups}}, allGroups, nil)
	if err != nil {
		t.Fatal(err)
	}
	rv, rm := hmStates(t, r)
	checkStore(t, "c2", rv, rm, allGroups, want, nil)
	// The previous snapshot aborted and removed: everything is written.
	if err := os.RemoveAll(i2.Dir); err != nil {
		t.Fatal(err)
	}
	i3, err := s.Checkpoint(filepath.Join(root, "c3"))
	if err != nil {
		t.Fatal(err)
	}
	if i3.NewBytes != i3.TotalBytes {
		t.Fatalf("after an aborted snapshot everything must be written again: %+v", i3)
	}
	r, err = RestoreHashMap("op", []RestoreSource{{i3.Dir, allGroups}}, allGroups, nil)
	if err != nil {
		t.Fatal(err)
	}
	rv, rm = hmStates(t, r)
	checkStore(t, "c3", rv, rm, allGroups, want, nil)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// backendCase opens and restores stores of one backend.
type backendCase struct {
	name      string
	canonical bool // snapshot in the canonical format (a savepoint)
	open      func(t *testing.T, dir string, kgs KeyGroupRange) Store
	restore   func(t *testing.T, dir string, srcs []RestoreSource, kgs KeyGroupRange) Store
}

var backendCases = []backendCase{
	{name: "hashmap",
		open: func(t *testing.T, _ string, kgs KeyGroupRange) Store { return newHMTest(t, kgs) },
		restore: func(t *testing.T, _ string, srcs []RestoreSource, kgs KeyGroupRange) Store {
			s, err := RestoreHashMap("op", srcs, kgs, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
	{name: "pebble",
		open: func(t *testing.T, dir string, kgs KeyGroupRange) Store {
			return openTestStore(t, dir, kgs, PebbleOptions{CacheEntries: 500})
		},
		restore: func(t *testing.T, dir string, srcs []RestoreSource, kgs KeyGroupRange) Store {
			if err := RestorePebble(dir, srcs, kgs, PebbleOptions{}); err != nil {
				t.Fatal(err)
			}
			return openTestStore(t, dir, kgs, PebbleOptions{CacheEntries: 500})
		}},
}

// TestSnapshotAcrossBackends takes snapshots at parallelism 2 on each
// backend — native checkpoints and canonical savepoints — and restores
// them on each backend at parallelism 1, 2 and 3: every restored store
// holds exactly the entries of its key groups.
func TestSnapshotAcrossBackends(t *testing.T) {
	for _, from := range backendCases {
		for _, canonical := range []bool{false, true} {
			root := t.TempDir()
			want, wantMap := map[string]box{}, map[string][]entry{}
			var srcs []RestoreSource
			for sub := 0; sub < 2; sub++ {
				kgs := RangeFor(sub, 2)
				s := from.open(t, filepath.Join(root, fmt.Sprintf("work%d", sub)), kgs)
				v, m := hmStates(t, s)
				maps.Copy(want, fillValues(t, v, kgs, 3000))
				maps.Copy(wantMap, fillMap(t, m, kgs, 300))
				dir := filepath.Join(root, fmt.Sprintf("snap%d", sub))
				w, err := s.Snapshot(dir, canonical)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w(); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				srcs = append(srcs, RestoreSource{dir, kgs})
			}
			for _, to := range backendCases {
				for _, p := range []int{1, 2, 3} {
					what := fmt.Sprintf("%s (canonical %v) -> %s at p=%d", from.name, canonical, to.name, p)
					total := 0
					for sub := 0; sub < p; sub++ {
						kgs := RangeFor(sub, p)
						r := to.restore(t, filepath.Join(root, fmt.Sprintf("%s-p%d-%d", to.name, p, sub)), srcs, kgs)
						v, m := hmStates(t, r)
						total += checkStore(t, fmt.Sprintf("%s subtask %d", what, sub), v, m, kgs, want, wantMap)
						if err := r.Close(); err != nil {
							t.Fatal(err)
						}
					}
					if total != len(want) {
						t.Fatalf("%s: restored %d keys, want %d", what, total, len(want))
					}
				}
			}
		}
	}
}

// TestHashMapTTLAcrossBackends: the write times of a hashmap store with
// a TTL survive a snapshot restored into Pebble with the same TTL: an
// entry written before the clock moved expires there, one written after
// does not.
func TestHashMapTTLAcrossBackends(t *testing.T) {
	root := t.TempDir()
	clk := &fakeClock{t: time.Unix(1_000_000, 0)}
	hm := newHMTest(t, allGroups)
	s := WithTTL(hm, time.Minute, clk.now)
	v, err := NewValueState[int64](s, "v", i64Codec{})
	if err != nil {
		t.Fatal(err)
	}
	_ = v.Put([]byte("old"), 1)
	clk.advance(50 * time.Second)
	_ = v.Put([]byte("young"), 2)
	dir := filepath.Join(root, "snap")
	if _, err := s.Checkpoint(dir); err != nil {
		t.Fatal(err)
	}
	clk.advance(20 * time.Second) // old: 70 s, young: 20 s
	work := filepath.Join(root, "pebble")
	opts := PebbleOptions{TTL: time.Minute, Clock: clk.now}
	if err := RestorePebble(work, []RestoreSource{{dir, allGroups}}, allGroups, opts); err != nil {
		t.Fatal(err)
	}
	p := openTestStore(t, work, allGroups, opts)
	defer p.Close()
	pv, err := NewValueState[int64](p, "v", i64Codec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := pv.Get([]byte("old")); ok {
		t.Fatal("an entry written 70 s ago survived a 1 min TTL")
	}
	if x, ok, _ := pv.Get([]byte("young")); !ok || x != 2 {
		t.Fatalf("young = %v %v", x, ok)
	}
	// And back into a hashmap store with the TTL.
	r, err := RestoreHashMap("op", []RestoreSource{{dir, allGroups}}, allGroups, nil)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := NewValueState[int64](WithTTL(r, time.Minute, clk.now), "v", i64Codec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := rv.Get([]byte("old")); ok {
		t.Fatal("hashmap restore: an entry written 70 s ago survived a 1 min TTL")
	}
	if x, ok, _ := rv.Get([]byte("young")); !ok || x != 2 {
		t.Fatalf("hashmap restore: young = %v %v", x, ok)
	}
}

// TestHashMapRestoreErrors: a damaged key-group file fails the restore
// with an error naming the checkpoint.
func TestHashMapRestoreErrors(t *testing.T) {
	root := t.TempDir()
	s := newHMTest(t, allGroups)
	v, _ := hmStates(t, s)
	fillValues(t, v, allGroups, 2000)
	info, err := s.Checkpoint(filepath.Join(root, "c"))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(info.Dir, kgFileName(3))
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = RestoreHashMap("op", []RestoreSource{{info.Dir, allGroups}}, allGroups, nil)
	if err == nil || !strings.Contains(err.Error(), info.Dir) || !strings.Contains(err.Error(), "kg-003") {
		t.Fatalf("damaged file: err = %v", err)
	}
	if err := RestorePebble(filepath.Join(root, "p"), []RestoreSource{{info.Dir, allGroups}}, allGroups, PebbleOptions{}); err == nil {
		t.Fatal("Pebble restored a damaged key-group snapshot")
	}
}
