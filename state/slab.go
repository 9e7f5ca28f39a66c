package state

import (
	"fmt"
	"math/bits"
	"runtime"
)

// slabs allocates the byte buffers of in-memory state (the map keys of a
// memMap's blocks: the encoded rows of a join side) outside the Go heap,
// in size classes carved out of large mapped chunks.
//
// Why outside the heap: the garbage collector lets the heap grow to
// twice what is live before it collects (GOGC=100), so a byte of state
// on the heap costs about two bytes of resident memory. Buffers here
// cost their size class, at most 1/8 above what they hold. They hold
// no pointers, so the collector has nothing to scan in them either.
//
// Ownership: a buffer belongs to the one block that allocated it until
// that block frees it or is dropped with its memMap. Slices handed out
// of a buffer (Range's map keys) are valid only until the state is next
// changed, as the MapState contract says. The chunks are returned to
// the system when the slabs become unreachable (a cleanup, not Close):
// nothing is unmapped while a state that may still read it is alive,
// even a state used after its store was closed.
//
// A slabs is used from one goroutine, like the states that share it; a
// snapshot reading blocks of frozen key groups on another goroutine
// reads only buffers nobody frees meanwhile.
type slabs struct {
	m *slabMem
}

// slabMem is the memory of a slabs, apart from it so that the cleanup
// of the slabs can release it.
type slabMem struct {
	free   [slabClasses][][]byte // freed buffers per class
	cur    [slabClasses][]byte   // rest of the chunk a class carves from
	chunks [][]byte              // every chunk, for release
	big    map[*byte][]byte      // buffers mapped on their own, by address
	mapped int64                 // bytes mapped
	live   int64                 // capacity of the buffers handed out and not freed
}

const (
	// slabChunk is the size of the regions carved into buffers of the
	// small classes.
	slabChunk = 1 << 20
	// slabMaxClass is the largest class carved out of chunks; a larger
	// buffer is mapped on its own, and unmapped when freed.
	slabMaxClass = 64 << 10
	// slabClasses covers 16 bytes to slabMaxClass in steps of 1/8 of a
	// power of two (classOf).
	slabClasses = 8 * (17 - 4)
)

func newSlabs() *slabs {
	s := &slabs{m: &slabMem{}}
	runtime.AddCleanup(s, (*slabMem).release, s.m)
	return s
}

// classOf returns the class of a buffer of n bytes and the class's size:
// n rounded up to 3 significant bits, and at least 16.
func classOf(n int) (int, int) {
	if n <= 16 {
		return 0, 16
	}
	l := bits.Len(uint(n - 1)) // 2^(l-1) < n <= 2^l
	step := 1 << (l - 4)       // 1/8 of 2^(l-1)
	size := (n + step - 1) &^ (step - 1)
	return 8*(l-5) + (size>>(l-4) - 8), size
}

// alloc returns a buffer of length 0 and capacity at least n.
func (s *slabs) alloc(n int) []byte {
	m := s.m
	if n > slabMaxClass {
		b := mapRegion(n)
		m.mapped += int64(cap(b))
		if m.big == nil {
			m.big = map[*byte][]byte{}
		}
		m.big[&b[0]] = b
		m.live += int64(cap(b))
		return b[:0]
	}
	c, size := classOf(n)
	m.live += int64(size)
	if f := m.free[c]; len(f) > 0 {
		b := f[len(f)-1]
		f[len(f)-1] = nil
		m.free[c] = f[:len(f)-1]
		return b
	}
	if len(m.cur[c]) < size {
		ch := mapRegion(slabChunk)
		m.chunks = append(m.chunks, ch)
		m.mapped += slabChunk
		m.cur[c] = ch
	}
	b := m.cur[c][:0:size]
	m.cur[c] = m.cur[c][size:]
	return b
}

// free gives back a buffer alloc returned (resliced from its start, with
// its capacity); a nil buffer is ignored.
func (s *slabs) free(b []byte) {
	if cap(b) == 0 {
		return
	}
	if cap(b) > slabMaxClass {
		b = b[:cap(b)]
		if _, ok := s.m.big[&b[0]]; !ok {
			panic(fmt.Sprintf("state: freeing a buffer of %d bytes the slabs did not map", cap(b)))
		}
		delete(s.m.big, &b[0])
		s.m.mapped -= int64(cap(b))
		s.m.live -= int64(cap(b))
		unmapRegion(b)
		return
	}
	c, size := classOf(cap(b))
	if size != cap(b) {
		panic(fmt.Sprintf("state: freeing a buffer of %d bytes, not a slab class", cap(b)))
	}
	s.m.live -= int64(size)
	s.m.free[c] = append(s.m.free[c], b[:0])
}

// grow returns b with room for n more bytes: b itself, or a copy in a
// larger buffer (b is freed). The capacity grows by a quarter at least,
// so that appending a byte at a time copies O(1) bytes per byte.
func (s *slabs) grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := s.alloc(max(len(b)+n, cap(b)+cap(b)/4))
	nb = append(nb, b...)
	s.free(b)
	return nb
}

// release unmaps every region: once the slabs are unreachable.
func (m *slabMem) release() {
	for _, ch := range m.chunks {
		unmapRegion(ch)
	}
	for _, b := range m.big {
		unmapRegion(b)
	}
	*m = slabMem{}
}
