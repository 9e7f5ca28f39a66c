package operators

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// SetOpKind is INTERSECT or EXCEPT, in the set (distinct) or ALL form.
type SetOpKind uint8

// The set operations.
const (
	Intersect SetOpKind = iota
	IntersectAll
	Except
	ExceptAll
)

func (k SetOpKind) String() string {
	switch k {
	case Intersect:
		return "INTERSECT"
	case IntersectAll:
		return "INTERSECT ALL"
	case Except:
		return "EXCEPT"
	case ExceptAll:
		return "EXCEPT ALL"
	}
	return fmt.Sprintf("SetOpKind(%d)", k)
}

// Multiplicity is how many copies of a row the operation outputs when
// the left input holds l copies and the right input r:
//
//	INTERSECT      1 if l > 0 and r > 0, else 0
//	INTERSECT ALL  min(l, r)
//	EXCEPT         1 if l > 0 and r = 0, else 0
//	EXCEPT ALL     max(l - r, 0)
func (k SetOpKind) Multiplicity(l, r int64) int64 {
	switch k {
	case Intersect:
		if l > 0 && r > 0 {
			return 1
		}
	case IntersectAll:
		return min(l, r)
	case Except:
		if l > 0 && r == 0 {
			return 1
		}
	case ExceptAll:
		return max(l-r, 0)
	}
	return 0
}

// NewSetOp returns the operator of INTERSECT [ALL] and EXCEPT [ALL] of
// two inputs with the same columns (input 0 is the left query). Rows
// are compared whole, and, as in SQL's set operations, NULLs compare
// equal. Both inputs must be hash-partitioned by every column.
//
// Semantics. For each distinct row the operator keeps how many copies
// each input currently holds: +I/+U add a copy, -U/-D remove one. After
// each change it emits the difference between the row's new and old
// Multiplicity: +I for each copy gained, -D for each copy lost. So the
// output is always the set operation of the two inputs' current
// contents, and its changelog mode is [I,D]; INTERSECT [ALL] of
// insert-only inputs only ever gains copies and emits only +I.
//
// State, per row (types.AppendValue of every column): "setop.counts", a
// ValueState with the two counts; a row is dropped when both are zero.
// Removing a copy an input does not hold is an invariant violation and
// fails with an error naming the operator.
func NewSetOp(kind SetOpKind, width int) dataflow.Operator {
	return &setOp{kind: kind, width: width}
}

type setOpCounts struct{ l, r int64 }

// setOpCountsCodec serializes setOpCounts as a count pair
// (appendCountPair): l, then r.
type setOpCountsCodec struct{}

func (setOpCountsCodec) Encode(dst []byte, c setOpCounts) []byte {
	return appendCountPair(dst, c.l, c.r)
}

func (setOpCountsCodec) Decode(b []byte) (setOpCounts, error) {
	l, r, ok := decodeCountPair(b)
	if !ok {
		return setOpCounts{}, types.ErrCorrupt
	}
	return setOpCounts{l, r}, nil
}

type setOp struct {
	dataflow.BaseOperator

	kind   SetOpKind
	width  int
	name   string
	counts state.ValueState[setOpCounts]
	key    []byte // scratch
}

func (s *setOp) Open(ctx *dataflow.OpContext) error {
	s.name = s.kind.String()
	if ctx == nil || ctx.State == nil {
		return fmt.Errorf("%s: no state store", s.name)
	}
	var err error
	if s.counts, err = state.NewValueState[setOpCounts](ctx.State, "setop.counts", setOpCountsCodec{}); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	return nil
}

func (s *setOp) ProcessChunk(input int, c *dyntable.Chunk, out dataflow.Collector) error {
	if input != 0 && input != 1 {
		return fmt.Errorf("%s: unknown input %d", s.name, input)
	}
	e := kit.NewEmitter(out, 0)
	for _, ch := range c.Changes {
		if len(ch.Row) != s.width {
			return fmt.Errorf("%s: row [%s] has %d columns, want %d", s.name, types.FormatRow(ch.Row, nil, ", "), len(ch.Row), s.width)
		}
		s.key = s.key[:0]
		for _, v := range ch.Row {
			s.key = types.AppendValue(s.key, v)
		}
		old, _, err := s.counts.Get(s.key)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		now := old
		side := &now.l
		if input == 1 {
			side = &now.r
		}
		if ch.Kind.IsAccumulate() {
			*side++
		} else {
			if *side <= 0 {
				return fmt.Errorf("%s: %s of row [%s] that input %d does not hold", s.name, ch.Kind, types.FormatRow(ch.Row, nil, ", "), input)
			}
			*side--
		}
		if now.l == 0 && now.r == 0 {
			err = s.counts.Delete(s.key)
		} else {
			err = s.counts.Put(s.key, now)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		d := s.kind.Multiplicity(now.l, now.r) - s.kind.Multiplicity(old.l, old.r)
		for ; d > 0; d-- {
			e.Add(dyntable.Insert, ch.Row)
		}
		for ; d < 0; d++ {
			e.Add(dyntable.Delete, ch.Row)
		}
	}
	e.Flush()
	return nil
}
