package operators

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TemporalSortSpec describes ORDER BY time [, keys] without LIMIT on a
// streaming query (Flink's temporal sort): the first sort key is a time
// attribute, ascending, and OrderBy holds the keys after it.
type TemporalSortSpec struct {
	// TimeCol is the time attribute sorted by first, ascending.
	TimeCol int
	// ProcTime says TimeCol is a processing-time attribute; otherwise it
	// is a rowtime attribute.
	ProcTime bool
	// OrderBy are the secondary sort keys, which order the rows of one
	// time (rowtime) or of one processing-time tick (proctime).
	OrderBy []SortKey
	Width   int // input columns
}

// TemporalSortTick is how often a processing-time sort emits what it
// holds: Flink's ProcTimeSortOperator emits on the next millisecond's
// timer, which a tick every few milliseconds approximates without waking
// the task a thousand times a second.
const TemporalSortTick = 10 * time.Millisecond

// NewTemporalSort returns the temporal sort operator (Flink's
// RowTimeSortOperator and ProcTimeSortOperator).
//
// Semantics, over rowtime: rows are buffered until the watermark reaches
// their time; then the rows of each time are emitted as +I, times in
// ascending order and the rows of one time sorted by OrderBy (ties in
// arrival order). A row whose time is <= the watermark is late, dropped
// and counted in streamsql_late_records_dropped_total; a row with a NULL
// time is dropped too, as it can never be placed.
//
// Over processing time: rows are buffered and, at each processing-time
// tick (TemporalSortTick), all rows held are emitted sorted by OrderBy,
// ties in arrival order; at the end of input the rest go. Rows arrive in
// processing-time order already, so with no OrderBy there is nothing to
// sort and rows pass straight through, as in Flink.
//
// The input must be insert-only, and so is the output. The operator runs
// as one subtask (the plan sends it the whole input), so its state lives
// under one key.
//
// State: the buffered rows in a MapState under that key, map key the
// sortable time (rowtime) or the arrival number (proctime); the rowtime
// form's timers and watermark in kit.Timers. Both are in the store, so a
// checkpoint holds the rows still waiting and a restore emits them.
func NewTemporalSort(spec TemporalSortSpec) dataflow.Operator {
	return &temporalSortOp{spec: spec}
}

const temporalSortName = "TemporalSort"

// temporalSortKey is the one state key: the operator has no partitions.
var temporalSortKey = []byte("temporal-sort")

type temporalSortOp struct {
	dataflow.BaseOperator
	oc      *dataflow.OpContext // counts late rows
	spec    TemporalSortSpec
	pending state.MapState[kit.Rows] // rowtime: rows by time
	arrived state.MapState[types.Row]
	timers  *kit.Timers
	wm      int64
	seq     uint64 // proctime: the next arrival number
}

var _ dataflow.Operator = (*temporalSortOp)(nil)

func (o *temporalSortOp) Open(ctx *dataflow.OpContext) error {
	o.oc = ctx
	s := o.spec
	if ctx == nil || ctx.State == nil {
		return fmt.Errorf("%s: no state store", temporalSortName)
	}
	if s.TimeCol < 0 || s.TimeCol >= s.Width {
		return fmt.Errorf("%s: time column %d out of range (width %d)", temporalSortName, s.TimeCol, s.Width)
	}
	for _, k := range s.OrderBy {
		if k.Col < 0 || k.Col >= s.Width {
			return fmt.Errorf("%s: ORDER BY column %d out of range (width %d)", temporalSortName, k.Col, s.Width)
		}
	}
	var err error
	if s.ProcTime {
		if o.arrived, err = state.NewMapState[types.Row](ctx.State, "tsort.arrived", kit.RowCodec{}); err != nil {
			return fmt.Errorf("%s: %w", temporalSortName, err)
		}
		// After a restore, number new rows after the ones held.
		err = o.arrived.Range(temporalSortKey, func(mk []byte, _ types.Row) bool {
			o.seq = binary.BigEndian.Uint64(mk) + 1
			return true
		})
		if err != nil {
			return fmt.Errorf("%s: %w", temporalSortName, err)
		}
		return nil
	}
	if o.pending, err = state.NewMapState[kit.Rows](ctx.State, "tsort.pending", kit.RowsCodec{}); err != nil {
		return fmt.Errorf("%s: %w", temporalSortName, err)
	}
	if o.timers, o.wm, err = kit.OpenTimers(ctx, "tsort.timers"); err != nil {
		return fmt.Errorf("%s: %w", temporalSortName, err)
	}
	return nil
}

// SnapshotState implements dataflow.Operator: the watermark, which
// decides what is late, goes into the checkpoint with the rows.
func (o *temporalSortOp) SnapshotState(dataflow.Barrier) error {
	if o.spec.ProcTime {
		return nil
	}
	return o.timers.SaveWatermark(o.wm)
}

func (o *temporalSortOp) ProcessChunk(_ int, c *dyntable.Chunk, out dataflow.Collector) error {
	var em kit.Emitter
	pass := o.spec.ProcTime && len(o.spec.OrderBy) == 0
	if pass {
		em = kit.NewEmitter(out, len(c.Changes))
	}
	for _, ch := range c.Changes {
		if ch.Kind != dyntable.Insert {
			return fmt.Errorf("%s: %s row; a temporal sort takes an insert-only input", temporalSortName, ch.Kind)
		}
		row := ch.Row
		if len(row) != o.spec.Width {
			return fmt.Errorf("%s: row [%s] has %d columns, want %d", temporalSortName, types.FormatRow(row, nil, ", "), len(row), o.spec.Width)
		}
		var err error
		switch {
		case pass:
			em.Add(dyntable.Insert, row)
		case o.spec.ProcTime:
			err = o.hold(row)
		default:
			err = o.buffer(row)
		}
		if err != nil {
			return err
		}
	}
	em.Flush()
	return nil
}

// buffer files a rowtime row under its time until the watermark reaches it.
func (o *temporalSortOp) buffer(row types.Row) error {
	tv := row[o.spec.TimeCol]
	if tv.IsNull() {
		return nil
	}
	if tv.Kind() != types.KindTimestamp {
		return fmt.Errorf("%s: time column holds %v, not a TIMESTAMP", temporalSortName, tv.Kind())
	}
	ts := tv.Timestamp()
	if ts <= o.wm {
		o.oc.LateRecordsDropped(1)
		return nil
	}
	mk := kit.AppendSortableTime(nil, ts)
	cur, held, err := o.pending.Get(temporalSortKey, mk)
	if err != nil {
		return fmt.Errorf("%s: %w", temporalSortName, err)
	}
	if err := o.pending.Put(temporalSortKey, mk, cur.With(false, row)); err != nil {
		return fmt.Errorf("%s: %w", temporalSortName, err)
	}
	if held {
		return nil // the time's first row registered its timer
	}
	if err := o.timers.Register(ts, 0 /* tag */, temporalSortKey); err != nil {
		return fmt.Errorf("%s: %w", temporalSortName, err)
	}
	return nil
}

// hold files a processing-time row under its arrival number until the
// next tick.
func (o *temporalSortOp) hold(row types.Row) error {
	mk := binary.BigEndian.AppendUint64(nil, o.seq)
	o.seq++
	if err := o.arrived.Put(temporalSortKey, mk, kit.Own(row)); err != nil {
		return fmt.Errorf("%s: %w", temporalSortName, err)
	}
	return nil
}

// ProcessWatermark emits the rowtime rows whose time the watermark
// reached. A processing-time sort ignores watermarks.
func (o *temporalSortOp) ProcessWatermark(wm int64, out dataflow.Collector) error {
	if o.spec.ProcTime {
		return nil
	}
	o.wm = max(o.wm, wm) // after a restore the restored watermark may be ahead
	fired, err := o.timers.Due(o.wm)
	if err != nil {
		return fmt.Errorf("%s: %w", temporalSortName, err)
	}
	em := kit.NewEmitter(out, 0)
	for _, t := range fired {
		mk := kit.AppendSortableTime(nil, t.Ts)
		rows, ok, err := o.pending.Get(temporalSortKey, mk)
		if err != nil {
			return fmt.Errorf("%s: %w", temporalSortName, err)
		}
		if !ok {
			return fmt.Errorf("%s: a timer at %d found no rows", temporalSortName, t.Ts)
		}
		if err := o.pending.Delete(temporalSortKey, mk); err != nil {
			return fmt.Errorf("%s: %w", temporalSortName, err)
		}
		o.emitSorted(rows.Rows, &em)
	}
	em.Flush()
	return nil
}

// ProcessingTimeInterval implements dataflow.Operator: only a
// processing-time sort that has keys to sort by holds rows for a tick.
func (o *temporalSortOp) ProcessingTimeInterval() time.Duration {
	if o.spec.ProcTime && len(o.spec.OrderBy) > 0 {
		return TemporalSortTick
	}
	return 0
}

// OnProcessingTime implements dataflow.Operator.
func (o *temporalSortOp) OnProcessingTime(_ time.Time, out dataflow.Collector) error {
	if len(o.spec.OrderBy) == 0 {
		return nil
	}
	return o.flushHeld(out)
}

// Finish implements dataflow.Operator: at the end of input a
// processing-time sort emits what it holds (a rowtime sort already did,
// at the final watermark).
func (o *temporalSortOp) Finish(out dataflow.Collector) error {
	if o.spec.ProcTime && len(o.spec.OrderBy) > 0 {
		return o.flushHeld(out)
	}
	return nil
}

// flushHeld emits every processing-time row held, sorted.
func (o *temporalSortOp) flushHeld(out dataflow.Collector) error {
	var rows []types.Row
	var mks [][]byte
	err := o.arrived.Range(temporalSortKey, func(mk []byte, r types.Row) bool {
		rows = append(rows, r)
		mks = append(mks, bytes.Clone(mk))
		return true
	})
	if err != nil {
		return fmt.Errorf("%s: %w", temporalSortName, err)
	}
	for _, mk := range mks {
		if err := o.arrived.Delete(temporalSortKey, mk); err != nil {
			return fmt.Errorf("%s: %w", temporalSortName, err)
		}
	}
	em := kit.NewEmitter(out, len(rows))
	o.emitSorted(rows, &em)
	em.Flush()
	return nil
}

// emitSorted adds rows, in arrival order, to em sorted by the secondary
// keys as ORDER BY orders them (appendSortKey, the order of Top-N); ties
// keep their arrival order.
func (o *temporalSortOp) emitSorted(rows []types.Row, em *kit.Emitter) {
	if len(o.spec.OrderBy) > 0 && len(rows) > 1 {
		type item struct {
			key []byte
			row types.Row
		}
		items := make([]item, len(rows))
		for i, r := range rows {
			items[i] = item{appendSortKey(nil, o.spec.OrderBy, r), r}
		}
		slices.SortStableFunc(items, func(a, b item) int { return bytes.Compare(a.key, b.key) })
		for i := range items {
			rows[i] = items[i].row
		}
	}
	for _, r := range rows {
		em.Add(dyntable.Insert, r)
	}
}
