package parser

import (
	"fmt"
	"sort"
	"strings"
)

// An edit replaces the original bytes [start, end) with text. start == end
// is an insertion. Offsets into text map back to orig (usually start: the
// beginning of the construct it replaces).
type edit struct {
	start, end int
	text       string
	orig       int
}

// segment says where a stretch of the rewritten text came from. Rewritten
// offsets from rw up to the next segment map to orig + (r - rw) when the
// stretch was copied from the original, or to orig when it was synthesized.
type segment struct {
	rw, orig int
	copied   bool
}

// offsetMap maps offsets of a statement's rewritten text back to offsets of
// the original script. segs is sorted by rw; the last one is a sentinel at
// the end of the rewritten text mapping to the end of the statement.
type offsetMap struct {
	segs []segment
}

// toOrig maps a rewritten offset (clamped to the text) to an original one.
func (m *offsetMap) toOrig(r int) int {
	if m == nil || len(m.segs) == 0 {
		return 0
	}
	last := m.segs[len(m.segs)-1].rw
	r = max(0, min(r, last))
	// The last segment starting at or before r.
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].rw > r }) - 1
	if i < 0 {
		i = 0
	}
	s := m.segs[i]
	if s.copied {
		return s.orig + (r - s.rw)
	}
	return s.orig
}

// toOrigEnd maps the end (exclusive) of a rewritten range to the end of
// the original text it came from: inside synthesized text, the end of the
// construct that text replaced.
func (m *offsetMap) toOrigEnd(r int) int {
	if m == nil || len(m.segs) == 0 || r <= 0 {
		return m.toOrig(r)
	}
	last := m.segs[len(m.segs)-1].rw
	r = min(r, last)
	// The segment holding the range's last byte, r-1.
	i := sort.Search(len(m.segs), func(i int) bool { return m.segs[i].rw > r-1 }) - 1
	if i < 0 {
		i = 0
	}
	if s := m.segs[i]; s.copied {
		return s.orig + (r - s.rw)
	}
	return m.segs[min(i+1, len(m.segs)-1)].orig
}

// build applies edits to the original text src[start:end], replacing each
// comment that is not inside an edit with one space, and returns the
// rewritten text and its offset map. Edits must not overlap; an overlap is
// a bug in a rewrite pass and is reported instead of producing garbage.
func build(src string, start, end int, edits []edit, comments []span) (string, *offsetMap, error) {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		return edits[i].end < edits[j].end
	})
	for i := 1; i < len(edits); i++ {
		if edits[i].start < edits[i-1].end {
			return "", nil, fmt.Errorf("internal error: overlapping rewrites at offsets %d and %d", edits[i-1].start, edits[i].start)
		}
	}
	// Comments become edits too, unless an edit already swallows them
	// (e.g. a comment inside a window function call that is replaced).
	// Both lists are sorted, so one sweep finds the swallowed ones.
	all := append([]edit(nil), edits...)
	ei := 0
	for _, c := range comments {
		if c.start < start || c.end > end {
			continue
		}
		for ei < len(edits) && edits[ei].end < c.end {
			ei++
		}
		if ei < len(edits) && edits[ei].start <= c.start {
			continue // inside edits[ei]
		}
		all = append(all, edit{c.start, c.end, " ", c.start})
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].start != all[j].start {
			return all[i].start < all[j].start
		}
		return all[i].end < all[j].end
	})

	var sb strings.Builder
	m := &offsetMap{}
	pos := start
	copyTo := func(to int) {
		if to > pos {
			m.segs = append(m.segs, segment{sb.Len(), pos, true})
			sb.WriteString(src[pos:to])
			pos = to
		}
	}
	for _, e := range all {
		if e.start < pos || e.end > end {
			return "", nil, fmt.Errorf("internal error: rewrite at offset %d outside the statement", e.start)
		}
		copyTo(e.start)
		if e.text != "" {
			m.segs = append(m.segs, segment{sb.Len(), e.orig, false})
			sb.WriteString(e.text)
		}
		pos = e.end
	}
	copyTo(end)
	m.segs = append(m.segs, segment{sb.Len(), end, false})
	return sb.String(), m, nil
}
