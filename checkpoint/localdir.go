package checkpoint

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// localDirPrefix names the local directories of bucket stores in
// os.TempDir().
const localDirPrefix = "streamsql-checkpoints-"

// newLocalDirPrefix names a local directory while it is being created.
const newLocalDirPrefix = "streamsql-new-checkpoints-"

// newLocalDir creates the local directory of a bucket store and holds
// it for the life of the process: a lock file inside it stays locked
// until the store closes it or the process dies. Before that, it removes
// the directories of earlier processes that died (SIGKILL, OOM) without
// removing theirs: a worker restarted in a loop with the same temporary
// volume (a pod's emptyDir survives container restarts) would otherwise
// fill it.
func newLocalDir() (dir string, lock io.Closer, err error) {
	tmp := os.TempDir()
	if ents, err := os.ReadDir(tmp); err == nil {
		for _, e := range ents {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), localDirPrefix) {
				continue
			}
			d := filepath.Join(tmp, e.Name())
			if l, ok := tryLock(filepath.Join(d, ".lock")); ok {
				_ = os.RemoveAll(d) // its process is gone
				_ = l.Close()
			}
		}
	}
	// The directory is locked under a name the sweep above ignores, and
	// only then renamed into its final name: another store sweeping at
	// the same moment (the tasks of a cluster worker open theirs at once)
	// would otherwise take an unlocked new directory for a dead one.
	fresh, err := os.MkdirTemp(tmp, newLocalDirPrefix)
	if err != nil {
		return "", nil, err
	}
	l, ok := tryLock(filepath.Join(fresh, ".lock"))
	if !ok {
		_ = os.RemoveAll(fresh)
		return "", nil, &os.PathError{Op: "lock", Path: fresh, Err: os.ErrPermission}
	}
	dir = filepath.Join(tmp, localDirPrefix+strings.TrimPrefix(filepath.Base(fresh), newLocalDirPrefix))
	if err := os.Rename(fresh, dir); err != nil {
		_ = l.Close()
		_ = os.RemoveAll(fresh)
		return "", nil, err
	}
	return dir, l, nil
}
