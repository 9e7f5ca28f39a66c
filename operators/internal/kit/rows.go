package kit

import (
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/types"
)

// Rows is the state value of the rows of one join side under one key
// (and, for the interval join, one time), in arrival order.
type Rows struct {
	Rows    []types.Row
	Matched []bool // per row; maintained for outer sides only
}

// Own returns a copy of r in an allocation of its own, for state held
// in memory: the rows an operator receives may be carved out of one
// allocation for their whole chunk (the Calc's, a source's), which a
// row kept in state would otherwise keep alive.
func Own(r types.Row) types.Row { return append(types.Row(nil), r...) }

// With returns v with rows appended (each its own copy, see Own), each
// with matched flag m. It appends in place (amortized O(1), where copying would make a hot time
// quadratic): the caller Puts the result back, which the state API allows
// for a value it got from the state.
func (v Rows) With(m bool, rows ...types.Row) Rows {
	for _, r := range rows {
		v.Rows = append(v.Rows, Own(r))
		v.Matched = append(v.Matched, m)
	}
	return v
}

// RowsCodec serializes Rows as a count, then per row a matched
// byte, the encoded row's length and the encoded row.
type RowsCodec struct{}

// Encode implements state.Codec.
func (RowsCodec) Encode(dst []byte, v Rows) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v.Rows)))
	var enc []byte
	for i, r := range v.Rows {
		m := byte(0)
		if v.Matched[i] {
			m = 1
		}
		enc = types.EncodeRow(enc[:0], r)
		dst = append(dst, m)
		dst = binary.AppendUvarint(dst, uint64(len(enc)))
		dst = append(dst, enc...)
	}
	return dst
}

// Decode implements state.Codec.
func (RowsCodec) Decode(b []byte) (Rows, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return Rows{}, fmt.Errorf("interval join state: corrupt row count")
	}
	b = b[k:]
	v := Rows{Rows: make([]types.Row, 0, n), Matched: make([]bool, 0, n)}
	for i := uint64(0); i < n; i++ {
		if len(b) == 0 {
			return Rows{}, fmt.Errorf("interval join state: truncated row")
		}
		m := b[0] == 1
		l, k := binary.Uvarint(b[1:])
		if k <= 0 || l > uint64(len(b)-1-k) {
			return Rows{}, fmt.Errorf("interval join state: corrupt row length")
		}
		b = b[1+k:]
		r, err := types.DecodeRow(b[:l])
		if err != nil {
			return Rows{}, fmt.Errorf("interval join state: %w", err)
		}
		b = b[l:]
		v.Rows = append(v.Rows, r)
		v.Matched = append(v.Matched, m)
	}
	if len(b) != 0 {
		return Rows{}, fmt.Errorf("interval join state: %d trailing bytes", len(b))
	}
	return v, nil
}
