package operators

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
)

// The same cases as TestRankDedupKeepFirst/KeepLast, insert-only.
func TestDedupKeepFirst(t *testing.T) {
	h := joinOpen(t, NewDeduplicate(RankSpec{PartitionKeys: []int{0}, OrderBy: []SortKey{{Col: 1}}, Limit: 1, Width: 3, InputInsertOnly: true}))
	h.expect(0, joinCs(joinC("+I", "a", 1, "x")), "+I[a, 1, x]")
	h.expect(0, joinCs(joinC("+I", "a", 2, "y"))) // ranks 2nd
	h.expect(0, joinCs(joinC("+I", "a", 1, "z"))) // ties with x, arrived later: 2nd
	h.expect(0, joinCs(joinC("+I", "b", 5, "w")), "+I[b, 5, w]")
	// An earlier timestamp replaces the row at rank 1: -U/+U.
	h.expect(0, joinCs(joinC("+I", "a", 0, "q")), "-U[a, 1, x]", "+U[a, 0, q]")
	h.expectTable("[a, 0, q]", "[b, 5, w]")
	if _, err := h.pushErr(0, joinC("-D", "a", 0, "q")); err == nil {
		t.Fatal("a retraction on the insert-only input was accepted")
	}
}

func TestDedupKeepLast(t *testing.T) {
	h := joinOpen(t, NewDeduplicate(RankSpec{PartitionKeys: []int{0}, OrderBy: []SortKey{{Col: 1, Desc: true}}, Limit: 1, Width: 3, InputInsertOnly: true}))
	h.expect(0, joinCs(joinC("+I", "a", 1, "x")), "+I[a, 1, x]")
	h.expect(0, joinCs(joinC("+I", "a", 2, "y")), "-U[a, 1, x]", "+U[a, 2, y]")
	// Equal timestamps, all sort keys DESC: the later arrival ranks first.
	h.expect(0, joinCs(joinC("+I", "a", 2, "z")), "-U[a, 2, y]", "+U[a, 2, z]")
	h.expect(0, joinCs(joinC("+I", "a", 1, "q")))
	// An identical copy of the visible row: nothing changes.
	h.expect(0, joinCs(joinC("+I", "a", 2, "z")))
	h.expectTable("[a, 2, z]")
}

// Deduplicate must emit exactly what Rank emits for the same spec and
// input, chunk by chunk: Rank is the reference (itself checked against a
// brute-force model in TestRankRandomAgainstBruteForce).
// asReplacements rewrites Rank's -D old, +I new (Flink's Top-N without
// row number) as the -U old, +U new Deduplicate emits for the same
// replacement of a key's row.
func asReplacements(cs []string) []string {
	out := slices.Clone(cs)
	for i := 0; i+1 < len(out); i++ {
		if strings.HasPrefix(out[i], "-D") && strings.HasPrefix(out[i+1], "+I") {
			out[i], out[i+1] = "-U"+out[i][2:], "+U"+out[i+1][2:]
			i++
		}
	}
	return out
}

func TestDedupEqualsRank(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		spec := rankRandomSpec(rng)
		spec.Offset, spec.Limit, spec.InputInsertOnly = 0, 1, true
		spec.PartitionKeys = []int{0}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			d := joinOpen(t, NewDeduplicate(spec))
			r := joinOpen(t, NewRank(spec))
			for step := 0; step < 100; step++ {
				var chunk []dyntable.Change
				for n := 1 + rng.IntN(3); n > 0; n-- {
					chunk = append(chunk, dyntable.Change{Kind: dyntable.Insert, Row: rankRandomRow(rng)})
				}
				got, want := d.push(0, chunk...), asReplacements(r.push(0, chunk...))
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("spec %+v step %d input %s:\ndedup %v\nrank  %v", spec, step, joinFormatChanges(chunk), got, want)
				}
			}
		})
	}
}
