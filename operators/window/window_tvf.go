package window

import (
	"fmt"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// WindowTableFunction assigns windows to rows, for a window table
// function that is not consumed by a window aggregation (a plain SELECT
// over TUMBLE/HOP/CUMULATE, or a window Top-N directly over one). Each
// input row comes out once per window it belongs to — once for TUMBLE,
// size/slide times for HOP, up to size/step times for CUMULATE — with
// window_start, window_end and window_time appended.
//
// Its only state is the current watermark (checkpointed, so that a
// restored operator judges lateness as before): a window that has
// already fired under it is not assigned (the row is late for it); a
// row with no open window left is dropped and counted, as Flink's window
// table function operator does. Output is insert-only.
type WindowTableFunction struct {
	oc *dataflow.OpContext // counts late rows
	dataflow.BaseOperator
	win      WindowSpec
	timeCol  int
	procTime bool
	clock    func() time.Time
	wm       int64
	buf      [][2]int64
	timers   *windowTimers // only its watermark cells are used
}

var (
	_ dataflow.Operator = (*WindowTableFunction)(nil)
)

// Open implements dataflow.Operator: it restores the watermark.
func (w *WindowTableFunction) Open(ctx *dataflow.OpContext) error {
	w.oc = ctx
	if ctx == nil || ctx.State == nil {
		return nil
	}
	var err error
	w.timers, w.wm, err = openWindowTimers(ctx)
	return err
}

// SnapshotState implements dataflow.Operator.
func (w *WindowTableFunction) SnapshotState(dataflow.Barrier) error {
	if w.timers == nil {
		return nil
	}
	return w.timers.saveWatermark(w.wm)
}

// NewWindowTableFunction returns the operator for window win over the
// time attribute at column timeCol; procTime assigns windows by the
// clock (nil: time.Now) instead.
func NewWindowTableFunction(win WindowSpec, timeCol int, procTime bool, clock func() time.Time) (*WindowTableFunction, error) {
	if win.Kind == WindowSession {
		return nil, fmt.Errorf("WindowTableFunction: SESSION windows are only assigned by a window aggregation")
	}
	if err := win.Validate(); err != nil {
		return nil, err
	}
	if clock == nil {
		clock = time.Now
	}
	return &WindowTableFunction{win: win, timeCol: timeCol, procTime: procTime, clock: clock, wm: dataflow.MinWatermark}, nil
}

// ProcessWatermark implements dataflow.Operator.
func (w *WindowTableFunction) ProcessWatermark(wm int64, _ dataflow.Collector) error {
	w.wm = max(w.wm, wm) // after a restore the restored watermark may be ahead
	return nil
}

// ProcessChunk implements dataflow.Operator.
func (w *WindowTableFunction) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	res := &dyntable.Chunk{Changes: make([]dyntable.Change, 0, len(in.Changes))}
	now := int64(0)
	if w.procTime {
		now = w.clock().UnixNano()
	}
	for _, ch := range in.Changes {
		if ch.Kind != dyntable.Insert {
			return fmt.Errorf("WindowTableFunction: input must be insert-only, got %s", ch.Kind)
		}
		ts := now
		if !w.procTime {
			v := ch.Row[w.timeCol]
			if v.IsNull() {
				continue
			}
			ts = v.Timestamp()
		}
		w.buf = w.win.Windows(w.buf[:0], ts)
		n := 0
		for _, win := range w.buf {
			if !w.procTime && fired(win[1], w.wm) {
				continue
			}
			row := make(types.Row, len(ch.Row)+3)
			copy(row, ch.Row)
			row[len(ch.Row)] = types.NewTimestamp(win[0])
			row[len(ch.Row)+1] = types.NewTimestamp(win[1])
			row[len(ch.Row)+2] = types.NewTimestamp(win[1] - WindowTimeOffset)
			res.Changes = append(res.Changes, dyntable.Change{Kind: dyntable.Insert, Row: row})
			n++
		}
		if n == 0 {
			w.oc.LateRecordsDropped(1)
		}
	}
	if len(res.Changes) > 0 {
		out.Emit(res)
	}
	return nil
}
