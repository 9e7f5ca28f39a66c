package operators

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func TestNormalizeUpsertToRetract(t *testing.T) {
	// Source (id, name, v) with PRIMARY KEY (id).
	h := joinOpen(t, NewChangelogNormalize([]int{0}))
	h.expect(0, joinCs(joinC("+I", 1, "a", 10)), "+I[1, a, 10]")
	// The same row again: nothing.
	h.expect(0, joinCs(joinC("+U", 1, "a", 10)))
	// A different row for the key: -U old, +U new.
	h.expect(0, joinCs(joinC("+U", 1, "b", 11)), "-U[1, a, 10]", "+U[1, b, 11]")
	// -U input is ignored.
	h.expect(0, joinCs(joinC("-U", 1, "b", 11)))
	h.expect(0, joinCs(joinC("+I", 2, "c", 1)), "+I[2, c, 1]")
	// -D carries only the key: the stored full row is deleted.
	h.expect(0, joinCs(joinC("-D", 1, nil, nil)), "-D[1, b, 11]")
	// Deleting a key without a row: nothing.
	h.expect(0, joinCs(joinC("-D", 1, nil, nil)))
	h.expect(0, joinCs(joinC("-D", 3, "x", 0)))
	// An +I for an existing key acts as an update.
	h.expect(0, joinCs(joinC("+I", 1, "z", 0), joinC("+I", 2, "d", 2)), "+I[1, z, 0]", "-U[2, c, 1]", "+U[2, d, 2]")
	h.expectTable("[1, z, 0]", "[2, d, 2]")
}

func TestNormalizeCompositeKey(t *testing.T) {
	// PRIMARY KEY (a, b) on (v, a, b).
	h := joinOpen(t, NewChangelogNormalize([]int{1, 2}))
	h.expect(0, joinCs(joinC("+I", "x", 1, "p"), joinC("+I", "y", 1, "q")), "+I[x, 1, p]", "+I[y, 1, q]")
	h.expect(0, joinCs(joinC("+U", "z", 1, "p")), "-U[x, 1, p]", "+U[z, 1, p]")
	h.expect(0, joinCs(joinC("-D", nil, 1, "q")), "-D[y, 1, q]")
	h.expectTable("[z, 1, p]")
}

func TestNormalizeRejectsBadInput(t *testing.T) {
	if err := NewChangelogNormalize(nil).Open(joinNewCtx()); err == nil {
		t.Fatal("no key columns accepted")
	}
	h := joinOpen(t, NewChangelogNormalize([]int{2}))
	if _, err := h.pushErr(0, joinC("+I", 1)); err == nil {
		t.Fatal("row without the key column accepted")
	}
}

// TestNormalizeRandom feeds a random upsert stream and checks, after every
// chunk, that the output materializes (as a multiset and keyed) to the
// last row per key, and that it is a proper retract changelog: each -U is
// directly followed by a +U of the same key.
func TestNormalizeRandom(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 3))
			h := joinOpen(t, NewChangelogNormalize([]int{0}))
			keyed := dyntable.NewTable([]int{0})
			last := map[int]types.Row{}
			for step := 0; step < 200; step++ {
				var chunk []dyntable.Change
				for n := 1 + rng.IntN(4); n > 0; n-- {
					k := rng.IntN(5)
					switch rng.IntN(6) {
					case 0:
						chunk = append(chunk, joinC("-D", k, nil))
						delete(last, k)
					case 1:
						chunk = append(chunk, joinC("-U", k, rng.IntN(3)))
					default:
						kind := []string{"+I", "+U"}[rng.IntN(2)]
						c := joinC(kind, k, rng.IntN(3))
						chunk = append(chunk, c)
						last[k] = c.Row
					}
				}
				h.push(0, chunk...)
				var want []types.Row
				for _, r := range last {
					want = append(want, r)
				}
				what := fmt.Sprintf("step %d (%s)", step, joinFormatChanges(chunk))
				joinSameMultiset(t, what, h.table.Rows(), want)
				out := h.out.changes
				for i, ch := range out {
					if err := keyed.Apply(ch); err != nil {
						t.Fatalf("%s: keyed materialization: %v", what, err)
					}
					if ch.Kind == dyntable.UpdateBefore {
						if i+1 >= len(out) || out[i+1].Kind != dyntable.UpdateAfter || !types.Equal(out[i+1].Row[0], ch.Row[0]) {
							t.Fatalf("%s: -U not followed by +U of the same key", what)
						}
					}
				}
				joinSameMultiset(t, what+" (keyed)", keyed.Rows(), want)
			}
		})
	}
}
