package state

import (
	"math/bits"

	"github.com/cespare/xxhash/v2"
)

// keyFilter is a scalable blocked Bloom filter over the state keys
// (name, key group, key) that have entries in a store's DB, and over the
// full keys of map entries. A state key it has never seen has no
// entries, so a cache miss on a new key — every new group of an
// aggregation, every new join key — is answered without reading Pebble;
// and so is a miss on a new entry of an existing map (a new row under a
// join key that has rows: every bid of Nexmark q7). It has false
// positives (a few percent) and never forgets a key (deleted keys are
// just false positives).
//
// It grows by adding sub-filters, each four times the capacity of the
// previous one, at about 10 bits per key.
type keyFilter struct {
	subs []bloomBlocks
	n    int // keys in the last sub-filter
}

// bloomBlocks is one fixed-size blocked Bloom filter: a key sets 7 bits
// within one 512-bit block, so a lookup touches one cache line.
type bloomBlocks struct {
	words []uint64 // len is a multiple of 8
	cap   int
}

const (
	filterFirstCap   = 1 << 14
	filterGrowth     = 4
	filterBitsPerKey = 10
	filterProbes     = 7
)

func newBloomBlocks(capacity int) bloomBlocks {
	blocks := (capacity*filterBitsPerKey + 511) / 512
	return bloomBlocks{words: make([]uint64, blocks*8), cap: capacity}
}

// probeBits derives the in-block bit positions from h, mixed so that
// they do not repeat the bits that chose the block.
func probeBits(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	return h ^ h>>29
}

// block returns the 8 words of h's block.
func (b *bloomBlocks) block(h uint64) []uint64 {
	i, _ := bits.Mul64(h, uint64(len(b.words)/8))
	return b.words[i*8:][:8]
}

func (b *bloomBlocks) add(h uint64) {
	blk := b.block(h)
	h2 := probeBits(h)
	for i := 0; i < filterProbes; i++ {
		bit := h2 & 511
		blk[bit>>6] |= 1 << (bit & 63)
		h2 = h2>>9 | h2<<55
	}
}

func (b *bloomBlocks) has(h uint64) bool {
	blk := b.block(h)
	h2 := probeBits(h)
	for i := 0; i < filterProbes; i++ {
		bit := h2 & 511
		if blk[bit>>6]&(1<<(bit&63)) == 0 {
			return false
		}
		h2 = h2>>9 | h2<<55
	}
	return true
}

func hashStateKey(k []byte) uint64 { return xxhash.Sum64(k) }

func (f *keyFilter) add(h uint64) {
	if len(f.subs) == 0 || f.n >= f.subs[len(f.subs)-1].cap {
		c := filterFirstCap
		if len(f.subs) > 0 {
			c = f.subs[len(f.subs)-1].cap * filterGrowth
		}
		f.subs = append(f.subs, newBloomBlocks(c))
		f.n = 0
	}
	f.subs[len(f.subs)-1].add(h)
	f.n++
}

func (f *keyFilter) mayContain(h uint64) bool {
	for i := len(f.subs) - 1; i >= 0; i-- {
		if f.subs[i].has(h) {
			return true
		}
	}
	return false
}

// merge adds the keys of g (built separately) to f.
func (f *keyFilter) merge(g *keyFilter) {
	if len(g.subs) == 0 {
		return
	}
	// Keep f's last sub-filter last, so that adds continue to fill it.
	if len(f.subs) == 0 {
		*f = *g
		return
	}
	last := f.subs[len(f.subs)-1]
	f.subs = append(append(f.subs[:len(f.subs)-1:len(f.subs)-1], g.subs...), last)
}

// bytes returns the memory the filter holds.
func (f *keyFilter) bytes() int {
	n := 0
	for _, s := range f.subs {
		n += 8 * len(s.words)
	}
	return n
}
