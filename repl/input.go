package repl

import (
	"io"
	"os"
	"sync"
)

// input owns the terminal's standard input. One goroutine reads it and
// hands every chunk either to readline (at the prompt) or to the result
// view of the running query (keys to scroll and quit), so the two never
// race for the same bytes: readline keeps a read pending even between
// prompts, and would otherwise swallow the keys meant for the view.
type input struct {
	mu     sync.Mutex
	view   chan []byte // non-nil while a result view takes the keys
	line   chan []byte // to readline
	closed chan struct{}
	once   sync.Once
}

func newInput(f *os.File) *input {
	in := &input{line: make(chan []byte, 64), closed: make(chan struct{})}
	go in.pump(f)
	return in
}

func (in *input) pump(f io.Reader) {
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			b := append([]byte(nil), buf[:n]...)
			in.mu.Lock()
			v := in.view
			in.mu.Unlock()
			if v != nil {
				select {
				case v <- b:
				default: // the view is busy: drop keys rather than block
				}
			} else {
				select {
				case in.line <- b:
				case <-in.closed:
					return
				}
			}
		}
		if err != nil {
			close(in.line)
			return
		}
	}
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
