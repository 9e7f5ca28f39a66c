package repl

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// input owns the terminal's standard input. One goroutine reads it and
// hands every chunk either to readline (at the prompt) or to the result
// view of the running query (keys to scroll and quit), so the two never
// race for the same bytes: readline keeps a read pending even between
// prompts, and would otherwise swallow the keys meant for the view.
//
// Pastes come wrapped in bracketed-paste markers (the REPL turns the mode
// on). readline redraws the whole line for every character it inserts, so
// a long pasted line would cost the square of its length; a paste that
// holds a newline or is long therefore bypasses readline: it is queued
// (takePaste), and readline gets pasteMark and Enter, which end its line
// so the REPL can take the paste whole. A short paste without a newline
// goes to readline as typed keys, so it can land in the middle of a line.
type input struct {
	mu     sync.Mutex
	view   chan []byte // non-nil while a result view takes the keys
	pastes []string    // pastes to take, in order, one per pasteMark sent
	line   chan []byte // to readline
	closed chan struct{}
	once   sync.Once
}

// Bracketed paste (xterm): the terminal sends pasteStart, the text, and
// pasteEnd, once the REPL has sent pasteOn.
const (
	pasteOn    = "\x1b[?2004h"
	pasteOff   = "\x1b[?2004l"
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
	// pasteMark ends the line readline returns for a queued paste: a
	// control character nobody types at the prompt (Ctrl-\, which
	// readline's raw mode delivers as a byte).
	pasteMark = '\x1c'
	// shortPaste is the longest paste without a newline still handed to
	// readline key by key.
	shortPaste = 256
)

func newInput(f *os.File) *input {
	in := &input{line: make(chan []byte, 64), closed: make(chan struct{})}
	go in.pump(f)
	return in
}

func (in *input) pump(f io.Reader) {
	buf := make([]byte, 4096)
	var (
		carry   []byte // the start of a marker cut by the read
		inPaste bool
		paste   []byte
	)
	for {
		n, err := f.Read(buf)
		data := append(carry, buf[:n]...)
		carry = nil
		for len(data) > 0 {
			marker := pasteStart
			if inPaste {
				marker = pasteEnd
			}
			i := bytes.Index(data, []byte(marker))
			if i < 0 {
				k := partialSuffix(data, marker)
				if !inPaste && in.viewing() {
					k = 0 // the view reads keys as they come: a lone Esc leaves it
				}
				if inPaste {
					paste = append(paste, data[:len(data)-k]...)
				} else if !in.deliver(data[:len(data)-k]) {
					return
				}
				carry = append([]byte(nil), data[len(data)-k:]...)
				break
			}
			if inPaste {
				paste = append(paste, data[:i]...)
				if !in.deliverPaste(paste) {
					return
				}
				paste = nil
			} else if !in.deliver(data[:i]) {
				return
			}
			inPaste = !inPaste
			data = data[i+len(marker):]
		}
		if err != nil {
			close(in.line)
			return
		}
	}
}

// partialSuffix is the length of the longest end of data that begins
// marker, to keep for the next read.
func partialSuffix(data []byte, marker string) int {
	for k := min(len(marker)-1, len(data)); k > 0; k-- {
		if bytes.Equal(data[len(data)-k:], []byte(marker[:k])) {
			return k
		}
	}
	return 0
}

func (in *input) viewing() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.view != nil
}

// deliver hands keys to the result view or to readline; it returns false
// once the input is closed.
func (in *input) deliver(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	b = append([]byte(nil), b...)
	in.mu.Lock()
	v := in.view
	in.mu.Unlock()
	if v != nil {
		select {
		case v <- b:
		default: // the view is busy: drop keys rather than block
		}
		return true
	}
	select {
	case in.line <- b:
		return true
	case <-in.closed:
		return false
	}
}

// deliverPaste hands over a bracketed paste: to the view as keys, to
// readline as keys when short and on one line, else queued for the REPL.
func (in *input) deliverPaste(p []byte) bool {
	if in.viewing() || len(p) <= shortPaste && !bytes.ContainsAny(p, "\r\n") {
		return in.deliver(p)
	}
	in.mu.Lock()
	in.pastes = append(in.pastes, string(p))
	in.mu.Unlock()
	return in.deliver([]byte{pasteMark, '\r'})
}

// takePaste returns the oldest queued paste, if any.
func (in *input) takePaste() (string, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.pastes) == 0 {
		return "", false
	}
	p := in.pastes[0]
	in.pastes = in.pastes[1:]
	return p, true
}

// setView routes input to ch until setView(nil).
func (in *input) setView(ch chan []byte) {
	in.mu.Lock()
	in.view = ch
	in.mu.Unlock()
}

// lineReader is readline's standard input.
func (in *input) lineReader() io.ReadCloser { return &lineReader{in: in} }

type lineReader struct {
	in   *input
	rest []byte
}

func (r *lineReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		select {
		case b, ok := <-r.in.line:
			if !ok {
				return 0, io.EOF
			}
			r.rest = b
		case <-r.in.closed:
			return 0, io.EOF
		}
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// Close makes pending and later reads return io.EOF, so readline's
// reading goroutine can end. The goroutine reading the terminal stays
// blocked until the next key or the process exit.
func (r *lineReader) Close() error {
	r.in.once.Do(func() { close(r.in.closed) })
	return nil
}
