package kit

import "github.com/streamsql/streamsql/types"

// EncodeKey appends the canonical key encoding of r's columns cols to
// dst and reports whether any of them is NULL. Unlike types.EncodeKey, an
// empty cols encodes no column (not the whole row), and values equal under
// SQL comparison encode equally: DECIMALs by numeric value whatever their
// scale, DOUBLE -0 as 0 and every NaN alike. The join, Rank and
// ChangelogNormalize use it for join, partition and primary keys.
func EncodeKey(dst []byte, r types.Row, cols []int) ([]byte, bool) {
	hasNull := false
	for _, c := range cols {
		v := r[c]
		if v.IsNull() {
			hasNull = true
		}
		dst = AppendKeyValue(dst, v)
	}
	return dst, hasNull
}

// AppendKeyValue appends a canonical, self-delimiting encoding of v whose
// byte order is types.Compare's order for values of one kind, DECIMAL
// included (NULL first). Values of different kinds order by kind.
func AppendKeyValue(dst []byte, v types.Value) []byte {
	// types.AppendValue is canonical (DECIMAL by value, -0 as 0), which
	// also makes the key bytes those the exchange hashed to route the row.
	return types.AppendValue(dst, v)
}

// SideName names input side of a two-input join: "left" or "right".
func SideName(side int) string {
	if side == 0 {
		return "left"
	}
	return "right"
}

// Shape is the layout of a two-input join's output row: the left
// input's Width[0] columns, then the right input's Width[1].
type Shape struct{ Width [2]int }

// Concat builds left ++ right from the row of side and a row of the other side.
func (s Shape) Concat(side int, row, otherRow types.Row) types.Row {
	out := make(types.Row, 0, s.Width[0]+s.Width[1])
	if side == 0 {
		return append(append(out, row...), otherRow...)
	}
	return append(append(out, otherRow...), row...)
}

// Pad returns a row of side padded with NULLs for the other side.
func (s Shape) Pad(side int, row types.Row) types.Row {
	out := make(types.Row, s.Width[0]+s.Width[1]) // zero Values are NULL
	if side == 0 {
		copy(out, row)
	} else {
		copy(out[s.Width[0]:], row)
	}
	return out
}
