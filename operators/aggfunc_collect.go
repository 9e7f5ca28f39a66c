package operators

import "github.com/streamsql/streamsql/types"

// collectAcc is COLLECT(x), Flink's CollectAggFunction: the non-NULL
// values as a MULTISET, each with the number of its copies; a group of
// NULLs only is the empty MULTISET, not NULL. A retraction takes one copy
// away and a value leaves the bag at 0. (Flink counts a retraction of a
// value it never saw as -1; here, as for every retracting aggregate, that
// is an error.)
type collectAcc struct{ set *multiset }

func (a *collectAcc) add(v types.Value) error     { a.set.add(v); return nil }
func (a *collectAcc) retract(v types.Value) error { return a.set.remove(v) }

func (a *collectAcc) result() types.Value {
	elems := make([]types.Value, 0, len(a.set.m))
	counts := make([]int64, 0, len(a.set.m))
	for _, e := range a.set.m {
		elems = append(elems, e.v)
		counts = append(counts, e.n)
	}
	return types.NewMultiset(elems, counts)
}

func (a *collectAcc) encode(dst []byte) []byte { return a.set.encode(dst) }
func (a *collectAcc) decode(b []byte) ([]byte, error) {
	a.set = newMultiset()
	return a.set.decode(b)
}

func (a *collectAcc) merge(s *collectAcc) {
	for _, e := range s.set.m {
		for i := int64(0); i < e.n; i++ {
			a.set.add(e.v)
		}
	}
}
