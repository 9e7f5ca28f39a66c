package state

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// benchStore returns a store holding n keys (written and flushed to the
// DB) behind a cache of cache entries.
func benchStore(b *testing.B, n, cache int) (*PebbleStore, ValueState[*bigGroup]) {
	b.Helper()
	s, err := OpenPebbleStore(filepath.Join(b.TempDir(), "w"), "bench", allGroups, PebbleOptions{CacheEntries: cache, BlockCacheBytes: benchBlockCache})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	v, err := NewValueState[*bigGroup](s, "groups", bigGroupCodec{})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := v.Put(benchKey(i), &bigGroup{count: 1, sum: int64(i)}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.Checkpoint(filepath.Join(b.TempDir(), "c")); err != nil {
		b.Fatal(err)
	}
	return s, v
}

var benchKeyBuf [9]byte

func benchKey(i int) []byte {
	benchKeyBuf[0] = 2
	binary.BigEndian.PutUint64(benchKeyBuf[1:], uint64(uint32(i)*2654435761))
	return benchKeyBuf[:]
}

// GroupAgg's pattern on keys that are all cached.
func BenchmarkPebbleValueCached(b *testing.B) {
	_, v := benchStore(b, 10_000, 100_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := benchKey(i % 10_000)
		g, _, _ := v.Get(k)
		g.count++
		_ = v.Put(k, g)
	}
}

// GroupAgg's pattern on new keys: a DB miss and, later, an eviction.
func BenchmarkPebbleValueNewKeys(b *testing.B) {
	_, v := benchStore(b, 0, 10_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := benchKey(i)
		g, ok, _ := v.Get(k)
		if !ok {
			g = &bigGroup{}
		}
		g.count++
		_ = v.Put(k, g)
	}
}

// Reads of keys in the DB but not in the cache.
func BenchmarkPebbleValueDBHit(b *testing.B) {
	const n = 200_000
	_, v := benchStore(b, n, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := v.Get(benchKey(i * 7919 % n)); !ok {
			b.Fatal("missing")
		}
	}
}

// Reads of keys in neither the cache nor the DB.
func BenchmarkPebbleValueDBMiss(b *testing.B) {
	const n = 200_000
	_, v := benchStore(b, n, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, _ := v.Get(benchKey(n + i)); ok {
			b.Fatal("found")
		}
	}
}

func BenchmarkMemoryValueCached(b *testing.B) {
	v, _ := NewValueState[*bigGroup](NewMemoryStore("m"), "groups", bigGroupCodec{})
	for i := 0; i < 10_000; i++ {
		_ = v.Put(benchKey(i), &bigGroup{})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := benchKey(i % 10_000)
		g, _, _ := v.Get(k)
		g.count++
		_ = v.Put(k, g)
	}
}

var benchBlockCache = func() int64 {
	mb, _ := strconv.Atoi(os.Getenv("STREAMSQL_BENCH_BLOCK_MB"))
	return int64(mb) << 20
}()
