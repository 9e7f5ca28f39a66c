package operators

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/state"
)

// eventTimers is the keyed event-time timer service of every operator
// over time (windows, interval, temporal and window joins, OVER): an
// operator registers (time, tag, key) and, when the watermark reaches
// time, gets the timer back in (time, tag, key) order. Window operators
// use it through windowTimers, which speaks in window ends.
//
// The timers live in keyed state so that checkpoints (memory or Pebble)
// cover them and a rescaled restore re-splits them with the data they
// belong to. The state API only reaches entries through a key, and has
// no scan over all keys; so all timers of one key group are filed under
// one anchor key — a short byte string that hashes to that key group —
// with the map key (sortable time, tag, key). Firing visits the anchors
// of the key groups the subtask owns.
//
// Lifecycle: created in Open, used from the operator's goroutine only.
type eventTimers struct {
	st  state.MapState[struct{}]
	wms state.ValueState[int64] // the watermark at the last checkpoint, per anchor
	kgs state.KeyGroupRange
	// next is a lower bound of the earliest pending timer, so a watermark
	// before it costs nothing; MinInt64 means unknown (after a restore),
	// and the next watermark scans.
	next int64
	mk   []byte // scratch map key; the state copies what it stores
}

// openEventTimers opens the timer state name in the subtask's store and
// returns it with the watermark a restore gave back (restoredWatermark;
// MinInt64 for a fresh start), which the operator judges late rows by.
func openEventTimers(ctx *dataflow.OpContext, name string) (*eventTimers, int64, error) {
	t, err := newEventTimers(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	wm, err := t.restoredWatermark()
	if err != nil {
		return nil, 0, err
	}
	return t, wm, nil
}

// newEventTimers creates the timer state name in the subtask's store.
func newEventTimers(ctx *dataflow.OpContext, name string) (*eventTimers, error) {
	st, err := state.NewMapState[struct{}](ctx.State, name, emptyCodec{})
	if err != nil {
		return nil, err
	}
	wms, err := state.NewValueState[int64](ctx.State, name+".wm", int64Codec{})
	if err != nil {
		return nil, err
	}
	p := ctx.Parallelism
	if p <= 0 {
		p = 1
	}
	if ctx.Subtask < 0 || ctx.Subtask >= p {
		return nil, fmt.Errorf("subtask %d of parallelism %d", ctx.Subtask, p)
	}
	return &eventTimers{st: st, wms: wms, kgs: state.RangeFor(ctx.Subtask, p), next: math.MinInt64}, nil
}

// saveWatermark files wm under the anchor of every key group the subtask
// owns; operators call it when a checkpoint barrier aligns, so that a
// restored operator judges late rows exactly as the uninterrupted one.
func (t *eventTimers) saveWatermark(wm int64) error {
	for g := t.kgs.Start; g < t.kgs.End; g++ {
		if err := t.wms.Put(timerAnchor(g), wm); err != nil {
			return err
		}
	}
	return nil
}

// restoredWatermark returns the lowest watermark saved under the
// subtask's anchors (the restored subtasks may have been several), or
// MinInt64 for a fresh start.
func (t *eventTimers) restoredWatermark() (int64, error) {
	wm, found := int64(math.MaxInt64), false
	for g := t.kgs.Start; g < t.kgs.End; g++ {
		v, ok, err := t.wms.Get(timerAnchor(g))
		if err != nil {
			return 0, err
		}
		if ok {
			wm, found = min(wm, v), true
		}
	}
	if !found {
		return math.MinInt64, nil
	}
	return wm, nil
}

// register adds the timer (ts, tag, key); registering it twice is one
// timer.
func (t *eventTimers) register(ts int64, tag byte, key []byte) error {
	t.mk = appendSortableTime(t.mk[:0], ts)
	t.mk = append(t.mk, tag)
	t.mk = append(t.mk, key...)
	if t.next != math.MinInt64 {
		t.next = min(t.next, ts)
	}
	return t.st.Put(timerAnchor(state.KeyGroup(key)), t.mk, struct{}{})
}

// firedTimer is a timer whose time the watermark has reached.
type firedTimer struct {
	ts  int64
	tag byte
	key []byte
}

// due removes and returns the timers with time <= wm, in (time, tag,
// key) order over all key groups.
func (t *eventTimers) due(wm int64) ([]firedTimer, error) { return t.collect(wm, true) }

// collect is due, in (time, tag, key) order when sorted is set, else in
// that order per key group only (cheaper, for callers that order them
// themselves).
func (t *eventTimers) collect(wm int64, sorted bool) ([]firedTimer, error) {
	if t.next != math.MinInt64 && wm < t.next {
		return nil, nil
	}
	type hit struct {
		anchor []byte
		mk     []byte
	}
	var hits []hit
	next := int64(math.MaxInt64)
	for g := t.kgs.Start; g < t.kgs.End; g++ {
		a := timerAnchor(g)
		err := t.st.Range(a, func(mk []byte, _ struct{}) bool {
			ts := sortableTime(mk)
			if ts > wm {
				next = min(next, ts)
				return false
			}
			hits = append(hits, hit{a, bytes.Clone(mk)})
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	t.next = next
	if sorted {
		slices.SortFunc(hits, func(a, b hit) int { return bytes.Compare(a.mk, b.mk) })
	}
	out := make([]firedTimer, len(hits))
	for i, h := range hits {
		if err := t.st.Delete(h.anchor, h.mk); err != nil {
			return nil, err
		}
		out[i] = firedTimer{ts: sortableTime(h.mk), tag: h.mk[8], key: h.mk[9:]}
	}
	return out, nil
}

// appendSortableTime appends ts so that byte order is numeric order.
func appendSortableTime(dst []byte, ts int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(ts)^(1<<63))
}

// sortableTime decodes the first 8 bytes written by appendSortableTime.
func sortableTime(b []byte) int64 {
	return int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
}

var (
	timerAnchorsOnce sync.Once
	timerAnchors     [state.MaxParallelism][]byte
)

// timerAnchor returns the anchor key of key group g: the first string
// "timers/<n>" that hashes into g. Anchors are fixed by the hash alone,
// so a restore at another parallelism finds them.
func timerAnchor(g int) []byte {
	timerAnchorsOnce.Do(func() {
		left := state.MaxParallelism
		for n := 0; left > 0; n++ {
			k := []byte("timers/" + strconv.Itoa(n))
			if kg := state.KeyGroup(k); timerAnchors[kg] == nil {
				timerAnchors[kg] = k
				left--
			}
		}
	})
	return timerAnchors[g]
}

// addSat returns a + b, saturated to the int64 range, so that bounds
// near the ends of time never wrap around.
func addSat(a, b int64) int64 {
	s := a + b
	if b > 0 && s < a {
		return math.MaxInt64
	}
	if b < 0 && s > a {
		return math.MinInt64
	}
	return s
}

// windowTimers is the window operators' view of eventTimers: a timer is
// the end of a window (with the key it belongs to), due once the window
// has fired under the watermark (fired: end - WindowTimeOffset <= wm).
type windowTimers struct{ t *eventTimers }

// timer is a due window timer.
type timer struct {
	ts  int64 // the window end
	key []byte
}

// openWindowTimers opens the window timers with the restored watermark
// (see openEventTimers).
func openWindowTimers(ctx *dataflow.OpContext) (*windowTimers, int64, error) {
	t, wm, err := openEventTimers(ctx, "timers")
	if err != nil {
		return nil, 0, err
	}
	return &windowTimers{t}, wm, nil
}

// saveWatermark: see eventTimers.saveWatermark.
func (w *windowTimers) saveWatermark(wm int64) error { return w.t.saveWatermark(wm) }

// register sets a timer for the window ending at end; setting it twice
// is one timer.
func (w *windowTimers) register(end int64, key []byte) error {
	return w.t.register(end-WindowTimeOffset, 0, key)
}

// due removes and returns the timers of the windows that have fired
// under wm, in (end, key) order per key group (the window operators
// order them themselves).
func (w *windowTimers) due(wm int64) ([]timer, error) {
	fs, err := w.t.collect(wm, false)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	out := make([]timer, len(fs))
	for i, f := range fs {
		out[i] = timer{ts: f.ts + WindowTimeOffset, key: f.key}
	}
	return out, nil
}
