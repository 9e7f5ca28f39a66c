package state

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/sstable"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/streamsql/streamsql/internal/fsutil"
)

// A checkpoint directory holds a Pebble checkpoint plus the file
// ckptManifestName, written last by Snapshot:
//
//	streamsql pebble checkpoint 1
//	operator "<operator id>"
//	keygroups <start> <end>
//	file <name> <size> <xxhash64, hex>     (one line per file)
//	checksum <xxhash64 of the lines above, hex>
//
// RestorePebble refuses a directory whose manifest is missing, does not
// check out, or lists a file that is missing or differs in size or
// checksum: a half-written or damaged checkpoint fails with an error
// naming it instead of being restored.
const ckptManifestName = "STREAMSQL-CHECKPOINT"

const ckptHeader = "streamsql pebble checkpoint 1"

// ckptFile is one file of a checkpoint.
type ckptFile struct {
	name string
	size int64
	hash uint64
	fi   os.FileInfo // to recognise the same file, hard-linked, next time
}

type ckptManifest struct {
	canonical bool // the canonical key-group format (canonical.go), not a Pebble checkpoint
	operator  string
	kgs       KeyGroupRange
	files     []ckptFile
}

func hashFile(path string) (uint64, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	h := xxhash.New()
	n, err := io.Copy(h, f)
	return h.Sum64(), n, err
}

// writeCheckpointManifest lists the files of the checkpoint in dir,
// hashes the ones not shared with the previous checkpoint (prev) and
// writes the manifest. It returns the files, for the next call, and the
// checkpoint's sizes.
func writeCheckpointManifest(dir, operator string, kgs KeyGroupRange, prev map[string]ckptFile) (map[string]ckptFile, SnapshotInfo, error) {
	info := SnapshotInfo{Dir: dir}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, info, err
	}
	files := make(map[string]ckptFile, len(ents))
	var list []ckptFile
	for _, de := range ents {
		if !de.Type().IsRegular() {
			continue
		}
		name := de.Name()
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			return nil, info, err
		}
		f := ckptFile{name: name, size: fi.Size(), fi: fi}
		if p, ok := prev[name]; ok && p.size == f.size && os.SameFile(p.fi, fi) {
			f.hash = p.hash
		} else {
			h, n, err := hashFile(filepath.Join(dir, name))
			if err != nil {
				return nil, info, err
			}
			if n != f.size {
				return nil, info, fmt.Errorf("checkpoint file %s changed while hashing", name)
			}
			f.hash = h
			info.NewBytes += f.size
		}
		info.TotalBytes += f.size
		files[name] = f
		list = append(list, f)
	}
	n, err := writeManifest(dir, ckptHeader, operator, kgs, list)
	if err != nil {
		return nil, info, err
	}
	info.TotalBytes += n
	info.NewBytes += n
	return files, info, nil
}

// SyncDir is fsutil.SyncDir, kept under state's name for its callers.
func SyncDir(dir string) error { return fsutil.SyncDir(dir) }

// readCheckpointManifest reads and checks the manifest of dir.
func readCheckpointManifest(dir string) (*ckptManifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ckptManifestName))
	if err != nil {
		if os.IsNotExist(err) {
			if _, derr := os.Stat(dir); derr != nil {
				return nil, fmt.Errorf("checkpoint directory: %w", derr)
			}
			return nil, fmt.Errorf("no %s: not a complete checkpoint", ckptManifestName)
		}
		return nil, err
	}
	body, last, ok := cutLastLine(data)
	if !ok || !strings.HasPrefix(last, "checksum ") {
		return nil, fmt.Errorf("%s is truncated", ckptManifestName)
	}
	sum, err := strconv.ParseUint(strings.TrimPrefix(last, "checksum "), 16, 64)
	if err != nil || sum != xxhash.Sum64(body) {
		return nil, fmt.Errorf("%s does not match its checksum", ckptManifestName)
	}
	m := &ckptManifest{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		bad := func() error { return fmt.Errorf("%s line %d is malformed: %q", ckptManifestName, line, t) }
		switch {
		case line == 1:
			m.canonical = t == canonicalHeader
			if t != ckptHeader && !m.canonical {
				return nil, fmt.Errorf("%s has unknown format %q", ckptManifestName, t)
			}
		case strings.HasPrefix(t, "operator "):
			op, err := strconv.Unquote(strings.TrimPrefix(t, "operator "))
			if err != nil {
				return nil, bad()
			}
			m.operator = op
		case strings.HasPrefix(t, "keygroups "):
			if _, err := fmt.Sscanf(t, "keygroups %d %d", &m.kgs.Start, &m.kgs.End); err != nil || !validRange(m.kgs) {
				return nil, bad()
			}
		case strings.HasPrefix(t, "file "):
			fs := strings.Fields(t)
			if len(fs) != 4 || fs[1] == ckptManifestName || fs[1] != filepath.Base(fs[1]) || fs[1] == "." || fs[1] == ".." {
				return nil, bad()
			}
			size, err1 := strconv.ParseInt(fs[2], 10, 64)
			hash, err2 := strconv.ParseUint(fs[3], 16, 64)
			if err1 != nil || err2 != nil || size < 0 {
				return nil, bad()
			}
			m.files = append(m.files, ckptFile{name: fs[1], size: size, hash: hash})
		default:
			return nil, bad()
		}
	}
	if line == 0 || !validRange(m.kgs) {
		return nil, fmt.Errorf("%s is incomplete", ckptManifestName)
	}
	return m, nil
}

// cutLastLine splits data, which must end in a newline, before its last
// line, and returns the last line without its newline.
func cutLastLine(data []byte) ([]byte, string, bool) {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, "", false
	}
	i := bytes.LastIndexByte(data[:len(data)-1], '\n')
	if i < 0 {
		return nil, "", false
	}
	return data[:i+1], string(data[i+1 : len(data)-1]), true
}

// verifyCheckpoint checks every file the manifest of dir lists.
func verifyCheckpoint(dir string, m *ckptManifest) error {
	for _, f := range m.files {
		p := filepath.Join(dir, f.name)
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("file %s: %w", f.name, err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("file %s is not a regular file", f.name)
		}
		if fi.Size() != f.size {
			return fmt.Errorf("file %s has %d bytes, the manifest says %d", f.name, fi.Size(), f.size)
		}
		h, _, err := hashFile(p)
		if err != nil {
			return fmt.Errorf("file %s: %w", f.name, err)
		}
		if h != f.hash {
			return fmt.Errorf("file %s does not match its checksum", f.name)
		}
	}
	return nil
}

// openCheckpoint reads and verifies the checkpoint of src.
func openCheckpoint(src RestoreSource) (*ckptManifest, error) {
	m, err := readCheckpointManifest(src.Dir)
	if err != nil {
		return nil, err
	}
	if m.kgs != src.KeyGroups {
		return nil, fmt.Errorf("holds key groups [%d, %d), not [%d, %d)", m.kgs.Start, m.kgs.End, src.KeyGroups.Start, src.KeyGroups.End)
	}
	if err := verifyCheckpoint(src.Dir, m); err != nil {
		return nil, err
	}
	return m, nil
}

// RestorePebble prepares workDir, which must not exist, as the working
// DB of a store that owns key groups kgs, from the checkpoint directories
// of the previous run; OpenPebbleStore then opens it. The sources that
// intersect kgs must not overlap and must cover it. Every source used is
// verified against its manifest first.
//
// If exactly one source intersects kgs and owns exactly kgs, its files
// are hard-linked (SSTs; copied if linking fails) or copied (the small
// mutable files) into workDir: a cheap restore. Otherwise (rescaling) a
// new DB is created and every entry whose key group is in kgs is copied
// from each source, opened read-only, one range scan per state name.
//
// Errors name the offending directory; on error workDir is removed.
func RestorePebble(workDir string, sources []RestoreSource, kgs KeyGroupRange, opts PebbleOptions) (err error) {
	if !validRange(kgs) {
		return fmt.Errorf("state: restore into %s: invalid key-group range [%d, %d)", workDir, kgs.Start, kgs.End)
	}
	if _, err := os.Lstat(workDir); err == nil {
		return fmt.Errorf("state: restore into %s: the directory already exists", workDir)
	}
	used, err := pickSources(workDir, sources, kgs)
	if err != nil {
		return err
	}

	cur := "" // the source being read, for errors
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("state: restore from %s into %s: %v", cur, workDir, r)
		}
		if err != nil {
			_ = os.RemoveAll(workDir)
		}
	}()
	manifests := make([]*ckptManifest, len(used))
	for i, s := range used {
		cur = s.Dir
		m, err := openCheckpoint(s)
		if err != nil {
			return fmt.Errorf("state: restore from checkpoint %s: %w", s.Dir, err)
		}
		manifests[i] = m
	}
	if err := os.MkdirAll(filepath.Dir(workDir), 0o755); err != nil {
		return fmt.Errorf("state: restore into %s: %w", workDir, err)
	}
	if len(used) == 1 && used[0].KeyGroups == kgs && !manifests[0].canonical {
		cur = used[0].Dir
		return linkCheckpoint(workDir, used[0].Dir, manifests[0])
	}
	return copyKeyGroups(workDir, used, manifests, kgs, opts.withDefaults(), &cur)
}

// linkCheckpoint makes workDir a copy of checkpoint dir, hard-linking the
// immutable SSTs.
func linkCheckpoint(workDir, dir string, m *ckptManifest) error {
	if err := os.Mkdir(workDir, 0o755); err != nil {
		return fmt.Errorf("state: restore into %s: %w", workDir, err)
	}
	for _, f := range m.files {
		src, dst := filepath.Join(dir, f.name), filepath.Join(workDir, f.name)
		if strings.HasSuffix(f.name, ".sst") && os.Link(src, dst) == nil {
			continue
		}
		if err := copyFile(src, dst); err != nil {
			return fmt.Errorf("state: restore from %s into %s: %w", dir, workDir, err)
		}
	}
	if err := SyncDir(workDir); err != nil {
		return fmt.Errorf("state: restore into %s: %w", workDir, err)
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// noLockFS opens checkpoints read-only without creating a LOCK file in
// them, so that a checkpoint on read-only storage can be restored.
type noLockFS struct{ vfs.FS }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

func (noLockFS) Lock(string) (io.Closer, error) { return nopCloser{}, nil }

// ingestFileBytes is the size at which a restore starts a new SST.
const ingestFileBytes = 32 << 20

// copyKeyGroups creates a DB in workDir holding the entries of key
// groups kgs of the sources. The entries are written, in key order, into
// SSTs beside workDir, which the new DB then ingests: no memtable, no
// compaction.
func copyKeyGroups(workDir string, sources []RestoreSource, manifests []*ckptManifest, kgs KeyGroupRange, opts PebbleOptions, cur *string) error {
	cache := newBlockCache(opts)
	defer cache.Unref()
	po := pebbleOptions(opts, cache)
	po.ErrorIfExists = true
	db, err := pebble.Open(workDir, po)
	if err != nil {
		return fmt.Errorf("state: restore into %s: %w", workDir, err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = db.Close()
		}
	}()
	if err := db.Set(metaKGKey, encodeKGRange(kgs), pebble.NoSync); err != nil {
		return fmt.Errorf("state: restore into %s: %w", workDir, err)
	}
	tmp := workDir + ".ingest"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("state: restore into %s: %w", workDir, err)
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return fmt.Errorf("state: restore into %s: %w", workDir, err)
	}
	defer os.RemoveAll(tmp)
	w := &sstWriter{dir: tmp, opts: po.MakeWriterOptions(6, db.FormatMajorVersion().MaxTableFormat())}
	for i, src := range sources {
		*cur = src.Dir
		lo, hi := max(src.KeyGroups.Start, kgs.Start), min(src.KeyGroups.End, kgs.End)
		if err := copySource(w, src.Dir, manifests[i], lo, hi, opts, cache); err != nil {
			w.abort()
			return fmt.Errorf("state: restore from checkpoint %s into %s: %w", src.Dir, workDir, err)
		}
	}
	*cur = ""
	if err := w.finish(); err != nil {
		return fmt.Errorf("state: restore into %s: %w", workDir, err)
	}
	if len(w.files) > 0 {
		if err := db.Ingest(w.files); err != nil {
			return fmt.Errorf("state: restore into %s: %w", workDir, err)
		}
	}
	if err := db.Flush(); err != nil {
		return fmt.Errorf("state: restore into %s: %w", workDir, err)
	}
	closed = true
	if err := db.Close(); err != nil {
		return fmt.Errorf("state: restore into %s: %w", workDir, err)
	}
	return nil
}

// sstWriter writes ascending keys into a series of SSTs; the caller
// closes the current file where the next keys may not follow in order.
type sstWriter struct {
	dir   string
	opts  sstable.WriterOptions
	w     *sstable.Writer
	files []string
}

func (s *sstWriter) set(k, v []byte) error {
	if s.w != nil && s.w.EstimatedSize() >= ingestFileBytes {
		if err := s.closeFile(); err != nil {
			return err
		}
	}
	if s.w == nil {
		path := filepath.Join(s.dir, fmt.Sprintf("%06d.sst", len(s.files)))
		f, err := vfs.Default.Create(path)
		if err != nil {
			return err
		}
		s.w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), s.opts)
		s.files = append(s.files, path)
	}
	return s.w.Set(k, v)
}

func (s *sstWriter) closeFile() error {
	w := s.w
	s.w = nil
	return w.Close()
}

func (s *sstWriter) finish() error {
	if s.w == nil {
		return nil
	}
	return s.closeFile()
}

func (s *sstWriter) abort() {
	if s.w != nil {
		_ = s.w.Close()
		s.w = nil
	}
}

// copySource writes the entries of key groups [lo, hi) of the snapshot
// in dir into w, one SST per state: the ranges of other sources fall
// between those of the next states.
func copySource(w *sstWriter, dir string, m *ckptManifest, lo, hi int, opts PebbleOptions, cache *pebble.Cache) error {
	var name []byte
	err := forEachEntry(dir, m, lo, hi, opts, cache, func(k, v []byte) error {
		n, err := stateName(k)
		if err != nil {
			return err
		}
		if !bytes.Equal(n, name) {
			if w.w != nil {
				if err := w.closeFile(); err != nil {
					return err
				}
			}
			name = append(name[:0], n...)
		}
		return w.set(k, v)
	})
	if err == nil && w.w != nil {
		err = w.closeFile()
	}
	return err
}

// CheckSnapshotFiles is the cheap half of a snapshot's verification: the
// manifest of dir is intact and every file it lists is present with its
// size. The checkpoint coordinator uses it to skip a damaged checkpoint
// before restoring; RestorePebble still verifies the file checksums.
func CheckSnapshotFiles(dir string) error {
	m, err := readCheckpointManifest(dir)
	if err != nil {
		return fmt.Errorf("state: %s: %w", dir, err)
	}
	for _, f := range m.files {
		fi, err := os.Lstat(filepath.Join(dir, f.name))
		switch {
		case err != nil:
			return fmt.Errorf("state: %s: file %s: %w", dir, f.name, err)
		case fi.Size() != f.size:
			return fmt.Errorf("state: %s: file %s has %d bytes, the manifest says %d (truncated?)", dir, f.name, fi.Size(), f.size)
		}
	}
	return nil
}

// SnapshotFile is one file a snapshot's manifest lists.
type SnapshotFile struct {
	Name string
	Size int64
	Hash uint64 // xxhash64 of the contents
}

// ManifestName is the name of the manifest file in every snapshot
// directory (native Pebble checkpoint or canonical key-group files); it
// is written last and lists every other file of the directory.
const ManifestName = ckptManifestName

// SnapshotFiles returns the files the manifest of the snapshot in dir
// lists, with their sizes and checksums, without reading them. A
// checkpoint store uses it to recognise a file it already holds.
func SnapshotFiles(dir string) ([]SnapshotFile, error) {
	m, err := readCheckpointManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("state: %s: %w", dir, err)
	}
	out := make([]SnapshotFile, len(m.files))
	for i, f := range m.files {
		out[i] = SnapshotFile{Name: f.name, Size: f.size, Hash: f.hash}
	}
	return out, nil
}
