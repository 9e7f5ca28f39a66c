package operators

import (
	"encoding/binary"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestMultisetDecodeRefusesCorruptState: a multiset's encoding (the state
// of MIN/MAX with retraction, PERCENTILE and DISTINCT) round-trips, and
// corrupt bytes are an error, never a set with wrong counts: an entry
// count larger than the bytes could hold, a count of zero or less (a
// value leaves the set when its count reaches 0), a truncated entry.
func TestMultisetDecodeRefusesCorruptState(t *testing.T) {
	s := newMultiset()
	s.add(types.NewInt(7))
	s.add(types.NewInt(7))
	s.add(types.NewString("x"))
	enc := s.encode(nil)
	back := newMultiset()
	rest, err := back.decode(enc)
	if err != nil || len(rest) != 0 || back.count(types.NewInt(7)) != 2 || back.count(types.NewString("x")) != 1 || len(back.m) != 2 {
		t.Fatalf("round trip: rest %d, err %v, counts %d/%d of %d entries", len(rest), err, back.count(types.NewInt(7)), back.count(types.NewString("x")), len(back.m))
	}

	one := types.AppendValue(nil, types.NewInt(7))
	entry := func(n int64) []byte { return binary.AppendVarint(append([]byte(nil), one...), n) }
	for name, b := range map[string][]byte{
		"count beyond the bytes": binary.AppendUvarint(nil, 1<<40),
		"zero count":             append(binary.AppendUvarint(nil, 1), entry(0)...),
		"negative count":         append(binary.AppendUvarint(nil, 1), entry(-3)...),
		"truncated entry":        append(binary.AppendUvarint(nil, 2), entry(1)...),
		"empty":                  nil,
	} {
		if _, err := newMultiset().decode(b); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}
