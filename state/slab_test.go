package state

import (
	"bytes"
	"testing"
)

// TestSlabClasses checks the size classes: every size up to the largest
// class rounds up by at most an eighth (16 bytes at least) to a class
// whose index and size map back to themselves, and the indexes are
// dense and ascending.
func TestSlabClasses(t *testing.T) {
	prevC, prevSize := -1, 0
	for n := 1; n <= slabMaxClass; n++ {
		c, size := classOf(n)
		if size < n || (n > 16 && 8*size > 9*n) || (n <= 16 && size != 16) {
			t.Fatalf("classOf(%d) = class of %d bytes", n, size)
		}
		if c2, s2 := classOf(size); c2 != c || s2 != size {
			t.Fatalf("classOf(%d) = %d, %d but classOf(%d) = %d, %d", n, c, size, size, c2, s2)
		}
		switch {
		case c == prevC && size != prevSize, c != prevC && (c != prevC+1 || size <= prevSize):
			t.Fatalf("classOf(%d) = %d, %d after class %d of %d bytes", n, c, size, prevC, prevSize)
		}
		if c >= slabClasses {
			t.Fatalf("classOf(%d) = class %d, but there are %d", n, c, slabClasses)
		}
		prevC, prevSize = c, size
	}
}

// TestSlabAllocFree checks that buffers do not overlap, keep their bytes
// while others are allocated and freed, are reused once freed, and that
// buffers above the largest class are mapped and unmapped on their own.
func TestSlabAllocFree(t *testing.T) {
	s := newSlabs()
	var bufs [][]byte
	for i := range 2000 {
		n := 1 + (i*7919)%3000
		if i%100 == 0 {
			n = slabMaxClass + 1 + i
		}
		b := s.alloc(n)
		if len(b) != 0 || cap(b) < n {
			t.Fatalf("alloc(%d): len %d cap %d", n, len(b), cap(b))
		}
		b = append(b, bytes.Repeat([]byte{byte(i)}, n)...)
		bufs = append(bufs, b)
		if i%3 == 0 { // free an older one, whose bytes must be intact
			j := i / 2
			if o := bufs[j]; o != nil {
				if !bytes.Equal(o, bytes.Repeat([]byte{byte(j)}, len(o))) {
					t.Fatalf("buffer %d changed", j)
				}
				s.free(o)
				bufs[j] = nil
			}
		}
	}
	var held int64
	for i, b := range bufs {
		if b != nil {
			if !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, len(b))) {
				t.Fatalf("buffer %d changed", i)
			}
			held += int64(cap(b))
		}
	}
	if s.m.live != held {
		t.Fatalf("live %d, buffers held %d", s.m.live, held)
	}
	// A freed buffer of a class is handed out again.
	b := s.alloc(100)
	s.free(b)
	if c := s.alloc(99); &c[:1][0] != &b[:1][0] {
		t.Fatal("a freed buffer of the class was not reused")
	}
	// grow keeps the bytes and frees the old buffer.
	g := append(s.alloc(10), "0123456789"...)
	g = s.grow(g, 100)
	if string(g) != "0123456789" || cap(g) < 110 {
		t.Fatalf("grow: %q, cap %d", g, cap(g))
	}
	for i, b := range bufs {
		if b != nil {
			s.free(b)
			bufs[i] = nil
		}
	}
	if len(s.m.big) != 0 {
		t.Fatalf("%d large buffers still mapped after they were all freed", len(s.m.big))
	}
}
