//go:build !unix

package state

// mapRegion returns n bytes on the Go heap where memory cannot be mapped
// apart from it: the slabs then only save the growth slack.
func mapRegion(n int) []byte { return make([]byte, n) }

func unmapRegion([]byte) {}
