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
	return AppendFlaggedRows(dst, v.Rows, func(i int) byte {
		if v.Matched[i] {
			return 1
		}
		return 0
	})
}

// Decode implements state.Codec.
func (RowsCodec) Decode(b []byte) (Rows, error) {
	var matched []bool
	rows, err := DecodeFlaggedRows(b, "interval join state", func(n uint64) {
		matched = make([]bool, 0, n)
	}, func(f byte) error {
		matched = append(matched, f == 1)
		return nil
	})
	if err != nil {
		return Rows{}, err
	}
	return Rows{Rows: rows, Matched: matched}, nil
}

// AppendFlaggedRows appends rows in RowsCodec's layout, flag(i) being
// the flag byte of row i: a count, then per row the flag byte, the
// encoded row's length and the encoded row.
func AppendFlaggedRows(dst []byte, rows []types.Row, flag func(i int) byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(rows)))
	var enc []byte
	for i, r := range rows {
		enc = types.EncodeRow(enc[:0], r)
		dst = append(dst, flag(i))
		dst = binary.AppendUvarint(dst, uint64(len(enc)))
		dst = append(dst, enc...)
	}
	return dst
}

// DecodeFlaggedRows reads what AppendFlaggedRows wrote; what names the
// state in the errors. count is told the row count first; flag gets
// each row's flag byte, in order, and may refuse it.
func DecodeFlaggedRows(b []byte, what string, count func(n uint64), flag func(byte) error) ([]types.Row, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("%s: corrupt row count", what)
	}
	b = b[k:]
	count(n)
	rows := make([]types.Row, 0, n)
	for i := uint64(0); i < n; i++ {
		if len(b) == 0 {
			return nil, fmt.Errorf("%s: truncated row", what)
		}
		if err := flag(b[0]); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		l, k := binary.Uvarint(b[1:])
		if k <= 0 || l > uint64(len(b)-1-k) {
			return nil, fmt.Errorf("%s: corrupt row length", what)
		}
		b = b[1+k:]
		r, err := types.DecodeRow(b[:l])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		b = b[l:]
		rows = append(rows, r)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%s: %d trailing bytes", what, len(b))
	}
	return rows, nil
}
