package checkpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"

	"github.com/streamsql/streamsql/state"
)

// bucketStore keeps checkpoints in a bucket through gocloud.dev/blob,
// with the layout of a local store (doc.go), one object per file:
//
//	<prefix>/chk-<n>/_metadata               written last, by Commit
//	<prefix>/chk-<n>/node-<id>-<subtask>/<file>
//
// Snapshots are written to a local directory first, as for a local
// store, and uploaded by PutState. A file identical (same subtask, name,
// size and checksum) to one of the newest committed checkpoint is not
// uploaded again: the metadata names the object that holds it (File.
// Object), in the folder of the checkpoint that uploaded it, and Remove
// keeps the objects that a kept checkpoint names. Pebble's SSTs never
// change once written, so a checkpoint uploads roughly what changed since
// the previous one.
type bucketStore struct {
	b    *blob.Bucket
	name string // the location, redacted
	// fileRoot is the directory of a file:// store: Create links files
	// there itself, since fileblob's IfNotExist is atomic only within
	// one process.
	fileRoot string
	local    string
	lock     io.Closer // holds local while the store is open (localdir.go)

	mu sync.Mutex
	// index holds the files of the newest checkpoint committed or
	// fetched, by fileKey, with Object set to where each one is.
	index map[string]File
	// refs caches, per committed checkpoint, every object its metadata
	// names (metadata never changes once written).
	refs map[string]map[string]bool
}

var _ Store = (*bucketStore)(nil)

func openBucketStore(ctx context.Context, loc string) (*bucketStore, error) {
	name := Redact(loc)
	u, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: the checkpoint store %s is not a valid URL", name)
	}
	var b *blob.Bucket
	var fileRoot string
	switch u.Scheme {
	case fileblob.Scheme:
		// Temporary files next to their objects: os.TempDir may be on
		// another file system than a shared volume, where a rename fails.
		o := &fileblob.URLOpener{Options: fileblob.Options{CreateDir: true, Metadata: fileblob.MetadataDontWrite, NoTempDir: true}}
		b, err = o.OpenBucketURL(ctx, u)
		fileRoot = filepath.FromSlash(u.Path)
	case s3blob.Scheme:
		// s3://bucket/prefix: the path is a folder in the bucket.
		prefix := strings.Trim(u.Path, "/")
		bu := *u
		bu.Path, bu.RawPath = "", ""
		b, err = (&s3blob.URLOpener{}).OpenBucketURL(ctx, &bu)
		if err == nil && prefix != "" {
			b = blob.PrefixedBucket(b, prefix+"/")
		}
	default:
		return nil, fmt.Errorf("checkpoint: the checkpoint store %s has an unsupported scheme %q: use a path, file:///dir or s3://bucket/prefix", name, u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: opening the checkpoint store %s: %s", name, redactText(err.Error()))
	}
	local, lock, err := newLocalDir()
	if err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("checkpoint: a local directory for the checkpoint store %s: %w", name, err)
	}
	return &bucketStore{b: b, name: name, fileRoot: fileRoot, local: local, lock: lock, index: map[string]File{}, refs: map[string]map[string]bool{}}, nil
}

func (s *bucketStore) Local() string  { return s.local }
func (s *bucketStore) String() string { return s.name }

func (s *bucketStore) Close() error {
	err := s.b.Close()
	if rerr := os.RemoveAll(s.local); err == nil {
		err = rerr
	}
	_ = s.lock.Close()
	return err
}

// key is the object key of a path relative to the store's root.
func key(parts ...string) string {
	return strings.Join(slices.DeleteFunc(slices.Clone(parts), func(p string) bool { return p == "" }), "/")
}

// fileKey identifies a file of a subtask's state by its contents.
func fileKey(sub string, f File) string {
	return fmt.Sprintf("%s/%s/%d/%016x", sub, f.Name, f.Size, f.Hash)
}

func (s *bucketStore) wrap(what string, err error) error {
	return fmt.Errorf("checkpoint: the checkpoint store %s: %s: %s", s.name, what, redactText(err.Error()))
}

func (s *bucketStore) Probe(ctx context.Context) error {
	k := fmt.Sprintf("_probe-%d-%d", os.Getpid(), time.Now().UnixNano())
	if err := s.b.WriteAll(ctx, k, []byte("streamsql"), nil); err != nil {
		return fmt.Errorf("writing a probe object: %s", redactText(err.Error()))
	}
	if err := s.b.Delete(ctx, k); err != nil {
		return fmt.Errorf("deleting a probe object: %s", redactText(err.Error()))
	}
	return nil
}

func (s *bucketStore) List(ctx context.Context, under string) ([]int64, error) {
	if s.fileRoot != "" {
		return checkpointDirs(filepath.Join(s.fileRoot, filepath.FromSlash(under)))
	}
	var ids []int64
	prefix := ""
	if under != "" {
		prefix = under + "/"
	}
	it := s.b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, s.wrap("listing checkpoints", err)
		}
		if rest, ok := strings.CutPrefix(strings.TrimPrefix(obj.Key, prefix), "chk-"); ok && obj.IsDir {
			if n, err := strconv.ParseInt(strings.TrimSuffix(rest, "/"), 10, 64); err == nil {
				ids = append(ids, n)
			}
		}
	}
	slices.SortFunc(ids, func(a, b int64) int { return cmp.Compare(b, a) })
	return ids, nil
}

func (s *bucketStore) Names(ctx context.Context, rel string) ([]string, error) {
	if s.fileRoot != "" {
		names, err := localStore{dir: s.fileRoot}.Names(ctx, rel)
		// Left out: fileblob's temporary files and createExclusive's.
		return slices.DeleteFunc(names, func(n string) bool {
			return strings.HasSuffix(n, ".tmp") || strings.HasPrefix(n, ".create-")
		}), err
	}
	prefix := ""
	if rel != "" {
		prefix = rel + "/"
	}
	var names []string
	it := s.b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return nil, s.wrap("listing "+prefix, err)
		}
		names = append(names, strings.TrimSuffix(strings.TrimPrefix(obj.Key, prefix), "/"))
	}
}

func (s *bucketStore) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	data, err := s.b.ReadAll(ctx, rel)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("checkpoint: %s: %w", key(s.name, rel), fs.ErrNotExist)
	}
	if err != nil {
		return nil, s.wrap("reading "+rel, err)
	}
	return data, nil
}

func (s *bucketStore) Delete(ctx context.Context, rel string) error {
	if err := s.b.Delete(ctx, rel); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return s.wrap("deleting "+rel, err)
	}
	return nil
}

// A file:// store lists its checkpoints and owner records by reading
// the directory: fileblob's listing walks the tree and fails when a file
// it walks past is renamed or removed meanwhile (another process's
// upload or claim), which the owner check must not.

// Create is a conditional write (S3's If-None-Match: *), or a hard link
// in a file:// store's directory.
func (s *bucketStore) Create(ctx context.Context, rel string, data []byte) (bool, error) {
	if s.fileRoot != "" {
		ok, err := createExclusive(filepath.Join(s.fileRoot, filepath.FromSlash(rel)), data)
		if err != nil {
			return false, s.wrap("creating "+rel, err)
		}
		return ok, nil
	}
	err := s.b.WriteAll(ctx, rel, data, &blob.WriterOptions{IfNotExist: true})
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return false, nil
	}
	if err != nil {
		return false, s.wrap("creating "+rel, err)
	}
	return true, nil
}

func (s *bucketStore) Exists(ctx context.Context, rel string) (bool, error) {
	if rel != "" {
		ok, err := s.b.Exists(ctx, rel)
		if err != nil || ok {
			return ok, err
		}
		rel += "/"
	}
	it := s.b.List(&blob.ListOptions{Prefix: rel})
	_, err := it.Next(ctx)
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		return false, s.wrap("listing "+rel, err)
	}
	return true, nil
}

func (s *bucketStore) Read(ctx context.Context, rel string) (*Metadata, error) {
	where := key(s.name, rel)
	data, err := s.b.ReadAll(ctx, key(rel, MetadataFile))
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, fmt.Errorf("checkpoint: %s has no %s (%w)", where, MetadataFile, errIncomplete)
	}
	if err != nil {
		return nil, s.wrap("reading "+key(rel, MetadataFile), err)
	}
	m, err := parseMetadata(where, data)
	if err != nil {
		return nil, err
	}
	for _, st := range m.Subtasks {
		if st.StateDir != "" && len(st.Files) == 0 {
			return nil, fmt.Errorf("checkpoint: %s: state of %s/%d lists no files", where, st.Name, st.Subtask)
		}
	}
	return m, nil
}

// Fetch downloads every state file of checkpoint rel into
// Local()/<rel>, checks each snapshot's manifest and sizes there
// (restoring verifies the checksums), and, for a checkpoint of this
// store, remembers its files so the next checkpoint uploads only what
// changed.
func (s *bucketStore) Fetch(ctx context.Context, rel string, m *Metadata) (string, error) {
	dir := filepath.Join(s.local, rel)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	for _, st := range m.Subtasks {
		if st.StateDir == "" {
			continue
		}
		sdir := filepath.Join(dir, filepath.FromSlash(st.StateDir))
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			return "", err
		}
		for _, f := range st.Files {
			obj := f.Object
			if obj == "" {
				obj = key(rel, st.StateDir, f.Name)
			}
			if err := s.download(ctx, obj, filepath.Join(sdir, f.Name), f.Size); err != nil {
				_ = os.RemoveAll(dir)
				return "", fmt.Errorf("checkpoint: %s: state of %s/%d: %w", key(s.name, rel), st.Name, st.Subtask, err)
			}
		}
		if err := state.CheckSnapshotFiles(sdir); err != nil {
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("checkpoint: %s: state of %s/%d: %w", key(s.name, rel), st.Name, st.Subtask, err)
		}
	}
	if rel != "" {
		s.remember(rel, m)
	}
	return dir, nil
}

func (s *bucketStore) download(ctx context.Context, obj, dst string, size int64) error {
	r, err := s.b.NewReader(ctx, obj, nil)
	if err != nil {
		return fmt.Errorf("object %s: %s", obj, redactText(err.Error()))
	}
	defer r.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("object %s: %s", obj, redactText(err.Error()))
	}
	if n != size {
		return fmt.Errorf("object %s has %d bytes, the metadata says %d (truncated?)", obj, n, size)
	}
	return nil
}

// PutState uploads the files of Local()/<rel>/<sub>, but not those the
// newest committed checkpoint already holds (savepoints, rel "", upload
// everything: they must stand alone).
func (s *bucketStore) PutState(ctx context.Context, rel, sub string) ([]File, error) {
	dir := filepath.Join(s.local, rel, filepath.FromSlash(sub))
	listed, err := state.SnapshotFiles(dir)
	if err != nil {
		return nil, err
	}
	sums := make(map[string]state.SnapshotFile, len(listed))
	for _, f := range listed {
		sums[f.Name] = f
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := make([]File, 0, len(ents))
	for _, e := range ents {
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("checkpoint: %s: a snapshot holds files only, not %s", dir, e.Name())
		}
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		f := File{Name: e.Name(), Size: fi.Size()}
		if sf, ok := sums[f.Name]; ok {
			if sf.Size != f.Size {
				return nil, fmt.Errorf("checkpoint: %s: %s has %d bytes, its manifest says %d", dir, f.Name, f.Size, sf.Size)
			}
			f.Hash = sf.Hash
		} else if f.Name != state.ManifestName {
			return nil, fmt.Errorf("checkpoint: %s: %s is not in the snapshot's manifest", dir, f.Name)
		}
		if rel != "" && f.Hash != 0 {
			s.mu.Lock()
			prev, ok := s.index[fileKey(sub, f)]
			s.mu.Unlock()
			if ok && sameFolder(rel, prev.Object) {
				f.Object = prev.Object
				files = append(files, f)
				continue
			}
		}
		if err := s.upload(ctx, key(rel, sub, f.Name), filepath.Join(dir, f.Name)); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// sameFolder reports whether obj, an object of a checkpoint, is in the
// folder of checkpoint rel: a checkpoint shares files only with the
// checkpoints next to it. In a cluster task's store each owner epoch
// has a folder, and the folder of a former owner, who may still be
// running and pruning its own checkpoints, is never referred to.
func sameFolder(rel, obj string) bool {
	dir := path.Dir(rel)
	if dir == "." {
		return strings.HasPrefix(obj, "chk-")
	}
	return strings.HasPrefix(obj, dir+"/")
}

func (s *bucketStore) upload(ctx context.Context, obj, src string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := s.b.Upload(ctx, obj, f, &blob.WriterOptions{ContentType: "application/octet-stream"}); err != nil {
		return s.wrap("uploading "+obj, err)
	}
	return nil
}

func (s *bucketStore) Commit(ctx context.Context, rel string, m *Metadata) error {
	data, err := encodeMetadata(m)
	if err != nil {
		return err
	}
	if err := s.b.WriteAll(ctx, key(rel, MetadataFile), data, &blob.WriterOptions{ContentType: "application/json"}); err != nil {
		return s.wrap("writing "+key(rel, MetadataFile), err)
	}
	if rel != "" {
		s.remember(rel, m)
	}
	return nil
}

// remember makes m, a committed checkpoint of this store, the one the
// next checkpoint shares files with.
func (s *bucketStore) remember(rel string, m *Metadata) {
	index := map[string]File{}
	refs := map[string]bool{}
	for _, st := range m.Subtasks {
		for _, f := range st.Files {
			if f.Object == "" {
				f.Object = key(rel, st.StateDir, f.Name)
			}
			refs[f.Object] = true
			if f.Hash != 0 {
				index[fileKey(st.StateDir, f)] = f
			}
		}
	}
	s.mu.Lock()
	s.index = index
	s.refs[rel] = refs
	s.mu.Unlock()
}

// referenced returns every object that the metadata of the checkpoints
// kept names.
func (s *bucketStore) referenced(ctx context.Context, kept []string) (map[string]bool, error) {
	all := map[string]bool{}
	for _, rel := range kept {
		s.mu.Lock()
		refs, ok := s.refs[rel]
		s.mu.Unlock()
		if !ok {
			m, err := s.Read(ctx, rel)
			if err != nil {
				return nil, err
			}
			refs = map[string]bool{}
			for _, st := range m.Subtasks {
				for _, f := range st.Files {
					if f.Object == "" {
						f.Object = key(rel, st.StateDir, f.Name)
					}
					refs[f.Object] = true
				}
			}
			s.mu.Lock()
			s.refs[rel] = refs
			s.mu.Unlock()
		}
		for o := range refs {
			all[o] = true
		}
	}
	return all, nil
}

func (s *bucketStore) Remove(ctx context.Context, rel string, kept []string) error {
	if err := os.RemoveAll(filepath.Join(s.local, rel)); err != nil {
		return err
	}
	keep, err := s.referenced(ctx, kept)
	if err != nil {
		return err // unsure what is still used: delete nothing
	}
	if err := s.b.Delete(ctx, key(rel, MetadataFile)); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return s.wrap("deleting "+key(rel, MetadataFile), err)
	}
	s.mu.Lock()
	delete(s.refs, rel)
	s.mu.Unlock()
	// Listed first, deleted after: no listing runs over its own deletes.
	var doomed []string
	it := s.b.List(&blob.ListOptions{Prefix: rel + "/"})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return s.wrap("listing "+rel, err)
		}
		if !keep[obj.Key] {
			doomed = append(doomed, obj.Key)
		}
	}
	for _, k := range doomed {
		if err := s.b.Delete(ctx, k); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return s.wrap("deleting "+k, err)
		}
	}
	return nil
}
