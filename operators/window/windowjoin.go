package window

import (
	"encoding/binary"
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
// State: per side a MapState keyed by the join key whose entries are the
// rows under their arrival number (8 bytes, big-endian, so a range visits
// them in arrival order), and a ValueState of the next arrival number per
// key and side; timers in kit.Timers at window_end - 1 ms. A row is one
// entry of its own, so a window of many rows under one key (a join on the
// window only, as Nexmark q5's) is appended to without reading what the
// window already holds and stays in the state backend, not in memory.
// When the window fires, its right rows are read into memory and its left
// rows are streamed past them, so memory holds one window's right side.
func NewWindowJoin(spec WindowJoinSpec) dataflow.Operator {
	return &windowJoinOp{spec: spec}
}

type windowJoinOp struct {
	dataflow.BaseOperator
	oc     *dataflow.OpContext // counts late rows
	spec   WindowJoinSpec
	name   string
	sides  [2]state.MapState[types.Row]
	next   [2]state.ValueState[int64] // arrival number of the next row per key
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
	if err := s.Join.Open(ctx, j.name, [2][]int{{s.LeftEnd}, {s.RightEnd}}); err != nil {
		return err
	}
	j.keys = [2][]int{s.Join.LeftKeys, s.Join.RightKeys}
	j.end = [2]int{s.LeftEnd, s.RightEnd}
	j.shape.Width = [2]int{s.Join.LeftWidth, s.Join.RightWidth}
	j.outer = s.Join.Type.Outer()
	var err error
	for side, name := range [2]string{"windowjoin.left", "windowjoin.right"} {
		if j.sides[side], err = state.NewMapState[types.Row](ctx.State, name+".rows", kit.RowCodec{}); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		if j.next[side], err = state.NewValueState[int64](ctx.State, name+".next", kit.Int64Codec{}); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
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
		seq, _, err := j.next[input].Get(key)
		if err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		if err := j.next[input].Put(key, seq+1); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		if err := j.sides[input].Put(key, binary.BigEndian.AppendUint64(nil, uint64(seq)), kit.Own(row)); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		if seq == 0 {
			if err := j.timers.Register(fireAt, 0, key); err != nil {
				return fmt.Errorf("%s: %w", j.name, err)
			}
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

// fire joins the window of key and drops its state: the right rows are
// read into memory, then the left rows are streamed past them in arrival
// order.
func (j *windowJoinOp) fire(key []byte, em *kit.Emitter) error {
	var right []types.Row
	if err := j.sides[1].Range(key, func(_ []byte, r types.Row) bool {
		right = append(right, r)
		return true
	}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	rightMatched := make([]bool, len(right))
	var condErr error
	err := j.sides[0].Range(key, func(_ []byte, l types.Row) bool {
		if _, null := kit.EncodeKey(nil, l, j.keys[0]); null {
			// NULL equals nothing: an outer left row is padded, and the
			// right rows under this key (their keys NULL too) stay
			// unmatched, to be padded if the right side is outer.
			if j.outer[0] {
				em.Add(dyntable.Insert, j.shape.Pad(0, l))
			}
			return true
		}
		matched := false
		for ri, r := range right {
			joined := j.shape.Concat(0, l, r)
			if ok, err := j.spec.Join.Holds(j.name, joined); err != nil {
				condErr = err
				return false
			} else if !ok {
				continue
			}
			matched, rightMatched[ri] = true, true
			em.Add(dyntable.Insert, joined)
		}
		if !matched && j.outer[0] {
			em.Add(dyntable.Insert, j.shape.Pad(0, l))
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if condErr != nil {
		return condErr
	}
	if j.outer[1] {
		for ri, r := range right {
			if !rightMatched[ri] {
				em.Add(dyntable.Insert, j.shape.Pad(1, r))
			}
		}
	}
	for side := range 2 {
		if err := j.sides[side].Clear(key); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		if err := j.next[side].Delete(key); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
	}
	return nil
}
