package operators

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// SortKey is one ORDER BY column of a Rank. NULLs sort first for ASC and
// last for DESC (types.Compare puts NULL lowest).
type SortKey struct {
	Col  int
	Desc bool
}

// RankSpec describes ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) filtered
// to a range of row numbers: deduplication (rn = 1), Top-N (rn <= N) and
// ORDER BY … LIMIT n OFFSET m (one global partition).
type RankSpec struct {
	// PartitionKeys are the PARTITION BY columns; empty means one global
	// partition (ORDER BY … LIMIT).
	PartitionKeys []int
	OrderBy       []SortKey
	// Offset and Limit select row numbers Offset+1 .. Offset+Limit.
	// ROW_NUMBER rn <= N is Offset 0 Limit N; rn = 1 is Limit 1.
	Offset, Limit int64
	// OutputRank appends the row number (BIGINT, 1-based) as an extra last
	// column.
	OutputRank bool
	// Width is the input row width.
	Width int
	// InputInsertOnly declares that the input is append-only (changelog
	// mode [I]). The operator then keeps only the top Offset+Limit rows
	// per partition, since an insert-only input can never promote a row
	// that fell out of them; a retraction on the input is then an error.
	// When false, every live input row is kept.
	InputInsertOnly bool
}

// NewRank returns the Rank operator (Flink's Rank / Deduplicate / SortLimit
// for unbounded input), for inputs with or without retractions.
//
// Order. Rows of a partition are ordered by OrderBy with types.Compare
// semantics (NULLs first for ASC, last for DESC; DECIMALs by numeric
// value). Ties are broken by arrival order: an earlier row ranks first,
// except when every sort key is DESC, where a later row ranks first — so
// ORDER BY ts ASC with rn = 1 keeps the first row of equal timestamps and
// ORDER BY ts DESC keeps the last one. Every input copy of a row is a
// separate entry with its own arrival. A retraction removes, among the
// identical copies of the retracted row, the one ranked last (the latest
// arrival when earlier rows rank first, the earliest otherwise), so that
// visible copies stay where they are.
//
// Output. For every input change the operator compares the visible rows
// (ranks Offset+1 .. Offset+Limit) of the partition before and after it,
// and emits the difference; the output materializes as a multiset to
// exactly the visible rows of every partition. Nothing is emitted when the
// visible rows do not change (e.g. keep-first deduplication of an
// insert-only input emits only the first row per key).
//
//   - Without OutputRank and Offset (at most one row leaves and one enters per input
//     change): the row leaving the visible ranks gives -D and the row
//     entering them +I, in that order, as Flink's Top-N without row
//     number does (AppendOnlyTopNFunction, RetractableTopNFunction);
//     identical leaving and entering rows cancel. (Keep-last
//     deduplication of an insert-only input, whose -U/+U replace the
//     row, is the Deduplicate operator's.)
//   - With OutputRank the changelog is per rank position, so it is also
//     an upsert stream keyed by (partition keys, rn), as in Flink: for
//     each rank r in ascending order whose row changed, -U[old, r] then
//     +U[new, r]; a rank that becomes empty gives -D[old, r] and a rank
//     that becomes filled +I[new, r]. With an Offset and no OutputRank,
//     the same per-position changes without the number, as Flink's
//     Top-N with an offset.
//
// State, per partition (keyed by the encoded partition key):
//   - "rank.entries", a MapState whose map key is an order-preserving
//     encoding of the sort columns followed by the arrival number, and
//     whose value is the row; ranging it visits rows in rank order, so a
//     change costs O(Offset+Limit) whatever the partition size;
//   - "rank.seq", a ValueState with the last arrival number (deleted when
//     the partition becomes empty);
//   - unless InputInsertOnly, "rank.rows", a MapState from the encoded row
//     (types.EncodeRow) to the ascending arrival numbers of its live
//     copies, used to find the entry a retraction removes.
//
// With retractions every live row is kept. With InputInsertOnly only the
// top Offset+Limit entries are kept and "rank.rows" does not exist.
//
// Retracting a row that is not in state fails with an error naming the
// operator.
func NewRank(spec RankSpec) dataflow.Operator {
	return &rankOp{spec: spec}
}

type rankOp struct {
	dataflow.BaseOperator

	spec       RankSpec
	k          int // Offset + Limit: the number of leading entries that matter
	laterFirst bool

	entries state.MapState[types.Row]
	seqs    state.ValueState[int64]
	rows    state.MapState[[]int64] // nil when InputInsertOnly
}

const rankName = "Rank"

// rankSeqListCodec serializes ascending arrival numbers as a count and
// varint deltas.
type rankSeqListCodec struct{}

func (rankSeqListCodec) Encode(dst []byte, s []int64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	prev := int64(0)
	for _, v := range s {
		dst = binary.AppendVarint(dst, v-prev)
		prev = v
	}
	return dst
}

func (rankSeqListCodec) Decode(b []byte) ([]int64, error) {
	n, m := binary.Uvarint(b)
	if m <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("rank state: corrupt arrival list")
	}
	b = b[m:]
	out := make([]int64, 0, n)
	prev := int64(0)
	for i := uint64(0); i < n; i++ {
		d, m := binary.Varint(b)
		if m <= 0 {
			return nil, fmt.Errorf("rank state: corrupt arrival list")
		}
		b = b[m:]
		prev += d
		out = append(out, prev)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("rank state: %d trailing bytes after arrival list", len(b))
	}
	return out, nil
}

func (r *rankOp) Open(ctx *dataflow.OpContext) error {
	s := r.spec
	if ctx == nil || ctx.State == nil {
		return fmt.Errorf("%s: no state store", rankName)
	}
	if s.Offset < 0 || s.Limit < 0 {
		return fmt.Errorf("%s: negative offset %d or limit %d", rankName, s.Offset, s.Limit)
	}
	if s.Offset > math.MaxInt32 || s.Limit > math.MaxInt32-s.Offset {
		return fmt.Errorf("%s: offset %d + limit %d is too large", rankName, s.Offset, s.Limit)
	}
	r.k = int(s.Offset + s.Limit)
	var err error
	if r.laterFirst, err = s.checkColumns(rankName); err != nil {
		return err
	}
	if r.entries, err = state.NewMapState[types.Row](ctx.State, "rank.entries", kit.RowCodec{}); err != nil {
		return fmt.Errorf("%s: %w", rankName, err)
	}
	if r.seqs, err = state.NewValueState[int64](ctx.State, "rank.seq", kit.Int64Codec{}); err != nil {
		return fmt.Errorf("%s: %w", rankName, err)
	}
	if !s.InputInsertOnly {
		if r.rows, err = state.NewMapState[[]int64](ctx.State, "rank.rows", rankSeqListCodec{}); err != nil {
			return fmt.Errorf("%s: %w", rankName, err)
		}
	}
	return nil
}

func (r *rankOp) ProcessChunk(input int, c *dyntable.Chunk, out dataflow.Collector) error {
	if input != 0 {
		return fmt.Errorf("%s: unknown input %d", rankName, input)
	}
	res := &dyntable.Chunk{}
	for _, ch := range c.Changes {
		if err := r.process(ch, res); err != nil {
			return err
		}
	}
	if res.Len() > 0 {
		out.Emit(res)
	}
	return nil
}

// rankItem is one entry of a partition in rank order.
type rankItem struct {
	mk  []byte
	row types.Row
}

// sortKey returns the order-preserving encoding of row's sort columns.
func (r *rankOp) sortKey(row types.Row) []byte { return appendSortKey(nil, r.spec.OrderBy, row) }

// checkColumns checks that the spec's columns are inside the row, naming
// the operator, and reports whether a later arrival ranks first among
// ties (every sort key DESC).
func (s RankSpec) checkColumns(op string) (laterFirst bool, err error) {
	for _, c := range s.PartitionKeys {
		if c < 0 || c >= s.Width {
			return false, fmt.Errorf("%s: partition column %d out of range (width %d)", op, c, s.Width)
		}
	}
	laterFirst = len(s.OrderBy) > 0
	for _, o := range s.OrderBy {
		if o.Col < 0 || o.Col >= s.Width {
			return false, fmt.Errorf("%s: ORDER BY column %d out of range (width %d)", op, o.Col, s.Width)
		}
		if !o.Desc {
			laterFirst = false
		}
	}
	return laterFirst, nil
}

// appendSortKey appends the order-preserving encoding of row's sort
// columns: bytes.Compare of two encodings orders the rows as ORDER BY
// does (DESC columns inverted).
func appendSortKey(dst []byte, order []SortKey, row types.Row) []byte {
	for _, o := range order {
		start := len(dst)
		dst = kit.AppendKeyValue(dst, row[o.Col])
		if o.Desc {
			for i := start; i < len(dst); i++ {
				dst[i] = ^dst[i]
			}
		}
	}
	return dst
}

// entryKey appends the arrival number so that ties order by arrival.
func (r *rankOp) entryKey(sortKey []byte, seq int64) []byte {
	u := uint64(seq)
	if r.laterFirst {
		u = ^u
	}
	mk := make([]byte, 0, len(sortKey)+8)
	mk = append(mk, sortKey...)
	return binary.BigEndian.AppendUint64(mk, u)
}

// top returns the first n entries of partition pk in rank order.
func (r *rankOp) top(pk []byte, n int) ([]rankItem, error) {
	var items []rankItem
	if n <= 0 {
		return nil, nil
	}
	err := r.entries.Range(pk, func(mk []byte, row types.Row) bool {
		items = append(items, rankItem{mk: bytes.Clone(mk), row: row})
		return len(items) < n
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rankName, err)
	}
	return items, nil
}

func (r *rankOp) process(ch dyntable.Change, res *dyntable.Chunk) error {
	row := ch.Row
	if len(row) != r.spec.Width {
		return fmt.Errorf("%s: row [%s] has %d columns, want %d", rankName, types.FormatRow(row, nil, ", "), len(row), r.spec.Width)
	}
	if ch.Kind.IsRetract() && r.spec.InputInsertOnly {
		return fmt.Errorf("%s: %s of row [%s] on an input declared insert-only", rankName, ch.Kind, types.FormatRow(row, nil, ", "))
	}
	pk, _ := kit.EncodeKey(nil, row, r.spec.PartitionKeys)
	// The first k+1 entries: the visible ranks plus the row that a
	// retraction would promote (at least 2, to see when a partition
	// becomes empty).
	before, err := r.top(pk, max(r.k+1, 2))
	if err != nil {
		return err
	}
	var after []rankItem
	if ch.Kind.IsAccumulate() {
		after, err = r.insert(pk, row, before)
	} else {
		after, err = r.retract(pk, row, ch.Kind, before)
	}
	if err != nil || after == nil {
		return err
	}
	r.diff(rankClip(before, r.k), rankClip(after, r.k), res)
	return nil
}

func rankClip(items []rankItem, n int) []rankItem {
	if len(items) > n {
		return items[:n]
	}
	return items
}

// insert adds row to partition pk and returns the partition's new leading
// entries, or nil when the visible ranks cannot have changed.
func (r *rankOp) insert(pk []byte, row types.Row, before []rankItem) ([]rankItem, error) {
	seq, _, err := r.seqs.Get(pk)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rankName, err)
	}
	seq++
	if err := r.seqs.Put(pk, seq); err != nil {
		return nil, fmt.Errorf("%s: %w", rankName, err)
	}
	mk := r.entryKey(r.sortKey(row), seq)
	pos := sort.Search(len(before), func(i int) bool { return bytes.Compare(before[i].mk, mk) > 0 })

	if r.spec.InputInsertOnly {
		// State holds at most k entries; keep only the top k.
		if pos >= r.k {
			return nil, nil // ranks below the top k: never visible
		}
		if len(before) >= r.k {
			last := before[len(before)-1]
			if err := r.entries.Delete(pk, last.mk); err != nil {
				return nil, fmt.Errorf("%s: %w", rankName, err)
			}
		}
	} else {
		rk := types.EncodeRow(nil, row)
		seqs, _, err := r.rows.Get(pk, rk)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rankName, err)
		}
		seqs = append(seqs[:len(seqs):len(seqs)], seq) // copy-on-write
		if err := r.rows.Put(pk, rk, seqs); err != nil {
			return nil, fmt.Errorf("%s: %w", rankName, err)
		}
	}
	if err := r.entries.Put(pk, mk, kit.Own(row)); err != nil {
		return nil, fmt.Errorf("%s: %w", rankName, err)
	}
	if pos >= r.k {
		return nil, nil
	}
	after := make([]rankItem, 0, len(before)+1)
	after = append(after, before[:pos]...)
	after = append(after, rankItem{mk: mk, row: row})
	return append(after, before[pos:]...), nil
}

// retract removes one copy of row from partition pk and returns the
// partition's new leading entries, or nil when the visible ranks cannot
// have changed.
func (r *rankOp) retract(pk []byte, row types.Row, kind dyntable.RowKind, before []rankItem) ([]rankItem, error) {
	rk := types.EncodeRow(nil, row)
	seqs, found, err := r.rows.Get(pk, rk)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rankName, err)
	}
	if !found || len(seqs) == 0 {
		return nil, fmt.Errorf("%s: %s of row [%s] that is not in the rank state", rankName, kind, types.FormatRow(row, nil, ", "))
	}
	// Remove the copy ranked last among the identical ones.
	var seq int64
	if r.laterFirst {
		seq, seqs = seqs[0], seqs[1:]
	} else {
		seq, seqs = seqs[len(seqs)-1], seqs[:len(seqs)-1]
	}
	if len(seqs) == 0 {
		err = r.rows.Delete(pk, rk)
	} else {
		err = r.rows.Put(pk, rk, seqs[:len(seqs):len(seqs)])
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rankName, err)
	}
	mk := r.entryKey(r.sortKey(row), seq)
	if _, ok, err := r.entries.Get(pk, mk); err != nil || !ok {
		if err == nil {
			err = fmt.Errorf("entry of row [%s] missing", types.FormatRow(row, nil, ", "))
		}
		return nil, fmt.Errorf("%s: inconsistent state: %w", rankName, err)
	}
	if err := r.entries.Delete(pk, mk); err != nil {
		return nil, fmt.Errorf("%s: %w", rankName, err)
	}
	idx := -1
	for i := range before {
		if bytes.Equal(before[i].mk, mk) {
			idx = i
			break
		}
	}
	if idx == 0 && len(before) == 1 {
		// The partition is empty now: restart its arrival numbers.
		if err := r.seqs.Delete(pk); err != nil {
			return nil, fmt.Errorf("%s: %w", rankName, err)
		}
	}
	if idx < 0 || idx >= r.k {
		return nil, nil // ranked below the top k: nothing visible changes
	}
	after := make([]rankItem, 0, len(before))
	after = append(after, before[:idx]...)
	return append(after, before[idx+1:]...), nil
}

// diff emits the changes that turn the visible rows of before into those
// of after; both hold the leading k entries of the partition.
func (r *rankOp) diff(before, after []rankItem, res *dyntable.Chunk) {
	off := int(r.spec.Offset)
	bw, aw := rankWindow(before, off), rankWindow(after, off)
	if r.spec.OutputRank || off > 0 {
		withNumber := func(row types.Row, i int) types.Row {
			if !r.spec.OutputRank {
				return row
			}
			return rankWithNumber(row, types.NewInt(int64(off+i+1)))
		}
		n := max(len(bw), len(aw))
		for i := 0; i < n; i++ {
			switch {
			case i >= len(aw):
				res.Append(dyntable.Delete, withNumber(bw[i].row, i))
			case i >= len(bw):
				res.Append(dyntable.Insert, withNumber(aw[i].row, i))
			case bytes.Equal(bw[i].mk, aw[i].mk) || rankSameRow(bw[i].row, aw[i].row):
			default:
				res.Append(dyntable.UpdateBefore, withNumber(bw[i].row, i))
				res.Append(dyntable.UpdateAfter, withNumber(aw[i].row, i))
			}
		}
		return
	}
	// Set difference by entry identity; at most one entry leaves and one
	// enters per input change.
	type moved struct {
		pos int
		row types.Row
	}
	var leaving, entering []moved
	for i, b := range bw {
		if !rankContains(aw, b.mk) {
			leaving = append(leaving, moved{i, b.row})
		}
	}
	for i, a := range aw {
		if !rankContains(bw, a.mk) {
			entering = append(entering, moved{i, a.row})
		}
	}
	if len(leaving) == 1 && len(entering) == 1 && rankSameRow(leaving[0].row, entering[0].row) {
		return
	}
	for _, l := range leaving {
		res.Append(dyntable.Delete, l.row)
	}
	for _, e := range entering {
		res.Append(dyntable.Insert, e.row)
	}
}

func rankWindow(items []rankItem, off int) []rankItem {
	if off >= len(items) {
		return nil
	}
	return items[off:]
}

func rankContains(items []rankItem, mk []byte) bool {
	for _, it := range items {
		if bytes.Equal(it.mk, mk) {
			return true
		}
	}
	return false
}

// rankSameRow reports whether two rows are the same row of a multiset
// (equal encodings, as dyntable.Table identifies rows).
func rankSameRow(a, b types.Row) bool {
	return bytes.Equal(types.EncodeRow(nil, a), types.EncodeRow(nil, b))
}

func rankWithNumber(row types.Row, rn types.Value) types.Row {
	out := make(types.Row, len(row)+1)
	copy(out, row)
	out[len(row)] = rn
	return out
}
