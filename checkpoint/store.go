package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/streamsql/streamsql/internal/fsutil"
	"github.com/streamsql/streamsql/internal/secrets"
)

// Store is where checkpoints are kept: a directory of the local file
// system (state.checkpoints.dir given as a path) or a bucket
// (file:///abs/dir or s3://bucket/prefix?region=…, see OpenStore).
//
// The coordinator has one code path for both. Every snapshot is written
// into a local directory first (Local()/<rel>/node-<id>-<subtask>), then
// handed to the store with PutState; Commit writes the metadata last, and
// only then does the checkpoint count: a reader never sees a checkpoint
// whose metadata is there and whose state is not. A local store keeps
// the snapshot where it was written, so PutState costs nothing and the
// layout is the one of doc.go.
//
// A checkpoint is named by rel: "chk-<n>" in a job's store, or "" for a
// savepoint, which is a store of its own holding one checkpoint at its
// root. Methods may be called from several goroutines; the coordinator
// calls PutState concurrently for the subtasks of one checkpoint, and
// everything else one call at a time.
type Store interface {
	// Local is the local directory the job's working state (work/) and
	// its snapshots (<rel>/…) are written to: the store itself for a
	// local store, a temporary directory that Close removes for a
	// bucket.
	Local() string
	// Probe checks that the store can be written, with a small object
	// written and deleted again.
	Probe(ctx context.Context) error
	// List returns the ids of the chk-<n> checkpoints in folder under of
	// the store ("" for its root), complete or not, newest first.
	List(ctx context.Context, under string) ([]int64, error)
	// Names lists what is directly under folder rel ("" for the root):
	// the names of files and of folders, without a trailing slash.
	Names(ctx context.Context, rel string) ([]string, error)
	// ReadFile reads the file at rel; an error wrapping fs.ErrNotExist
	// means there is none.
	ReadFile(ctx context.Context, rel string) ([]byte, error)
	// Create writes data at rel only if nothing is there, atomically
	// against every process sharing the store: of two Creates of one rel,
	// exactly one returns true. It returns false when rel exists.
	Create(ctx context.Context, rel string, data []byte) (bool, error)
	// Exists reports whether anything is stored at rel: a file or
	// directory, an object or objects under rel/.
	Exists(ctx context.Context, rel string) (bool, error)
	// Read reads and verifies the metadata of checkpoint rel. An error
	// wrapping errIncomplete means the checkpoint has none: it never
	// completed.
	Read(ctx context.Context, rel string) (*Metadata, error)
	// Fetch makes the state of checkpoint rel, whose metadata Read
	// returned, available on the local disk and returns the local
	// directory to restore it from.
	Fetch(ctx context.Context, rel string, m *Metadata) (string, error)
	// PutState stores the snapshot of one subtask written to
	// Local()/<rel>/<sub> and returns the files the metadata should list
	// (nil for a local store).
	PutState(ctx context.Context, rel, sub string) ([]File, error)
	// Commit writes the metadata of checkpoint rel, after all its state:
	// from then on the checkpoint counts.
	Commit(ctx context.Context, rel string, m *Metadata) error
	// Remove deletes checkpoint rel, but none of the files that the
	// checkpoints kept still use: it deletes the metadata first, so a
	// checkpoint half removed reads as incomplete.
	Remove(ctx context.Context, rel string, kept []string) error
	// Delete deletes the file at rel, if there is one.
	Delete(ctx context.Context, rel string) error
	// Close releases the store; it removes a bucket store's local
	// directory. The state stores must be closed first.
	Close() error
	// String names the store for messages, without secrets.
	String() string
}

// OpenStore opens the store at loc: a plain path, or a URL with the
// scheme file (file:///abs/dir) or s3 (s3://bucket/prefix?region=…&
// endpoint=…, gocloud.dev's URL parameters). A bucket store writes its
// snapshots to a new temporary local directory first (os.TempDir, so
// TMPDIR chooses where). Opening creates nothing at loc.
func OpenStore(ctx context.Context, loc string) (Store, error) {
	if !IsURL(loc) {
		return localStore{dir: loc}, nil
	}
	return openBucketStore(ctx, loc)
}

// IsURL reports whether loc is a URL (scheme://…) rather than a path.
func IsURL(loc string) bool {
	i := strings.Index(loc, "://")
	if i <= 0 {
		return false
	}
	for _, r := range loc[:i] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// Join appends path elements to a store location, a path or a URL (into
// the URL's path, before its query).
func Join(loc string, elem ...string) string {
	if !IsURL(loc) {
		return filepath.Join(append([]string{loc}, elem...)...)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return loc + "/" + strings.Join(elem, "/") // OpenStore reports the error
	}
	u.Path = path.Join(append([]string{"/", u.Path}, elem...)...)
	u.RawPath = ""
	return u.String()
}

// Redact returns loc fit for messages and logs: the password of its user
// information and the value of every query parameter that may carry a
// credential are masked.
func Redact(loc string) string {
	if !IsURL(loc) {
		return loc
	}
	u, err := url.Parse(loc)
	if err != nil {
		return secrets.Mask(loc)
	}
	if u.User != nil {
		if _, set := u.User.Password(); set {
			u.User = url.UserPassword(u.User.Username(), secrets.Redacted)
		}
	}
	// The query is kept as written, but for the values of parameters
	// that may be secret.
	parts := strings.Split(u.RawQuery, "&")
	for i, p := range parts {
		k, _, hasValue := strings.Cut(p, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if hasValue && secretParam(k) {
			parts[i] = k + "=" + secrets.Redacted
		}
	}
	u.RawQuery = strings.Join(parts, "&")
	return strings.Replace(u.String(), ":"+url.PathEscape(secrets.Redacted)+"@", ":"+secrets.Redacted+"@", 1)
}

// urlInText finds the URLs in a text, such as an error of a driver
// that quotes the URL it was given.
var urlInText = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"']+`)

// redactText applies Redact to every URL in s.
func redactText(s string) string { return urlInText.ReplaceAllStringFunc(s, Redact) }

// secretParam reports whether a URL query parameter may carry a
// credential: what secrets.IsSecretKey says, and any key, secret, token
// or credential in its name (an access key id is not secret, but
// masking it costs nothing).
func secretParam(k string) bool {
	if secrets.IsSecretKey(k) {
		return true
	}
	l := strings.ToLower(k)
	for _, w := range []string{"key", "secret", "token", "credential", "password", "signature", "sig"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

func chkRel(id int64) string { return fmt.Sprintf("chk-%d", id) }

// localStore keeps checkpoints in a local directory, the layout of
// doc.go: snapshots are written in place, so PutState has nothing to do.
type localStore struct{ dir string }

var _ Store = localStore{}

func (s localStore) Local() string  { return s.dir }
func (s localStore) String() string { return s.dir }
func (s localStore) Close() error   { return nil }

func (s localStore) Probe(context.Context) error {
	f, err := os.CreateTemp(s.dir, ".probe-")
	if err != nil {
		return err
	}
	name := f.Name()
	_, err = f.WriteString("streamsql")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	return err
}

func (s localStore) List(_ context.Context, under string) ([]int64, error) {
	return checkpointDirs(filepath.Join(s.dir, filepath.FromSlash(under)))
}

func (s localStore) Names(_ context.Context, rel string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, filepath.FromSlash(rel)))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, nil
}

func (s localStore) ReadFile(_ context.Context, rel string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(rel)))
}

func (s localStore) Delete(_ context.Context, rel string) error {
	err := os.Remove(filepath.Join(s.dir, filepath.FromSlash(rel)))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

func (s localStore) Create(_ context.Context, rel string, data []byte) (bool, error) {
	return createExclusive(filepath.Join(s.dir, filepath.FromSlash(rel)), data)
}

// createExclusive writes data to a temporary file next to name and
// hard-links it to name: link(2) fails if name exists, atomically, on
// every POSIX file system (NFS included), so two processes never both
// create name, and name never holds partial contents.
func createExclusive(name string, data []byte) (bool, error) {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	f, err := os.CreateTemp(dir, ".create-")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	if err := os.Link(tmp, name); err != nil {
		if errors.Is(err, os.ErrExist) {
			return false, nil
		}
		return false, err
	}
	return true, fsutil.SyncDir(dir)
}

func (s localStore) Exists(_ context.Context, rel string) (bool, error) {
	_, err := os.Lstat(filepath.Join(s.dir, rel))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (s localStore) Read(_ context.Context, rel string) (*Metadata, error) {
	return ReadMetadata(filepath.Join(s.dir, rel))
}

func (s localStore) Fetch(_ context.Context, rel string, _ *Metadata) (string, error) {
	return filepath.Join(s.dir, rel), nil
}

func (s localStore) PutState(context.Context, string, string) ([]File, error) { return nil, nil }

func (s localStore) Commit(_ context.Context, rel string, m *Metadata) error {
	return writeMetadata(filepath.Join(s.dir, rel), m)
}

// Remove deletes the directory: hard links keep the files a newer
// checkpoint shares.
func (s localStore) Remove(_ context.Context, rel string, _ []string) error {
	dir := filepath.Join(s.dir, rel)
	if err := os.Remove(filepath.Join(dir, MetadataFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := fsutil.SyncDir(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return os.RemoveAll(dir)
}
