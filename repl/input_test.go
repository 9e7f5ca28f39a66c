package repl

import (
	"io"
	"os"
	"testing"
	"time"
)

// Keys go to readline at the prompt and to the result view while one is
// shown, never to both.
func TestInputRouting(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	in := newInput(r)
	lr := in.lineReader()
	read := func(n int) string {
		t.Helper()
		buf := make([]byte, n)
		done := make(chan struct{})
		var got int
		go func() {
			got, err = io.ReadFull(lr, buf)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("readline got nothing")
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(buf[:got])
	}
	w.WriteString("SELECT 1;\r")
	if got := read(10); got != "SELECT 1;\r" {
		t.Fatalf("readline read %q", got)
	}

	view := make(chan []byte, 4)
	in.setView(view)
	w.WriteString("q")
	select {
	case b := <-view:
		if string(b) != "q" {
			t.Fatalf("the view got %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the view got nothing")
	}
	in.setView(nil)
	w.WriteString("x")
	if got := read(1); got != "x" {
		t.Fatalf("readline read %q after the view closed", got)
	}

	// Close ends a pending read with io.EOF.
	errc := make(chan error, 1)
	go func() {
		_, err := lr.Read(make([]byte, 1))
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	lr.Close()
	select {
	case err := <-errc:
		if err != io.EOF {
			t.Fatalf("read after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the pending read")
	}
}

// A bracketed paste with a newline, or a long one, is queued whole and
// readline gets the mark and Enter; a short one-line paste reaches
// readline as keys. Markers cut by reads are still found.
func TestInputPastes(t *testing.T) {
	pr, pw := io.Pipe()
	in := &input{line: make(chan []byte, 64), closed: make(chan struct{})}
	go in.pump(pr)
	defer pw.Close()
	for _, chunk := range []string{"ab\x1b[20", "0~SELECT 1;\nSELECT", " 2\x1b[2", "01~cd", "\x1b[200~short\x1b[201~", "\x1b[A"} {
		if _, err := pw.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	var got string
	deadline := time.After(10 * time.Second)
	for want := "ab" + string(pasteMark) + "\rcdshort\x1b[A"; got != want; {
		select {
		case b := <-in.line:
			got += string(b)
		case <-deadline:
			t.Fatalf("readline got %q, want %q", got, want)
		}
	}
	if p, ok := in.takePaste(); !ok || p != "SELECT 1;\nSELECT 2" {
		t.Fatalf("paste %q %v", p, ok)
	}
	if _, ok := in.takePaste(); ok {
		t.Fatal("the short paste was queued")
	}
}
