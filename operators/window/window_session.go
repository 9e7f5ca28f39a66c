package window

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// SessionAgg is the window aggregation over SESSION windows (with or
// without PARTITION BY, which the planner turns into group keys). Its
// spec is a WindowAggSpec whose Window.Size is the gap.
//
// A row at ts opens the window [ts, ts + gap). Windows of one key that
// intersect — touching counts, as in Flink's TimeWindow.intersects, so
// two rows exactly one gap apart share a session — merge into one
// session covering both, and their aggregate states merge with
// GroupAgg.mergeGroup. A session fires when the watermark passes its end
// (window_time = end - 1 ms), emitting one insert-only row.
//
// A row is late when the session it would end up in (after merging) has
// already fired by the current watermark; it is dropped and counted.
//
// State: sessions: group key -> session start -> (end, aggregate state);
// timers. Every open session has a timer at or before its end: a new
// session sets one at its end; a session that grows keeps the timer it
// had, and when that fires early the session sets one at its new end.
// A firing timer emits every session of its key that the watermark has
// passed.
type SessionAgg struct {
	oc *dataflow.OpContext // counts late rows
	dataflow.BaseOperator
	spec     WindowAggSpec
	g        *operators.Aggregator
	sessions state.MapState[sessionState]
	timers   *windowTimers
	wm       int64
	key, mk  []byte
}

var (
	_ dataflow.Operator = (*SessionAgg)(nil)
)

type sessionState struct {
	end int64
	gs  operators.AggState
}

// NewSessionAgg returns a session window aggregation.
func NewSessionAgg(spec WindowAggSpec) (*SessionAgg, error) {
	if spec.Window.Kind != WindowSession || spec.Window.Size <= 0 {
		return nil, fmt.Errorf("SessionWindowAggregate: needs a SESSION window with a positive gap")
	}
	if spec.ProcTime {
		return nil, fmt.Errorf("SESSION windows over processing time are not supported")
	}
	if spec.Keys == nil {
		spec.Keys = []int{} // nil would make EncodeKey take every column
	}
	g, err := operators.NewAggregator(spec.Keys, spec.Aggs)
	if err != nil {
		return nil, err
	}
	return &SessionAgg{spec: spec, g: g, wm: dataflow.MinWatermark}, nil
}

// Open implements dataflow.Operator.
func (s *SessionAgg) Open(ctx *dataflow.OpContext) error {
	s.oc = ctx
	var err error
	if s.sessions, err = state.NewMapState[sessionState](ctx.State, "sessions", sessionCodec{s.g.Codec()}); err != nil {
		return err
	}
	s.timers, s.wm, err = openWindowTimers(ctx)
	return err
}

// SnapshotState implements dataflow.Operator.
func (s *SessionAgg) SnapshotState(dataflow.Barrier) error { return s.timers.saveWatermark(s.wm) }

type sessionRef struct {
	mk         []byte
	start, end int64
	st         sessionState
}

// ProcessChunk implements dataflow.Operator.
func (s *SessionAgg) ProcessChunk(_ int, in *dyntable.Chunk, out dataflow.Collector) error {
	gap := s.spec.Window.Size
	for i := range in.Changes {
		ch := &in.Changes[i]
		if ch.Kind != dyntable.Insert {
			return fmt.Errorf("SessionWindowAggregate: input must be insert-only, got %s", ch.Kind)
		}
		v := ch.Row[s.spec.TimeCol]
		if v.IsNull() {
			continue
		}
		ts := s.spec.Window.local(v.Timestamp())
		start, end := ts, ts+gap
		s.key = types.EncodeKey(s.key[:0], ch.Row, s.spec.Keys)
		var merge []sessionRef
		err := s.sessions.Range(s.key, func(mk []byte, st sessionState) bool {
			st0 := kit.SortableTime(mk)
			if st0 > end {
				return false // sessions are ordered by start
			}
			if st.end >= start {
				merge = append(merge, sessionRef{append([]byte(nil), mk...), st0, st.end, st})
			}
			return true
		})
		if err != nil {
			return err
		}
		for _, m := range merge {
			start, end = min(start, m.start), max(end, m.end)
		}
		if fired(end, s.wm) {
			s.oc.LateRecordsDropped(1)
			continue
		}
		// The earliest merged session, when the row does not start
		// before it, keeps its state (the common case: a row extends its
		// key's open session); the others merge into it.
		s.mk = kit.AppendSortableTime(s.mk[:0], start)
		var ns sessionState
		rest := merge
		if len(merge) > 0 && merge[0].start == start {
			ns, rest = merge[0].st, merge[1:]
			ns.end = end
		} else {
			ns = sessionState{end: end, gs: s.g.NewState()}
			s.g.SetKeys(&ns.gs, ch.Row)
		}
		for _, m := range rest {
			if err := s.g.Merge(&ns.gs, &m.st.gs); err != nil {
				return fmt.Errorf("SessionWindowAggregate: %w", err)
			}
			if err := s.sessions.Delete(s.key, m.mk); err != nil {
				return err
			}
		}
		if err := s.g.Add(&ns.gs, ch.Row); err != nil {
			return fmt.Errorf("SessionWindowAggregate: %w", err)
		}
		if err := s.sessions.Put(s.key, s.mk, ns); err != nil {
			return err
		}
		// Timers are lazy: a merged session already has a timer at or
		// before its end, which re-arms itself at the end when it fires
		// early (see ProcessWatermark). Only a new session needs one.
		if len(merge) == 0 {
			if err := s.timers.register(end, s.key); err != nil {
				return err
			}
		}
	}
	return nil
}

// ProcessWatermark implements dataflow.Operator.
func (s *SessionAgg) ProcessWatermark(wm int64, out dataflow.Collector) error {
	s.wm = max(s.wm, s.spec.Window.local(wm)) // after a restore the restored watermark may be ahead
	em := kit.NewEmitter(out, 0)
	due, err := s.timers.due(s.wm)
	if err != nil {
		return err
	}
	type firedSession struct {
		sessionRef
		key []byte
	}
	var done []firedSession
	var rearm []int64
	for _, t := range due {
		rearm = rearm[:0]
		start := len(done)
		err := s.sessions.Range(t.key, func(mk []byte, st sessionState) bool {
			if fired(st.end, s.wm) {
				done = append(done, firedSession{sessionRef{append([]byte(nil), mk...), kit.SortableTime(mk), st.end, st}, t.key})
			} else {
				rearm = append(rearm, st.end)
			}
			return true
		})
		if err != nil {
			return err
		}
		for _, f := range done[start:] {
			if err := s.sessions.Delete(t.key, f.mk); err != nil {
				return err
			}
		}
		// A session that grew past this timer gets one at its end.
		for _, e := range rearm {
			if err := s.timers.register(e, t.key); err != nil {
				return err
			}
		}
	}
	// Emit in session-end, then key order.
	sort.Slice(done, func(i, j int) bool {
		if done[i].end != done[j].end {
			return done[i].end < done[j].end
		}
		return string(done[i].key) < string(done[j].key)
	})
	for _, f := range done {
		em.Add(dyntable.Insert, windowRow(s.g, s.spec.Out, &f.st.gs, f.st.gs.Keys(), f.start, f.end, s.spec.Window))
	}
	em.Flush()
	return nil
}

// sessionCodec serializes a session: its end, then the group state.
type sessionCodec struct {
	g state.Codec[operators.AggState]
}

func (c sessionCodec) Encode(dst []byte, s sessionState) []byte {
	return c.g.Encode(binary.AppendVarint(dst, s.end), s.gs)
}

func (c sessionCodec) Decode(b []byte) (sessionState, error) {
	end, n := binary.Varint(b)
	if n <= 0 {
		return sessionState{}, types.ErrCorrupt
	}
	gs, err := c.g.Decode(b[n:])
	if err != nil {
		return sessionState{}, err
	}
	return sessionState{end: end, gs: gs}, nil
}
