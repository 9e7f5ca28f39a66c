package operators

import (
	"bytes"
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// NewDeduplicate returns Flink's Deduplicate operator: ROW_NUMBER() OVER
// (PARTITION BY k ORDER BY …) with rn = 1 over an insert-only input.
// It is the Rank operator's
// behaviour for that case (see NewRank), at the cost of one value-state
// read per row instead of an ordered map per key:
//
//   - the first row of a key is emitted as +I and kept;
//   - a later row that ranks before the kept one (by ORDER BY; on a tie
//     the earlier row wins, unless every sort key is DESC, when the later
//     one does — keep-first and keep-last) replaces it: -U old, +U new,
//     nothing if the two rows are identical;
//   - any other row is dropped.
//
// State, per key: "dedup.first", a ValueState with the kept row,
// encoded (types.EncodeRow, which is also its checkpoint format) next to
// its sort key: a kept row costs its bytes, not a slice of boxed values
// whose strings would hold on to the source's buffers, and a new row is
// compared with it without decoding it.
//
// With OutputRank every output row carries the row number, always 1, as
// its last column (Rank's per-position changelog is the same for rn = 1).
//
// spec must have Limit 1, Offset 0, at least one partition key and
// InputInsertOnly; a retraction on the input is an error naming the
// operator.
func NewDeduplicate(spec RankSpec) dataflow.Operator {
	return &dedupOp{spec: spec}
}

type dedupOp struct {
	dataflow.BaseOperator

	spec       RankSpec
	laterFirst bool
	first      state.ValueState[dedupKept]
	key, a, b  []byte // scratch
}

// dedupKept is the kept row of a key: the row encoded and its sort key
// (appendSortKey). Neither is changed once stored.
type dedupKept struct {
	sortKey, row []byte
}

// dedupKeptCodec stores the encoded row alone and derives the sort key
// again when it decodes one.
type dedupKeptCodec struct{ order []SortKey }

func (dedupKeptCodec) Encode(dst []byte, k dedupKept) []byte { return append(dst, k.row...) }

func (c dedupKeptCodec) Decode(b []byte) (dedupKept, error) {
	r, err := types.DecodeRow(b)
	if err != nil {
		return dedupKept{}, err
	}
	for _, o := range c.order {
		if o.Col >= len(r) {
			return dedupKept{}, fmt.Errorf("%s state: a row of %d columns has no sort column %d", dedupName, len(r), o.Col)
		}
	}
	return dedupKept{sortKey: appendSortKey(nil, c.order, r), row: bytes.Clone(b)}, nil
}

const dedupName = "Deduplicate"

func (d *dedupOp) Open(ctx *dataflow.OpContext) error {
	s := d.spec
	if ctx == nil || ctx.State == nil {
		return fmt.Errorf("%s: no state store", dedupName)
	}
	if s.Limit != 1 || s.Offset != 0 || len(s.PartitionKeys) == 0 || !s.InputInsertOnly {
		return fmt.Errorf("%s: unsupported spec %+v (a Rank is needed)", dedupName, s)
	}
	var err error
	if d.laterFirst, err = s.checkColumns(dedupName); err != nil {
		return err
	}
	if d.first, err = state.NewValueState[dedupKept](ctx.State, "dedup.first", dedupKeptCodec{s.OrderBy}); err != nil {
		return fmt.Errorf("%s: %w", dedupName, err)
	}
	return nil
}

func (d *dedupOp) ProcessChunk(input int, c *dyntable.Chunk, out dataflow.Collector) error {
	if input != 0 {
		return fmt.Errorf("%s: unknown input %d", dedupName, input)
	}
	e := kit.NewEmitter(out, 0)
	for _, ch := range c.Changes {
		if ch.Kind != dyntable.Insert {
			return fmt.Errorf("%s: received %s on an insert-only input", dedupName, ch.Kind)
		}
		d.key = d.key[:0]
		for _, k := range d.spec.PartitionKeys {
			d.key = types.AppendValue(d.key, ch.Row[k])
		}
		old, ok, err := d.first.Get(d.key)
		if err != nil {
			return fmt.Errorf("%s: %w", dedupName, err)
		}
		d.a = appendSortKey(d.a[:0], d.spec.OrderBy, ch.Row)
		if ok {
			cmp := bytes.Compare(d.a, old.sortKey)
			if cmp > 0 || (cmp == 0 && !d.laterFirst) {
				continue // the kept row still ranks first
			}
		}
		// One allocation holds the new kept row's sort key and row.
		d.b = types.EncodeRow(d.b[:0], ch.Row)
		buf := make([]byte, len(d.a)+len(d.b))
		n := copy(buf, d.a)
		copy(buf[n:], d.b)
		kept := dedupKept{sortKey: buf[:n:n], row: buf[n:]}
		if err := d.first.Put(d.key, kept); err != nil {
			return fmt.Errorf("%s: %w", dedupName, err)
		}
		if !ok {
			e.Add(dyntable.Insert, d.out(ch.Row))
			continue
		}
		// Identical rows (exactly: 1.5 and 1.50 differ) change nothing.
		if bytes.Equal(old.row, kept.row) {
			continue
		}
		prev, err := types.DecodeRow(old.row)
		if err != nil {
			return fmt.Errorf("%s: kept row of key %x: %w", dedupName, d.key, err)
		}
		e.Add(dyntable.UpdateBefore, d.out(prev))
		e.Add(dyntable.UpdateAfter, d.out(ch.Row))
	}
	e.Flush()
	return nil
}

// out is the output row of a kept row: with OutputRank, the row number 1
// appended.
func (d *dedupOp) out(r types.Row) types.Row {
	if !d.spec.OutputRank {
		return r
	}
	o := make(types.Row, len(r)+1)
	copy(o, r)
	o[len(r)] = types.NewInt(1)
	return o
}
