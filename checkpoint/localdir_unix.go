//go:build unix

package checkpoint

import (
	"io"
	"os"
	"syscall"
)

// tryLock takes an exclusive lock on the file at path (created if
// missing) without waiting; the lock goes with the process.
func tryLock(path string) (io.Closer, bool) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return nil, false
	}
	return f, true
}
