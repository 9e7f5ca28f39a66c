//go:build !unix

package checkpoint

import (
	"io"
	"os"
)

// tryLock cannot tell a live owner from a dead one here: it takes a new
// directory's lock only, so leftover directories are never removed.
func tryLock(path string) (io.Closer, bool) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, false
	}
	return f, true
}
