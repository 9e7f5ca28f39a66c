package operators

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// NewChangelogNormalize returns Flink's ChangelogNormalize: it turns the
// upsert stream of a source declared with PRIMARY KEY keyCols into a
// proper retract changelog.
//
// State: "normalize.last", a ValueState keyed by the encoded primary key
// holding the last row of the key (deleted on -D).
//
//   - +I or +U for a key without a row: +I new.
//   - +I or +U for a key whose row is equal (types.RowsEqual): nothing.
//   - +I or +U for a key with a different row: -U old, +U new.
//   - -D (only its key columns need to be meaningful): -D of the stored
//     full row if the key has one, else nothing.
//   - -U is ignored: the +U that follows replaces the row anyway.
func NewChangelogNormalize(keyCols []int) dataflow.Operator {
	return &normOp{keyCols: keyCols}
}

const normName = "ChangelogNormalize"

type normOp struct {
	dataflow.BaseOperator

	keyCols []int
	last    state.ValueState[types.Row]
}

func (n *normOp) Open(ctx *dataflow.OpContext) error {
	if ctx == nil || ctx.State == nil {
		return fmt.Errorf("%s: no state store", normName)
	}
	if len(n.keyCols) == 0 {
		return fmt.Errorf("%s: no primary key columns", normName)
	}
	for _, c := range n.keyCols {
		if c < 0 {
			return fmt.Errorf("%s: negative key column %d", normName, c)
		}
	}
	var err error
	if n.last, err = state.NewValueState[types.Row](ctx.State, "normalize.last", kit.RowCodec{}); err != nil {
		return fmt.Errorf("%s: %w", normName, err)
	}
	return nil
}

func (n *normOp) ProcessChunk(input int, c *dyntable.Chunk, out dataflow.Collector) error {
	if input != 0 {
		return fmt.Errorf("%s: unknown input %d", normName, input)
	}
	res := &dyntable.Chunk{}
	for _, ch := range c.Changes {
		if err := n.process(ch, res); err != nil {
			return err
		}
	}
	if res.Len() > 0 {
		out.Emit(res)
	}
	return nil
}

func (n *normOp) process(ch dyntable.Change, res *dyntable.Chunk) error {
	if ch.Kind == dyntable.UpdateBefore {
		return nil
	}
	for _, c := range n.keyCols {
		if c >= len(ch.Row) {
			return fmt.Errorf("%s: %s row [%s] has no key column %d", normName, ch.Kind, types.FormatRow(ch.Row, nil, ", "), c)
		}
	}
	key, _ := kit.EncodeKey(nil, ch.Row, n.keyCols)
	old, found, err := n.last.Get(key)
	if err != nil {
		return fmt.Errorf("%s: %w", normName, err)
	}
	if ch.Kind == dyntable.Delete {
		if !found {
			return nil
		}
		if err := n.last.Delete(key); err != nil {
			return fmt.Errorf("%s: %w", normName, err)
		}
		res.Append(dyntable.Delete, old)
		return nil
	}
	switch {
	case !found:
		res.Append(dyntable.Insert, ch.Row)
	case types.RowsEqual(old, ch.Row):
		return nil
	default:
		res.Append(dyntable.UpdateBefore, old)
		res.Append(dyntable.UpdateAfter, ch.Row)
	}
	if err := n.last.Put(key, kit.Own(ch.Row)); err != nil {
		return fmt.Errorf("%s: %w", normName, err)
	}
	return nil
}
