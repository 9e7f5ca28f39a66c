package state

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"

	"github.com/streamsql/streamsql/internal/fsutil"
)

// The canonical snapshot format is the backend-independent form of a
// store's state, Flink's canonical savepoint format: every backend writes
// its savepoints in it, the hashmap backend its checkpoints too, and
// every backend restores from it, so that a job can switch backends
// through a savepoint.
//
// A canonical snapshot directory holds one file per key group that has
// state, named kg-NNN (the key group in decimal), and the manifest of
// pebble_restore.go with the header canonicalHeader. A key-group file is
// a sequence of records, one state after the other in ascending order of
// the state-key prefix [len(name)][name], a state's records in any order
// (a reader sorts them; a writer need not):
//
//	uvarint len(key) | key | uvarint len(value) | value
//
// where key and value are exactly those of the Pebble backend (see
// pebble.go): key = [len(name)][name][kg][uvarint len(key)][key][mapKey],
// value = [write time, 8 bytes][Codec bytes]. The manifest carries each
// file's size and xxhash64, so a file needs no checksum of its own.
const canonicalHeader = "streamsql keygroup snapshot 1"

// SnapshotWrite is the asynchronous part of a snapshot: it writes what
// the synchronous part (Store.Snapshot) captured into the snapshot
// directory and reports its size. It may run on any goroutine while the
// operator goes on using its states, and must be called exactly once.
type SnapshotWrite func() (SnapshotInfo, error)

// checkpointNow runs both parts of a native snapshot, for Store.Checkpoint.
func checkpointNow(s Store, dir string) (SnapshotInfo, error) {
	w, err := s.Snapshot(dir, false)
	if err != nil {
		return SnapshotInfo{}, err
	}
	return w()
}

func kgFileName(kg int) string { return fmt.Sprintf("kg-%03d", kg) }

// kgOfFile returns the key group of a key-group file name.
func kgOfFile(name string) (int, bool) {
	rest, ok := bytes.CutPrefix([]byte(name), []byte("kg-"))
	if !ok {
		return 0, false
	}
	kg, err := strconv.Atoi(string(rest))
	return kg, err == nil && kg >= 0 && kg < MaxParallelism
}

// appendRecord appends one record of a key-group file.
func appendRecord(dst, k, v []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(k)))
	dst = append(dst, k...)
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	return append(dst, v...)
}

// parseRecord splits the record at the start of b; n is its length.
func parseRecord(b []byte) (k, v []byte, n int, err error) {
	kl, i := binary.Uvarint(b)
	if i <= 0 || kl > uint64(len(b)-i) {
		return nil, nil, 0, errors.New("truncated record key")
	}
	k = b[i : i+int(kl)]
	n = i + int(kl)
	vl, j := binary.Uvarint(b[n:])
	if j <= 0 || vl > uint64(len(b)-n-j) {
		return nil, nil, 0, errors.New("truncated record value")
	}
	v = b[n+j : n+j+int(vl)]
	return k, v, n + j + int(vl), nil
}

// recordKey returns the key of the record at the start of b.
func recordKey(b []byte) []byte {
	kl, i := binary.Uvarint(b)
	return b[i : i+int(kl)]
}

// kgWriter writes one key-group file and hashes it as it goes.
type kgWriter struct {
	f    *os.File
	w    *bufio.Writer
	h    *xxhash.Digest
	name string
	size int64
}

func createKGFile(dir string, kg int) (*kgWriter, error) {
	name := kgFileName(kg)
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	w := &kgWriter{f: f, h: xxhash.New(), name: name}
	w.w = bufio.NewWriterSize(io.MultiWriter(f, w.h), 64<<10)
	return w, nil
}

func (w *kgWriter) write(p []byte) error {
	w.size += int64(len(p))
	_, err := w.w.Write(p)
	return err
}

// finish flushes and fsyncs the file and returns its manifest entry.
func (w *kgWriter) finish() (ckptFile, error) {
	err := w.w.Flush()
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return ckptFile{name: w.name, size: w.size, hash: w.h.Sum64()}, err
}

func (w *kgWriter) abort() { _ = w.f.Close() }

// writeManifest writes the manifest of a snapshot in dir, listing files,
// and returns its size.
func writeManifest(dir, header, operator string, kgs KeyGroupRange, files []ckptFile) (int64, error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s\noperator %s\nkeygroups %d %d\n", header, strconv.Quote(operator), kgs.Start, kgs.End)
	for _, f := range files {
		fmt.Fprintf(&buf, "file %s %d %016x\n", f.name, f.size, f.hash)
	}
	fmt.Fprintf(&buf, "checksum %016x\n", xxhash.Sum64(buf.Bytes()))
	if err := fsutil.WriteFileAtomic(filepath.Join(dir, ckptManifestName), buf.Bytes()); err != nil {
		return 0, err
	}
	return int64(buf.Len()), nil
}

// kgReader reads the records of one key-group file, one ahead.
type kgReader struct {
	r    *bufio.Reader
	f    *os.File
	k, v []byte // the current record; nil k at the end
	err  error
}

func openKGFile(path string) (*kgReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := &kgReader{f: f, r: bufio.NewReaderSize(f, 64<<10)}
	r.next()
	return r, r.err
}

// next reads the next record into k and v (fresh slices).
func (r *kgReader) next() {
	r.k, r.v = nil, nil
	kl, err := binary.ReadUvarint(r.r)
	if errors.Is(err, io.EOF) {
		return
	}
	if err == nil && kl > 1<<30 {
		err = errors.New("record key too long")
	}
	var k, v []byte
	if err == nil {
		k = make([]byte, kl)
		_, err = io.ReadFull(r.r, k)
	}
	var vl uint64
	if err == nil {
		vl, err = binary.ReadUvarint(r.r)
	}
	if err == nil && vl > 1<<31 {
		err = errors.New("record value too long")
	}
	if err == nil {
		v = make([]byte, vl)
		_, err = io.ReadFull(r.r, v)
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		r.err = fmt.Errorf("%s: %w", r.f.Name(), err)
		return
	}
	r.k, r.v = k, v
}

// stateName returns the state-name prefix of a state key.
func stateName(k []byte) ([]byte, error) {
	if len(k) < 1+int(k[0])+2 || k[0] == 0 {
		return nil, fmt.Errorf("malformed key %q", k)
	}
	return k[:1+int(k[0])], nil
}

// forEachCanonical calls fn with every entry of key groups [lo, hi) of
// the canonical snapshot in dir (whose manifest is m), in ascending key
// order: state by state, and within a state key group by key group, as
// a Pebble DB holds them. The files are streamed, one record ahead each.
// fn may keep k and v.
func forEachCanonical(dir string, m *ckptManifest, lo, hi int, fn func(k, v []byte) error) error {
	var rs []*kgReader
	defer func() {
		for _, r := range rs {
			r.f.Close()
		}
	}()
	for _, f := range m.files {
		kg, ok := kgOfFile(f.name)
		if !ok {
			return fmt.Errorf("unexpected file %s in a key-group snapshot", f.name)
		}
		if kg < lo || kg >= hi {
			continue
		}
		r, err := openKGFile(filepath.Join(dir, f.name))
		if r != nil {
			rs = append(rs, r)
		}
		if err != nil {
			return err
		}
	}
	// The files in key-group order; m.files is sorted by name already,
	// and kg-NNN names sort numerically.
	slices.SortFunc(rs, func(a, b *kgReader) int { return bytes.Compare([]byte(a.f.Name()), []byte(b.f.Name())) })
	var run [][2][]byte
	for {
		// The smallest state name any file is at.
		var name []byte
		for _, r := range rs {
			if r.k == nil {
				continue
			}
			n, err := stateName(r.k)
			if err != nil {
				return fmt.Errorf("%s: %w", r.f.Name(), err)
			}
			if name == nil || bytes.Compare(n, name) < 0 {
				name = n
			}
		}
		if name == nil {
			return nil
		}
		name = bytes.Clone(name)
		for _, r := range rs {
			// This state's records in this key group, sorted.
			run = run[:0]
			for r.k != nil && bytes.HasPrefix(r.k, name) {
				run = append(run, [2][]byte{r.k, r.v})
				r.next()
				if r.err != nil {
					return r.err
				}
			}
			slices.SortFunc(run, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
			for i, e := range run {
				if i > 0 && bytes.Equal(e[0], run[i-1][0]) {
					return fmt.Errorf("%s: key %q twice", r.f.Name(), e[0])
				}
				if err := fn(e[0], e[1]); err != nil {
					return err
				}
			}
		}
	}
}

// forEachNative calls fn with every entry of key groups [lo, hi) of the
// Pebble checkpoint in dir, in ascending key order: for each state name,
// found by seeking past the previous one, one range scan over
// [name|lo, name|hi). fn must not keep k or v.
func forEachNative(dir string, lo, hi int, opts PebbleOptions, cache *pebble.Cache, fn func(k, v []byte) error) error {
	po := pebbleOptions(opts, cache)
	po.ReadOnly = true
	po.FS = noLockFS{vfs.Default}
	src, err := pebble.Open(dir, po)
	if err != nil {
		return err
	}
	defer src.Close()
	it, err := src.NewIter(&pebble.IterOptions{LowerBound: []byte{1}})
	if err != nil {
		return err
	}
	var ierr error
	ok := it.First()
	for ok {
		var name []byte
		name, ierr = stateName(it.Key())
		if ierr != nil {
			break
		}
		name = bytes.Clone(name)
		start := binary.BigEndian.AppendUint16(bytes.Clone(name), uint16(lo))
		end := binary.BigEndian.AppendUint16(bytes.Clone(name), uint16(hi))
		for ok = it.SeekGE(start); ok && bytes.Compare(it.Key(), end) < 0; ok = it.Next() {
			v, err := it.ValueAndErr()
			if err == nil {
				err = fn(it.Key(), v)
			}
			if err != nil {
				ierr = err
				break
			}
		}
		if ierr != nil {
			break
		}
		next := prefixEnd(name)
		if next == nil {
			break
		}
		ok = it.SeekGE(next)
	}
	if err := it.Close(); err != nil && ierr == nil {
		ierr = err
	}
	return ierr
}

// forEachEntry calls fn with every entry of key groups [lo, hi) of a
// verified snapshot of either format, in ascending key order. fn must
// not keep k or v.
func forEachEntry(dir string, m *ckptManifest, lo, hi int, opts PebbleOptions, cache *pebble.Cache, fn func(k, v []byte) error) error {
	if m.canonical {
		return forEachCanonical(dir, m, lo, hi, fn)
	}
	return forEachNative(dir, lo, hi, opts, cache, fn)
}
