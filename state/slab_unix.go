//go:build unix

package state

import (
	"fmt"
	"syscall"
)

// mapRegion maps n bytes of zeroed anonymous memory, outside the Go heap.
// Running out of address space is fatal, as running out of heap is.
func mapRegion(n int) []byte {
	n = (n + pageSize - 1) &^ (pageSize - 1)
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		panic(fmt.Sprintf("state: mapping %d bytes for in-memory state: %v", n, err))
	}
	return b
}

// unmapRegion unmaps a region mapRegion returned, whole.
func unmapRegion(b []byte) {
	if err := syscall.Munmap(b[:cap(b)]); err != nil {
		panic(fmt.Sprintf("state: unmapping %d bytes of in-memory state: %v", cap(b), err))
	}
}

var pageSize = syscall.Getpagesize()
