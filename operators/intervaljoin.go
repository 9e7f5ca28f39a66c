package operators

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// IntervalJoinSpec describes an event-time interval join: an equi-join
// whose rows also satisfy
//
//	left.time - right.time BETWEEN Lower AND Upper   (both inclusive)
//
// which is what `l.ts BETWEEN r.ts - INTERVAL a AND r.ts + INTERVAL b`
// means with Lower = -a and Upper = +b. A strict bound (<) is given as
// the inclusive one a nanosecond inside it.
type IntervalJoinSpec struct {
	// Join holds the join type, keys, input widths and residual
	// condition, with the meaning they have for the regular join.
	Join JoinSpec
	// LeftTime and RightTime are the rowtime columns (TIMESTAMP) of the
	// left and right input.
	LeftTime, RightTime int
	// Lower and Upper bound left.time - right.time in nanoseconds.
	Lower, Upper int64
}

// NewIntervalJoin returns the event-time interval join operator (Flink's
// RowTimeIntervalJoin). Input 0 is the left side, input 1 the right; an
// output row is the left columns followed by the right columns. Both
// inputs must be insert-only; a retraction fails the job.
//
// Semantics. A row arriving on one side is joined at once with the rows
// of the other side in state whose time lies in its interval, and the
// join emits +I for each match. It is then kept in state as long as a
// row of the other side that is not late (time >= watermark) could still
// match it. Watermarks have Flink's meaning: after watermark W no row
// with time <= W follows. So a left row with time lt is kept while
// watermark < lt - Lower, a right row with time rt while watermark <
// rt + Upper. When the watermark reaches that point the row is dropped;
// for an outer side, a row that never matched is emitted padded with
// NULLs at that moment — so the output is insert-only. A late row
// (time <= watermark) joins with
// what is still in state and, if it can match nothing that may follow,
// is not stored (an outer side's late row without a match is padded at
// once). A row with a NULL key or a NULL time never matches.
//
// Watermarks. Output rows keep both input times, and a match of a new
// row with an old one can carry a time up to max(Upper, -Lower) behind
// the input watermark; so the operator forwards the input watermark held
// back by that much (Flink does the same), and its output times stay
// valid rowtime attributes. Its node must be marked GeneratesWatermarks.
//
// Output order is deterministic: an input row's matches come in
// ascending time of the other side, rows of equal time in arrival
// order; padded rows come in (expiry time, key) order.
//
// State, per side: a MapState keyed by the join key whose map key is the
// row time (sortable) and whose value is the rows of that time in
// arrival order, with their matched flags. Expiry timers live in
// kit.Timers, one per side and key at the expiry of its earliest row, so
// checkpoints cover everything.
func NewIntervalJoin(spec IntervalJoinSpec) dataflow.Operator {
	return &intervalJoinOp{spec: spec}
}

type intervalJoinOp struct {
	dataflow.BaseOperator
	spec   IntervalJoinSpec
	name   string
	sides  [2]state.MapState[kit.Rows]
	timers *kit.Timers
	keys   [2][]int
	width  [2]int
	time   [2]int
	outer  [2]bool
	delay  int64 // watermark hold-back
	wm     int64 // current input watermark
	// shape builds joined and padded rows as the regular join does.
	shape kit.Shape
}

func (j *intervalJoinOp) Open(ctx *dataflow.OpContext) error {
	s := j.spec
	j.name = "IntervalJoin(" + s.Join.Type.String() + ")"
	if err := s.Join.Open(ctx, j.name, [2][]int{{s.LeftTime}, {s.RightTime}}); err != nil {
		return err
	}
	if s.Lower > s.Upper {
		return fmt.Errorf("%s: empty interval [%d, %d]", j.name, s.Lower, s.Upper)
	}
	j.keys = [2][]int{s.Join.LeftKeys, s.Join.RightKeys}
	j.width = [2]int{s.Join.LeftWidth, s.Join.RightWidth}
	j.time = [2]int{s.LeftTime, s.RightTime}
	j.shape.Width = j.width
	j.outer = s.Join.Type.Outer()
	j.delay = max(0, s.Upper, -s.Lower)
	var err error
	if j.sides[0], err = state.NewMapState[kit.Rows](ctx.State, "intervaljoin.left", kit.RowsCodec{}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if j.sides[1], err = state.NewMapState[kit.Rows](ctx.State, "intervaljoin.right", kit.RowsCodec{}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if j.timers, j.wm, err = kit.OpenTimers(ctx, "intervaljoin.timers"); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	return nil
}

// SnapshotState implements dataflow.Operator: the watermark goes into
// the checkpoint with the state.
func (j *intervalJoinOp) SnapshotState(dataflow.Barrier) error {
	return j.timers.SaveWatermark(j.wm)
}

// expiry is the watermark at which a row of side with time ts can no
// longer match a row of the other side that is not late.
func (j *intervalJoinOp) expiry(side int, ts int64) int64 {
	if side == 0 {
		return kit.AddSat(ts, -j.spec.Lower)
	}
	return kit.AddSat(ts, j.spec.Upper)
}

// window is the range of times of the other side that a row of side
// with time ts matches, inclusive.
func (j *intervalJoinOp) window(side int, ts int64) (lo, hi int64) {
	if side == 0 { // rt in [lt - Upper, lt - Lower]
		return kit.AddSat(ts, -j.spec.Upper), kit.AddSat(ts, -j.spec.Lower)
	}
	return kit.AddSat(ts, j.spec.Lower), kit.AddSat(ts, j.spec.Upper) // lt in [rt + Lower, rt + Upper]
}

func (j *intervalJoinOp) ProcessChunk(input int, c *dyntable.Chunk, out dataflow.Collector) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("%s: unknown input %d", j.name, input)
	}
	em := kit.NewEmitter(out, 0)
	for _, ch := range c.Changes {
		if !ch.Kind.IsAccumulate() {
			return fmt.Errorf("%s: %s row on an insert-only input; an interval join takes append-only inputs", j.name, ch.Kind)
		}
		if err := j.process(input, ch.Row, &em); err != nil {
			return err
		}
	}
	em.Flush()
	return nil
}

// ijHit is a stored entry of the other side that has matches.
type ijHit struct {
	mapKey []byte
	rows   kit.Rows
	dirty  bool
}

func (j *intervalJoinOp) process(side int, row types.Row, em *kit.Emitter) error {
	if len(row) != j.width[side] {
		return fmt.Errorf("%s: %s row [%s] has %d columns, want %d", j.name, kit.SideName(side), types.FormatRow(row, nil, ", "), len(row), j.width[side])
	}
	tv := row[j.time[side]]
	key, hasNull := kit.EncodeKey(nil, row, j.keys[side])
	if hasNull || tv.IsNull() {
		if j.outer[side] {
			em.Add(dyntable.Insert, j.shape.Pad(side, row))
		}
		return nil
	}
	if tv.Kind() != types.KindTimestamp {
		return fmt.Errorf("%s: %s time column holds %v, not a TIMESTAMP", j.name, kit.SideName(side), tv.Kind())
	}
	ts := tv.Timestamp()
	other := 1 - side
	lo, hi := j.window(side, ts)
	matched := false

	// Collect the other side's entries in the window, then emit; the
	// state is not modified while it is being ranged over.
	var hits []ijHit
	err := j.sides[other].Range(key, func(mk []byte, v kit.Rows) bool {
		t := kit.SortableTime(mk)
		if t < lo {
			return true
		}
		if t > hi {
			return false
		}
		hits = append(hits, ijHit{mapKey: append([]byte(nil), mk...), rows: v})
		return true
	})
	if err != nil {
		return fmt.Errorf("%s: reading %s state: %w", j.name, kit.SideName(other), err)
	}
	for i := range hits {
		h := &hits[i]
		for i, r := range h.rows.Rows {
			joined := j.shape.Concat(side, row, r)
			if ok, err := j.spec.Join.Holds(j.name, joined); err != nil {
				return err
			} else if !ok {
				continue
			}
			matched = true
			em.Add(dyntable.Insert, joined)
			if j.outer[other] && !h.rows.Matched[i] {
				if !h.dirty {
					// The state owns the slice it returned: copy before
					// changing it.
					h.rows.Matched = append([]bool(nil), h.rows.Matched...)
					h.dirty = true
				}
				h.rows.Matched[i] = true
			}
		}
		if h.dirty {
			if err := j.sides[other].Put(key, h.mapKey, h.rows); err != nil {
				return fmt.Errorf("%s: %w", j.name, err)
			}
		}
	}

	exp := j.expiry(side, ts)
	if exp <= j.wm {
		// No row of the other side that is not late can match it.
		if j.outer[side] && !matched {
			em.Add(dyntable.Insert, j.shape.Pad(side, row))
		}
		return nil
	}
	// One timer per side and key, at the expiry of its earliest row (a
	// row's expiry grows with its time): a new row needs one only when it
	// is the earliest. expire re-arms it for the next earliest row.
	earliest, any := int64(0), false
	if err := j.sides[side].Range(key, func(mk []byte, _ kit.Rows) bool {
		earliest, any = kit.SortableTime(mk), true
		return false
	}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	mk := kit.AppendSortableTime(nil, ts)
	cur, _, err := j.sides[side].Get(key, mk)
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	nv := cur.With(matched, row)
	if err := j.sides[side].Put(key, mk, nv); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if !any || ts < earliest {
		if err := j.timers.Register(exp, byte(side), key); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
	}
	return nil
}

// ijPad is a padded row of an expired outer row, with its sort position.
type ijPad struct {
	exp  int64
	side int
	key  []byte
	row  types.Row
}

// ProcessWatermark drops the rows that can no longer match, padding the
// unmatched rows of outer sides, then forwards the held-back watermark.
func (j *intervalJoinOp) ProcessWatermark(wm int64, out dataflow.Collector) error {
	j.wm = wm
	fired, err := j.timers.Due(wm)
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	var pads []ijPad
	for _, t := range fired {
		if pads, err = j.expire(int(t.Tag), t.Key, wm, pads); err != nil {
			return err
		}
	}
	// Padded rows in (expiry, side, key) order, ties in arrival order.
	slices.SortStableFunc(pads, func(a, b ijPad) int {
		if c := cmp.Compare(a.exp, b.exp); c != 0 {
			return c
		}
		if c := cmp.Compare(a.side, b.side); c != 0 {
			return c
		}
		return bytes.Compare(a.key, b.key)
	})
	em := kit.NewEmitter(out, 0)
	for _, p := range pads {
		em.Add(dyntable.Insert, p.row)
	}
	em.Flush()
	if wm == dataflow.MaxWatermark {
		return nil // the runtime forwards the final watermark itself
	}
	return out.EmitWatermark(kit.AddSat(wm, -j.delay))
}

// expire removes the rows of side under key whose expiry is at or before
// wm, appends the padded rows of unmatched outer rows to pads, and arms
// the key's timer for its next earliest row.
func (j *intervalJoinOp) expire(side int, key []byte, wm int64, pads []ijPad) ([]ijPad, error) {
	var gone [][]byte
	next, more := int64(0), false
	err := j.sides[side].Range(key, func(mk []byte, v kit.Rows) bool {
		exp := j.expiry(side, kit.SortableTime(mk))
		if exp > wm {
			next, more = exp, true
			return false
		}
		gone = append(gone, append([]byte(nil), mk...))
		for i, r := range v.Rows {
			if j.outer[side] && !v.Matched[i] {
				pads = append(pads, ijPad{exp: exp, side: side, key: key, row: j.shape.Pad(side, r)})
			}
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.name, err)
	}
	for _, mk := range gone {
		if err := j.sides[side].Delete(key, mk); err != nil {
			return nil, fmt.Errorf("%s: %w", j.name, err)
		}
	}
	if more {
		if err := j.timers.Register(next, byte(side), key); err != nil {
			return nil, fmt.Errorf("%s: %w", j.name, err)
		}
	}
	return pads, nil
}
