package operators

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// JoinType is the kind of a regular join.
type JoinType uint8

// The join types. LEFT, RIGHT and FULL are outer joins: rows of the outer
// side(s) without a match are emitted padded with NULLs.
const (
	InnerJoin JoinType = iota
	LeftJoin
	RightJoin
	FullJoin
)

func (t JoinType) String() string {
	switch t {
	case InnerJoin:
		return "INNER"
	case LeftJoin:
		return "LEFT"
	case RightJoin:
		return "RIGHT"
	case FullJoin:
		return "FULL"
	}
	return fmt.Sprintf("JoinType(%d)", t)
}

// Outer reports, per side (0 left, 1 right), whether a join of type t
// emits that side's rows without a match padded with NULLs.
func (t JoinType) Outer() [2]bool {
	return [2]bool{t == LeftJoin || t == FullJoin, t == RightJoin || t == FullJoin}
}

// JoinSpec describes a regular (unwindowed) equi-join.
type JoinSpec struct {
	Type JoinType
	// LeftKeys and RightKeys are the equi-join key column indexes into the
	// left and right input rows; LeftKeys[i] = RightKeys[i]. Both may be
	// empty, which joins every row with every row (subject to Condition).
	LeftKeys, RightKeys []int
	// LeftWidth and RightWidth are the numbers of columns of each input.
	LeftWidth, RightWidth int
	// Condition is an extra non-equi predicate over the joined row (left
	// columns then right columns); nil means none. It returns true only
	// when the predicate is TRUE (NULL and false are no match). It must be
	// deterministic: it is re-evaluated when a row is retracted.
	Condition func(joined types.Row) (bool, error)
}

// Check is what the Open of every join operator over a JoinSpec
// (regular, interval, temporal, window) checks of it, with name the
// operator's name for the error: a known join type and the columns as
// checkJoinColumns checks them, extra holding each side's columns
// besides the keys (a time or window_end column).
func (s JoinSpec) Check(name string, extra [2][]int) error {
	if s.Type > FullJoin {
		return fmt.Errorf("%s: unknown join type", name)
	}
	return checkJoinColumns(name, [2][]int{s.LeftKeys, s.RightKeys}, [2]int{s.LeftWidth, s.RightWidth}, extra)
}

// Open is what the Open of every join operator over a JoinSpec checks
// first: that it has a state store, then s (see Check).
func (s JoinSpec) Open(ctx *dataflow.OpContext, name string, extra [2][]int) error {
	if ctx == nil || ctx.State == nil {
		return fmt.Errorf("%s: no state store", name)
	}
	return s.Check(name, extra)
}

// Holds reports whether the joined row satisfies the residual
// Condition, true when there is none; name is the operator's, for the
// error.
func (s JoinSpec) Holds(name string, joined types.Row) (bool, error) {
	if s.Condition == nil {
		return true, nil
	}
	ok, err := s.Condition(joined)
	if err != nil {
		return false, fmt.Errorf("%s: join condition: %w", name, err)
	}
	return ok, nil
}

// checkJoinColumns checks the columns of a two-input equi-join for its
// operator's Open: as many left keys as right keys, no negative input
// width, and each side's keys and extra columns inside its width.
func checkJoinColumns(name string, keys [2][]int, width [2]int, extra [2][]int) error {
	if len(keys[0]) != len(keys[1]) {
		return fmt.Errorf("%s: %d left keys but %d right keys", name, len(keys[0]), len(keys[1]))
	}
	if width[0] < 0 || width[1] < 0 {
		return fmt.Errorf("%s: negative input width", name)
	}
	for side := range 2 {
		for _, cols := range [2][]int{keys[side], extra[side]} {
			for _, c := range cols {
				if c < 0 || c >= width[side] {
					return fmt.Errorf("%s: %s column %d out of range (width %d)", name, kit.SideName(side), c, width[side])
				}
			}
		}
	}
	return nil
}

// NewJoin returns the streaming regular join operator (Flink's
// StreamingJoinOperator), with retractions on both sides.
//
// Input 0 is the left side, input 1 the right side; an output row is the
// left columns followed by the right columns.
//
// Semantics. A row arriving with +I/+U is added to its side's state and
// joined with the matching rows of the other side; a row arriving with
// -U/-D is removed and its joined rows are retracted. Key equality is
// SQL equality: a NULL in any key column never matches (such rows are kept
// in state so outer joins can pad them and retractions can be checked).
// DECIMAL keys match by numeric value (1.5 = 1.50) and DOUBLE keys treat
// -0 and 0 as equal.
//
// Output kinds: the operator emits only +I and -D (changelog mode [I,D]):
// an accumulating input (+I/+U) produces +I rows, a retracting input
// (-U/-D) produces -D rows. For an outer side, a row without matches is
// emitted as +I[row, NULL…]; when its first match arrives the operator
// emits -D[row, NULL…] and then +I[row, match]; when its last match is
// retracted it emits -D[row, match] and then +I[row, NULL…]. Identical
// rows are a multiset: each copy joins and pads separately.
//
// Output order is deterministic: the changes for one input row come in
// ascending order of the encoded matching rows of the other side
// (types.EncodeRow byte order), and the changes of one input chunk are
// emitted as one chunk in input order.
//
// State, per side: a MapState keyed by the encoded join key whose map
// key is the encoded row (types.EncodeRow) and whose value is a joinEntry
// {Count, Matches}: the row's multiplicity and, for an outer side, how
// many rows of the other side (with multiplicity) match it. Nothing is
// ever dropped: every live row of both sides is kept.
//
// Retracting a row that is not in its side's state is an invariant
// violation and fails with an error naming the join.
func NewJoin(spec JoinSpec) dataflow.Operator {
	return &joinOp{spec: spec}
}

// joinEntry is the state value of one distinct stored row of a side.
type joinEntry struct {
	// Count is the multiplicity of the row (> 0 while stored).
	Count int64
	// Matches is the number of rows of the other side (counting
	// multiplicity) that join with this row; maintained for outer sides
	// only, and 0 on inner sides.
	Matches int64
}

// joinEntryCodec serializes a joinEntry as a count pair
// (appendCountPair): Count, then Matches.
type joinEntryCodec struct{}

func (joinEntryCodec) Encode(dst []byte, e joinEntry) []byte {
	return appendCountPair(dst, e.Count, e.Matches)
}

func (joinEntryCodec) Decode(b []byte) (joinEntry, error) {
	c, m, ok := decodeCountPair(b)
	if !ok {
		return joinEntry{}, fmt.Errorf("join state: corrupt entry")
	}
	return joinEntry{Count: c, Matches: m}, nil
}

// appendCountPair appends two counts (>= 0) as unsigned varints: the
// state value of the joins' joinEntry and the set operations'
// setOpCounts.
func appendCountPair(dst []byte, a, b int64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(dst, uint64(a)), uint64(b))
}

// decodeCountPair reads what appendCountPair wrote, all of b; ok is false
// when b is anything else.
func decodeCountPair(b []byte) (x, y int64, ok bool) {
	a, n := binary.Uvarint(b)
	if n <= 0 || a > math.MaxInt64 {
		return 0, 0, false
	}
	c, m := binary.Uvarint(b[n:])
	if m <= 0 || c > math.MaxInt64 || n+m != len(b) {
		return 0, 0, false
	}
	return int64(a), int64(c), true
}

type joinOp struct {
	dataflow.BaseOperator

	spec  JoinSpec
	name  string
	sides [2]state.MapState[joinEntry]
	keys  [2][]int
	shape kit.Shape
	outer [2]bool
}

func (j *joinOp) Open(ctx *dataflow.OpContext) error {
	s := j.spec
	j.name = "Join(" + s.Type.String() + ")"
	if err := s.Open(ctx, j.name, [2][]int{}); err != nil {
		return err
	}
	j.keys = [2][]int{s.LeftKeys, s.RightKeys}
	j.shape.Width = [2]int{s.LeftWidth, s.RightWidth}
	j.outer = s.Type.Outer()
	var err error
	if j.sides[0], err = state.NewMapState[joinEntry](ctx.State, "join.left", joinEntryCodec{}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if j.sides[1], err = state.NewMapState[joinEntry](ctx.State, "join.right", joinEntryCodec{}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	return nil
}

func (j *joinOp) ProcessChunk(input int, c *dyntable.Chunk, out dataflow.Collector) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("%s: unknown input %d", j.name, input)
	}
	res := &dyntable.Chunk{}
	for _, ch := range c.Changes {
		if err := j.process(input, ch, res); err != nil {
			return err
		}
	}
	if res.Len() > 0 {
		out.Emit(res)
	}
	return nil
}

// joinMatch is a row of the other side that joins with the input row.
type joinMatch struct {
	mapKey string
	entry  joinEntry
	row    types.Row // the other side's row
	joined types.Row // left ++ right
}

func (j *joinOp) process(side int, ch dyntable.Change, res *dyntable.Chunk) error {
	row := ch.Row
	if len(row) != j.shape.Width[side] {
		return fmt.Errorf("%s: %s row [%s] has %d columns, want %d", j.name, kit.SideName(side), types.FormatRow(row, nil, ", "), len(row), j.shape.Width[side])
	}
	other := 1 - side
	own, oth := j.sides[side], j.sides[other]
	acc := ch.Kind.IsAccumulate()
	key, hasNull := kit.EncodeKey(nil, row, j.keys[side])
	rowKey := types.EncodeRow(nil, row)

	// Validate the own side first so that an invariant violation leaves
	// state and output untouched.
	ownEntry, found, err := own.Get(key, rowKey)
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if !acc && !found {
		return fmt.Errorf("%s: %s of %s row [%s] that is not in the join state", j.name, ch.Kind, kit.SideName(side), types.FormatRow(row, nil, ", "))
	}

	// Collect the matching rows of the other side, and evaluate the
	// residual condition, before changing anything.
	var matches []joinMatch
	if !hasNull {
		var rangeErr error
		err := oth.Range(key, func(mk []byte, e joinEntry) bool {
			r, derr := types.DecodeRow(mk)
			if derr != nil {
				rangeErr = derr
				return false
			}
			matches = append(matches, joinMatch{mapKey: string(mk), entry: e, row: r})
			return true
		})
		if err == nil {
			err = rangeErr
		}
		if err != nil {
			return fmt.Errorf("%s: reading %s state: %w", j.name, kit.SideName(other), err)
		}
		kept := matches[:0]
		for _, m := range matches {
			m.joined = j.shape.Concat(side, row, m.row)
			if ok, err := j.spec.Holds(j.name, m.joined); err != nil {
				return err
			} else if !ok {
				continue
			}
			kept = append(kept, m)
		}
		matches = kept
	}

	var total int64
	for _, m := range matches {
		total += m.entry.Count
	}

	for _, m := range matches {
		e := m.entry
		if acc {
			if j.outer[other] && e.Matches == 0 {
				joinEmitN(res, dyntable.Delete, j.shape.Pad(other, m.row), e.Count)
			}
			joinEmitN(res, dyntable.Insert, m.joined, e.Count)
		} else {
			joinEmitN(res, dyntable.Delete, m.joined, e.Count)
		}
		if !j.outer[other] {
			continue
		}
		if acc {
			e.Matches++
		} else {
			if e.Matches <= 0 {
				return fmt.Errorf("%s: %s row [%s] loses a match it never had", j.name, kit.SideName(other), types.FormatRow(m.row, nil, ", "))
			}
			e.Matches--
			if e.Matches == 0 {
				joinEmitN(res, dyntable.Insert, j.shape.Pad(other, m.row), e.Count)
			}
		}
		if err := oth.Put(key, []byte(m.mapKey), e); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
	}

	if j.outer[side] && total == 0 {
		k := dyntable.Insert
		if !acc {
			k = dyntable.Delete
		}
		res.Append(k, j.shape.Pad(side, row))
	}

	// Update the own side.
	if acc {
		if !found {
			ownEntry = joinEntry{}
			if j.outer[side] {
				ownEntry.Matches = total
			}
		}
		ownEntry.Count++
		err = own.Put(key, rowKey, ownEntry)
	} else {
		ownEntry.Count--
		if ownEntry.Count <= 0 {
			err = own.Delete(key, rowKey)
		} else {
			err = own.Put(key, rowKey, ownEntry)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	return nil
}

func joinEmitN(res *dyntable.Chunk, k dyntable.RowKind, r types.Row, n int64) {
	for i := int64(0); i < n; i++ {
		res.Append(k, r)
	}
}
