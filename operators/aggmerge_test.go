package operators

import (
	"math/rand/v2"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// TestMergeGroupEqualsOneGroup: rows spread over several group states
// (as over slices or sessions) and merged give what a brute-force
// computation over all the rows gives, for every aggregate kind and
// argument type, with NULLs.
func TestMergeGroupEqualsOneGroup(t *testing.T) {
	g, err := NewGroupAgg(GroupAggSpec{GroupKeys: []int{}, Aggs: gaAggs})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 300; trial++ {
		parts := make([]groupState, 1+r.IntN(5))
		for i := range parts {
			parts[i] = g.newGroup()
		}
		var all []types.Row
		for n := r.IntN(30); n >= 0; n-- {
			row := gaRandomRow(r)
			all = append(all, row)
			p := &parts[r.IntN(len(parts))]
			if _, err := g.add(p, row); err != nil {
				t.Fatal(err)
			}
		}
		acc := g.newGroup()
		for i := range parts {
			if err := g.mergeGroup(&acc, &parts[i]); err != nil {
				t.Fatal(err)
			}
		}
		if acc.rows != int64(len(all)) {
			t.Fatalf("merged %d rows, want %d", acc.rows, len(all))
		}
		want := gaBruteResult(t, nil, gaAggs, all)
		for i := range gaAggs {
			got := g.result(&acc, i)
			if !sameValue(&got, &want[i]) {
				t.Fatalf("trial %d, %s(%d): merged %s, want %s", trial, gaAggs[i].Kind, gaAggs[i].Arg,
					types.Format(got, gaAggs[i].ResultType), types.Format(want[i], gaAggs[i].ResultType))
			}
		}
	}
}
