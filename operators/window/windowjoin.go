package window

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// WindowJoinSpec describes a window join: two windowed inputs (window
// table functions or window aggregations) joined on equal window_start,
// equal window_end and further keys.
type WindowJoinSpec struct {
	// Join holds the join type, the keys — which include the window_start
	// and window_end pairs — the widths and the residual condition.
	Join operators.JoinSpec
	// LeftEnd and RightEnd are the window_end columns of each input.
	LeftEnd, RightEnd int
}

// NewWindowJoin returns the window join operator (Flink's
// WindowJoinOperator). Input 0 is the left side, input 1 the right; an
// output row is the left columns followed by the right columns.
//
// Semantics. Rows are buffered per join key — which holds the window —
// until the window fires: when the watermark reaches window_end - 1 ms,
// the window's largest timestamp, as for window aggregation. Then the
// window's rows of both sides with the key are joined: every pair that
// satisfies the residual condition is emitted as +I, and for an outer
// side every row without a match is emitted padded with NULLs; the
// window's state is dropped. The output is insert-only, and so must the
// inputs be. A row whose window has already fired (window_end - 1 ms <=
// watermark) is late, dropped and counted in
// streamsql_late_records_dropped_total. A row with a NULL key matches
// nothing: of an inner side it is dropped, of an outer side it is padded
// when its window fires, as in Flink.
//
// Output order: windows in (window_end, key) order; within a window, the
// left rows in arrival order, each with its matches in right arrival
// order, then the padded right rows.
//
// State: per side a ValueState keyed by the join key holding the rows in
// arrival order; timers in kit.Timers at window_end - 1 ms.
func NewWindowJoin(spec WindowJoinSpec) dataflow.Operator {
	return &windowJoinOp{spec: spec}
}

type windowJoinOp struct {
	dataflow.BaseOperator
	oc     *dataflow.OpContext // counts late rows
	spec   WindowJoinSpec
	name   string
	sides  [2]state.ValueState[kit.Rows]
	timers *kit.Timers
	shape  kit.Shape
	keys   [2][]int
	end    [2]int
	outer  [2]bool
	wm     int64
}

func (j *windowJoinOp) Open(ctx *dataflow.OpContext) error {
	j.oc = ctx
	s := j.spec
	j.name = "WindowJoin(" + s.Join.Type.String() + ")"
	if ctx == nil || ctx.State == nil {
		return fmt.Errorf("%s: no state store", j.name)
	}
	if err := s.Join.Check(j.name, [2][]int{{s.LeftEnd}, {s.RightEnd}}); err != nil {
		return err
	}
	j.keys = [2][]int{s.Join.LeftKeys, s.Join.RightKeys}
	j.end = [2]int{s.LeftEnd, s.RightEnd}
	j.shape.Width = [2]int{s.Join.LeftWidth, s.Join.RightWidth}
	j.outer = s.Join.Type.Outer()
	var err error
	if j.sides[0], err = state.NewValueState[kit.Rows](ctx.State, "windowjoin.left", kit.RowsCodec{}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if j.sides[1], err = state.NewValueState[kit.Rows](ctx.State, "windowjoin.right", kit.RowsCodec{}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if j.timers, j.wm, err = kit.OpenTimers(ctx, "windowjoin.timers"); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	return nil
}

// SnapshotState implements dataflow.Operator: the watermark, which
// decides what is late, goes into the checkpoint with the state.
func (j *windowJoinOp) SnapshotState(dataflow.Barrier) error {
	return j.timers.SaveWatermark(j.wm)
}

func (j *windowJoinOp) ProcessChunk(input int, c *dyntable.Chunk, _ dataflow.Collector) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("%s: unknown input %d", j.name, input)
	}
	for _, ch := range c.Changes {
		if !ch.Kind.IsAccumulate() {
			return fmt.Errorf("%s: %s row; a window join takes append-only inputs", j.name, ch.Kind)
		}
		row := ch.Row
		if len(row) != j.shape.Width[input] {
			return fmt.Errorf("%s: %s row has %d columns, want %d", j.name, kit.SideName(input), len(row), j.shape.Width[input])
		}
		ev := row[j.end[input]]
		if ev.IsNull() {
			continue
		}
		if ev.Kind() != types.KindTimestamp {
			return fmt.Errorf("%s: window_end holds %v, not a TIMESTAMP", j.name, ev.Kind())
		}
		fireAt := kit.AddSat(ev.Timestamp(), -WindowTimeOffset)
		if fireAt <= j.wm {
			j.oc.LateRecordsDropped(1) // late: the window has fired
			continue
		}
		key, hasNull := kit.EncodeKey(nil, row, j.keys[input])
		if hasNull && !j.outer[input] {
			continue // never matches and is never padded
		}
		// A row with a NULL key of an outer side is kept under its key to
		// be padded when its window fires; fire never matches it.
		cur, _, err := j.sides[input].Get(key)
		if err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		nv := cur.With(false, row)
		if err := j.sides[input].Put(key, nv); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		if err := j.timers.Register(fireAt, 0, key); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
	}
	return nil
}

// ProcessWatermark joins and drops the windows that fire.
func (j *windowJoinOp) ProcessWatermark(wm int64, out dataflow.Collector) error {
	j.wm = wm
	fired, err := j.timers.Due(wm)
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	em := kit.NewEmitter(out, 0)
	for _, t := range fired {
		if err := j.fire(t.Key, &em); err != nil {
			return err
		}
	}
	em.Flush()
	return nil
}

func (j *windowJoinOp) fire(key []byte, em *kit.Emitter) error {
	var rows [2][]types.Row
	for side := range 2 {
		v, _, err := j.sides[side].Get(key)
		if err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		rows[side] = v.Rows
		if err := j.sides[side].Delete(key); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
	}
	rightMatched := make([]bool, len(rows[1]))
	for _, l := range rows[0] {
		matched := false
		if _, null := kit.EncodeKey(nil, l, j.keys[0]); null {
			// NULL equals nothing: an outer left row is padded, and the
			// right rows under this key (their keys NULL too) stay
			// unmatched, to be padded if the right side is outer.
			if j.outer[0] {
				em.Add(dyntable.Insert, j.shape.Pad(0, l))
			}
			continue
		}
		for ri, r := range rows[1] {
			joined := j.shape.Concat(0, l, r)
			if c := j.spec.Join.Condition; c != nil {
				ok, err := c(joined)
				if err != nil {
					return fmt.Errorf("%s: join condition: %w", j.name, err)
				}
				if !ok {
					continue
				}
			}
			matched, rightMatched[ri] = true, true
			em.Add(dyntable.Insert, joined)
		}
		if !matched && j.outer[0] {
			em.Add(dyntable.Insert, j.shape.Pad(0, l))
		}
	}
	if j.outer[1] {
		for ri, r := range rows[1] {
			if !rightMatched[ri] {
				em.Add(dyntable.Insert, j.shape.Pad(1, r))
			}
		}
	}
	return nil
}
