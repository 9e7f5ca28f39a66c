package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
)

// box is a mutable value, held by pointer like GroupAgg's group state.
type box struct {
	n int64
	s string
}

type boxCodec struct{}

func (boxCodec) Encode(dst []byte, b *box) []byte {
	dst = binary.AppendVarint(dst, b.n)
	return append(dst, b.s...)
}

func (boxCodec) Decode(b []byte) (*box, error) {
	n, k := binary.Varint(b)
	if k <= 0 {
		return nil, errors.New("bad box")
	}
	return &box{n: n, s: string(b[k:])}, nil
}

type i64Codec struct{}

func (i64Codec) Encode(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }
func (i64Codec) Decode(b []byte) (int64, error) {
	v, k := binary.Varint(b)
	if k != len(b) {
		return 0, errors.New("bad int64")
	}
	return v, nil
}

func openTestStore(t testing.TB, dir string, kgs KeyGroupRange, opts PebbleOptions) *PebbleStore {
	t.Helper()
	s, err := OpenPebbleStore(dir, "op", kgs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var allGroups = KeyGroupRange{0, MaxParallelism}

// dbEntries counts the state entries in s's DB (metadata excluded).
func dbEntries(t testing.TB, s *PebbleStore) int {
	t.Helper()
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{1}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPebbleValueStateModel runs random Put/Get/Delete against a Go map
// through a 4-entry cache, with the GroupAgg pattern (Get a pointer,
// mutate it, Put it again), snapshots, restores and reopenings.
func TestPebbleValueStateModel(t *testing.T) {
	for _, cache := range []int{1, 4, 64} {
		t.Run(fmt.Sprintf("cache=%d", cache), func(t *testing.T) {
			testValueModel(t, cache, 4000)
		})
	}
}

func testValueModel(t *testing.T, cache, steps int) {
	root := t.TempDir()
	opts := PebbleOptions{CacheEntries: cache}
	work := filepath.Join(root, "work0")
	s := openTestStore(t, work, allGroups, opts)
	defer func() { s.Close() }()
	v, err := NewValueState[*box](s, "v", boxCodec{})
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]box{}
	rng := rand.New(rand.NewSource(int64(cache)))
	key := func() []byte {
		// Keys of 0..20 bytes, some sharing prefixes.
		k := fmt.Sprintf("k%d", rng.Intn(40))
		if rng.Intn(4) == 0 {
			k += strings.Repeat("x", rng.Intn(16))
		}
		if rng.Intn(20) == 0 {
			k = ""
		}
		return []byte(k)
	}
	type snap struct {
		dir   string
		model map[string]box
	}
	var snaps []snap
	reopen := func(dir string) {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = openTestStore(t, dir, allGroups, opts)
		if v, err = NewValueState[*box](s, "v", boxCodec{}); err != nil {
			t.Fatal(err)
		}
	}
	for step := 0; step < steps; step++ {
		k := key()
		switch op := rng.Intn(100); {
		case op < 35: // GroupAgg: Get, mutate, Put
			b, ok, err := v.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				b = &box{}
			}
			b.n++
			b.s = fmt.Sprintf("s%d", step)
			if err := v.Put(k, b); err != nil {
				t.Fatal(err)
			}
			model[string(k)] = *b
		case op < 50:
			b := &box{n: int64(step), s: strings.Repeat("v", rng.Intn(30))}
			if err := v.Put(k, b); err != nil {
				t.Fatal(err)
			}
			model[string(k)] = *b
		case op < 62:
			if err := v.Delete(k); err != nil {
				t.Fatal(err)
			}
			delete(model, string(k))
		case op < 64: // Get, mutate, then Delete: the mutation must not matter
			if b, ok, _ := v.Get(k); ok {
				b.n = -1000
			}
			if err := v.Delete(k); err != nil {
				t.Fatal(err)
			}
			delete(model, string(k))
		case op < 67:
			dir := filepath.Join(root, fmt.Sprintf("snap%d", step))
			if _, err := s.Checkpoint(dir); err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, snap{dir, maps.Clone(model)})
		case op < 68 && len(snaps) > 0: // restore an earlier snapshot
			sn := snaps[rng.Intn(len(snaps))]
			dir := filepath.Join(root, fmt.Sprintf("work%d", step))
			if err := RestorePebble(dir, []RestoreSource{{sn.dir, allGroups}}, allGroups, opts); err != nil {
				t.Fatal(err)
			}
			reopen(dir)
			model = maps.Clone(sn.model)
		case op < 69:
			reopen(s.dir)
		default:
			b, ok, err := v.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			want, wok := model[string(k)]
			if ok != wok || (ok && *b != want) {
				t.Fatalf("step %d: Get(%q) = %v %v, want %v %v", step, k, b, ok, want, wok)
			}
		}
		if s.size > max(cache, 1)+1 {
			t.Fatalf("step %d: cache holds %d entries, bound %d", step, s.size, cache)
		}
	}
	for k, want := range model {
		b, ok, err := v.Get([]byte(k))
		if err != nil || !ok || *b != want {
			t.Fatalf("final Get(%q) = %v %v %v, want %v", k, b, ok, err, want)
		}
	}
	if _, err := s.Checkpoint(filepath.Join(root, "final")); err != nil {
		t.Fatal(err)
	}
	if n := dbEntries(t, s); n != len(model) {
		t.Fatalf("DB holds %d entries after the final snapshot, model %d", n, len(model))
	}
}

type entry struct {
	mk string
	v  int64
}

// TestPebbleMapStateModel runs random map operations, Range (whole and
// stopped early) and Clear against a Go model through small caches,
// across snapshots, restores and reopenings.
func TestPebbleMapStateModel(t *testing.T) {
	for _, cache := range []int{1, 4, 16, 1000} {
		t.Run(fmt.Sprintf("cache=%d", cache), func(t *testing.T) {
			testMapModel(t, cache, 5000)
		})
	}
}

func testMapModel(t *testing.T, cache, steps int) {
	root := t.TempDir()
	opts := PebbleOptions{CacheEntries: cache}
	s := openTestStore(t, filepath.Join(root, "work0"), allGroups, opts)
	defer func() { s.Close() }()
	var m MapState[int64]
	var other ValueState[int64]
	create := func() {
		var err error
		if m, err = NewMapState[int64](s, "m", i64Codec{}); err != nil {
			t.Fatal(err)
		}
		if other, err = NewValueState[int64](s, "m2", i64Codec{}); err != nil {
			t.Fatal(err)
		}
	}
	create()
	model := map[string]map[string]int64{}
	cloneModel := func(model map[string]map[string]int64) map[string]map[string]int64 {
		c := map[string]map[string]int64{}
		for k, mm := range model {
			c[k] = maps.Clone(mm)
		}
		return c
	}
	rng := rand.New(rand.NewSource(int64(cache) * 7))
	key := func() []byte { return []byte(fmt.Sprintf("k%d", rng.Intn(8)))[:1+rng.Intn(2)] }
	mapKey := func() []byte {
		b := make([]byte, rng.Intn(4))
		for i := range b {
			b[i] = "ab\x00\xff"[rng.Intn(4)]
		}
		return b
	}
	sorted := func(k string) []entry {
		var es []entry
		for mk, v := range model[k] {
			es = append(es, entry{mk, v})
		}
		slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.mk, b.mk) })
		return es
	}
	type snap struct {
		dir   string
		model map[string]map[string]int64
	}
	var snaps []snap
	reopen := func(dir string) {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = openTestStore(t, dir, allGroups, opts)
		create()
	}
	for step := 0; step < steps; step++ {
		k, mk := key(), mapKey()
		switch op := rng.Intn(100); {
		case op < 30:
			v := int64(rng.Intn(1000))
			if err := m.Put(k, mk, v); err != nil {
				t.Fatal(err)
			}
			if model[string(k)] == nil {
				model[string(k)] = map[string]int64{}
			}
			model[string(k)][string(mk)] = v
		case op < 42:
			if err := m.Delete(k, mk); err != nil {
				t.Fatal(err)
			}
			delete(model[string(k)], string(mk))
		case op < 45:
			if err := m.Clear(k); err != nil {
				t.Fatal(err)
			}
			delete(model, string(k))
		case op < 47: // unrelated value state in the same store
			if err := other.Put(k, int64(step)); err != nil {
				t.Fatal(err)
			}
		case op < 60:
			v, ok, err := m.Get(k, mk)
			if err != nil {
				t.Fatal(err)
			}
			want, wok := model[string(k)][string(mk)]
			if ok != wok || v != want {
				t.Fatalf("step %d: Get(%q, %q) = %d %v, want %d %v", step, k, mk, v, ok, want, wok)
			}
		case op < 80:
			want := sorted(string(k))
			limit := len(want) + 1
			if rng.Intn(3) == 0 {
				limit = rng.Intn(len(want) + 1)
			}
			var got []entry
			err := m.Range(k, func(mk []byte, v int64) bool {
				got = append(got, entry{string(mk), v})
				if rng.Intn(4) == 0 { // reads inside Range are allowed
					if _, _, err := m.Get(key(), mapKey()); err != nil {
						t.Error(err)
					}
				}
				return len(got) < limit
			})
			if err != nil {
				t.Fatal(err)
			}
			if limit < len(want) {
				want = want[:max(limit, 1)] // fn returning false still saw the entry
			}
			if !slices.Equal(got, want) {
				t.Fatalf("step %d: Range(%q) = %v, want %v", step, k, got, want)
			}
		case op < 83:
			dir := filepath.Join(root, fmt.Sprintf("snap%d", step))
			if _, err := s.Checkpoint(dir); err != nil {
				t.Fatal(err)
			}
			snaps = append(snaps, snap{dir, cloneModel(model)})
		case op < 84 && len(snaps) > 0:
			sn := snaps[rng.Intn(len(snaps))]
			dir := filepath.Join(root, fmt.Sprintf("work%d", step))
			if err := RestorePebble(dir, []RestoreSource{{sn.dir, allGroups}}, allGroups, opts); err != nil {
				t.Fatal(err)
			}
			reopen(dir)
			model = cloneModel(sn.model)
		case op < 85:
			reopen(s.dir)
		}
		if s.size > max(cache, 1)+16 && s.pinned == 0 && cache > 16 {
			t.Fatalf("step %d: cache holds %d entries, bound %d", step, s.size, cache)
		}
	}
	if _, err := s.Checkpoint(filepath.Join(root, "final")); err != nil {
		t.Fatal(err)
	}
	// The DB alone (a fresh store) agrees with the model.
	reopen(s.dir)
	for k := range model {
		var got []entry
		if err := m.Range([]byte(k), func(mk []byte, v int64) bool { got = append(got, entry{string(mk), v}); return true }); err != nil {
			t.Fatal(err)
		}
		if want := sorted(k); !slices.Equal(got, want) {
			t.Fatalf("final Range(%q) = %v, want %v", k, got, want)
		}
	}
}

// fillValues puts n keys "key<i>" -> &box{i, "value-<i>"} into a fresh
// "v" value state of s, keeping only keys in s's key groups.
func fillValues(t testing.TB, v ValueState[*box], kgs KeyGroupRange, n int) map[string]box {
	t.Helper()
	want := map[string]box{}
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("key%d", i)
		if !kgs.Contains(KeyGroup([]byte(k))) {
			continue
		}
		b := box{n: int64(i), s: fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", i%50))}
		if err := v.Put([]byte(k), &b); err != nil {
			t.Fatal(err)
		}
		want[k] = b
	}
	return want
}

func checkValues(t testing.TB, v ValueState[*box], want map[string]box) {
	t.Helper()
	for k, w := range want {
		b, ok, err := v.Get([]byte(k))
		if err != nil || !ok || *b != w {
			t.Fatalf("Get(%q) = %v %v %v, want %v", k, b, ok, err, w)
		}
	}
}

// TestPebbleIncrementalSnapshot: after a first snapshot of 10,000 keys,
// changing one key makes a second snapshot whose new bytes are a small
// part of its total; both snapshots restore to their own contents.
func TestPebbleIncrementalSnapshot(t *testing.T) {
	root := t.TempDir()
	s := openTestStore(t, filepath.Join(root, "work"), allGroups, PebbleOptions{CacheEntries: 1000})
	defer s.Close()
	v, err := NewValueState[*box](s, "v", boxCodec{})
	if err != nil {
		t.Fatal(err)
	}
	want1 := fillValues(t, v, allGroups, 10_000)
	i1, err := s.Checkpoint(filepath.Join(root, "c1"))
	if err != nil {
		t.Fatal(err)
	}
	want2 := maps.Clone(want1)
	b, _, _ := v.Get([]byte("key77"))
	b.s = "changed"
	if err := v.Put([]byte("key77"), b); err != nil {
		t.Fatal(err)
	}
	want2["key77"] = *b
	i2, err := s.Checkpoint(filepath.Join(root, "c2"))
	if err != nil {
		t.Fatal(err)
	}
	i3, err := s.Checkpoint(filepath.Join(root, "c3")) // nothing changed
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot 1: total %d B, new %d B; after changing 1 of 10,000 keys: total %d B, new %d B; unchanged: total %d B, new %d B",
		i1.TotalBytes, i1.NewBytes, i2.TotalBytes, i2.NewBytes, i3.TotalBytes, i3.NewBytes)
	if i1.NewBytes != i1.TotalBytes || i1.TotalBytes < 100_000 {
		t.Fatalf("first snapshot: %+v", i1)
	}
	if i2.NewBytes*10 > i2.TotalBytes {
		t.Fatalf("incremental snapshot not small: %+v", i2)
	}
	for i, c := range []struct {
		dir  string
		want map[string]box
	}{{i1.Dir, want1}, {i2.Dir, want2}} {
		work := filepath.Join(root, fmt.Sprintf("restored%d", i))
		start := time.Now()
		if err := RestorePebble(work, []RestoreSource{{c.dir, allGroups}}, allGroups, PebbleOptions{}); err != nil {
			t.Fatal(err)
		}
		r := openTestStore(t, work, allGroups, PebbleOptions{})
		t.Logf("restore of %s (same range, hard links) + open: %v", filepath.Base(c.dir), time.Since(start))
		rv, err := NewValueState[*box](r, "v", boxCodec{})
		if err != nil {
			t.Fatal(err)
		}
		checkValues(t, rv, c.want)
		if n := dbEntries(t, r); n != len(c.want) {
			t.Fatalf("restored DB has %d entries, want %d", n, len(c.want))
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Snapshots are independent of the working DB and of each other.
	if err := os.RemoveAll(i1.Dir); err != nil {
		t.Fatal(err)
	}
	if err := RestorePebble(filepath.Join(root, "again"), []RestoreSource{{i2.Dir, allGroups}}, allGroups, PebbleOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestPebbleRescale snapshots two stores of parallelism 2 and restores
// them at parallelism 1 and 4: each restored store holds exactly the
// keys of its key groups, values and maps intact.
func TestPebbleRescale(t *testing.T) {
	root := t.TempDir()
	const n = 20_000
	opts := PebbleOptions{CacheEntries: 500}
	var sources []RestoreSource
	want := map[string]box{}
	wantMap := map[string][]entry{}
	for sub := 0; sub < 2; sub++ {
		kgs := RangeFor(sub, 2)
		s := openTestStore(t, filepath.Join(root, fmt.Sprintf("work%d", sub)), kgs, opts)
		v, err := NewValueState[*box](s, "v", boxCodec{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewMapState[int64](s, "m", i64Codec{})
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(want, fillValues(t, v, kgs, n))
		for i := 0; i < n/10; i++ {
			k := fmt.Sprintf("mkey%d", i)
			if !kgs.Contains(KeyGroup([]byte(k))) {
				continue
			}
			for j := 0; j < i%5; j++ {
				mk := fmt.Sprintf("e%d", j)
				if err := m.Put([]byte(k), []byte(mk), int64(i*10+j)); err != nil {
					t.Fatal(err)
				}
				wantMap[k] = append(wantMap[k], entry{mk, int64(i*10 + j)})
			}
		}
		dir := filepath.Join(root, fmt.Sprintf("ckpt%d", sub))
		if _, err := s.Checkpoint(dir); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		sources = append(sources, RestoreSource{dir, kgs})
	}
	for _, p := range []int{1, 2, 3, 4} {
		total := 0
		for sub := 0; sub < p; sub++ {
			kgs := RangeFor(sub, p)
			work := filepath.Join(root, fmt.Sprintf("p%d-%d", p, sub))
			start := time.Now()
			if err := RestorePebble(work, sources, kgs, opts); err != nil {
				t.Fatal(err)
			}
			el := time.Since(start)
			s := openTestStore(t, work, kgs, opts)
			v, err := NewValueState[*box](s, "v", boxCodec{})
			if err != nil {
				t.Fatal(err)
			}
			m, err := NewMapState[int64](s, "m", i64Codec{})
			if err != nil {
				t.Fatal(err)
			}
			mine := 0
			for k, w := range want {
				b, ok, err := v.Get([]byte(k))
				if err != nil {
					t.Fatal(err)
				}
				if kgs.Contains(KeyGroup([]byte(k))) {
					mine++
					if !ok || *b != w {
						t.Fatalf("p=%d subtask %d: Get(%q) = %v %v, want %v", p, sub, k, b, ok, w)
					}
				} else if ok {
					t.Fatalf("p=%d subtask %d: holds %q of key group %d outside [%d, %d)", p, sub, k, KeyGroup([]byte(k)), kgs.Start, kgs.End)
				}
			}
			mineMap := 0
			for k, w := range wantMap {
				var got []entry
				if err := m.Range([]byte(k), func(mk []byte, v int64) bool { got = append(got, entry{string(mk), v}); return true }); err != nil {
					t.Fatal(err)
				}
				if !kgs.Contains(KeyGroup([]byte(k))) {
					w = nil
				}
				mineMap += len(w)
				if !slices.Equal(got, w) {
					t.Fatalf("p=%d subtask %d: Range(%q) = %v, want %v", p, sub, k, got, w)
				}
			}
			if c := dbEntries(t, s); c != mine+mineMap {
				t.Fatalf("p=%d subtask %d: DB holds %d entries, want %d", p, sub, c, mine+mineMap)
			}
			total += mine
			t.Logf("p=%d subtask %d [%d, %d): %d values + %d map entries, restore %v", p, sub, kgs.Start, kgs.End, mine, mineMap, el)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
		if total != len(want) {
			t.Fatalf("p=%d: restored %d keys in all, want %d", p, total, len(want))
		}
	}
	// A store cannot be opened with another range than it was restored for.
	if _, err := OpenPebbleStore(filepath.Join(root, "p4-0"), "op", RangeFor(1, 4), opts); err == nil {
		t.Fatal("opened a store with the wrong key-group range")
	}
}

// TestPebbleRestoreErrors: missing, incomplete and damaged checkpoints
// and inconsistent sources fail with an error naming the directory, and
// leave no working directory behind.
func TestPebbleRestoreErrors(t *testing.T) {
	root := t.TempDir()
	s := openTestStore(t, filepath.Join(root, "work"), allGroups, PebbleOptions{CacheEntries: 100})
	v, err := NewValueState[*box](s, "v", boxCodec{})
	if err != nil {
		t.Fatal(err)
	}
	fillValues(t, v, allGroups, 5000)
	good, err := s.Checkpoint(filepath.Join(root, "good"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// damaged copies the good checkpoint and applies f to the copy.
	damaged := func(name string, f func(dir string)) string {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		ents, _ := os.ReadDir(good.Dir)
		for _, e := range ents {
			if err := copyFile(filepath.Join(good.Dir, e.Name()), filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
		f(dir)
		return dir
	}
	sst := func(dir string) string {
		m, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		if len(m) == 0 {
			t.Fatal("checkpoint without SSTs")
		}
		return m[0]
	}
	flip := func(path string, at func(size int64) int64) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data[at(int64(len(data)))] ^= 0x10
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	half := RangeFor(0, 2)
	cases := []struct {
		name    string
		sources []RestoreSource
		kgs     KeyGroupRange
		want    string // in the error
	}{
		{"missing dir", []RestoreSource{{filepath.Join(root, "nope"), allGroups}}, allGroups, "nope"},
		{"empty dir", []RestoreSource{{damaged("empty", func(d string) {
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				os.Remove(filepath.Join(d, e.Name()))
			}
		}), allGroups}}, allGroups, "empty"},
		{"no manifest", []RestoreSource{{damaged("nomanifest", func(d string) { os.Remove(filepath.Join(d, ckptManifestName)) }), allGroups}}, allGroups, "nomanifest"},
		{"truncated sst", []RestoreSource{{damaged("truncsst", func(d string) {
			p := sst(d)
			fi, _ := os.Stat(p)
			os.Truncate(p, fi.Size()/2)
		}), allGroups}}, allGroups, "truncsst"},
		{"flipped sst", []RestoreSource{{damaged("flipsst", func(d string) { flip(sst(d), func(n int64) int64 { return n / 3 }) }), allGroups}}, allGroups, "flipsst"},
		{"flipped sst rescale", []RestoreSource{{damaged("flipsst2", func(d string) { flip(sst(d), func(n int64) int64 { return n / 3 }) }), allGroups}}, half, "flipsst2"},
		{"missing sst", []RestoreSource{{damaged("nosst", func(d string) { os.Remove(sst(d)) }), allGroups}}, allGroups, "nosst"},
		{"flipped manifest", []RestoreSource{{damaged("flipmanifest", func(d string) {
			flip(filepath.Join(d, ckptManifestName), func(n int64) int64 { return n / 2 })
		}), allGroups}}, allGroups, "flipmanifest"},
		{"truncated manifest", []RestoreSource{{damaged("truncmanifest", func(d string) {
			p := filepath.Join(d, ckptManifestName)
			fi, _ := os.Stat(p)
			os.Truncate(p, fi.Size()-3)
		}), allGroups}}, allGroups, "truncmanifest"},
		{"wrong range", []RestoreSource{{good.Dir, half}}, half, "good"},
		{"gap", []RestoreSource{{good.Dir, RangeFor(1, 2)}}, allGroups, "no source"},
		{"overlap", []RestoreSource{{good.Dir, allGroups}, {good.Dir + "x", half}}, half, "overlap"},
	}
	for i, c := range cases {
		work := filepath.Join(root, fmt.Sprintf("w%d", i))
		err := RestorePebble(work, c.sources, c.kgs, PebbleOptions{})
		if err == nil {
			t.Fatalf("%s: restore succeeded", c.name)
		}
		if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "state: ") {
			t.Fatalf("%s: error %q does not name %q", c.name, err, c.want)
		}
		if _, serr := os.Stat(work); serr == nil {
			t.Fatalf("%s: %s left behind", c.name, work)
		}
		t.Logf("%s: %v", c.name, err)
	}
	// An existing working directory is refused.
	if err := os.Mkdir(filepath.Join(root, "exists"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := RestorePebble(filepath.Join(root, "exists"), []RestoreSource{{good.Dir, allGroups}}, allGroups, PebbleOptions{}); err == nil {
		t.Fatal("restored into an existing directory")
	}
	// The good checkpoint still restores, in both modes.
	for _, kgs := range []KeyGroupRange{allGroups, half} {
		if err := RestorePebble(filepath.Join(root, fmt.Sprintf("ok%d", kgs.End)), []RestoreSource{{good.Dir, allGroups}}, kgs, PebbleOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestPebbleTTL: values and map entries expire TTL after their last
// write (reads do not refresh them), through eviction and restore, and
// the Snapshot cleanup removes expired entries nobody reads.
func TestPebbleTTL(t *testing.T) {
	for _, cache := range []int{2, 1000} {
		t.Run(fmt.Sprintf("cache=%d", cache), func(t *testing.T) {
			root := t.TempDir()
			clk := &fakeClock{t: time.Unix(1_700_000_000, 0)}
			opts := PebbleOptions{CacheEntries: cache, TTL: time.Minute, Clock: clk.now}
			s := openTestStore(t, filepath.Join(root, "work"), allGroups, opts)
			defer func() { s.Close() }()
			v, _ := NewValueState[int64](s, "v", i64Codec{})
			m, _ := NewMapState[int64](s, "m", i64Codec{})
			testTTL(t, clk, v, m, func() {
				dir := filepath.Join(root, fmt.Sprintf("c%d", clk.t.UnixMilli()))
				if _, err := s.Checkpoint(dir); err != nil {
					t.Fatal(err)
				}
			})
			// An expired entry that is read is deleted then (cleanup off).
			s.opts.TTLCleanupKeys = 0
			if err := v.Put([]byte("lazy"), 1); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 10; i++ { // push it out of the small cache
				_, _, _ = v.Get([]byte(fmt.Sprint("push", i)))
			}
			if _, err := s.Checkpoint(filepath.Join(root, "lazy1")); err != nil {
				t.Fatal(err)
			}
			n0 := dbEntries(t, s)
			clk.advance(time.Minute)
			if _, ok, _ := v.Get([]byte("lazy")); ok {
				t.Fatal("lazy outlived its TTL")
			}
			if _, err := s.Checkpoint(filepath.Join(root, "lazy2")); err != nil {
				t.Fatal(err)
			}
			if n1 := dbEntries(t, s); cache < 10 && n1 != n0-1 {
				t.Fatalf("reading an expired entry left it in the DB: %d entries before, %d after", n0, n1)
			}
			// Expired entries nobody reads are removed by the snapshot cleanup.
			for i := 0; i < 100; i++ {
				if err := v.Put([]byte(fmt.Sprintf("old%d", i)), 1); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Checkpoint(filepath.Join(root, "before")); err != nil {
				t.Fatal(err)
			}
			before := dbEntries(t, s)
			clk.advance(time.Minute)
			s.opts.TTLCleanupKeys = 30 // a few passes
			for i := 0; i < 10; i++ {
				if _, err := s.Checkpoint(filepath.Join(root, fmt.Sprintf("after%d", i))); err != nil {
					t.Fatal(err)
				}
			}
			if after := dbEntries(t, s); before < 100 || after != 0 {
				t.Fatalf("TTL cleanup: %d entries before, %d after", before, after)
			}
		})
	}
}

// testTTL checks TTL semantics on a value and a map state driven by clk;
// between checks it calls mid (a snapshot, say).
func testTTL(t *testing.T, clk *fakeClock, v ValueState[int64], m MapState[int64], mid func()) {
	t.Helper()
	get := func(k string) (int64, bool) {
		x, ok, err := v.Get([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		return x, ok
	}
	rangeAll := func(k string) []entry {
		var got []entry
		if err := m.Range([]byte(k), func(mk []byte, x int64) bool { got = append(got, entry{string(mk), x}); return true }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(v.Put([]byte("a"), 1))
	must(v.Put([]byte("b"), 2))
	must(m.Put([]byte("k"), []byte("x"), 10))
	must(m.Put([]byte("k"), []byte("y"), 20))
	// Some other keys, to push the tiny caches around.
	for i := 0; i < 10; i++ {
		must(v.Put([]byte(fmt.Sprintf("filler%d", i)), int64(i)))
	}
	mid()
	clk.advance(30 * time.Second)
	if x, ok := get("a"); !ok || x != 1 {
		t.Fatalf("a at 30s: %d %v", x, ok)
	}
	must(v.Put([]byte("b"), 3))               // rewrite: b lives until 90s
	must(m.Put([]byte("k"), []byte("y"), 21)) // and so does k/y
	mid()
	clk.advance(30*time.Second - time.Millisecond)
	if x, ok := get("a"); !ok || x != 1 {
		t.Fatalf("a just before its TTL: %d %v", x, ok)
	}
	if got := rangeAll("k"); !slices.Equal(got, []entry{{"x", 10}, {"y", 21}}) {
		t.Fatalf("Range just before the TTL: %v", got)
	}
	clk.advance(time.Millisecond) // 60s: a and k/x expire (reads did not refresh them)
	if _, ok := get("a"); ok {
		t.Fatal("a outlived its TTL")
	}
	if x, ok := get("b"); !ok || x != 3 {
		t.Fatalf("rewritten b: %d %v", x, ok)
	}
	if _, ok, _ := m.Get([]byte("k"), []byte("x")); ok {
		t.Fatal("k/x outlived its TTL")
	}
	if got := rangeAll("k"); !slices.Equal(got, []entry{{"y", 21}}) {
		t.Fatalf("Range after k/x expired: %v", got)
	}
	mid()
	if _, ok := get("a"); ok {
		t.Fatal("a came back")
	}
	clk.advance(30 * time.Second) // 90s
	if _, ok := get("b"); ok {
		t.Fatal("b outlived its TTL")
	}
	if got := rangeAll("k"); len(got) != 0 {
		t.Fatalf("Range after everything expired: %v", got)
	}
	must(v.Put([]byte("a"), 5)) // a new value after expiry
	mid()
	if x, ok := get("a"); !ok || x != 5 {
		t.Fatalf("a rewritten after expiry: %d %v", x, ok)
	}
}

// TestKeyFilter: no false negatives across growth and merging, and a
// low false-positive rate.
func TestKeyFilter(t *testing.T) {
	var f, g keyFilter
	const n = 300_000
	for i := 0; i < n; i++ {
		f.add(hashStateKey([]byte(fmt.Sprintf("a%d", i))))
		g.add(hashStateKey([]byte(fmt.Sprintf("b%d", i))))
	}
	f.merge(&g)
	f.add(hashStateKey([]byte("after merge")))
	for i := 0; i < n; i++ {
		for _, p := range []string{"a", "b"} {
			if !f.mayContain(hashStateKey([]byte(fmt.Sprintf("%s%d", p, i)))) {
				t.Fatalf("false negative for %s%d", p, i)
			}
		}
	}
	if !f.mayContain(hashStateKey([]byte("after merge"))) {
		t.Fatal("false negative after merge")
	}
	fp := 0
	for i := 0; i < n; i++ {
		if f.mayContain(hashStateKey([]byte(fmt.Sprintf("c%d", i)))) {
			fp++
		}
	}
	rate := float64(fp) / n
	t.Logf("%d keys: %d sub-filters, %d KiB, false positives %.2f%%", 2*n+1, len(f.subs), f.bytes()>>10, 100*rate)
	if rate > 0.05 {
		t.Fatalf("false-positive rate %.2f%%", 100*rate)
	}
}

// TestPebbleReopenFilter: after a reopen, once the background scan has
// built the key filter, keys in the DB are found (value and map state)
// and new keys are answered without the DB.
func TestPebbleReopenFilter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	s := openTestStore(t, dir, allGroups, PebbleOptions{CacheEntries: 10})
	v, _ := NewValueState[int64](s, "v", i64Codec{})
	m, _ := NewMapState[int64](s, "m", i64Codec{})
	const n = 5000
	for i := 0; i < n; i++ {
		_ = v.Put([]byte(fmt.Sprint(i)), int64(i))
		_ = m.Put([]byte(fmt.Sprint(i)), []byte("x"), int64(i))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestStore(t, dir, allGroups, PebbleOptions{CacheEntries: 10})
	defer s.Close()
	v, _ = NewValueState[int64](s, "v", i64Codec{})
	m, _ = NewMapState[int64](s, "m", i64Codec{})
	deadline := time.Now().Add(10 * time.Second)
	for !s.filterReady {
		if time.Now().After(deadline) {
			t.Fatal("the key filter scan did not finish")
		}
		time.Sleep(time.Millisecond)
		s.mayExist([]byte("probe"))
	}
	for i := 0; i < n; i++ {
		if x, ok, err := v.Get([]byte(fmt.Sprint(i))); err != nil || !ok || x != int64(i) {
			t.Fatalf("Get(%d) = %d %v %v", i, x, ok, err)
		}
		var got []entry
		_ = m.Range([]byte(fmt.Sprint(i)), func(mk []byte, x int64) bool { got = append(got, entry{string(mk), x}); return true })
		if !slices.Equal(got, []entry{{"x", int64(i)}}) {
			t.Fatalf("Range(%d) = %v", i, got)
		}
		if _, ok, _ := v.Get([]byte(fmt.Sprint("new", i))); ok {
			t.Fatal("a new key exists")
		}
	}
}
