package connectors

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/streamsql/streamsql/types"
)

// countingLookuper returns (k, k*10) for every key and counts its calls;
// it fails the first failures calls.
type countingLookuper struct {
	calls, failures int
}

func (c *countingLookuper) Open(context.Context) error { return nil }
func (c *countingLookuper) Close() error               { return nil }
func (c *countingLookuper) Lookup(_ context.Context, key types.Row) ([]types.Row, error) {
	c.calls++
	if c.failures > 0 {
		c.failures--
		return nil, errors.New("transient")
	}
	k := key[0].Int()
	return []types.Row{{types.NewInt(k), types.NewInt(k * 10)}}, nil
}

func key(k int64) types.Row { return types.Row{types.NewInt(k)} }

func TestPartialCacheHitsEvictionExpiry(t *testing.T) {
	o, err := ParseLookupOptions(map[string]string{"lookup.cache": "PARTIAL",
		"lookup.partial-cache.max-rows": "2", "lookup.partial-cache.expire-after-write": "10 s"})
	if err != nil {
		t.Fatal(err)
	}
	inner := &countingLookuper{}
	var st LookupStats
	l := NewCachedLookuper(inner, o, &st).(*cachedLookuper)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	ctx := context.Background()
	get := func(k int64) {
		t.Helper()
		rows, err := l.Lookup(ctx, key(k))
		if err != nil || len(rows) != 1 || rows[0][1].Int() != k*10 {
			t.Fatalf("lookup %d: %v %v", k, rows, err)
		}
	}
	// 1 miss, 1 hit, 2 miss, 1 hit (1 most recent), 3 miss evicts 2 (LRU),
	// 1 hit, 2 miss again.
	for _, k := range []int64{1, 1, 2, 1, 3, 1, 2} {
		get(k)
	}
	if h, m := st.Hits.Load(), st.Misses.Load(); h != 3 || m != 4 || inner.calls != 4 {
		t.Fatalf("hits %d misses %d calls %d, want 3, 4, 4", h, m, inner.calls)
	}
	// After 10 s every entry has expired: 2 is loaded again.
	now = now.Add(10 * time.Second)
	get(2)
	if st.Misses.Load() != 5 {
		t.Fatalf("expired entry must be a miss: misses %d", st.Misses.Load())
	}
}

// expire-after-access keeps an entry while it is read: key 1, read
// every 4 s, stays past 10 s; key 2, loaded at the start and not read
// again, is gone 5 s later. With expire-after-write as well, key 1 goes
// when it reaches its write expiry, read or not.
func TestPartialCacheExpireAfterAccess(t *testing.T) {
	o, err := ParseLookupOptions(map[string]string{"lookup.cache": "PARTIAL", "lookup.partial-cache.expire-after-access": "5 s"})
	if err != nil || o.ExpireAfterAccess != 5*time.Second {
		t.Fatalf("%+v %v", o, err)
	}
	run := func(o LookupOptions) *LookupStats {
		inner := &countingLookuper{}
		st := &LookupStats{}
		l := NewCachedLookuper(inner, o, st).(*cachedLookuper)
		now := time.Unix(1000, 0)
		l.now = func() time.Time { return now }
		get := func(k int64) {
			t.Helper()
			if rows, err := l.Lookup(context.Background(), key(k)); err != nil || len(rows) != 1 || rows[0][1].Int() != k*10 {
				t.Fatalf("lookup %d: %v %v", k, rows, err)
			}
		}
		get(1) // miss
		get(2) // miss
		for i := 0; i < 4; i++ {
			now = now.Add(4 * time.Second)
			get(1) // t = 4, 8, 12, 16
		}
		get(2) // t = 16: not read since t = 0
		return st
	}
	if st := run(o); st.Hits.Load() != 4 || st.Misses.Load() != 3 {
		t.Fatalf("access expiry: hits %d misses %d, want 4 and 3", st.Hits.Load(), st.Misses.Load())
	}
	o.ExpireAfterWrite = 10 * time.Second // key 1 written at 0, then again at 12
	if st := run(o); st.Hits.Load() != 3 || st.Misses.Load() != 4 {
		t.Fatalf("both expiries: hits %d misses %d, want 3 and 4", st.Hits.Load(), st.Misses.Load())
	}
}

func TestLookupRetriesAndOptions(t *testing.T) {
	inner := &countingLookuper{failures: 2}
	o, _ := ParseLookupOptions(map[string]string{"lookup.max-retries": "2"})
	var st LookupStats
	l := NewCachedLookuper(inner, o, &st)
	if _, err := l.Lookup(context.Background(), key(1)); err != nil || st.Retries.Load() != 2 {
		t.Fatalf("two failures with 2 retries must succeed: %v, retries %d", err, st.Retries.Load())
	}
	inner.failures = 5
	o.MaxRetries = 0
	if _, err := NewCachedLookuper(inner, o, nil).Lookup(context.Background(), key(1)); err == nil {
		t.Fatal("a failure without retries must fail")
	}
	for _, bad := range []map[string]string{
		{"lookup.cache": "FULL"},
		{"lookup.cache": "x"},
		{"lookup.partial-cache.max-rows": "5"}, // needs PARTIAL
		{"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "0"},
		{"lookup.cache": "PARTIAL", "lookup.partial-cache.expire-after-write": "soon"},
		{"lookup.partial-cache.expire-after-access": "1 s"}, // needs PARTIAL
		{"lookup.max-retries": "-1"},
	} {
		if _, err := ParseLookupOptions(bad); err == nil {
			t.Errorf("%v must be rejected", bad)
		}
	}
}

func TestLoadingLookuper(t *testing.T) {
	rows := []types.Row{
		{types.NewInt(1), types.NewString("a")},
		{types.NewInt(2), types.NewString("b")},
		{types.NewInt(1), types.NewString("c")},
		{types.NullValue, types.NewString("n")},
	}
	l := NewLoadingLookuper([]int{0}, func(context.Context) ([]types.Row, error) { return rows, nil })
	ctx := context.Background()
	if _, err := l.Lookup(ctx, key(1)); err == nil {
		t.Fatal("lookup before Open must fail")
	}
	if err := l.Open(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := l.Lookup(ctx, key(1))
	if len(got) != 2 || got[0][1].Str() != "a" || got[1][1].Str() != "c" {
		t.Fatalf("key 1: %v", got)
	}
	if got, _ := l.Lookup(ctx, key(3)); len(got) != 0 {
		t.Fatalf("key 3: %v", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
