package operators

import (
	"encoding/binary"

	"github.com/streamsql/streamsql/types"
)

// The accumulators' decoders read their fields with these: each returns
// the value at the front of b and the rest, or types.ErrCorrupt when b
// does not start with one.

// readVarint reads a signed varint.
func readVarint(b []byte) (int64, []byte, error) {
	n, k := binary.Varint(b)
	if k <= 0 {
		return 0, nil, types.ErrCorrupt
	}
	return n, b[k:], nil
}

// readCount reads an unsigned varint that counts the entries after it,
// each at least one byte long, so a count beyond len(b) is corrupt too.
func readCount(b []byte) (uint64, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return 0, nil, types.ErrCorrupt
	}
	return n, b[k:], nil
}
