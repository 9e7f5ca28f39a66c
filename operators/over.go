package operators

import (
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// OverUnbounded is OverAggSpec.Preceding for UNBOUNDED PRECEDING.
const OverUnbounded int64 = -1

// OverAggSpec describes an event-time OVER aggregation:
//
//	agg(x) OVER (PARTITION BY keys ORDER BY time
//	             {ROWS | RANGE} BETWEEN preceding PRECEDING AND CURRENT ROW)
type OverAggSpec struct {
	PartitionKeys []int
	// TimeCol is the rowtime column the window is ordered by, ascending.
	TimeCol int
	// Rows selects a ROWS frame (Preceding counts rows); otherwise the
	// frame is RANGE and Preceding is in nanoseconds of TimeCol.
	Rows bool
	// Preceding is the frame's extent before the current row, or
	// OverUnbounded.
	Preceding int64
	Aggs      []AggCall
	Width     int // input columns
}

// NewOverAgg returns the event-time OVER aggregation operator (Flink's
// RowTime{Rows,Range}{Bounded,Unbounded}PrecedingFunction).
//
// Semantics. Rows are buffered until the watermark reaches their time;
// then, per partition in time order, each row is emitted once as +I with
// the aggregates over its frame appended. A RANGE frame holds every row
// of the partition whose time is in [time - Preceding, time] — rows of
// equal time are peers and get the same values. A ROWS frame holds the
// row and the Preceding rows before it, rows of equal time taken in
// arrival order. A row that arrives with time <= watermark is late and
// dropped, as in Flink, and counted in streamsql_late_records_dropped_total;
// a row with a NULL time is dropped too. The output is
// insert-only, and the input must be too.
//
// Output order: rows of one watermark come in (time, partition key)
// order, rows of one time and partition in arrival order.
//
// State, per partition key: the rows waiting for the watermark
// (MapState, map key the time), the rows of the current frame for
// bounded frames (MapState, map key the time), and the accumulators
// with the frame's row count (ValueState). Timers live in kit.Timers. A
// RANGE frame's rows are dropped once no row still to come can see them,
// even if the partition falls silent; ROWS and unbounded frames keep
// theirs (a later row may still need them).
func NewOverAgg(spec OverAggSpec) dataflow.Operator {
	return &overAggOp{spec: spec}
}

// overAcc is the aggregate state of one partition.
type overAcc struct {
	accs []accumulator
	n    int64 // rows in the frame (ROWS frames)
}

// overAccCodec serializes overAcc with the accumulators' own encoding;
// it knows the calls, so it can create the accumulators to decode into.
type overAccCodec struct {
	calls    []AggCall
	retracts bool
}

func (c overAccCodec) Encode(dst []byte, v overAcc) []byte {
	dst = binary.AppendVarint(dst, v.n)
	for _, a := range v.accs {
		dst = a.encode(dst)
	}
	return dst
}

func (c overAccCodec) Decode(b []byte) (overAcc, error) {
	n, k := binary.Varint(b)
	if k <= 0 {
		return overAcc{}, fmt.Errorf("over aggregate state: corrupt row count")
	}
	b = b[k:]
	v, err := c.fresh()
	if err != nil {
		return overAcc{}, err
	}
	v.n = n
	for _, a := range v.accs {
		if b, err = a.decode(b); err != nil {
			return overAcc{}, fmt.Errorf("over aggregate state: %w", err)
		}
	}
	if len(b) != 0 {
		return overAcc{}, fmt.Errorf("over aggregate state: %d trailing bytes", len(b))
	}
	return v, nil
}

// fresh returns empty accumulators.
func (c overAccCodec) fresh() (overAcc, error) {
	v := overAcc{accs: make([]accumulator, len(c.calls))}
	for i, call := range c.calls {
		a, err := newAccumulator(call, c.retracts)
		if err != nil {
			return overAcc{}, err
		}
		v.accs[i] = a
	}
	return v, nil
}

type overAggOp struct {
	dataflow.BaseOperator
	oc      *dataflow.OpContext // counts late rows
	spec    OverAggSpec
	name    string
	codec   overAccCodec
	pending state.MapState[kit.Rows] // rows waiting for the watermark
	frame   state.MapState[kit.Rows] // rows of bounded frames, by time
	accs    state.ValueState[overAcc]
	timers  *kit.Timers
	wm      int64
	bounded bool
}

func (o *overAggOp) Open(ctx *dataflow.OpContext) error {
	o.oc = ctx
	s := o.spec
	o.name = "OverAggregate"
	if ctx == nil || ctx.State == nil {
		return fmt.Errorf("%s: no state store", o.name)
	}
	for _, k := range append(append([]int(nil), s.PartitionKeys...), s.TimeCol) {
		if k < 0 || k >= s.Width {
			return fmt.Errorf("%s: column %d out of range (width %d)", o.name, k, s.Width)
		}
	}
	if s.Preceding < 0 && s.Preceding != OverUnbounded {
		return fmt.Errorf("%s: negative frame extent %d", o.name, s.Preceding)
	}
	o.bounded = s.Preceding != OverUnbounded
	o.codec = overAccCodec{calls: s.Aggs, retracts: o.bounded}
	if _, err := o.codec.fresh(); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	var err error
	if o.pending, err = state.NewMapState[kit.Rows](ctx.State, "over.pending", kit.RowsCodec{}); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if o.frame, err = state.NewMapState[kit.Rows](ctx.State, "over.frame", kit.RowsCodec{}); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if o.accs, err = state.NewValueState[overAcc](ctx.State, "over.accs", o.codec); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if o.timers, o.wm, err = kit.OpenTimers(ctx, "over.timers"); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return nil
}

// SnapshotState implements dataflow.Operator: the watermark, which
// decides what is late, goes into the checkpoint with the state.
func (o *overAggOp) SnapshotState(dataflow.Barrier) error {
	return o.timers.SaveWatermark(o.wm)
}

func (o *overAggOp) ProcessChunk(_ int, c *dyntable.Chunk, _ dataflow.Collector) error {
	for _, ch := range c.Changes {
		if !ch.Kind.IsAccumulate() {
			return fmt.Errorf("%s: %s row; OVER aggregation takes an append-only input", o.name, ch.Kind)
		}
		row := ch.Row
		if len(row) != o.spec.Width {
			return fmt.Errorf("%s: row [%s] has %d columns, want %d", o.name, types.FormatRow(row, nil, ", "), len(row), o.spec.Width)
		}
		tv := row[o.spec.TimeCol]
		if tv.IsNull() {
			continue
		}
		if tv.Kind() != types.KindTimestamp {
			return fmt.Errorf("%s: time column holds %v, not a TIMESTAMP", o.name, tv.Kind())
		}
		ts := tv.Timestamp()
		if ts <= o.wm {
			o.oc.LateRecordsDropped(1) // late
			continue
		}
		key, _ := kit.EncodeKey(nil, row, o.spec.PartitionKeys) // NULL is a partition like any other
		mk := kit.AppendSortableTime(nil, ts)
		cur, _, err := o.pending.Get(key, mk)
		if err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
		nv := cur.With(false, row)
		if err := o.pending.Put(key, mk, nv); err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
		if err := o.timers.Register(ts, overRowTag, key); err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
	}
	return nil
}

// ProcessWatermark emits the rows whose time the watermark reached.
func (o *overAggOp) ProcessWatermark(wm int64, out dataflow.Collector) error {
	o.wm = wm
	fired, err := o.timers.Due(wm)
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	em := kit.NewEmitter(out, 0)
	for _, t := range fired {
		if t.Tag == overCleanupTag {
			err = o.cleanup(t.Key, t.Ts)
		} else {
			err = o.fire(t.Key, t.Ts, &em)
		}
		if err != nil {
			return err
		}
	}
	em.Flush()
	return nil
}

// The timer tags: a pending row's time, and a RANGE frame's cleanup.
const (
	overRowTag     byte = 0
	overCleanupTag byte = 1
)

// cleanup runs at time at = ts + Preceding + 1 ns after rows at ts entered
// a bounded RANGE frame: every row still to be emitted has a time >= at
// (timers fire in time order, pending rows before cleanups of the same
// time), so its frame starts after ts, and the frame rows up to ts can
// go — without it, a partition that falls silent would keep them.
func (o *overAggOp) cleanup(key []byte, at int64) error {
	acc, found, err := o.accs.Get(key)
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if !found {
		return nil
	}
	if err := o.retractBefore(key, &acc, kit.AddSat(at, -o.spec.Preceding)); err != nil {
		return err
	}
	empty := true
	if err := o.frame.Range(key, func([]byte, kit.Rows) bool { empty = false; return false }); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if empty {
		err = o.accs.Delete(key)
	} else {
		err = o.accs.Put(key, acc)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return nil
}

// fire emits the pending rows of key at time ts.
func (o *overAggOp) fire(key []byte, ts int64, em *kit.Emitter) error {
	mk := kit.AppendSortableTime(nil, ts)
	rows, ok, err := o.pending.Get(key, mk)
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if !ok {
		return fmt.Errorf("%s: a timer at %d found no rows", o.name, ts)
	}
	if err := o.pending.Delete(key, mk); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	acc, found, err := o.accs.Get(key)
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if !found {
		if acc, err = o.codec.fresh(); err != nil {
			return err
		}
	}
	switch {
	case !o.spec.Rows:
		// RANGE: drop what fell out of [ts - Preceding, ts], add the
		// peers, emit them all with the same values.
		if o.bounded {
			if err := o.retractBefore(key, &acc, kit.AddSat(ts, -o.spec.Preceding)); err != nil {
				return err
			}
		}
		for _, r := range rows.Rows {
			if err := o.add(&acc, r); err != nil {
				return err
			}
		}
		for _, r := range rows.Rows {
			em.Add(dyntable.Insert, o.result(r, &acc))
		}
		if o.bounded {
			if err := o.appendFrame(key, mk, rows.Rows); err != nil {
				return err
			}
			if err := o.timers.Register(kit.AddSat(kit.AddSat(ts, o.spec.Preceding), 1), overCleanupTag, key); err != nil {
				return fmt.Errorf("%s: %w", o.name, err)
			}
		}
	default:
		// ROWS: one row at a time, the oldest leaving once the frame
		// holds more than Preceding + 1 rows.
		for _, r := range rows.Rows {
			if err := o.add(&acc, r); err != nil {
				return err
			}
			acc.n++
			if o.bounded {
				if err := o.appendFrame(key, mk, []types.Row{r}); err != nil {
					return err
				}
				if acc.n > o.spec.Preceding+1 {
					if err := o.retractOldest(key, &acc); err != nil {
						return err
					}
				}
			}
			em.Add(dyntable.Insert, o.result(r, &acc))
		}
	}
	if err := o.accs.Put(key, acc); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return nil
}

// add accumulates row into every aggregate.
func (o *overAggOp) add(acc *overAcc, row types.Row) error {
	for i, c := range o.spec.Aggs {
		v := types.NewInt(1) // COUNT(*) counts rows, whatever they hold
		if c.Kind != AggCountStar {
			if v = row[c.Arg]; v.IsNull() && c.Kind != AggLag { // LAG sees NULLs too
				continue
			}
		}
		if err := acc.accs[i].add(v); err != nil {
			return fmt.Errorf("%s: %s: %w", o.name, c.Kind, err)
		}
	}
	return nil
}

// retract removes row from every aggregate.
func (o *overAggOp) retract(acc *overAcc, row types.Row) error {
	for i, c := range o.spec.Aggs {
		v := types.NewInt(1)
		if c.Kind != AggCountStar {
			if v = row[c.Arg]; v.IsNull() {
				continue
			}
		}
		if err := acc.accs[i].retract(v); err != nil {
			return fmt.Errorf("%s: %s: %w", o.name, c.Kind, err)
		}
	}
	return nil
}

// result returns row with the aggregate values appended.
func (o *overAggOp) result(row types.Row, acc *overAcc) types.Row {
	out := make(types.Row, 0, len(row)+len(acc.accs))
	out = append(out, row...)
	for _, a := range acc.accs {
		out = append(out, a.result())
	}
	return out
}

// appendFrame adds rows at time mk to the frame of key.
func (o *overAggOp) appendFrame(key, mk []byte, rows []types.Row) error {
	cur, _, err := o.frame.Get(key, mk)
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	nv := cur.With(false, rows...)
	if err := o.frame.Put(key, mk, nv); err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return nil
}

// retractBefore removes the frame rows of key with time < lo.
func (o *overAggOp) retractBefore(key []byte, acc *overAcc, lo int64) error {
	type old struct {
		mk   []byte
		rows []types.Row
	}
	var gone []old
	err := o.frame.Range(key, func(mk []byte, v kit.Rows) bool {
		if kit.SortableTime(mk) >= lo {
			return false
		}
		gone = append(gone, old{append([]byte(nil), mk...), v.Rows})
		return true
	})
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	for _, g := range gone {
		for _, r := range g.rows {
			if err := o.retract(acc, r); err != nil {
				return err
			}
		}
		if err := o.frame.Delete(key, g.mk); err != nil {
			return fmt.Errorf("%s: %w", o.name, err)
		}
	}
	return nil
}

// retractOldest removes the first row of the frame of key.
func (o *overAggOp) retractOldest(key []byte, acc *overAcc) error {
	var first []byte
	var v kit.Rows
	err := o.frame.Range(key, func(mk []byte, x kit.Rows) bool {
		first, v = append([]byte(nil), mk...), x
		return false
	})
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	if first == nil || len(v.Rows) == 0 {
		return fmt.Errorf("%s: the ROWS frame is empty but counts %d rows", o.name, acc.n)
	}
	if err := o.retract(acc, v.Rows[0]); err != nil {
		return err
	}
	acc.n--
	if len(v.Rows) == 1 {
		err = o.frame.Delete(key, first)
	} else {
		err = o.frame.Put(key, first, kit.Rows{Rows: v.Rows[1:], Matched: v.Matched[1:]})
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.name, err)
	}
	return nil
}
