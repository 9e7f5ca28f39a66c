package operators

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// SemiJoinSpec describes a semi join (IN, EXISTS) or an anti join (NOT
// IN, NOT EXISTS): the left rows that have, or have not, a matching right
// row. Keys, widths and Condition are as in JoinSpec.
type SemiJoinSpec struct {
	Anti                bool
	LeftKeys, RightKeys []int
	LeftWidth           int
	RightWidth          int
	// Condition, if not nil, must also be TRUE for a left and a right row
	// to match; it sees left ++ right.
	Condition func(joined types.Row) (bool, error)
}

// NewSemiJoin returns the semi or anti join operator (Flink's
// StreamingSemiAntiJoinOperator). Input 0 is the left side, whose rows
// are the output; input 1 the right side, which only decides.
//
// Semantics. For each stored left row the operator counts its matches:
// the right rows (with multiplicity) with an equal key for which the
// condition holds; a NULL in a key column never matches. A semi join
// outputs a left row while it has a match, an anti join while it has
// none:
//
//   - a left +I/+U is stored with its matches and emitted (+I) if it is
//     visible; a left -U/-D is emitted (-D) if it was visible;
//   - a right +I/+U adds a match to each left row it matches; a row
//     going from 0 to 1 match appears (semi: +I) or disappears (anti:
//     -D), each copy of it;
//   - a right -U/-D removes a match; a row going from 1 to 0 matches
//     disappears (semi: -D) or appears (anti: +I).
//
// The output is [I,D]; a semi join of insert-only inputs only emits +I.
//
// State, per side: a MapState keyed by the encoded join key whose map
// key is the encoded row and whose value is a joinEntry: the row's
// multiplicity and, on the left, its number of matches. Retracting a row
// that is not stored is an invariant violation and fails.
func NewSemiJoin(spec SemiJoinSpec) dataflow.Operator {
	return &semiJoinOp{spec: spec}
}

type semiJoinOp struct {
	dataflow.BaseOperator

	spec  SemiJoinSpec
	name  string
	sides [2]state.MapState[joinEntry]
	keys  [2][]int
	width [2]int
}

func (j *semiJoinOp) Open(ctx *dataflow.OpContext) error {
	s := j.spec
	j.name = "SemiJoin"
	if s.Anti {
		j.name = "AntiJoin"
	}
	if ctx == nil || ctx.State == nil {
		return fmt.Errorf("%s: no state store", j.name)
	}
	j.keys = [2][]int{s.LeftKeys, s.RightKeys}
	j.width = [2]int{s.LeftWidth, s.RightWidth}
	if err := checkJoinColumns(j.name, j.keys, j.width, [2][]int{}); err != nil {
		return err
	}
	var err error
	if j.sides[0], err = state.NewMapState[joinEntry](ctx.State, "semijoin.left", joinEntryCodec{}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if j.sides[1], err = state.NewMapState[joinEntry](ctx.State, "semijoin.right", joinEntryCodec{}); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	return nil
}

func (j *semiJoinOp) ProcessChunk(input int, c *dyntable.Chunk, out dataflow.Collector) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("%s: unknown input %d", j.name, input)
	}
	res := &dyntable.Chunk{}
	for _, ch := range c.Changes {
		if len(ch.Row) != j.width[input] {
			return fmt.Errorf("%s: %s row [%s] has %d columns, want %d", j.name, kit.SideName(input), types.FormatRow(ch.Row, nil, ", "), len(ch.Row), j.width[input])
		}
		var err error
		if input == 0 {
			err = j.left(ch, res)
		} else {
			err = j.right(ch, res)
		}
		if err != nil {
			return err
		}
	}
	if res.Len() > 0 {
		out.Emit(res)
	}
	return nil
}

// visible reports whether a left row with m matches is in the output.
func (j *semiJoinOp) visible(m int64) bool { return (m > 0) != j.spec.Anti }

// matches reports whether a left and a right row match (keys aside).
func (j *semiJoinOp) matches(left, right types.Row) (bool, error) {
	if j.spec.Condition == nil {
		return true, nil
	}
	joined := make(types.Row, 0, len(left)+len(right))
	ok, err := j.spec.Condition(append(append(joined, left...), right...))
	if err != nil {
		return false, fmt.Errorf("%s: join condition: %w", j.name, err)
	}
	return ok, nil
}

func (j *semiJoinOp) left(ch dyntable.Change, res *dyntable.Chunk) error {
	key, hasNull := kit.EncodeKey(nil, ch.Row, j.keys[0])
	rowKey := types.EncodeRow(nil, ch.Row)
	e, found, err := j.sides[0].Get(key, rowKey)
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if !ch.Kind.IsAccumulate() {
		if !found {
			return fmt.Errorf("%s: %s of left row [%s] that is not in the join state", j.name, ch.Kind, types.FormatRow(ch.Row, nil, ", "))
		}
		if j.visible(e.Matches) {
			res.Append(dyntable.Delete, ch.Row)
		}
		if e.Count--; e.Count == 0 {
			err = j.sides[0].Delete(key, rowKey)
		} else {
			err = j.sides[0].Put(key, rowKey, e)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		return nil
	}
	if !found && !hasNull {
		var rangeErr error
		err := j.sides[1].Range(key, func(mk []byte, re joinEntry) bool {
			r, derr := types.DecodeRow(mk)
			if derr != nil {
				rangeErr = derr
				return false
			}
			ok, cerr := j.matches(ch.Row, r)
			if cerr != nil {
				rangeErr = cerr
				return false
			}
			if ok {
				e.Matches += re.Count
			}
			return true
		})
		if err == nil {
			err = rangeErr
		}
		if err != nil {
			return fmt.Errorf("%s: reading right state: %w", j.name, err)
		}
	}
	e.Count++
	if err := j.sides[0].Put(key, rowKey, e); err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	if j.visible(e.Matches) {
		res.Append(dyntable.Insert, ch.Row)
	}
	return nil
}

func (j *semiJoinOp) right(ch dyntable.Change, res *dyntable.Chunk) error {
	key, hasNull := kit.EncodeKey(nil, ch.Row, j.keys[1])
	if hasNull {
		return nil // matches no left row, now or later
	}
	rowKey := types.EncodeRow(nil, ch.Row)
	own, found, err := j.sides[1].Get(key, rowKey)
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	acc := ch.Kind.IsAccumulate()
	if !acc && !found {
		return fmt.Errorf("%s: %s of right row [%s] that is not in the join state", j.name, ch.Kind, types.FormatRow(ch.Row, nil, ", "))
	}
	// The left rows this row matches, before changing anything.
	type hit struct {
		mk  string
		e   joinEntry
		row types.Row
	}
	var hits []hit
	var rangeErr error
	err = j.sides[0].Range(key, func(mk []byte, e joinEntry) bool {
		l, derr := types.DecodeRow(mk)
		if derr != nil {
			rangeErr = derr
			return false
		}
		ok, cerr := j.matches(l, ch.Row)
		if cerr != nil {
			rangeErr = cerr
			return false
		}
		if ok {
			hits = append(hits, hit{string(mk), e, l})
		}
		return true
	})
	if err == nil {
		err = rangeErr
	}
	if err != nil {
		return fmt.Errorf("%s: reading left state: %w", j.name, err)
	}
	for _, h := range hits {
		before := j.visible(h.e.Matches)
		if acc {
			h.e.Matches++
		} else {
			if h.e.Matches <= 0 {
				return fmt.Errorf("%s: left row [%s] loses a match it never had", j.name, types.FormatRow(h.row, nil, ", "))
			}
			h.e.Matches--
		}
		if after := j.visible(h.e.Matches); after != before {
			k := dyntable.Insert
			if !after {
				k = dyntable.Delete
			}
			joinEmitN(res, k, h.row, h.e.Count)
		}
		if err := j.sides[0].Put(key, []byte(h.mk), h.e); err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
	}
	if acc {
		own.Count++
		err = j.sides[1].Put(key, rowKey, own)
	} else if own.Count--; own.Count == 0 {
		err = j.sides[1].Delete(key, rowKey)
	} else {
		err = j.sides[1].Put(key, rowKey, own)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", j.name, err)
	}
	return nil
}
