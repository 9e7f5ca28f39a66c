package window

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/operators/internal/kit"
)

// windowTimers is the window operators' view of kit.Timers: a timer is
// the end of a window (with the key it belongs to), due once the window
// has fired under the watermark (fired: end - WindowTimeOffset <= wm).
type windowTimers struct{ t *kit.Timers }

// timer is a due window timer.
type timer struct {
	ts  int64 // the window end
	key []byte
}

// openWindowTimers opens the window timers with the restored watermark
// (see kit.OpenTimers).
func openWindowTimers(ctx *dataflow.OpContext) (*windowTimers, int64, error) {
	t, wm, err := kit.OpenTimers(ctx, "timers")
	if err != nil {
		return nil, 0, err
	}
	return &windowTimers{t}, wm, nil
}

// saveWatermark: see kit.Timers.SaveWatermark.
func (w *windowTimers) saveWatermark(wm int64) error { return w.t.SaveWatermark(wm) }

// register sets a timer for the window ending at end; setting it twice
// is one timer.
func (w *windowTimers) register(end int64, key []byte) error {
	return w.t.Register(end-WindowTimeOffset, 0, key)
}

// due removes and returns the timers of the windows that have fired
// under wm, in (end, key) order per key group (the window operators
// order them themselves).
func (w *windowTimers) due(wm int64) ([]timer, error) {
	fs, err := w.t.Collect(wm, false)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	out := make([]timer, len(fs))
	for i, f := range fs {
		out[i] = timer{ts: f.Ts + WindowTimeOffset, key: f.Key}
	}
	return out, nil
}
