package operators

import (
	"context"
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Lookuper looks the right side's rows up by key; it has the method set
// of connectors.Lookuper (see there for the lifecycle: Open, Lookup from
// the operator's goroutine, Close always), repeated here so operators
// stays independent of connectors.
type Lookuper interface {
	Open(ctx context.Context) error
	Lookup(ctx context.Context, key types.Row) ([]types.Row, error)
	Close() error
}

// LookupJoinSpec describes a processing-time lookup join.
type LookupJoinSpec struct {
	// Type is InnerJoin or LeftJoin.
	Type JoinType
	// LeftKeys are the left columns whose values, in order, form the
	// lookup key (the right table's key columns, in the same order).
	LeftKeys []int
	// LeftWidth and RightWidth are the column counts of the left input
	// and of the looked-up table.
	LeftWidth, RightWidth int
	// Condition is an extra predicate over the joined row (left columns
	// then right columns); nil means none. Only TRUE joins.
	Condition Predicate
	// Table names the looked-up table in errors.
	Table string
	// NewLookuper makes the subtask's Lookuper; called in Open.
	NewLookuper func() (Lookuper, error)
}

// NewLookupJoin returns the lookup join operator (Flink's LookupJoin):
// for each left row it looks up, at the moment the row is processed, the
// rows of the right table with an equal key and emits the joined rows;
// a LEFT join emits the left row padded with NULLs when no looked-up row
// matches (key and Condition). A left key holding NULL matches nothing.
//
// The input must be insert-only and so is the output: a later change of
// the right table does not retract or update earlier output. The
// operator keeps no state (any cache belongs to the Lookuper), so it is
// not snapshotted. Within one chunk each distinct key is looked up once;
// the output chunk keeps the input order, and the rows of one left row
// come in the order the Lookuper returned them.
func NewLookupJoin(spec LookupJoinSpec) dataflow.Operator {
	return &lookupJoinOp{spec: spec}
}

type lookupJoinOp struct {
	dataflow.BaseOperator
	spec LookupJoinSpec
	ctx  context.Context
	l    Lookuper
	// Per chunk: the distinct keys' results, reused.
	results map[string][]types.Row
	kbuf    []byte
	keyRow  types.Row
}

func (j *lookupJoinOp) Open(ctx *dataflow.OpContext) error {
	if j.spec.Type != InnerJoin && j.spec.Type != LeftJoin {
		return fmt.Errorf("lookup join: %s join is not supported (INNER or LEFT)", j.spec.Type)
	}
	j.ctx = ctx.Context()
	l, err := j.spec.NewLookuper()
	if err != nil {
		return fmt.Errorf("lookup join with table '%s': %w", j.spec.Table, err)
	}
	j.l = l
	if err := l.Open(j.ctx); err != nil {
		return fmt.Errorf("lookup join with table '%s': %w", j.spec.Table, err)
	}
	j.results = map[string][]types.Row{}
	j.keyRow = make(types.Row, len(j.spec.LeftKeys))
	return nil
}

// lookup returns the rows for the key of left row r, looking the key up
// only the first time in a chunk; ok is false for a key holding NULL.
func (j *lookupJoinOp) lookup(r types.Row) ([]types.Row, error) {
	j.kbuf = j.kbuf[:0]
	for i, c := range j.spec.LeftKeys {
		if r[c].IsNull() {
			return nil, nil
		}
		j.keyRow[i] = r[c]
		j.kbuf = types.AppendValue(j.kbuf, r[c])
	}
	if rows, ok := j.results[string(j.kbuf)]; ok {
		return rows, nil
	}
	rows, err := j.l.Lookup(j.ctx, j.keyRow)
	if err != nil {
		return nil, fmt.Errorf("lookup join with table '%s': %w", j.spec.Table, err)
	}
	j.results[string(j.kbuf)] = rows
	return rows, nil
}

func (j *lookupJoinOp) ProcessChunk(_ int, c *dyntable.Chunk, out dataflow.Collector) error {
	clear(j.results)
	lw, rw := j.spec.LeftWidth, j.spec.RightWidth
	res := &dyntable.Chunk{Changes: make([]dyntable.Change, 0, len(c.Changes))}
	for _, ch := range c.Changes {
		if ch.Kind != dyntable.Insert {
			return fmt.Errorf("lookup join with table '%s': the left input must be insert-only, got %s", j.spec.Table, ch.Kind)
		}
		if len(ch.Row) != lw {
			return fmt.Errorf("lookup join with table '%s': left row has %d columns, want %d", j.spec.Table, len(ch.Row), lw)
		}
		rows, err := j.lookup(ch.Row)
		if err != nil {
			return err
		}
		matched := false
		for _, r := range rows {
			if len(r) != rw {
				return fmt.Errorf("lookup join with table '%s': looked-up row has %d columns, want %d", j.spec.Table, len(r), rw)
			}
			joined := make(types.Row, lw+rw)
			copy(joined, ch.Row)
			copy(joined[lw:], r)
			if j.spec.Condition != nil {
				ok, err := j.spec.Condition(joined)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
			}
			matched = true
			res.Changes = append(res.Changes, dyntable.Change{Kind: dyntable.Insert, Row: joined})
		}
		if !matched && j.spec.Type == LeftJoin {
			joined := make(types.Row, lw+rw)
			copy(joined, ch.Row)
			for i := lw; i < lw+rw; i++ {
				joined[i] = types.NullValue
			}
			res.Changes = append(res.Changes, dyntable.Change{Kind: dyntable.Insert, Row: joined})
		}
	}
	if len(res.Changes) > 0 {
		out.Emit(res)
	}
	return nil
}

func (j *lookupJoinOp) Close() error {
	if j.l == nil {
		return nil
	}
	err := j.l.Close()
	j.l = nil
	return err
}
