package window

import "testing"

// A window offset shifts every window by it: the windows of ts with an
// offset are those of ts - offset without one, moved by the offset.
func TestWindowOffsetShiftsWindows(t *testing.T) {
	const s = int64(1e9)
	for _, spec := range []WindowSpec{
		{Kind: WindowTumble, Size: 10 * s, Offset: 5 * s},
		{Kind: WindowHop, Size: 10 * s, Slide: 5 * s, Offset: 2 * s},
		{Kind: WindowCumulate, Size: 10 * s, Slide: 5 * s, Offset: -3 * s},
	} {
		if err := spec.Validate(); err != nil {
			t.Fatal(err)
		}
		for ts := -30 * s; ts < 30*s; ts += s / 2 {
			ws := spec.Windows(nil, ts)
			if len(ws) == 0 {
				t.Fatalf("%v: no window holds %d", spec, ts)
			}
			for _, w := range ws {
				if ts < w[0] || ts >= w[1] {
					t.Fatalf("%v: window %v does not hold %d", spec, w, ts)
				}
				if (w[0]-spec.Offset)%spec.sliceSize() != 0 && spec.Kind != WindowCumulate {
					t.Fatalf("%v: window %v does not start on the offset grid", spec, w)
				}
			}
			// The slice of ts ends within the slice size after ts, on the grid.
			se := spec.sliceEnd(ts)
			if se <= ts || se > ts+spec.sliceSize() || (se-spec.Offset)%spec.sliceSize() != 0 {
				t.Fatalf("%v: slice end %d for %d", spec, se, ts)
			}
			if last := spec.lastWindowEnd(se); last != ws[len(ws)-1][1] {
				t.Fatalf("%v: last window end %d for %d, Windows says %v", spec, last, ts, ws)
			}
		}
	}
}
