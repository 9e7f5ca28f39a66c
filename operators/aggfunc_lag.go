package operators

import (
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/types"
)

// lagAcc is LAG(x, offset, default) as an OVER aggregate, as Flink's
// LagAggFunction computes it: it keeps the last offset+1 values added
// (NULLs included), and its result is the oldest of them, or the default
// while fewer than offset+1 rows were added. Over a RANGE window the
// rows of one time are peers, all added before any is emitted, so they
// share one result, as in Flink. It cannot retract: only unbounded
// frames take LAG.
type lagAcc struct {
	offset int
	def    types.Value
	buf    []types.Value
}

func newLagAcc(c AggCall) (accumulator, error) {
	if c.Offset < 0 {
		return nil, fmt.Errorf("LAG with a negative offset %d", c.Offset)
	}
	return &lagAcc{offset: c.Offset, def: c.Param}, nil
}

func (a *lagAcc) add(v types.Value) error {
	a.buf = append(a.buf, v)
	if len(a.buf) > a.offset+1 {
		a.buf = append(a.buf[:0], a.buf[len(a.buf)-a.offset-1:]...)
	}
	return nil
}

func (a *lagAcc) retract(types.Value) error {
	return fmt.Errorf("LAG cannot retract a row: it needs an unbounded frame")
}

func (a *lagAcc) result() types.Value {
	if len(a.buf) < a.offset+1 {
		return a.def
	}
	return a.buf[0]
}

// encode writes the buffer as one encoded row (exact, so DECIMAL keeps
// its scale), length-prefixed.
func (a *lagAcc) encode(dst []byte) []byte {
	enc := types.EncodeRow(nil, a.buf)
	dst = binary.AppendUvarint(dst, uint64(len(enc)))
	return append(dst, enc...)
}

func (a *lagAcc) decode(b []byte) ([]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, types.ErrCorrupt
	}
	row, err := types.DecodeRow(b[k : k+int(n)])
	if err != nil {
		return nil, err
	}
	a.buf = row
	return b[k+int(n):], nil
}
