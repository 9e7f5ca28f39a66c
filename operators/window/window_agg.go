package window

import (
	"bytes"
	"container/heap"
	"fmt"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// WindowCol says what one grouping column of a window aggregation's
// output holds.
type WindowCol uint8

// The grouping columns of a window aggregation.
const (
	WinKey   WindowCol = iota // a group key, WindowOutCol.Key indexes WindowAggSpec.Keys
	WinStart                  // window_start
	WinEnd                    // window_end
	WinTime                   // window_time = window_end - 1 ms
)

// WindowOutCol is one grouping column of the output.
type WindowOutCol struct {
	Kind WindowCol
	Key  int
}

// WindowAggSpec describes a window aggregation: GROUP BY window_start,
// window_end[, keys] over a window table function.
type WindowAggSpec struct {
	Window  WindowSpec
	TimeCol int   // the input's time attribute
	Keys    []int // input columns of the group keys other than the window's
	Aggs    []operators.AggCall
	// Out lays out the grouping columns of the output row, which then
	// has one column per aggregate.
	Out []WindowOutCol
	// ProcTime makes the windows processing-time windows: a row belongs
	// to the window of the operator's clock when it arrives, and windows
	// fire by that clock (checked at each chunk, watermark and
	// processing-time tick) and, on a bounded input, all at the end.
	ProcTime bool
	Clock    func() time.Time // nil: time.Now
	// StartKey, for WindowAssigned windows, is the index in Keys of the
	// input's window_start column, which window_start is output from;
	// TimeCol is then the input's window_end column.
	StartKey int
}

// WindowAgg is the window aggregation (Flink's WindowAggregate) for
// TUMBLE, HOP and CUMULATE windows, and for windows already assigned by
// a window aggregation upstream (WindowAssigned); SessionAgg does
// SESSION. Its input is insert-only; its output is insert-only: one row
// per window and key, emitted once, when the window fires (in window-end,
// then key order), before the watermark that fired it goes on.
//
// Call order as dataflow.Operator: ProcessChunk folds the chunk's rows
// into slices (combined per key and slice first), ProcessWatermark fires
// windows, Finish fires the rest (processing time); SnapshotState files
// the watermark with the state.
//
// State (all keyed, so checkpoints cover it):
//   - slices: group key -> slice end -> the slice's aggregate state (a
//     GroupAgg group state; its out row holds the group key's values);
//   - timers: the windows to fire, see windowTimers.
//
// A row is accumulated into the one slice its time falls in, unless the
// last window that slice belongs to has already fired: then it is late,
// dropped and counted (LateDropped, and the process-wide
// streamsql_late_records_dropped_total). A row whose slice's earlier
// windows fired but a later one has not is kept for the later ones, as
// Flink does.
type WindowAgg struct {
	oc *dataflow.OpContext // counts late rows
	dataflow.BaseOperator
	spec    WindowAggSpec
	g       *operators.Aggregator // the aggregate planning, update, result and codec code
	slices  state.MapState[operators.AggState]
	timers  *windowTimers
	wm      int64
	key, mk []byte
	// local and pend combine a chunk's rows per (slice, key) before they
	// reach state; empty between chunks.
	local map[string]int
	pend  []pendingSlice
}

var (
	_ dataflow.Operator = (*WindowAgg)(nil)
)

// NewWindowAgg returns a window aggregation; it fails on an aggregate it
// cannot compute or a window it cannot slice.
func NewWindowAgg(spec WindowAggSpec) (*WindowAgg, error) {
	if spec.Window.Kind == WindowSession {
		return nil, fmt.Errorf("WindowAggregate: SESSION windows need SessionAgg")
	}
	if spec.Window.Kind == WindowAssigned && (spec.StartKey < 0 || spec.StartKey >= len(spec.Keys)) {
		return nil, fmt.Errorf("WindowAggregate: a cascaded window needs its window_start among the keys")
	}
	if err := spec.Window.Validate(); err != nil {
		return nil, err
	}
	if spec.Keys == nil {
		spec.Keys = []int{} // nil would make EncodeKey take every column
	}
	g, err := operators.NewAggregator(spec.Keys, spec.Aggs)
	if err != nil {
		return nil, err
	}
	return &WindowAgg{spec: spec, g: g, wm: dataflow.MinWatermark, local: map[string]int{}}, nil
}

// Open implements dataflow.Operator.
func (w *WindowAgg) Open(ctx *dataflow.OpContext) error {
	w.oc = ctx
	var err error
	if w.slices, err = state.NewMapState[operators.AggState](ctx.State, "slices", w.g.Codec()); err != nil {
		return err
	}
	w.timers, w.wm, err = openWindowTimers(ctx)
	return err
}

// SnapshotState implements dataflow.Operator: the watermark goes into
// the checkpoint with the slices and timers.
func (w *WindowAgg) SnapshotState(dataflow.Barrier) error { return w.timers.saveWatermark(w.wm) }

// now is the processing time, as the wall clock the windows divide.
func (w *WindowAgg) now() int64 {
	if w.spec.Clock != nil {
		return w.spec.Window.local(w.spec.Clock().UnixNano())
	}
	return w.spec.Window.local(time.Now().UnixNano())
}

// ProcessChunk implements dataflow.Operator.
func (w *WindowAgg) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	var now int64
	if w.spec.ProcTime {
		now = w.now()
		if err := w.fire(now-WindowTimeOffset, out); err != nil { // windows with end <= now
			return err
		}
	}
	win := w.spec.Window
	for i := range in.Changes {
		ch := &in.Changes[i]
		if ch.Kind != dyntable.Insert {
			return fmt.Errorf("WindowAggregate: input must be insert-only, got %s", ch.Kind)
		}
		ts := now
		if !w.spec.ProcTime {
			v := ch.Row[w.spec.TimeCol]
			if v.IsNull() {
				continue // a row without event time belongs to no window
			}
			ts = win.local(v.Timestamp())
		}
		se := win.sliceEnd(ts)
		if fired(win.lastWindowEnd(se), w.wm) {
			w.oc.LateRecordsDropped(1)
			continue
		}
		// Rows of one key and slice within the chunk are first combined
		// in a local group, so that state is read and written once per
		// (key, slice) and chunk rather than once per row.
		w.key = types.EncodeKey(w.key[:0], ch.Row, w.spec.Keys)
		w.mk = append(kit.AppendSortableTime(w.mk[:0], se), w.key...)
		idx, ok := w.local[string(w.mk)]
		if !ok {
			idx = len(w.pend)
			w.local[string(w.mk)] = idx
			w.pend = append(w.pend, pendingSlice{key: append([]byte(nil), w.key...), se: se, gs: w.g.NewState(), row: ch.Row})
		}
		if err := w.g.Add(&w.pend[idx].gs, ch.Row); err != nil {
			return fmt.Errorf("WindowAggregate: %w", err)
		}
	}
	return w.flushLocal()
}

// pendingSlice is a chunk's rows of one key and slice, combined.
type pendingSlice struct {
	key []byte
	se  int64
	gs  operators.AggState
	row types.Row // the first row, for the group key's values
}

// flushLocal folds the chunk's combined slices into state. A slice new
// to state sets the timer of its earliest window that has not fired.
func (w *WindowAgg) flushLocal() error {
	win := w.spec.Window
	for i := range w.pend {
		p := &w.pend[i]
		w.mk = kit.AppendSortableTime(w.mk[:0], p.se)
		gs, ok, err := w.slices.Get(p.key, w.mk)
		if err != nil {
			return err
		}
		if ok {
			if err := w.g.Merge(&gs, &p.gs); err != nil {
				return fmt.Errorf("WindowAggregate: %w", err)
			}
		} else {
			gs = p.gs
			w.g.SetKeys(&gs, p.row)
			e := win.firstWindowEnd(p.se)
			for fired(e, w.wm) {
				e = win.nextWindowEnd(e)
			}
			if err := w.timers.register(e, p.key); err != nil {
				return err
			}
		}
		if err := w.slices.Put(p.key, w.mk, gs); err != nil {
			return err
		}
	}
	clear(w.local)
	clear(w.pend) // drop references to rows and states
	w.pend = w.pend[:0]
	return nil
}

// ProcessingTimeInterval implements dataflow.Operator: windows
// over processing time are fired by the clock even while no row arrives,
// checked a few times per slice (at most every 100 ms).
func (w *WindowAgg) ProcessingTimeInterval() time.Duration {
	if !w.spec.ProcTime {
		return 0
	}
	return max(min(time.Duration(w.spec.Window.sliceSize())/4, 100*time.Millisecond), time.Millisecond)
}

// OnProcessingTime implements dataflow.Operator.
func (w *WindowAgg) OnProcessingTime(_ time.Time, out dataflow.Collector) error {
	return w.fire(w.now()-WindowTimeOffset, out)
}

// ProcessWatermark implements dataflow.Operator: it fires the windows the
// watermark passed.
func (w *WindowAgg) ProcessWatermark(wm int64, out dataflow.Collector) error {
	if w.spec.ProcTime {
		if wm == dataflow.MaxWatermark {
			return w.fire(wm, out)
		}
		return w.fire(w.now()-WindowTimeOffset, out)
	}
	w.wm = max(w.wm, w.spec.Window.local(wm)) // after a restore the restored watermark may be ahead
	return w.fire(w.wm, out)
}

// Finish implements dataflow.Operator: at the end of a bounded input
// every window fires (event-time windows already did, at the final
// watermark).
func (w *WindowAgg) Finish(out dataflow.Collector) error {
	return w.fire(dataflow.MaxWatermark, out)
}

// fire emits every window fired under wm, in window-end then key order.
// Firing a HOP or CUMULATE window may lead to the key's next window,
// which may be due too: it joins the queue of due windows, so that the
// windows of a key fire in time order (a window's firing drops slices
// that only earlier windows need). A due window can also be queued twice
// (set by a row, and reached from the key's previous window); seen keeps
// it from firing twice.
func (w *WindowAgg) fire(wm int64, out dataflow.Collector) error {
	due, err := w.timers.due(wm)
	if err != nil || len(due) == 0 {
		return err
	}
	em := kit.NewEmitter(out, 0)
	q := timerQueue(due)
	heap.Init(&q)
	// The queue pops in (time, key) order and only ever gains later
	// timers, so a timer registered twice pops twice in a row.
	var last *timer
	for q.Len() > 0 {
		t := heap.Pop(&q).(timer)
		if last != nil && last.ts == t.ts && bytes.Equal(last.key, t.key) {
			continue
		}
		last = &t
		next, ok, err := w.fireWindow(t.key, t.ts, &em)
		if err != nil {
			return err
		}
		switch {
		case !ok:
		case fired(next, wm):
			heap.Push(&q, timer{ts: next, key: t.key})
		default:
			if err := w.timers.register(next, t.key); err != nil {
				return err
			}
		}
	}
	em.Flush()
	return nil
}

// timerQueue orders timers by time, then key.
type timerQueue []timer

func (q timerQueue) Len() int { return len(q) }
func (q timerQueue) Less(i, j int) bool {
	if q[i].ts != q[j].ts {
		return q[i].ts < q[j].ts
	}
	return string(q[i].key) < string(q[j].key)
}
func (q timerQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *timerQueue) Push(x any)   { *q = append(*q, x.(timer)) }
func (q *timerQueue) Pop() any {
	old := *q
	t := old[len(old)-1]
	*q = old[:len(old)-1]
	return t
}

type sliceRef struct {
	mk []byte
	se int64
}

// fireWindow emits the window of key ending at e and drops the slices no
// later window needs. It returns the end of the key's next window when
// that window has data.
func (w *WindowAgg) fireWindow(key []byte, e int64, em *kit.Emitter) (next int64, ok bool, err error) {
	win := w.spec.Window
	ws := win.windowStart(e)
	// Slices at or before keepAfter belong to no window after this one.
	keepAfter := e
	switch win.Kind {
	case WindowHop:
		keepAfter = e + win.Slide - win.Size
	case WindowCumulate:
		if e != ws+win.Size {
			keepAfter = dataflow.MinWatermark
		}
	}
	acc := w.g.NewState()
	var keyVals types.Row
	var drop []sliceRef
	remaining := int64(dataflow.MaxWatermark)
	var mergeErr error
	err = w.slices.Range(key, func(mk []byte, gs operators.AggState) bool {
		se := kit.SortableTime(mk)
		if se > ws && se <= e {
			if err := w.g.Merge(&acc, &gs); err != nil {
				mergeErr = err
				return false
			}
			keyVals = gs.Keys()
		}
		if se <= keepAfter {
			drop = append(drop, sliceRef{append([]byte(nil), mk...), se})
		} else {
			remaining = min(remaining, se)
		}
		return true
	})
	if err != nil {
		return 0, false, err
	}
	if mergeErr != nil {
		return 0, false, fmt.Errorf("WindowAggregate: %w", mergeErr)
	}
	for _, s := range drop {
		if err := w.slices.Delete(key, s.mk); err != nil {
			return 0, false, err
		}
	}
	// The next window of this key, if it has data: HOP's next window
	// holds the remaining slices up to e + slide; CUMULATE's next step
	// holds everything since ws.
	next = win.nextWindowEnd(e)
	ok = (win.Kind == WindowHop && remaining <= next) || (win.Kind == WindowCumulate && keepAfter != e && !acc.Empty())
	if !acc.Empty() {
		em.Add(dyntable.Insert, w.outputRow(&acc, keyVals, ws, e))
	}
	return next, ok, nil
}

// outputRow builds the result row of one window.
func (w *WindowAgg) outputRow(acc *operators.AggState, keyVals types.Row, ws, we int64) types.Row {
	if w.spec.Window.Kind == WindowAssigned {
		ws = keyVals[w.spec.StartKey].Timestamp()
	}
	return windowRow(w.g, w.spec.Out, acc, keyVals, ws, we, w.spec.Window)
}

// windowRow lays out a window result: the grouping columns as out says,
// then the aggregates.
func windowRow(g *operators.Aggregator, out []WindowOutCol, acc *operators.AggState, keyVals types.Row, ws, we int64, win WindowSpec) types.Row {
	row := make(types.Row, len(out)+g.Len())
	for i, c := range out {
		switch c.Kind {
		case WinKey:
			row[i] = keyVals[c.Key]
		case WinStart:
			row[i] = types.NewTimestamp(ws)
		case WinEnd:
			row[i] = types.NewTimestamp(we)
		case WinTime:
			row[i] = types.NewTimestamp(win.windowTime(we))
		}
	}
	g.ResultsTo(row[len(out):], acc)
	return row
}
