package window

import (
	"fmt"
	"time"
)

// Windows over event time (or processing time), Flink's window table
// functions. All times are nanoseconds since the epoch, as TIMESTAMP
// values are.
//
// A window [start, end) fires once its window_time, end - 1 ms (the
// window's largest millisecond timestamp, Flink's maxTimestamp), is at or
// below the watermark. The same test decides lateness: a row none of
// whose windows is still open is late and dropped.
//
// Slicing (Flink's "slices", also called panes): TUMBLE, HOP and CUMULATE
// windows are cut into disjoint slices of equal size — the window size
// for TUMBLE, gcd(size, slide) for HOP, the step for CUMULATE. A row is
// accumulated into exactly one slice; a firing window merges the slices
// it covers. A HOP row is therefore never copied into each of the
// size/slide windows it belongs to.

// WindowKind names a window table function.
type WindowKind uint8

// The window kinds.
const (
	WindowTumble WindowKind = iota
	WindowHop
	WindowCumulate
	WindowSession
	// WindowAssigned takes each row's window from its own window_end
	// column: a window aggregation over the output of another one
	// (GROUP BY the window_start, window_end it produced), Flink's
	// cascading window aggregation. The slice is the window.
	WindowAssigned
)

func (k WindowKind) String() string {
	return [...]string{"TUMBLE", "HOP", "CUMULATE", "SESSION", "WINDOWED"}[k]
}

// WindowTimeOffset is window_end - window_time: window_time is the last
// millisecond of the window.
const WindowTimeOffset = int64(time.Millisecond)

// WindowSpec is a window function with its sizes in nanoseconds.
type WindowSpec struct {
	Kind WindowKind
	// Size is the window size of TUMBLE and HOP, the maximum size of
	// CUMULATE, the gap of SESSION.
	Size int64
	// Slide is HOP's slide and CUMULATE's step; unused otherwise.
	Slide int64
	// Offset shifts the windows of TUMBLE, HOP and CUMULATE: they start
	// at offset + k * (size or slide) instead of at multiples of it, as
	// Flink's window offset does. Zero for SESSION.
	Offset int64
}

// Validate checks the sizes; the planner reports its error at the call.
func (s WindowSpec) Validate() error {
	if s.Kind == WindowAssigned {
		return nil
	}
	if s.Size <= 0 || (s.Kind == WindowHop || s.Kind == WindowCumulate) && s.Slide <= 0 {
		return fmt.Errorf("window sizes must be positive")
	}
	if period := s.sliceSize() * 0; s.Offset != 0 {
		period = s.Size
		if s.Kind == WindowHop || s.Kind == WindowCumulate {
			period = s.Slide
		}
		if s.Kind == WindowSession || s.Offset <= -period || s.Offset >= period {
			return fmt.Errorf("the window offset must be smaller than the window's %s (%v), and SESSION takes none", map[bool]string{true: "slide", false: "size"}[s.Kind != WindowTumble], time.Duration(period))
		}
	}
	if s.Kind == WindowCumulate && s.Size%s.Slide != 0 {
		return fmt.Errorf("CUMULATE: the max size (%v) must be a whole multiple of the step (%v)", time.Duration(s.Size), time.Duration(s.Slide))
	}
	return nil
}

// String renders the window for EXPLAIN.
func (s WindowSpec) String() string {
	switch s.Kind {
	case WindowHop:
		return fmt.Sprintf("HOP(slide=[%v], size=[%v]%s)", time.Duration(s.Slide), time.Duration(s.Size), s.offsetText())
	case WindowCumulate:
		return fmt.Sprintf("CUMULATE(step=[%v], max_size=[%v]%s)", time.Duration(s.Slide), time.Duration(s.Size), s.offsetText())
	case WindowSession:
		return fmt.Sprintf("SESSION(gap=[%v])", time.Duration(s.Size))
	case WindowAssigned:
		return "WINDOWED"
	}
	return fmt.Sprintf("TUMBLE(size=[%v]%s)", time.Duration(s.Size), s.offsetText())
}

func (s WindowSpec) offsetText() string {
	if s.Offset == 0 {
		return ""
	}
	return fmt.Sprintf(", offset=[%v]", time.Duration(s.Offset))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// sliceSize is the length of one slice.
func (s WindowSpec) sliceSize() int64 {
	switch s.Kind {
	case WindowHop:
		return gcd(s.Size, s.Slide)
	case WindowCumulate:
		return s.Slide
	}
	return s.Size
}

// sliceEnd returns the end of the slice holding timestamp ts (for
// WindowAssigned, ts is the row's window_end, its slice's end).
func (s WindowSpec) sliceEnd(ts int64) int64 {
	if s.Kind == WindowAssigned {
		return ts
	}
	p := s.sliceSize()
	return floorDiv(ts-s.Offset, p)*p + p + s.Offset
}

// firstWindowEnd returns the end of the earliest window holding the
// slice that ends at se.
func (s WindowSpec) firstWindowEnd(se int64) int64 {
	if s.Kind == WindowHop {
		// HOP windows start at multiples of the slide: the first end at
		// or after se is ceil((se - size) / slide) * slide + size.
		return -floorDiv(-(se-s.Size-s.Offset), s.Slide)*s.Slide + s.Size + s.Offset
	}
	return se
}

// lastWindowEnd returns the end of the latest window holding the slice
// that ends at se: once that window fired, a row of the slice is late.
func (s WindowSpec) lastWindowEnd(se int64) int64 {
	p := s.sliceSize()
	switch s.Kind {
	case WindowHop:
		return floorDiv(se-p-s.Offset, s.Slide)*s.Slide + s.Size + s.Offset
	case WindowCumulate:
		return floorDiv(se-p-s.Offset, s.Size)*s.Size + s.Size + s.Offset
	}
	return se
}

// nextWindowEnd returns the end of the window after the one ending at e.
func (s WindowSpec) nextWindowEnd(e int64) int64 {
	switch s.Kind {
	case WindowHop, WindowCumulate:
		return e + s.Slide
	}
	return e + s.Size
}

// windowStart returns the start of the window that ends at e; for
// WindowAssigned, just below e (the one slice ending at e; the real start
// is a group key, see WindowAggSpec.StartKey).
func (s WindowSpec) windowStart(e int64) int64 {
	if s.Kind == WindowAssigned {
		return e - 1
	}
	if s.Kind == WindowCumulate {
		return floorDiv(e-1-s.Offset, s.Size)*s.Size + s.Offset
	}
	return e - s.Size
}

// Windows appends to dst the [start, end) windows holding ts, earliest
// end first: one for TUMBLE, size/slide for HOP, up to size/step for
// CUMULATE. It is what the window table function without aggregation
// assigns.
func (s WindowSpec) Windows(dst [][2]int64, ts int64) [][2]int64 {
	if s.Offset != 0 {
		n := len(dst)
		o := s
		o.Offset = 0
		dst = o.Windows(dst, ts-s.Offset)
		for i := n; i < len(dst); i++ {
			dst[i][0] += s.Offset
			dst[i][1] += s.Offset
		}
		return dst
	}
	switch s.Kind {
	case WindowHop:
		// Windows start at multiples of the slide.
		first := floorDiv(ts-s.Size, s.Slide)*s.Slide + s.Slide
		for ws := first; ws <= ts; ws += s.Slide {
			dst = append(dst, [2]int64{ws, ws + s.Size})
		}
	case WindowCumulate:
		ws := floorDiv(ts, s.Size) * s.Size
		for e := floorDiv(ts, s.Slide)*s.Slide + s.Slide; e <= ws+s.Size; e += s.Slide {
			dst = append(dst, [2]int64{ws, e})
		}
	default:
		ws := floorDiv(ts, s.Size) * s.Size
		dst = append(dst, [2]int64{ws, ws + s.Size})
	}
	return dst
}

// fired reports whether the window ending at end has fired under
// watermark wm.
func fired(end, wm int64) bool { return end-WindowTimeOffset <= wm }
