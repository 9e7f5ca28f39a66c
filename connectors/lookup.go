package connectors

import (
	"container/list"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/types"
)

// Lookup joins (processing-time temporal joins, Flink's
// `JOIN r FOR SYSTEM_TIME AS OF o.proc_time`) read the right table by
// key, one left row at a time, instead of scanning it: the table's
// ScanSource implements LookupSource.

// LookupSource is an optional interface of ScanSources whose rows can be
// looked up by key.
type LookupSource interface {
	ScanSource
	// Lookup validates that the table can be looked up by the columns
	// keys (indexes into the table's columns, in the order the key rows
	// of Lookuper.Lookup will hold them) and returns the Lookuper of one
	// subtask. The planner calls it once per subtask of the join.
	Lookup(keys []int) (Lookuper, error)
}

// Lookuper looks rows up by key for one subtask of a lookup join.
//
// Lifecycle: Open once before the first Lookup; then Lookup from one
// goroutine, any number of times; then Close once, always (also when
// Open failed).
type Lookuper interface {
	// Open connects or loads what the lookups need.
	Open(ctx context.Context) error
	// Lookup returns the rows whose key columns equal key (one value
	// per key column, of the table's column types), each with all the
	// table's columns; none is an empty result. The caller may keep the
	// rows but must not modify them. Key equality is SQL equality; the
	// caller never looks up a key holding NULL.
	Lookup(ctx context.Context, key types.Row) ([]types.Row, error)
	// Close releases connections and memory.
	Close() error
}

// LookupOptionDefs are the lookup options, with Flink's names; a
// connector whose source implements LookupSource and that caches with
// NewCachedLookuper lists them among its options.
func LookupOptionDefs() []OptionDef {
	return []OptionDef{
		{Key: "lookup.cache", Default: "NONE", Description: "'NONE' or 'PARTIAL': cache looked-up rows per join subtask"},
		{Key: "lookup.partial-cache.max-rows", Kind: config.Int, Min: 1, Description: "with a PARTIAL cache, the most keys it holds (least recently used ones go first)"},
		{Key: "lookup.partial-cache.expire-after-write", Kind: config.Duration, Description: "with a PARTIAL cache, how long an entry stays after it was loaded (e.g. '10 min'); unset keeps it"},
		{Key: "lookup.partial-cache.expire-after-access", Kind: config.Duration, Description: "with a PARTIAL cache, how long an entry stays after it was last read or loaded (e.g. '1 min'); unset keeps it. With both expiries, an entry goes at the first one reached"},
		{Key: "lookup.partial-cache.cache-missing-key", Kind: config.Bool, Default: "true", Description: "with a PARTIAL cache, also cache keys that have no rows"},
		{Key: "lookup.max-retries", Kind: config.Int, Default: "3", Description: "how many times a failed lookup is retried before the job fails"},
	}
}

// LookupOptions are the parsed lookup options.
type LookupOptions struct {
	Partial          bool          // 'lookup.cache' = 'PARTIAL'
	MaxRows          int           // 0: unbounded
	ExpireAfterWrite time.Duration // 0: never
	// ExpireAfterAccess: an entry not read (or loaded) for this long is
	// gone; 0: never.
	ExpireAfterAccess time.Duration
	CacheMissingKey   bool
	MaxRetries        int
}

// ParseLookupOptions reads the lookup options of a table's options.
func ParseLookupOptions(opts map[string]string) (LookupOptions, error) {
	o := LookupOptions{CacheMissingKey: true, MaxRetries: 3}
	switch v := strings.ToUpper(Option(opts, "lookup.cache", "NONE")); v {
	case "NONE":
	case "PARTIAL":
		o.Partial = true
	case "FULL":
		return o, fmt.Errorf("option 'lookup.cache' = 'FULL' is not supported; use 'NONE' or 'PARTIAL'")
	default:
		return o, fmt.Errorf("option 'lookup.cache' must be 'NONE' or 'PARTIAL', got '%s'", opts["lookup.cache"])
	}
	for _, k := range []string{"lookup.partial-cache.max-rows", "lookup.partial-cache.expire-after-write", "lookup.partial-cache.expire-after-access", "lookup.partial-cache.cache-missing-key"} {
		if _, ok := opts[k]; ok && !o.Partial {
			return o, fmt.Errorf("option '%s' needs 'lookup.cache' = 'PARTIAL'", k)
		}
	}
	var err error
	if o.MaxRows, err = Int(opts, "lookup.partial-cache.max-rows", 0, 1); err != nil {
		return o, err
	}
	if o.ExpireAfterWrite, err = Duration(opts, "lookup.partial-cache.expire-after-write", 0); err != nil {
		return o, err
	}
	if o.ExpireAfterAccess, err = Duration(opts, "lookup.partial-cache.expire-after-access", 0); err != nil {
		return o, err
	}
	if o.CacheMissingKey, err = Bool(opts, "lookup.partial-cache.cache-missing-key", true); err != nil {
		return o, err
	}
	if o.MaxRetries, err = Int(opts, "lookup.max-retries", 3, 0); err != nil {
		return o, err
	}
	return o, nil
}

// LookupStats counts a cached Lookuper's work; tests and metrics read it.
type LookupStats struct {
	Hits, Misses, Retries atomic.Int64
}

// NewCachedLookuper wraps l with the partial cache and the retries that o
// asks for. The cache belongs to the one subtask that owns the returned
// Lookuper, so it needs no lock. stats may be nil.
func NewCachedLookuper(l Lookuper, o LookupOptions, stats *LookupStats) Lookuper {
	if stats == nil {
		stats = &LookupStats{}
	}
	c := &cachedLookuper{inner: l, o: o, stats: stats, now: time.Now}
	if o.Partial {
		c.index = map[string]*list.Element{}
		c.lru = list.New()
	}
	return c
}

type cachedLookuper struct {
	inner Lookuper
	o     LookupOptions
	stats *LookupStats
	now   func() time.Time
	// The partial cache: lru holds *cacheEntry, most recently used first.
	index map[string]*list.Element
	lru   *list.List
	kbuf  []byte
}

type cacheEntry struct {
	key      string
	rows     []types.Row
	written  time.Time
	accessed time.Time
}

func (c *cachedLookuper) Open(ctx context.Context) error { return c.inner.Open(ctx) }
func (c *cachedLookuper) Close() error                   { return c.inner.Close() }

func (c *cachedLookuper) Lookup(ctx context.Context, key types.Row) ([]types.Row, error) {
	if c.index != nil {
		c.kbuf = types.EncodeKey(c.kbuf[:0], key, nil)
		if el, ok := c.index[string(c.kbuf)]; ok {
			e := el.Value.(*cacheEntry)
			now := c.now()
			if (c.o.ExpireAfterWrite == 0 || now.Sub(e.written) < c.o.ExpireAfterWrite) &&
				(c.o.ExpireAfterAccess == 0 || now.Sub(e.accessed) < c.o.ExpireAfterAccess) {
				e.accessed = now
				c.lru.MoveToFront(el)
				c.stats.Hits.Add(1)
				return e.rows, nil
			}
			c.lru.Remove(el)
			delete(c.index, e.key)
		}
	}
	c.stats.Misses.Add(1)
	var last error
	// Back off 100 ms, 200 ms, 400 ms ... at most 2 s.
	rows, err := backoff.Retry(ctx, func() ([]types.Row, error) {
		rows, err := c.inner.Lookup(ctx, key)
		last = err
		return rows, err
	}, backoff.WithBackOff(&backoff.ExponentialBackOff{InitialInterval: 100 * time.Millisecond, Multiplier: 2, MaxInterval: 2 * time.Second}),
		backoff.WithMaxTries(uint(c.o.MaxRetries)+1), backoff.WithMaxElapsedTime(0),
		backoff.WithNotify(func(error, time.Duration) { c.stats.Retries.Add(1) }))
	if err != nil {
		return nil, last // the lookup's error, also when ctx ended the wait
	}
	if c.index != nil && (len(rows) > 0 || c.o.CacheMissingKey) {
		k := string(types.EncodeKey(c.kbuf[:0], key, nil))
		now := c.now()
		c.index[k] = c.lru.PushFront(&cacheEntry{key: k, rows: rows, written: now, accessed: now})
		if c.o.MaxRows > 0 && c.lru.Len() > c.o.MaxRows {
			old := c.lru.Remove(c.lru.Back()).(*cacheEntry)
			delete(c.index, old.key)
		}
	}
	return rows, nil
}

// NewLoadingLookuper returns a Lookuper for small tables held in memory:
// Open calls load once and indexes the rows by the columns keys; a
// lookup then reads the index. Rows whose key holds a NULL never match.
// The table is not reloaded: later changes of its data are not seen.
func NewLoadingLookuper(keys []int, load func(ctx context.Context) ([]types.Row, error)) Lookuper {
	return &loadingLookuper{keys: keys, load: load}
}

type loadingLookuper struct {
	keys  []int
	load  func(ctx context.Context) ([]types.Row, error)
	index map[string][]types.Row
	kbuf  []byte
}

func (l *loadingLookuper) Open(ctx context.Context) error {
	rows, err := l.load(ctx)
	if err != nil {
		return err
	}
	l.index = map[string][]types.Row{}
	var k []byte
outer:
	for _, r := range rows {
		for _, c := range l.keys {
			if r[c].IsNull() {
				continue outer
			}
		}
		k = types.EncodeKey(k[:0], r, l.keys)
		l.index[string(k)] = append(l.index[string(k)], r)
	}
	return nil
}

func (l *loadingLookuper) Lookup(_ context.Context, key types.Row) ([]types.Row, error) {
	if l.index == nil {
		return nil, fmt.Errorf("lookup before Open")
	}
	l.kbuf = types.EncodeKey(l.kbuf[:0], key, nil)
	return l.index[string(l.kbuf)], nil
}

func (l *loadingLookuper) Close() error { l.index = nil; return nil }
