package operators

import (
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/types"
)

// distinctAcc feeds its inner accumulator only the first copy of each
// value and retracts from it only when the last copy goes.
type distinctAcc struct {
	inner accumulator
	set   valueCounts
}

func (a *distinctAcc) add(v types.Value) error {
	if a.set.add(v) == 1 {
		return a.inner.add(v)
	}
	return nil
}

func (a *distinctAcc) retract(v types.Value) error {
	left, err := a.set.remove(v)
	if err != nil {
		return err
	}
	if left == 0 {
		return a.inner.retract(v)
	}
	return nil
}

func (a *distinctAcc) result() types.Value { return a.inner.result() }
func (a *distinctAcc) encode(dst []byte) []byte {
	return a.set.encode(a.inner.encode(dst))
}
func (a *distinctAcc) decode(b []byte) ([]byte, error) {
	rest, err := a.inner.decode(b)
	if err != nil {
		return nil, err
	}
	a.set = valueCounts{}
	return a.set.decode(rest)
}

// valueCounts counts the copies of each value, keyed by the value's
// types.AppendValue bytes, which are also its encoding in state. It
// keeps no decoded values: DISTINCT needs only the counts (the value
// itself comes with each add and retract), so an entry is one string
// and one integer, not an object the collector has to trace. The map is
// made on the first value, since a group holds one valueCounts per
// DISTINCT aggregate and many stay empty (in a split distinct
// aggregation's partial groups, those of the other arguments).
type valueCounts struct {
	m map[string]int64
}

// add counts one more copy of v and returns how many there are now.
func (s *valueCounts) add(v types.Value) int64 {
	var buf [32]byte
	k := types.AppendValue(buf[:0], v)
	if s.m == nil {
		s.m = make(map[string]int64, 1)
	}
	n := s.m[string(k)] + 1
	s.m[string(k)] = n
	return n
}

// remove takes one copy of v away and returns how many are left; a
// value that is not there is an error (the input retracted a row it
// never added).
func (s *valueCounts) remove(v types.Value) (int64, error) {
	var buf [32]byte
	k := types.AppendValue(buf[:0], v)
	n, ok := s.m[string(k)]
	if !ok {
		return 0, fmt.Errorf("retraction of value %s that was never accumulated", types.Format(v, types.Type{}))
	}
	if n--; n == 0 {
		delete(s.m, string(k))
	} else {
		s.m[string(k)] = n
	}
	return n, nil
}

// each calls f with every value and its count, in no order.
func (s *valueCounts) each(f func(v types.Value, n int64) error) error {
	for k, n := range s.m {
		v, _, err := types.DecodeValue([]byte(k))
		if err != nil {
			return err
		}
		if err := f(v, n); err != nil {
			return err
		}
	}
	return nil
}

// encode appends the entry count, then each value's bytes and count:
// the layout of multiset.encode, so that state written by either reads
// back with either.
func (s *valueCounts) encode(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s.m)))
	for k, n := range s.m {
		dst = append(dst, k...)
		dst = binary.AppendVarint(dst, n)
	}
	return dst
}

// decode reads what encode wrote into an empty s.
func (s *valueCounts) decode(b []byte) ([]byte, error) {
	return readCounted(b, func(n int) {
		s.m = make(map[string]int64, n)
	}, func(key []byte, _ types.Value, c int64) {
		s.m[string(key)] = c
	})
}
