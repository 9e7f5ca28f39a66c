package kit

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

// Timers is the keyed event-time timer service of every operator
// over time (windows, interval, temporal and window joins, OVER): an
// operator registers (time, tag, key) and, when the watermark reaches
// time, gets the timer back in (time, tag, key) order. The window
// operators (package window) use it through their windowTimers, which
// speak in window ends.
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
type Timers struct {
	st  state.MapState[struct{}]
	wms state.ValueState[int64] // the watermark at the last checkpoint, per anchor
	kgs state.KeyGroupRange
	// next is a lower bound of the earliest pending timer, so a watermark
	// before it costs nothing; MinInt64 means unknown (after a restore),
	// and the next watermark scans.
	next int64
	mk   []byte // scratch map key; the state copies what it stores
}

// OpenTimers opens the timer state name in the subtask's store and
// returns it with the watermark a restore gave back (RestoredWatermark;
// MinInt64 for a fresh start), which the operator judges late rows by.
func OpenTimers(ctx *dataflow.OpContext, name string) (*Timers, int64, error) {
	t, err := NewTimers(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	wm, err := t.RestoredWatermark()
	if err != nil {
		return nil, 0, err
	}
	return t, wm, nil
}

// NewTimers creates the timer state name in the subtask's store.
func NewTimers(ctx *dataflow.OpContext, name string) (*Timers, error) {
	st, err := state.NewMapState[struct{}](ctx.State, name, EmptyCodec{})
	if err != nil {
		return nil, err
	}
	wms, err := state.NewValueState[int64](ctx.State, name+".wm", Int64Codec{})
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
	return &Timers{st: st, wms: wms, kgs: state.RangeFor(ctx.Subtask, p), next: math.MinInt64}, nil
}

// SaveWatermark files wm under the anchor of every key group the subtask
// owns; operators call it when a checkpoint barrier aligns, so that a
// restored operator judges late rows exactly as the uninterrupted one.
func (t *Timers) SaveWatermark(wm int64) error {
	for g := t.kgs.Start; g < t.kgs.End; g++ {
		if err := t.wms.Put(KeyGroupAnchor(g), wm); err != nil {
			return err
		}
	}
	return nil
}

// RestoredWatermark returns the lowest watermark saved under the
// subtask's anchors (the restored subtasks may have been several), or
// MinInt64 for a fresh start.
func (t *Timers) RestoredWatermark() (int64, error) {
	wm, found := int64(math.MaxInt64), false
	for g := t.kgs.Start; g < t.kgs.End; g++ {
		v, ok, err := t.wms.Get(KeyGroupAnchor(g))
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

// Register adds the timer (ts, tag, key); registering it twice is one
// timer.
func (t *Timers) Register(ts int64, tag byte, key []byte) error {
	t.mk = AppendSortableTime(t.mk[:0], ts)
	t.mk = append(t.mk, tag)
	t.mk = append(t.mk, key...)
	if t.next != math.MinInt64 {
		t.next = min(t.next, ts)
	}
	return t.st.Put(KeyGroupAnchor(state.KeyGroup(key)), t.mk, struct{}{})
}

// Fired is a timer whose time the watermark has reached.
type Fired struct {
	Ts  int64
	Tag byte
	Key []byte
}

// Due removes and returns the timers with time <= wm, in (time, tag,
// key) order over all key groups.
func (t *Timers) Due(wm int64) ([]Fired, error) { return t.Collect(wm, true) }

// Collect is Due, in (time, tag, key) order when sorted is set, else in
// that order per key group only (cheaper, for callers that order them
// themselves).
func (t *Timers) Collect(wm int64, sorted bool) ([]Fired, error) {
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
		a := KeyGroupAnchor(g)
		err := t.st.Range(a, func(mk []byte, _ struct{}) bool {
			ts := SortableTime(mk)
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
	out := make([]Fired, len(hits))
	for i, h := range hits {
		if err := t.st.Delete(h.anchor, h.mk); err != nil {
			return nil, err
		}
		out[i] = Fired{Ts: SortableTime(h.mk), Tag: h.mk[8], Key: h.mk[9:]}
	}
	return out, nil
}

// AppendSortableTime appends ts so that byte order is numeric order.
func AppendSortableTime(dst []byte, ts int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(ts)^(1<<63))
}

// SortableTime decodes the first 8 bytes written by AppendSortableTime.
func SortableTime(b []byte) int64 {
	return int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
}

var (
	anchorsOnce sync.Once
	anchors     [state.MaxParallelism][]byte
)

// KeyGroupAnchor returns the anchor key of key group g: the first string
// "timers/<n>" that hashes into g. Anchors are fixed by the hash alone,
// so a restore at another parallelism finds them. WatermarkAssigner files
// its watermark under the same anchors.
func KeyGroupAnchor(g int) []byte {
	anchorsOnce.Do(func() {
		left := state.MaxParallelism
		for n := 0; left > 0; n++ {
			k := []byte("timers/" + strconv.Itoa(n))
			if kg := state.KeyGroup(k); anchors[kg] == nil {
				anchors[kg] = k
				left--
			}
		}
	})
	return anchors[g]
}

// AddSat returns a + b, saturated to the int64 range, so that bounds
// near the ends of time never wrap around.
func AddSat(a, b int64) int64 {
	s := a + b
	if b > 0 && s < a {
		return math.MaxInt64
	}
	if b < 0 && s > a {
		return math.MinInt64
	}
	return s
}
