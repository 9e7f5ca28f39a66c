package operators

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

// Hand-worked changelogs of the semi and anti joins on column 0.
func TestSemiJoin(t *testing.T) {
	h := joinOpen(t, NewSemiJoin(SemiJoinSpec{LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 1}))
	h.expect(0, joinCs(joinC("+I", 1, "a"), joinC("+I", 1, "a"))) // no match yet
	h.expect(1, joinCs(joinC("+I", 1)), "+I[1, a]", "+I[1, a]")   // first match: each copy
	h.expect(1, joinCs(joinC("+I", 1)))                           // a second match changes nothing
	h.expect(0, joinCs(joinC("+I", 1, "b")), "+I[1, b]")          // arrives matched
	h.expect(1, joinCs(joinC("-D", 1)))                           // one match left
	h.expect(1, joinCs(joinC("-D", 1)), "-D[1, a]", "-D[1, a]", "-D[1, b]")
	h.expect(0, joinCs(joinC("+I", nil, "n"))) // a NULL key never matches
	h.expect(1, joinCs(joinC("+I", nil)))
	h.expectTable()
	if _, err := h.pushErr(1, joinC("-D", 7)); err == nil {
		t.Fatal("retracting a right row that is not stored was accepted")
	}
}

func TestAntiJoin(t *testing.T) {
	h := joinOpen(t, NewSemiJoin(SemiJoinSpec{Anti: true, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 1}))
	h.expect(0, joinCs(joinC("+I", 1, "a")), "+I[1, a]")
	h.expect(0, joinCs(joinC("+I", nil, "n")), "+I[NULL, n]") // no match, ever
	h.expect(1, joinCs(joinC("+I", 1)), "-D[1, a]")
	h.expect(0, joinCs(joinC("+I", 1, "b")))
	h.expect(1, joinCs(joinC("-U", 1)), "+I[1, a]", "+I[1, b]")
	h.expect(0, joinCs(joinC("-D", 1, "a")), "-D[1, a]")
	h.expectTable("[1, b]", "[NULL, n]")
}

// NOT IN's NULL-aware form: no keys, a pair matches unless l = r is FALSE.
func TestAntiJoinNullAware(t *testing.T) {
	cond := func(row types.Row) (bool, error) {
		if row[0].IsNull() || row[1].IsNull() {
			return true, nil
		}
		return types.Compare(row[0], row[1]) == 0, nil
	}
	h := joinOpen(t, NewSemiJoin(SemiJoinSpec{Anti: true, LeftWidth: 1, RightWidth: 1, Condition: cond}))
	h.expect(0, joinCs(joinC("+I", 1), joinC("+I", nil)), "+I[1]", "+I[NULL]") // empty subquery: TRUE
	h.expect(1, joinCs(joinC("+I", 2)), "-D[NULL]")                            // NULL NOT IN (2) is NULL
	h.expect(1, joinCs(joinC("+I", nil)), "-D[1]")                             // 1 NOT IN (2, NULL) is NULL
	h.expect(1, joinCs(joinC("-D", nil)), "+I[1]")
	h.expectTable("[1]")
}
