//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package repl

import "golang.org/x/sys/unix"

// keysMode puts the terminal into the mode used while a query runs: keys
// arrive one by one without echo (so the result view can read arrows and
// 'q', and typing does not garble the output), while Ctrl-C still raises
// SIGINT. It returns a function restoring the previous mode.
func keysMode(fd int) (restore func(), err error) {
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return func() {}, err
	}
	t := *old
	t.Lflag &^= unix.ICANON | unix.ECHO
	t.Lflag |= unix.ISIG
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &t); err != nil {
		return func() {}, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }, nil
}

// termSize returns the terminal's width and height.
func termSize(fd int) (w, h int, ok bool) {
	ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 || ws.Row == 0 {
		return 0, 0, false
	}
	return int(ws.Col), int(ws.Row), true
}
