//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package repl

import "golang.org/x/term"

// keysMode is a no-op here: keys arrive line by line while a query runs.
func keysMode(int) (func(), error) { return func() {}, nil }

func termSize(fd int) (w, h int, ok bool) {
	w, h, err := term.GetSize(fd)
	return w, h, err == nil
}
