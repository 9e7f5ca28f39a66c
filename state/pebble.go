package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"
)

// The Pebble backend keeps one Pebble DB per operator subtask, so that a
// subtask can snapshot at its own barrier without seeing other subtasks'
// later writes. Because a DB belongs to one operator, keys carry no
// operator id.
//
// Key layout:
//
//	value state entry:  [len(name)][name][kg][uvarint len(key)][key]
//	map state entry:    [len(name)][name][kg][uvarint len(key)][key][mapKey]
//	store metadata:     0x00 "kgs"  -> [start][end] (2 bytes each, big-endian)
//
// where len(name) is one byte (state names are 1..255 bytes, so no state
// key starts with the metadata byte 0x00) and kg is the key's key group,
// KeyGroup(key), as 2 bytes big-endian. So:
//   - the entries of one key's map are the keys with prefix
//     name|kg|len|key, in ascending map-key byte order (Range is a prefix
//     scan; the length prefix keeps key "a" apart from key "ab");
//   - the entries of a key-group range [a, b) of one state are the keys
//     in [name|a, name|b) (restoring a range is a range scan per state).
//
// Values are [write time][Codec bytes]: the time of the last Put, in Unix
// milliseconds as 8 bytes big-endian, then the Codec's encoding. With a
// TTL the write time decides expiry; without one it is the time the entry
// was flushed, so a TTL configured later still has a time to go by.

// PebbleOptions configures a PebbleStore. Zero fields take the defaults.
type PebbleOptions struct {
	// CacheEntries bounds the write-back cache of a store, in entries
	// (one per value-state key, one per map-state key plus one per cached
	// map entry); 0 = 100,000.
	CacheEntries int
	// BlockCacheBytes is Pebble's block cache; 0 = 8 MiB.
	BlockCacheBytes int64
	// MemTableBytes is Pebble's memtable size; 0 = 16 MiB.
	MemTableBytes uint64
	// TTL expires state not written for this long (table.exec.state.ttl,
	// Flink's OnCreateAndWrite + NeverReturnExpired); 0 keeps it forever.
	TTL time.Duration
	// Clock is the time source for TTL; nil = time.Now.
	Clock func() time.Time
	// TTLCleanupKeys is how many stored entries each Snapshot examines
	// for expiry, continuing where the previous one stopped, so that
	// expired entries nobody reads again are removed too; 0 = 100,000,
	// negative = all of them at every Snapshot. Unused without TTL.
	TTLCleanupKeys int
}

const (
	defaultCacheEntries   = 100_000
	defaultBlockCache     = 8 << 20
	defaultMemTable       = 16 << 20
	defaultTTLCleanupKeys = 100_000
)

func (o PebbleOptions) withDefaults() PebbleOptions {
	if o.CacheEntries <= 0 {
		o.CacheEntries = defaultCacheEntries
	}
	if o.BlockCacheBytes <= 0 {
		o.BlockCacheBytes = defaultBlockCache
	}
	if o.MemTableBytes == 0 {
		o.MemTableBytes = defaultMemTable
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.TTLCleanupKeys == 0 {
		o.TTLCleanupKeys = defaultTTLCleanupKeys
	}
	return o
}

// pebbleOptions returns the Pebble options of a store's DB. The WAL is
// off: a working DB is only ever resumed from a Snapshot (which flushes
// the memtable first) or after Close (which flushes too); after a crash
// the job restores from a checkpoint into a fresh directory.
func pebbleOptions(o PebbleOptions, cache *pebble.Cache) *pebble.Options {
	po := &pebble.Options{
		Comparer:           stateComparer,
		Cache:              cache,
		MemTableSize:       o.MemTableBytes,
		DisableWAL:         true,
		Logger:             pebbleLogger{},
		FormatMajorVersion: pebble.FormatNewest,
		Levels:             make([]pebble.LevelOptions, 7),
	}
	// Bloom filters: most reads of a growing state are misses (a new
	// group), which the filters answer without reading data blocks.
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		// Files of at most 8 MiB below L1: compactions rewrite less per
		// change, so checkpoints sharing files stay incremental, and
		// filter and index blocks stay small enough to cache.
		po.Levels[i].TargetFileSize = min(int64(2<<20)<<i, 8<<20)
	}
	return po.EnsureDefaults()
}

// stateComparer orders keys bytewise, like Pebble's default, and splits
// a key after its state key (name, key group, key): the entries of one
// key's map share a prefix. Bloom filters are built over these
// prefixes, so a point read or a Range of a key that has no entries in
// a table skips the table.
var stateComparer = func() *pebble.Comparer {
	c := *pebble.DefaultComparer
	c.Name = "streamsql.state.v1"
	c.Split = splitStateKey
	c.ImmediateSuccessor = func(dst, a []byte) []byte { return append(append(dst, a...), 0) }
	return &c
}()

// splitStateKey returns the length of the state key at the start of k
// (all of k when k is not a state key).
func splitStateKey(k []byte) int {
	if len(k) == 0 || k[0] == 0 {
		return len(k)
	}
	i := 1 + int(k[0]) + 2
	if i > len(k) {
		return len(k)
	}
	l, n := binary.Uvarint(k[i:])
	if n <= 0 || l > uint64(len(k)-i-n) {
		return len(k)
	}
	return i + n + int(l)
}

// newBlockCache returns a block cache of opts.BlockCacheBytes for
// blocks. Pebble charges its memtables (up to two of MemTableBytes)
// against the block cache; without the extra room a block cache no
// bigger than two memtables (8 MiB and 4 MiB, say) would cache nothing.
func newBlockCache(opts PebbleOptions) *pebble.Cache {
	return pebble.NewCache(opts.BlockCacheBytes + 2*int64(opts.MemTableBytes))
}

// pebbleLogger drops Pebble's routine messages (WAL replay and the
// like) and keeps the ones reporting errors.
type pebbleLogger struct{}

func (pebbleLogger) Infof(format string, args ...interface{}) {
	msg := fmt.Sprintf(format, args...)
	if strings.Contains(msg, "error") || strings.Contains(msg, "fail") {
		slog.Warn("state: pebble: " + msg)
	}
}

func (pebbleLogger) Fatalf(format string, args ...interface{}) {
	pebble.DefaultLogger.Fatalf(format, args...)
}

// PebbleStore is the state of one operator subtask in a Pebble DB, with
// an LRU write-back cache of decoded values in front of it. Like its
// states it is not safe for concurrent use: Snapshot and Close run on the
// goroutine that uses the states.
type PebbleStore struct {
	id   string
	dir  string
	kgs  KeyGroupRange
	opts PebbleOptions
	ttl  int64 // milliseconds; 0 = none
	db   *pebble.DB

	names  map[string]bool
	states []cachedState

	// The cache: one LRU list over the entries of all states.
	lru    lruNode // sentinel: lru.next is the most recently used
	size   int     // cached units
	pinned int     // > 0 while a Range runs: no eviction

	kbuf, vbuf []byte

	// filter knows which state keys have entries in the DB. Until the
	// scan of a reopened or restored DB is done (scanned set by the scan
	// goroutine, taken over by the store's goroutine) it is not ready.
	filter      keyFilter
	filterReady bool
	scanned     atomic.Pointer[keyFilter]
	scanStop    atomic.Bool
	scanWG      sync.WaitGroup

	async     sync.WaitGroup      // the snapshot being written
	prev      map[string]ckptFile // files of the previous Snapshot; owned by the snapshot being written
	ttlCursor []byte              // where the next TTL cleanup starts
	err       error               // sticky: the first write error
	closed    bool
}

var _ Store = (*PebbleStore)(nil)

// SnapshotInfo describes a checkpoint taken by Snapshot.
type SnapshotInfo struct {
	Dir string
	// TotalBytes is the size of every file of the checkpoint.
	TotalBytes int64
	// NewBytes is the size of the files not shared by hard link with the
	// store's previous Snapshot: what this checkpoint adds on disk.
	NewBytes int64
}

// RestoreSource is one checkpoint directory to restore from and the key
// groups its store owned.
type RestoreSource struct {
	Dir       string
	KeyGroups KeyGroupRange
}

var metaKGKey = []byte("\x00kgs")

func validRange(r KeyGroupRange) bool {
	return r.Start >= 0 && r.Start < r.End && r.End <= MaxParallelism
}

func encodeKGRange(r KeyGroupRange) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, uint16(r.Start)), uint16(r.End))
}

func decodeKGRange(b []byte) (KeyGroupRange, bool) {
	if len(b) != 4 {
		return KeyGroupRange{}, false
	}
	r := KeyGroupRange{Start: int(binary.BigEndian.Uint16(b)), End: int(binary.BigEndian.Uint16(b[2:]))}
	return r, validRange(r)
}

// OpenPebbleStore opens (creating if needed) the working DB of one
// operator subtask in workDir. An existing DB must have been created for
// the same key-group range (by OpenPebbleStore or RestorePebble).
func OpenPebbleStore(workDir, operatorID string, kgs KeyGroupRange, opts PebbleOptions) (*PebbleStore, error) {
	if !validRange(kgs) {
		return nil, fmt.Errorf("state: operator %s: invalid key-group range [%d, %d)", operatorID, kgs.Start, kgs.End)
	}
	opts = opts.withDefaults()
	if err := os.MkdirAll(filepath.Dir(workDir), 0o755); err != nil {
		return nil, fmt.Errorf("state: operator %s: %w", operatorID, err)
	}
	cache := newBlockCache(opts)
	defer cache.Unref()
	db, err := pebble.Open(workDir, pebbleOptions(opts, cache))
	if err != nil {
		return nil, fmt.Errorf("state: operator %s: opening %s: %w", operatorID, workDir, err)
	}
	s := &PebbleStore{id: operatorID, dir: workDir, kgs: kgs, opts: opts, ttl: opts.TTL.Milliseconds(), db: db,
		names: map[string]bool{}}
	if opts.TTL > 0 && s.ttl == 0 {
		s.ttl = 1
	}
	s.lru.next, s.lru.prev = &s.lru, &s.lru
	fail := func(err error) (*PebbleStore, error) {
		_ = db.Close()
		return nil, err
	}
	v, closer, err := db.Get(metaKGKey)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if err := db.Set(metaKGKey, encodeKGRange(kgs), pebble.NoSync); err != nil {
			return fail(fmt.Errorf("state: operator %s: %s: %w", operatorID, workDir, err))
		}
	case err != nil:
		return fail(fmt.Errorf("state: operator %s: %s: %w", operatorID, workDir, err))
	default:
		have, ok := decodeKGRange(v)
		closer.Close()
		if !ok {
			return fail(fmt.Errorf("state: operator %s: %s: corrupt key-group metadata", operatorID, workDir))
		}
		if have != kgs {
			return fail(fmt.Errorf("state: operator %s: %s holds key groups [%d, %d), not [%d, %d)",
				operatorID, workDir, have.Start, have.End, kgs.Start, kgs.End))
		}
	}
	if err := s.startScan(); err != nil {
		return fail(fmt.Errorf("state: operator %s: %s: %w", operatorID, workDir, err))
	}
	return s, nil
}

// OperatorID implements Store.
func (s *PebbleStore) OperatorID() string { return s.id }

// Backend implements Store.
func (s *PebbleStore) Backend() string { return "pebble" }

// KeyGroups returns the key groups the store owns.
func (s *PebbleStore) KeyGroups() KeyGroupRange { return s.kgs }

// Dir returns the working directory of the store's DB.
func (s *PebbleStore) Dir() string { return s.dir }

func (s *PebbleStore) register(name string) error {
	return registerName(s.id, s.names, s.closed, name)
}

// statePrefix is the key prefix of state name.
func statePrefix(name string) []byte {
	return append([]byte{byte(len(name))}, name...)
}

// appendStateKey appends the key of key in the state with prefix p.
func appendStateKey(dst, p, key []byte) []byte {
	dst = append(dst, p...)
	dst = binary.BigEndian.AppendUint16(dst, uint16(KeyGroup(key)))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	return append(dst, key...)
}

// prefixEnd returns the smallest key greater than every key with prefix
// p, or nil when there is none.
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// nowMS is the current time of the store's clock in Unix milliseconds.
func (s *PebbleStore) nowMS() int64 { return s.opts.Clock().UnixMilli() }

// expired reports whether an entry written at wt has expired at now
// (Flink: expired once wt + ttl <= now).
func (s *PebbleStore) expired(wt, now int64) bool { return s.ttl > 0 && wt+s.ttl <= now }

// appendValue appends a stored value: write time, then the payload.
func appendValue[T any](dst []byte, wt int64, c Codec[T], v T) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(wt))
	return c.Encode(dst, v)
}

// splitValue splits a stored value into write time and a copy of the
// payload (Pebble's buffer is only valid until the read is closed, and
// a Codec may keep the slice it decodes).
func splitValue(raw []byte) (int64, []byte, error) {
	if len(raw) < 8 {
		return 0, nil, errors.New("stored value shorter than its header")
	}
	return int64(binary.BigEndian.Uint64(raw)), bytes.Clone(raw[8:]), nil
}

// lruNode links a cache entry into the store's LRU list.
type lruNode struct {
	prev, next *lruNode
	st         cachedState
	key        string
	units      int
}

// cachedState is what the store needs of a state's cache.
type cachedState interface {
	// evict writes n's entry into b if it is dirty and drops it.
	evict(n *lruNode, b *pebble.Batch, now int64) error
	// flush writes every dirty entry into b and marks it clean.
	flush(b *pebble.Batch, now int64) error
}

func (s *PebbleStore) addState(st cachedState) { s.states = append(s.states, st) }

// pushFront inserts a new node as the most recently used.
func (s *PebbleStore) pushFront(n *lruNode) {
	n.prev, n.next = &s.lru, s.lru.next
	s.lru.next.prev = n
	s.lru.next = n
	s.size += n.units
}

// touch marks n as the most recently used.
func (s *PebbleStore) touch(n *lruNode) {
	if s.lru.next == n {
		return
	}
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = &s.lru, s.lru.next
	s.lru.next.prev = n
	s.lru.next = n
}

// grow accounts for units more cached in n.
func (s *PebbleStore) grow(n *lruNode, units int) {
	n.units += units
	s.size += units
}

// maybeEvict evicts least recently used entries, never keep, once the
// cache is over its bound: it evicts down to 15/16 of the bound so that
// the dirty entries leave in one batch per many misses.
func (s *PebbleStore) maybeEvict(keep *lruNode) error {
	if s.size <= s.opts.CacheEntries || s.pinned > 0 {
		return s.err
	}
	if s.err != nil {
		return s.err
	}
	target := s.opts.CacheEntries - s.opts.CacheEntries/16
	b := s.db.NewBatch()
	defer b.Close()
	now := s.nowMS()
	for s.size > target {
		n := s.lru.prev
		if n == &s.lru || n == keep {
			break
		}
		n.prev.next, n.next.prev = n.next, n.prev
		n.prev, n.next = nil, nil
		s.size -= n.units
		err := n.st.evict(n, b, now)
		if err == nil {
			err = s.spill(b)
		}
		if err != nil {
			s.err = err
			return err
		}
	}
	if !b.Empty() {
		if err := s.apply(b); err != nil {
			s.err = fmt.Errorf("state: operator %s: writing evicted entries: %w", s.id, err)
			return s.err
		}
	}
	return nil
}

// get reads the stored value of DB key k, copied.
func (s *PebbleStore) get(k []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v = bytes.Clone(v)
	return v, true, closer.Close()
}

// apply commits b.
func (s *PebbleStore) apply(b *pebble.Batch) error { return s.db.Apply(b, pebble.NoSync) }

// spill commits b and empties it for reuse once it holds a quarter of a
// memtable: a flush or an eviction of many entries then goes into the
// memtable in pieces, instead of growing one batch buffer by copying and
// committing it as a large batch, which Pebble turns into a flushable
// batch of its own (sorted on commit, then written as an L0 file).
func (s *PebbleStore) spill(b *pebble.Batch) error {
	if uint64(b.Len()) < s.opts.MemTableBytes/4 {
		return nil
	}
	if err := s.apply(b); err != nil {
		return fmt.Errorf("state: operator %s: writing state: %w", s.id, err)
	}
	b.Reset()
	return nil
}

// mayExist reports whether the DB may hold entries under state key sk,
// or the map entry sk (the filter holds both; false: certainly none).
func (s *PebbleStore) mayExist(sk []byte) bool {
	if !s.filterReady {
		f := s.scanned.Load()
		if f == nil {
			return true
		}
		s.filter.merge(f)
		s.scanned.Store(nil)
		s.filterReady = true
	}
	return s.filter.mayContain(hashStateKey(sk))
}

// written records that the DB holds entries under state key sk, or the
// map entry sk.
func (s *PebbleStore) written(sk []byte) { s.filter.add(hashStateKey(sk)) }

// startScan builds, in the background, the key filter of what the DB
// holds when the store opens; until it is done every key may exist.
func (s *PebbleStore) startScan() error {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{1}})
	if err != nil {
		return err
	}
	if !it.First() {
		s.filterReady = true
		return it.Close()
	}
	s.scanWG.Add(1)
	go func() {
		defer s.scanWG.Done()
		f := &keyFilter{}
		var prev []byte
		for ok := it.First(); ok; ok = it.Next() {
			if s.scanStop.Load() {
				break
			}
			k := it.Key()
			p := k[:splitStateKey(k)]
			if len(p) < len(k) {
				f.add(hashStateKey(k)) // a map entry
			}
			if bytes.Equal(p, prev) {
				continue
			}
			prev = append(prev[:0], p...)
			f.add(hashStateKey(p))
		}
		if err := it.Close(); err != nil || s.scanStop.Load() {
			return // the filter stays unready: every key may exist
		}
		s.scanned.Store(f)
	}()
	return nil
}

// check returns the error that disables the store, if any.
func (s *PebbleStore) check() error {
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return fmt.Errorf("state: operator %s: store is closed", s.id)
	}
	return nil
}

// flushCache writes every dirty cached entry to the DB.
func (s *PebbleStore) flushCache() error {
	b := s.db.NewBatch()
	defer b.Close()
	now := s.nowMS()
	for _, st := range s.states {
		if err := st.flush(b, now); err != nil {
			s.err = err
			return err
		}
	}
	if !b.Empty() {
		if err := s.apply(b); err != nil {
			s.err = fmt.Errorf("state: operator %s: flushing the cache: %w", s.id, err)
			return s.err
		}
	}
	return nil
}

// cleanupTTL examines up to TTLCleanupKeys stored entries, starting where
// the previous pass stopped, and deletes the expired ones. Cached copies
// of deleted entries carry the same write time, so they read as expired
// too; no cache entry needs to change.
func (s *PebbleStore) cleanupTTL() error {
	if s.ttl <= 0 {
		return nil
	}
	now := s.nowMS()
	lower := s.ttlCursor
	if lower == nil {
		lower = []byte{1}
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower})
	if err != nil {
		return fmt.Errorf("state: operator %s: TTL cleanup: %w", s.id, err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	budget := s.opts.TTLCleanupKeys
	s.ttlCursor = nil
	var ierr error
	for ok := it.First(); ok; ok = it.Next() {
		if budget == 0 {
			s.ttlCursor = bytes.Clone(it.Key())
			break
		}
		budget--
		v, err := it.ValueAndErr()
		if err == nil && len(v) >= 8 && s.expired(int64(binary.BigEndian.Uint64(v)), now) {
			err = b.Delete(it.Key(), nil)
		}
		if err != nil {
			ierr = err
			break
		}
	}
	if err := it.Close(); err != nil && ierr == nil {
		ierr = err
	}
	if ierr != nil {
		return fmt.Errorf("state: operator %s: TTL cleanup: %w", s.id, ierr)
	}
	if !b.Empty() {
		if err := s.apply(b); err != nil {
			return fmt.Errorf("state: operator %s: TTL cleanup: %w", s.id, err)
		}
	}
	return nil
}

// Checkpoint implements Store: a native snapshot, written at once.
func (s *PebbleStore) Checkpoint(dir string) (SnapshotInfo, error) { return checkpointNow(s, dir) }

// Snapshot implements Store. Its synchronous part flushes every dirty
// cached entry into the DB and removes expired entries (a bounded TTL
// cleanup pass). Then, natively, it flushes the memtable and takes a
// Pebble checkpoint (hard-linked SSTs) into dir; the SnapshotWrite hashes
// the files not shared with the previous snapshot and writes the
// manifest, which RestorePebble verifies. Canonically, it takes a Pebble
// snapshot (a consistent view, no copy), and the SnapshotWrite streams
// it into key-group files. Cached entries stay cached, clean.
func (s *PebbleStore) Snapshot(dir string, canonical bool) (SnapshotWrite, error) {
	s.async.Wait()
	if err := s.check(); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("state: operator %s: snapshot directory %s already exists", s.id, dir)
	}
	if err := s.flushCache(); err != nil {
		return nil, err
	}
	if err := s.cleanupTTL(); err != nil {
		return nil, err
	}
	if canonical {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("state: operator %s: %w", s.id, err)
		}
		snap := s.db.NewSnapshot()
		s.async.Add(1)
		return func() (SnapshotInfo, error) {
			defer s.async.Done()
			defer snap.Close()
			info, err := s.writeCanonical(dir, snap)
			if err != nil {
				return info, fmt.Errorf("state: operator %s: savepoint into %s: %w", s.id, dir, err)
			}
			return info, nil
		}, nil
	}
	if err := s.db.Flush(); err != nil {
		return nil, fmt.Errorf("state: operator %s: flushing the memtable: %w", s.id, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("state: operator %s: %w", s.id, err)
	}
	if err := s.db.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		return nil, fmt.Errorf("state: operator %s: checkpoint into %s: %w", s.id, dir, err)
	}
	s.async.Add(1)
	return func() (SnapshotInfo, error) {
		defer s.async.Done()
		files, info, err := writeCheckpointManifest(dir, s.id, s.kgs, s.prev)
		if err != nil {
			s.prev = nil
			return SnapshotInfo{}, fmt.Errorf("state: operator %s: %w", s.id, err)
		}
		s.prev = files
		return info, nil
	}, nil
}

// writeCanonical writes the state visible in snap into dir in the
// canonical format: the DB's keys are in state-name order, so the
// records of each key group arrive in key order, into a file per key
// group kept open until the end.
func (s *PebbleStore) writeCanonical(dir string, snap *pebble.Snapshot) (SnapshotInfo, error) {
	info := SnapshotInfo{Dir: dir}
	var ws [MaxParallelism]*kgWriter
	defer func() {
		for _, w := range ws {
			if w != nil {
				w.abort()
			}
		}
	}()
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: []byte{1}})
	if err != nil {
		return info, err
	}
	var rec []byte
	var ierr error
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if _, err := stateName(k); err != nil {
			ierr = err
			break
		}
		kg := int(binary.BigEndian.Uint16(k[1+int(k[0]):]))
		v, err := it.ValueAndErr()
		if err == nil && kg >= MaxParallelism {
			err = fmt.Errorf("key %q has key group %d", k, kg)
		}
		if err == nil && ws[kg] == nil {
			ws[kg], err = createKGFile(dir, kg)
		}
		if err == nil {
			rec = appendRecord(rec[:0], k, v)
			err = ws[kg].write(rec)
		}
		if err != nil {
			ierr = err
			break
		}
	}
	if err := it.Close(); err != nil && ierr == nil {
		ierr = err
	}
	if ierr != nil {
		return info, ierr
	}
	var files []ckptFile
	for kg, w := range ws {
		if w == nil {
			continue
		}
		ws[kg] = nil
		f, err := w.finish()
		if err != nil {
			return info, err
		}
		files = append(files, f)
		info.TotalBytes += f.size
	}
	n, err := writeManifest(dir, canonicalHeader, s.id, s.kgs, files)
	if err != nil {
		return info, err
	}
	info.TotalBytes += n
	info.NewBytes = info.TotalBytes
	return info, nil
}

// Close writes the dirty cached entries and the memtable to disk, so that
// OpenPebbleStore on the same directory sees everything written, and
// closes the DB. Closing twice is a no-op.
func (s *PebbleStore) Close() error {
	if s.closed {
		return nil
	}
	s.async.Wait() // a snapshot still being written reads the DB
	var err error
	if s.err == nil {
		err = s.flushCache()
		if err == nil {
			if ferr := s.db.Flush(); ferr != nil {
				err = fmt.Errorf("state: operator %s: flushing the memtable: %w", s.id, ferr)
			}
		}
	}
	s.closed = true
	s.scanStop.Store(true)
	s.scanWG.Wait()
	if cerr := s.db.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("state: operator %s: closing %s: %w", s.id, s.dir, cerr)
	}
	return err
}
