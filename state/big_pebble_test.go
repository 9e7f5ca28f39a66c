package state

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bigGroup is a GROUP BY's per-key state: a count and a sum.
type bigGroup struct{ count, sum int64 }

type bigGroupCodec struct{}

func (bigGroupCodec) Encode(dst []byte, g *bigGroup) []byte {
	return binary.AppendVarint(binary.AppendVarint(dst, g.count), g.sum)
}

func (bigGroupCodec) Decode(b []byte) (*bigGroup, error) {
	c, n := binary.Varint(b)
	if n <= 0 {
		return nil, errors.New("bad group")
	}
	s, m := binary.Varint(b[n:])
	if m <= 0 || n+m != len(b) {
		return nil, errors.New("bad group")
	}
	return &bigGroup{count: c, sum: s}, nil
}

// procStatus returns a field of /proc/self/status in KiB (0 if absent).
func procStatus(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// TestPebbleBigState inserts N distinct keys (STREAMSQL_BIG_N, default
// 20,000,000) through a value state with a 100,000-entry cache, the way
// GroupAgg does (Get, mutate, Put), and reports peak RSS (VmHWM) and the
// DB size. It runs only with STREAMSQL_BIG=1 and without -short:
//
//	STREAMSQL_BIG=1 go test -run TestPebbleBigState -timeout 0 -v ./state/
//
// STREAMSQL_BIG_DIR chooses the directory (default: a test temp dir).
func TestPebbleBigState(t *testing.T) {
	if testing.Short() || os.Getenv("STREAMSQL_BIG") != "1" {
		t.Skip("set STREAMSQL_BIG=1 (and no -short) to run")
	}
	n := 20_000_000
	if s := os.Getenv("STREAMSQL_BIG_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	root := os.Getenv("STREAMSQL_BIG_DIR")
	if root == "" {
		root = t.TempDir()
	} else {
		root = filepath.Join(root, strconv.FormatInt(time.Now().UnixNano(), 36))
		defer os.RemoveAll(root)
	}
	work := filepath.Join(root, "work")
	opts := PebbleOptions{CacheEntries: 100_000}
	if mb, _ := strconv.Atoi(os.Getenv("STREAMSQL_BIG_BLOCK_MB")); mb > 0 {
		opts.BlockCacheBytes = int64(mb) << 20
	}
	s, err := OpenPebbleStore(work, "big", allGroups, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := NewValueState[*bigGroup](s, "groups", bigGroupCodec{})
	if err != nil {
		t.Fatal(err)
	}
	// A key like types.EncodeKey of one BIGINT column; keys arrive in a
	// scattered order (a bijection of i over uint32).
	key := make([]byte, 9)
	keyOf := func(i int) []byte {
		key[0] = 2
		binary.BigEndian.PutUint64(key[1:], uint64(uint32(i)*2654435761))
		return key
	}
	update := func(i int) {
		k := keyOf(i)
		g, ok, err := v.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			g = &bigGroup{}
		}
		g.count++
		g.sum += int64(i)
		if err := v.Put(k, g); err != nil {
			t.Fatal(err)
		}
	}
	report := func(what string, start time.Time, done int) {
		el := time.Since(start)
		t.Logf("%s: %d in %v (%.0f/s), RSS %d MiB, peak RSS %d MiB, DB %d MiB",
			what, done, el.Round(time.Millisecond), float64(done)/el.Seconds(),
			procStatus("VmRSS")>>10, procStatus("VmHWM")>>10, dirBytes(work)>>20)
	}
	start := time.Now()
	step := max(n/10, 1)
	snaps := 0
	for i := 0; i < n; i++ {
		update(i)
		if (i+1)%step == 0 {
			report("inserted", start, i+1)
		}
		if (i+1)%(n/2) == 0 {
			snaps++
			st := time.Now()
			info, err := s.Checkpoint(filepath.Join(root, "ckpt"+strconv.Itoa(snaps)))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("snapshot %d: %v, total %d MiB, new %d MiB", snaps, time.Since(st).Round(time.Millisecond), info.TotalBytes>>20, info.NewBytes>>20)
		}
	}
	// Updates of existing keys, mostly cache misses that read the DB.
	const m = 1_000_000
	start = time.Now()
	for j := 0; j < m; j++ {
		update(int(uint64(j) * 7919 % uint64(n)))
	}
	report("updated existing keys", start, m)
	if os.Getenv("STREAMSQL_BIG_METRICS") != "" {
		t.Logf("pebble metrics:\n%s", s.db.Metrics())
	}
	st := time.Now()
	info, err := s.Checkpoint(filepath.Join(root, "ckpt-final"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("final snapshot: %v, total %d MiB, new %d MiB", time.Since(st).Round(time.Millisecond), info.TotalBytes>>20, info.NewBytes>>20)
	// Spot checks.
	for _, i := range []int{0, 1, n / 3, n - 1} {
		g, ok, err := v.Get(keyOf(i))
		if err != nil || !ok || g.count < 1 {
			t.Fatalf("key %d: %v %v %v", i, g, ok, err)
		}
	}
	st = time.Now()
	restored := filepath.Join(root, "restored")
	if err := RestorePebble(restored, []RestoreSource{{info.Dir, allGroups}}, allGroups, PebbleOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("restore (same range, verify + hard links): %v", time.Since(st).Round(time.Millisecond))
	st = time.Now()
	if err := RestorePebble(filepath.Join(root, "rescaled"), []RestoreSource{{info.Dir, allGroups}}, RangeFor(0, 2), PebbleOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("restore (rescale to half the key groups, copy): %v", time.Since(st).Round(time.Millisecond))
	t.Logf("peak RSS (VmHWM) %d MiB; DB %d MiB on disk", procStatus("VmHWM")>>10, dirBytes(work)>>20)
}
