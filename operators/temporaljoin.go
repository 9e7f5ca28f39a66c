package operators

import (
	"fmt"
	"sort"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TemporalJoinSpec describes an event-time temporal join of an
// append-only left input with a versioned table on the right:
//
//	o [LEFT] JOIN r FOR SYSTEM_TIME AS OF o.ts ON o.k = r.k
type TemporalJoinSpec struct {
	// Join holds the join type (InnerJoin or LeftJoin), the keys, which
	// on the right cover the versioned table's primary key, the widths
	// and the residual condition.
	Join JoinSpec
	// LeftTime is the left rowtime column the version is looked up at;
	// RightTime is the right rowtime column that says from when a version
	// is valid.
	LeftTime, RightTime int
}

// NewTemporalJoin returns the event-time temporal join operator (Flink's
// TemporalRowTimeJoinOperator). Input 0 is the left (probe) side, input 1
// the versioned table's changelog; an output row is the left columns
// followed by the right columns.
//
// Semantics. A right +I or +U row at time rt is the version of its key
// valid from rt on (until the next version); a -D row at time rt ends the
// key's validity from rt; -U rows are ignored (the +U that follows
// carries the new version). As in Flink, a -D is filed at the time the
// row carries: from ChangelogNormalize (an upsert source) that is the
// deleted version's own time, so the key reads as deleted from then on.
// A left row at time lt waits until the
// watermark reaches lt, then joins with the version of its key valid at
// lt — the right row with the largest time <= lt — if there is one, it is
// not a deletion and the residual condition holds. Otherwise an inner
// join drops the row and a LEFT join emits it padded with NULLs. Each
// left row yields exactly one output row or none, of the left row's kind,
// as Flink's: an updating left input (-U, +U, -D rows) gives an updating
// output, each retraction joined with the version valid at its own time.
// A left row with a NULL key or time never matches (a LEFT join pads it
// at once).
//
// State is cleaned by the watermark: once the watermark reaches a
// version's successor, no left row still to come (time > watermark) can
// see the older version, so it is dropped; a deletion that is the newest
// version at or below the watermark is dropped too. A late left row (time
// <= watermark) is joined at the next watermark with the versions still
// kept, as in Flink.
//
// Output order: rows of one watermark in ascending left time, then key,
// then arrival order.
//
// State, per join key: the pending left rows (MapState by time, rows in
// arrival order) and the right versions (MapState by time); timers in
// kit.Timers at each left row's time and each version's time.
func NewTemporalJoin(spec TemporalJoinSpec) dataflow.Operator {
	return &temporalJoinOp{spec: spec}
}

// tjVersion is one version of a versioned table's row.
type tjVersion struct {
	Row     types.Row
	Deleted bool
}

// tjVersionCodec serializes a version as a deleted byte and the row.
type tjVersionCodec struct{}

func (tjVersionCodec) Encode(dst []byte, v tjVersion) []byte {
	d := byte(0)
	if v.Deleted {
		d = 1
	}
	return types.EncodeRow(append(dst, d), v.Row)
}

func (tjVersionCodec) Decode(b []byte) (tjVersion, error) {
	if len(b) == 0 || b[0] > 1 {
		return tjVersion{}, fmt.Errorf("temporal join state: corrupt version")
	}
	r, err := types.DecodeRow(b[1:])
	if err != nil {
		return tjVersion{}, fmt.Errorf("temporal join state: %w", err)
	}
	return tjVersion{Row: r, Deleted: b[0] == 1}, nil
}

type temporalJoinOp struct {
	dataflow.BaseOperator
	spec     TemporalJoinSpec
	name     string
	left     state.MapState[tjLeftRows]
	versions state.MapState[tjVersion]
	timers   *kit.Timers
	shape    kit.Shape
	outer    bool
}

func (j *temporalJoinOp) Open(ctx *dataflow.OpContext) error {
	s := j.spec
	j.name = "TemporalJoin(" + s.Join.Type.String() + ")"
	if s.Join.Type != InnerJoin && s.Join.Type != LeftJoin {
		return fmt.Errorf("%s: a temporal join is INNER or LEFT", j.name)
	}
	if len(s.Join.LeftKeys) == 0 {
		return fmt.Errorf("%s: %d left keys but %d right keys", j.name, len(s.Join.LeftKeys), len(s.Join.RightKeys))
	}
	if err := s.Join.Open(ctx, j.name, [2][]int{{s.LeftTime}, {s.RightTime}}); err != nil {
		return err
	}
	j.shape.Width = [2]int{s.Join.LeftWidth, s.Join.RightWidth}
	j.outer = s.Join.Type == LeftJoin
	var err error
	if j.left, err = state.NewMapState[tjLeftRows](ctx.State, "temporaljoin.left", tjLeftCodec{}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if j.versions, err = state.NewMapState[tjVersion](ctx.State, "temporaljoin.versions", tjVersionCodec{}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if j.timers, err = kit.NewTimers(ctx, "temporaljoin.timers"); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	return nil
}

// rowTime returns the time of row's column col, or ok false for NULL.
func (j *temporalJoinOp) rowTime(row types.Row, col int) (int64, bool, error) {
	v := row[col]
	if v.IsNull() {
		return 0, false, nil
	}
	if v.Kind() != types.KindTimestamp {
		return 0, false, fmt.Errorf("%s: time column holds %v, not a TIMESTAMP", j.name, v.Kind())
	}
	return v.Timestamp(), true, nil
}

func (j *temporalJoinOp) ProcessChunk(input int, c *dyntable.Chunk, out dataflow.Collector) error {
	em := kit.NewEmitter(out, 0)
	for _, ch := range c.Changes {
		var err error
		switch input {
		case 0:
			err = j.processLeft(ch, &em)
		case 1:
			err = j.processRight(ch)
		default:
			err = fmt.Errorf("%s: unknown input %d", j.name, input)
		}
		if err != nil {
			return err
		}
	}
	em.Flush()
	return nil
}

func (j *temporalJoinOp) processLeft(ch dyntable.Change, em *kit.Emitter) error {
	row := ch.Row
	if len(row) != j.shape.Width[0] {
		return fmt.Errorf("%s: left row has %d columns, want %d", j.name, len(row), j.shape.Width[0])
	}
	ts, ok, err := j.rowTime(row, j.spec.LeftTime)
	if err != nil {
		return err
	}
	key, hasNull := kit.EncodeKey(nil, row, j.spec.Join.LeftKeys)
	if !ok || hasNull {
		if j.outer {
			em.Add(ch.Kind, j.shape.Pad(0, row))
		}
		return nil
	}
	mk := kit.AppendSortableTime(nil, ts)
	cur, _, err := j.left.Get(key, mk)
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	nv := cur.withKind(ch.Kind, row)
	if err := j.left.Put(key, mk, nv); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	return j.timers.Register(ts, 0, key)
}

func (j *temporalJoinOp) processRight(ch dyntable.Change) error {
	if ch.Kind == dyntable.UpdateBefore {
		return nil // the following +U is the new version
	}
	row := ch.Row
	if len(row) != j.shape.Width[1] {
		return fmt.Errorf("%s: right row has %d columns, want %d", j.name, len(row), j.shape.Width[1])
	}
	ts, ok, err := j.rowTime(row, j.spec.RightTime)
	if err != nil {
		return err
	}
	key, hasNull := kit.EncodeKey(nil, row, j.spec.Join.RightKeys)
	if !ok || hasNull {
		return nil // can never be looked up
	}
	mk := kit.AppendSortableTime(nil, ts)
	if err := j.versions.Put(key, mk, tjVersion{Row: kit.Own(row), Deleted: ch.Kind == dyntable.Delete}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	return j.timers.Register(ts, 0, key)
}

// tjOut is an output row with its sort position.
type tjOut struct {
	ts   int64
	key  string
	seq  int
	kind dyntable.RowKind // the left row's
	row  types.Row
}

// ProcessWatermark joins the left rows the watermark reached and drops
// the versions no later left row can see.
func (j *temporalJoinOp) ProcessWatermark(wm int64, out dataflow.Collector) error {
	fired, err := j.timers.Due(wm)
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	seen := map[string]bool{}
	var outs []tjOut
	for _, t := range fired {
		if seen[string(t.Key)] {
			continue
		}
		seen[string(t.Key)] = true
		if outs, err = j.fire(t.Key, wm, outs); err != nil {
			return err
		}
	}
	sort.SliceStable(outs, func(a, b int) bool {
		if outs[a].ts != outs[b].ts {
			return outs[a].ts < outs[b].ts
		}
		if outs[a].key != outs[b].key {
			return outs[a].key < outs[b].key
		}
		return outs[a].seq < outs[b].seq
	})
	em := kit.NewEmitter(out, 0)
	for _, o := range outs {
		em.Add(o.kind, o.row)
	}
	em.Flush()
	return nil
}

type tjTimed struct {
	mk []byte
	ts int64
	v  tjVersion
}

// fire handles key under watermark wm.
func (j *temporalJoinOp) fire(key []byte, wm int64, outs []tjOut) ([]tjOut, error) {
	var vers []tjTimed
	err := j.versions.Range(key, func(mk []byte, v tjVersion) bool {
		vers = append(vers, tjTimed{mk: append([]byte(nil), mk...), ts: kit.SortableTime(mk), v: v})
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.name, err)
	}
	// The left rows the watermark reached, in time order.
	var done [][]byte
	var rangeErr error
	err = j.left.Range(key, func(mk []byte, v tjLeftRows) bool {
		lt := kit.SortableTime(mk)
		if lt > wm {
			return false
		}
		done = append(done, append([]byte(nil), mk...))
		// The version valid at lt: the last one with time <= lt.
		i := sort.Search(len(vers), func(i int) bool { return vers[i].ts > lt }) - 1
		for ri, row := range v.Rows {
			var joined types.Row
			if i >= 0 && !vers[i].v.Deleted {
				joined = j.shape.Concat(0, row, vers[i].v.Row)
				if ok, err := j.spec.Join.Holds(j.name, joined); err != nil {
					rangeErr = err
					return false
				} else if !ok {
					joined = nil
				}
			}
			if joined == nil && j.outer {
				joined = j.shape.Pad(0, row)
			}
			if joined != nil {
				outs = append(outs, tjOut{ts: lt, key: string(key), seq: len(outs), kind: v.Kinds[ri], row: joined})
			}
		}
		return true
	})
	if err == nil {
		err = rangeErr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", j.name, err)
	}
	for _, mk := range done {
		if err := j.left.Delete(key, mk); err != nil {
			return nil, fmt.Errorf("%s: %w", j.name, err)
		}
	}
	// Versions: keep the newest at or below wm (later left rows may see
	// it) unless it is a deletion, and everything after it.
	p := sort.Search(len(vers), func(i int) bool { return vers[i].ts > wm }) - 1
	for i := 0; i <= p; i++ {
		if i == p && !vers[i].v.Deleted {
			break
		}
		if err := j.versions.Delete(key, vers[i].mk); err != nil {
			return nil, fmt.Errorf("%s: %w", j.name, err)
		}
	}
	return outs, nil
}

// tjLeftRows are the pending left rows of one key and time, with their
// row kinds.
type tjLeftRows struct {
	Rows  []types.Row
	Kinds []dyntable.RowKind
}

// withKind returns v with row of kind k appended (in place, as kit.Rows.with).
func (v tjLeftRows) withKind(k dyntable.RowKind, row types.Row) tjLeftRows {
	v.Rows = append(v.Rows, kit.Own(row))
	v.Kinds = append(v.Kinds, k)
	return v
}

// tjLeftCodec serializes tjLeftRows in kit.RowsCodec's layout with the
// row kind in the flag byte: state written when the left input was
// append-only (flag 0) reads back as +I rows.
type tjLeftCodec struct{}

func (tjLeftCodec) Encode(dst []byte, v tjLeftRows) []byte {
	return kit.AppendFlaggedRows(dst, v.Rows, func(i int) byte { return byte(v.Kinds[i]) })
}

func (tjLeftCodec) Decode(b []byte) (tjLeftRows, error) {
	var kinds []dyntable.RowKind
	rows, err := kit.DecodeFlaggedRows(b, "temporal join state", func(n uint64) {
		kinds = make([]dyntable.RowKind, 0, n)
	}, func(f byte) error {
		if f > byte(dyntable.Delete) {
			return fmt.Errorf("corrupt row kind %d", f)
		}
		kinds = append(kinds, dyntable.RowKind(f))
		return nil
	})
	if err != nil {
		return tjLeftRows{}, err
	}
	return tjLeftRows{Rows: rows, Kinds: kinds}, nil
}
