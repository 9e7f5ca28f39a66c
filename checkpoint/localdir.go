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
	dir, err = os.MkdirTemp(tmp, localDirPrefix)
	if err != nil {
		return "", nil, err
	}
	l, ok := tryLock(filepath.Join(dir, ".lock"))
	if !ok {
		_ = os.RemoveAll(dir)
		return "", nil, &os.PathError{Op: "lock", Path: dir, Err: os.ErrPermission}
	}
	return dir, l, nil
}
