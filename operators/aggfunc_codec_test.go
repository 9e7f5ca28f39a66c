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

// TestValueCountsRoundTrip: DISTINCT's counts encode in the multiset's
// layout (state written before DISTINCT had its own set reads back),
// decode to the same counts, refuse corrupt state, and retract to empty.
func TestValueCountsRoundTrip(t *testing.T) {
	ms := newMultiset()
	var vc valueCounts
	for _, v := range []types.Value{types.NewInt(7), types.NewInt(7), types.NewString("x"), types.NewFloat(-0.5)} {
		ms.add(v)
		vc.add(v)
	}
	for name, enc := range map[string][]byte{"multiset": ms.encode(nil), "valueCounts": vc.encode(nil)} {
		var back valueCounts
		rest, err := back.decode(enc)
		if err != nil || len(rest) != 0 || len(back.m) != 3 {
			t.Fatalf("%s: rest %d, err %v, %d entries", name, len(rest), err, len(back.m))
		}
		got := map[string]int64{}
		if err := back.each(func(v types.Value, n int64) error {
			got[types.Format(v, types.Type{})] = n
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if got["7"] != 2 || got["x"] != 1 || got["-0.5"] != 1 {
			t.Fatalf("%s: counts %v", name, got)
		}
		if left, err := back.remove(types.NewInt(7)); err != nil || left != 1 {
			t.Fatalf("%s: remove 7: %d, %v", name, left, err)
		}
		ms2 := newMultiset()
		if _, err := ms2.decode(back.encode(nil)); err != nil || ms2.count(types.NewInt(7)) != 1 {
			t.Fatalf("%s: multiset reads valueCounts: %v, count %d", name, err, ms2.count(types.NewInt(7)))
		}
	}
	if _, err := vc.remove(types.NewInt(8)); err == nil {
		t.Fatal("removing a value never added: no error")
	}
	for _, v := range []types.Value{types.NewInt(7), types.NewInt(7), types.NewString("x"), types.NewFloat(-0.5)} {
		if _, err := vc.remove(v); err != nil {
			t.Fatal(err)
		}
	}
	if len(vc.m) != 0 {
		t.Fatalf("%d entries left after every copy was retracted", len(vc.m))
	}
	one := types.AppendValue(nil, types.NewInt(7))
	entry := func(n int64) []byte { return binary.AppendVarint(append([]byte(nil), one...), n) }
	for name, b := range map[string][]byte{
		"count beyond the bytes": binary.AppendUvarint(nil, 1<<40),
		"zero count":             append(binary.AppendUvarint(nil, 1), entry(0)...),
		"truncated entry":        append(binary.AppendUvarint(nil, 2), entry(1)...),
		"empty":                  nil,
	} {
		var s valueCounts
		if _, err := s.decode(b); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
}
