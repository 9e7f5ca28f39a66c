package operators

import (
	"math/rand/v2"
	"testing"
)

// Hand-worked changelogs: each step's expected output is the change in
// the row's Multiplicity (l, r counts before -> after).
func TestSetOpExcept(t *testing.T) {
	h := joinOpen(t, NewSetOp(Except, 1))
	h.expect(0, joinCs(joinC("+I", "a")), "+I[a]")                   // (0,0) -> (1,0): 0 -> 1
	h.expect(0, joinCs(joinC("+I", "a")))                            // (2,0): still 1
	h.expect(1, joinCs(joinC("+I", "a")), "-D[a]")                   // (2,1): 0
	h.expect(1, joinCs(joinC("-D", "a")), "+I[a]")                   // (2,0): 1
	h.expect(1, joinCs(joinC("+I", "b")))                            // (0,1): 0
	h.expect(0, joinCs(joinC("+I", "b")))                            // (1,1): 0
	h.expect(1, joinCs(joinC("-U", "b")), "+I[b]")                   // (1,0): 1
	h.expect(0, joinCs(joinC("-D", "a"), joinC("-D", "a")), "-D[a]") // (0,0)
	h.expectTable("[b]")
	if _, err := h.pushErr(1, joinC("-D", "zz")); err == nil {
		t.Fatal("retracting a row the input does not hold was accepted")
	}
}

func TestSetOpIntersectAll(t *testing.T) {
	h := joinOpen(t, NewSetOp(IntersectAll, 2))
	h.expect(0, joinCs(joinC("+I", "a", nil), joinC("+I", "a", nil)))                // (2,0): 0
	h.expect(1, joinCs(joinC("+I", "a", nil)), "+I[a, NULL]")                        // (2,1): 1; NULLs are equal
	h.expect(1, joinCs(joinC("+I", "a", nil), joinC("+I", "a", nil)), "+I[a, NULL]") // (2,3): 2
	h.expect(0, joinCs(joinC("-D", "a", nil)), "-D[a, NULL]")                        // (1,3): 1
	h.expectTable("[a, NULL]")
}

// Against a brute-force model: after every chunk the operator's
// materialized output equals Multiplicity of the two inputs' contents.
func TestSetOpRandom(t *testing.T) {
	for _, kind := range []SetOpKind{Intersect, IntersectAll, Except, ExceptAll} {
		for seed := uint64(1); seed <= 30; seed++ {
			rng := rand.New(rand.NewPCG(seed, 3))
			h := joinOpen(t, NewSetOp(kind, 1))
			counts := map[string][2]int64{}
			for step := 0; step < 200; step++ {
				input := rng.IntN(2)
				v := string(rune('a' + rng.IntN(4)))
				c := counts[v]
				if c[input] > 0 && rng.IntN(3) == 0 {
					c[input]--
					h.push(input, joinC("-D", v))
				} else {
					c[input]++
					h.push(input, joinC("+I", v))
				}
				counts[v] = c
				var want []string
				for _, k := range []string{"a", "b", "c", "d"} {
					for n := kind.Multiplicity(counts[k][0], counts[k][1]); n > 0; n-- {
						want = append(want, "["+k+"]")
					}
				}
				h.expectTable(want...)
			}
		}
	}
}
