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

// WindowRankSpec describes ROW_NUMBER() OVER (PARTITION BY window_start,
// window_end[, keys] ORDER BY ...) filtered to a rank range: window Top-N,
// and window deduplication when the range is the first row.
type WindowRankSpec struct {
	PartitionKeys []int // input columns, window_start and window_end among them
	EndCol        int   // the input column holding window_end
	OrderBy       []operators.SortKey
	Offset, Limit int64
	OutputRank    bool // append the rank number
}

// WindowRank (Flink's WindowRank / WindowDeduplicate) buffers, per
// partition, the best Offset+Limit rows of a window in rank order, and
// emits ranks Offset+1 .. Offset+Limit, insert-only, once the watermark
// passes the window's end. Rows that compare equal on every ORDER BY key
// rank in arrival order. A row whose window has already fired is late:
// dropped and counted.
//
// State: partition key -> the buffered rows (ValueState), and a timer per
// partition at its window's end.
type WindowRank struct {
	oc *dataflow.OpContext // counts late rows
	dataflow.BaseOperator
	spec   WindowRankSpec
	bufs   state.ValueState[[]types.Row]
	timers *windowTimers
	wm     int64
	key    []byte
}

var (
	_ dataflow.Operator = (*WindowRank)(nil)
)

// NewWindowRank returns a window rank operator.
func NewWindowRank(spec WindowRankSpec) (*WindowRank, error) {
	if spec.Limit < 1 || spec.Offset < 0 {
		return nil, fmt.Errorf("WindowRank: empty rank range")
	}
	return &WindowRank{spec: spec, wm: dataflow.MinWatermark}, nil
}

// Open implements dataflow.Operator.
func (r *WindowRank) Open(ctx *dataflow.OpContext) error {
	r.oc = ctx
	var err error
	if r.bufs, err = state.NewValueState[[]types.Row](ctx.State, "topn", rowListCodec{}); err != nil {
		return err
	}
	r.timers, r.wm, err = openWindowTimers(ctx)
	return err
}

// SnapshotState implements dataflow.Operator.
func (r *WindowRank) SnapshotState(dataflow.Barrier) error { return r.timers.saveWatermark(r.wm) }

// less orders two rows by the ORDER BY keys.
func (r *WindowRank) less(a, b types.Row) bool {
	for _, k := range r.spec.OrderBy {
		c := types.Compare(a[k.Col], b[k.Col])
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c < 0
		}
	}
	return false
}

// ProcessChunk implements dataflow.Operator.
func (r *WindowRank) ProcessChunk(_ int, in *dyntable.Chunk, _ dataflow.Collector) error {
	keep := int(r.spec.Offset + r.spec.Limit)
	for _, ch := range in.Changes {
		if ch.Kind != dyntable.Insert {
			return fmt.Errorf("WindowRank: input must be insert-only, got %s", ch.Kind)
		}
		ev := ch.Row[r.spec.EndCol]
		if ev.IsNull() {
			return fmt.Errorf("WindowRank: window_end is NULL")
		}
		end := ev.Timestamp()
		if fired(end, r.wm) {
			r.oc.LateRecordsDropped(1)
			continue
		}
		r.key = types.EncodeKey(r.key[:0], ch.Row, r.spec.PartitionKeys)
		rows, ok, err := r.bufs.Get(r.key)
		if err != nil {
			return err
		}
		if !ok {
			if err := r.timers.register(end, r.key); err != nil {
				return err
			}
		}
		// Insert after every row that is not greater: ties keep arrival order.
		i := len(rows)
		for i > 0 && r.less(ch.Row, rows[i-1]) {
			i--
		}
		if i >= keep {
			continue
		}
		rows = append(rows, nil)
		copy(rows[i+1:], rows[i:])
		rows[i] = kit.Own(ch.Row)
		if len(rows) > keep {
			rows = rows[:keep]
		}
		if err := r.bufs.Put(r.key, rows); err != nil {
			return err
		}
	}
	return nil
}

// ProcessWatermark implements dataflow.Operator: it emits the windows
// the watermark passed.
func (r *WindowRank) ProcessWatermark(wm int64, out dataflow.Collector) error {
	r.wm = max(r.wm, wm) // after a restore the restored watermark may be ahead
	due, err := r.timers.due(r.wm)
	if err != nil {
		return err
	}
	sort.Sort(timerQueue(due)) // window-end, then key order
	em := kit.NewEmitter(out, 0)
	for _, t := range due {
		rows, ok, err := r.bufs.Get(t.key)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		for i := int(r.spec.Offset); i < len(rows); i++ {
			row := rows[i]
			if r.spec.OutputRank {
				row = append(append(make(types.Row, 0, len(row)+1), row...), types.NewInt(int64(i+1)))
			}
			em.Add(dyntable.Insert, row)
		}
		if err := r.bufs.Delete(t.key); err != nil {
			return err
		}
	}
	em.Flush()
	return nil
}

// rowListCodec serializes a list of rows.
type rowListCodec struct{}

func (rowListCodec) Encode(dst []byte, rows []types.Row) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	for _, r := range rows {
		enc := types.EncodeRow(nil, r)
		dst = binary.AppendUvarint(dst, uint64(len(enc)))
		dst = append(dst, enc...)
	}
	return dst
}

func (rowListCodec) Decode(b []byte) ([]types.Row, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, types.ErrCorrupt
	}
	b = b[k:]
	rows := make([]types.Row, 0, n)
	for i := uint64(0); i < n; i++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, types.ErrCorrupt
		}
		r, err := types.DecodeRow(b[k : k+int(l)])
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
		b = b[k+int(l):]
	}
	if len(b) != 0 {
		return nil, types.ErrCorrupt
	}
	return rows, nil
}
