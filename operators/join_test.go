package operators

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/types"
)

// Schemas used below unless stated otherwise: left (k, a), right (k, b),
// joined on k; an output row is [k, a, k, b].
func joinSpec2(t JoinType) JoinSpec {
	return JoinSpec{Type: t, LeftKeys: []int{0}, RightKeys: []int{0}, LeftWidth: 2, RightWidth: 2}
}

const (
	joinL = 0 // left input
	joinR = 1 // right input
)

func TestJoinInnerRetractionsBothSides(t *testing.T) {
	h := joinOpen(t, NewJoin(joinSpec2(InnerJoin)))
	// No right rows yet: nothing joins.
	h.expect(joinL, joinCs(joinC("+I", 1, "a1")))
	h.expect(joinR, joinCs(joinC("+I", 1, "b1")), "+I[1, a1, 1, b1]")
	h.expect(joinR, joinCs(joinC("+I", 1, "b2")), "+I[1, a1, 1, b2]")
	// A new left row joins both right rows, in ascending encoded order
	// of the right rows: [1, b1] < [1, b2].
	h.expect(joinL, joinCs(joinC("+I", 1, "a2")), "+I[1, a2, 1, b1]", "+I[1, a2, 1, b2]")
	// Retracting a left row retracts its joined rows as -D.
	h.expect(joinL, joinCs(joinC("-D", 1, "a1")), "-D[1, a1, 1, b1]", "-D[1, a1, 1, b2]")
	// An update on the right: -U gives -D, +U gives +I.
	h.expect(joinR, joinCs(joinC("-U", 1, "b1"), joinC("+U", 1, "b9")), "-D[1, a2, 1, b1]", "+I[1, a2, 1, b9]")
	// A key without partner.
	h.expect(joinR, joinCs(joinC("+I", 2, "c")))
	h.expectTable("[1, a2, 1, b2]", "[1, a2, 1, b9]")
}

func TestJoinLeftPaddingRetractedAndRestored(t *testing.T) {
	h := joinOpen(t, NewJoin(joinSpec2(LeftJoin)))
	h.expect(joinL, joinCs(joinC("+I", 1, "a")), "+I[1, a, NULL, NULL]")
	// A duplicate left row is padded separately.
	h.expect(joinL, joinCs(joinC("+I", 1, "a")), "+I[1, a, NULL, NULL]")
	// First match: both padded copies are retracted, then both join.
	h.expect(joinR, joinCs(joinC("+I", 1, "x")),
		"-D[1, a, NULL, NULL]", "-D[1, a, NULL, NULL]", "+I[1, a, 1, x]", "+I[1, a, 1, x]")
	// Second match: no padding change.
	h.expect(joinR, joinCs(joinC("+I", 1, "y")), "+I[1, a, 1, y]", "+I[1, a, 1, y]")
	// One of two matches retracted: the left row still has a match.
	h.expect(joinR, joinCs(joinC("-D", 1, "x")), "-D[1, a, 1, x]", "-D[1, a, 1, x]")
	// Last match retracted: joined rows out, padded rows back.
	h.expect(joinR, joinCs(joinC("-D", 1, "y")),
		"-D[1, a, 1, y]", "-D[1, a, 1, y]", "+I[1, a, NULL, NULL]", "+I[1, a, NULL, NULL]")
	// Retracting one copy of an unmatched left row retracts its padding.
	h.expect(joinL, joinCs(joinC("-D", 1, "a")), "-D[1, a, NULL, NULL]")
	// Right rows without a left match emit nothing in a LEFT join.
	h.expect(joinR, joinCs(joinC("+I", 2, "z")))
	h.expect(joinL, joinCs(joinC("+I", 2, "b")), "+I[2, b, 2, z]")
	h.expect(joinR, joinCs(joinC("-D", 2, "z")), "-D[2, b, 2, z]", "+I[2, b, NULL, NULL]")
	h.expectTable("[1, a, NULL, NULL]", "[2, b, NULL, NULL]")
}

func TestJoinRight(t *testing.T) {
	h := joinOpen(t, NewJoin(joinSpec2(RightJoin)))
	h.expect(joinR, joinCs(joinC("+I", 1, "x")), "+I[NULL, NULL, 1, x]")
	h.expect(joinL, joinCs(joinC("+I", 1, "a")), "-D[NULL, NULL, 1, x]", "+I[1, a, 1, x]")
	// Left rows without a match emit nothing in a RIGHT join.
	h.expect(joinL, joinCs(joinC("+I", 3, "c")))
	// An update of the left row passes through the padded state.
	h.expect(joinL, joinCs(joinC("-U", 1, "a"), joinC("+U", 1, "b")),
		"-D[1, a, 1, x]", "+I[NULL, NULL, 1, x]",
		"-D[NULL, NULL, 1, x]", "+I[1, b, 1, x]")
	// The right row goes: its joined row is retracted, no padding for the
	// inner (left) side.
	h.expect(joinR, joinCs(joinC("-D", 1, "x")), "-D[1, b, 1, x]")
	h.expectTable()
}

func TestJoinFull(t *testing.T) {
	h := joinOpen(t, NewJoin(joinSpec2(FullJoin)))
	h.expect(joinL, joinCs(joinC("+I", 1, "a")), "+I[1, a, NULL, NULL]")
	h.expect(joinR, joinCs(joinC("+I", 2, "y")), "+I[NULL, NULL, 2, y]")
	h.expect(joinR, joinCs(joinC("+I", 1, "x")), "-D[1, a, NULL, NULL]", "+I[1, a, 1, x]")
	// x already has a match, so no padded row of x exists to retract.
	h.expect(joinL, joinCs(joinC("+I", 1, "b")), "+I[1, b, 1, x]")
	// x goes: each left row loses its only match and is padded again
	// (left rows visited in order [1, a] < [1, b]); x itself had matches,
	// so no padded x appears.
	h.expect(joinR, joinCs(joinC("-D", 1, "x")),
		"-D[1, a, 1, x]", "+I[1, a, NULL, NULL]", "-D[1, b, 1, x]", "+I[1, b, NULL, NULL]")
	h.expect(joinL, joinCs(joinC("-D", 1, "a")), "-D[1, a, NULL, NULL]")
	h.expectTable("[1, b, NULL, NULL]", "[NULL, NULL, 2, y]")
}

func TestJoinNullKeysNeverMatch(t *testing.T) {
	h := joinOpen(t, NewJoin(joinSpec2(FullJoin)))
	h.expect(joinL, joinCs(joinC("+I", nil, "a")), "+I[NULL, a, NULL, NULL]")
	// NULL = NULL is not true: the right row is padded, nothing joins.
	h.expect(joinR, joinCs(joinC("+I", nil, "x")), "+I[NULL, NULL, NULL, x]")
	h.expect(joinL, joinCs(joinC("+I", nil, "a")), "+I[NULL, a, NULL, NULL]")
	h.expect(joinL, joinCs(joinC("-D", nil, "a")), "-D[NULL, a, NULL, NULL]")
	h.expect(joinR, joinCs(joinC("-D", nil, "x")), "-D[NULL, NULL, NULL, x]")
	h.expectTable("[NULL, a, NULL, NULL]")

	// Inner join on two key columns: a NULL in one of them prevents the match.
	spec := JoinSpec{Type: InnerJoin, LeftKeys: []int{0, 1}, RightKeys: []int{0, 1}, LeftWidth: 3, RightWidth: 3}
	h = joinOpen(t, NewJoin(spec))
	h.expect(joinL, joinCs(joinC("+I", 1, nil, "a")))
	h.expect(joinR, joinCs(joinC("+I", 1, nil, "b")))
	h.expect(joinL, joinCs(joinC("+I", 1, 2, "c")))
	h.expect(joinR, joinCs(joinC("+I", 1, 2, "d")), "+I[1, 2, c, 1, 2, d]")
	// NULL-key rows are kept, so they can be retracted without error.
	h.expect(joinL, joinCs(joinC("-D", 1, nil, "a")))
	h.expectTable("[1, 2, c, 1, 2, d]")
}

func TestJoinResidualCondition(t *testing.T) {
	// LEFT JOIN ... ON l.k = r.k AND l.a < r.b; the joined row is [k, a, k, b].
	spec := joinSpec2(LeftJoin)
	spec.Condition = func(j types.Row) (bool, error) {
		if j[1].IsNull() || j[3].IsNull() {
			return false, nil // NULL is not TRUE
		}
		return j[1].Int() < j[3].Int(), nil
	}
	h := joinOpen(t, NewJoin(spec))
	h.expect(joinL, joinCs(joinC("+I", 1, 5)), "+I[1, 5, NULL, NULL]")
	h.expect(joinR, joinCs(joinC("+I", 1, 3))) // 5 < 3 is false
	h.expect(joinR, joinCs(joinC("+I", 1, 7)), "-D[1, 5, NULL, NULL]", "+I[1, 5, 1, 7]")
	h.expect(joinR, joinCs(joinC("+I", 1, nil))) // 5 < NULL is NULL
	// Right rows in encoded order: [1, NULL] < [1, 3] < [1, 7]; 2 < 3 and 2 < 7.
	h.expect(joinL, joinCs(joinC("+I", 1, 2)), "+I[1, 2, 1, 3]", "+I[1, 2, 1, 7]")
	// [1, 7] goes: [1, 2] keeps its match with 3; [1, 5] loses its only match.
	h.expect(joinR, joinCs(joinC("-D", 1, 7)), "-D[1, 2, 1, 7]", "-D[1, 5, 1, 7]", "+I[1, 5, NULL, NULL]")
	h.expectTable("[1, 2, 1, 3]", "[1, 5, NULL, NULL]")
}

func TestJoinDuplicatesBothSides(t *testing.T) {
	h := joinOpen(t, NewJoin(joinSpec2(InnerJoin)))
	h.expect(joinL, joinCs(joinC("+I", 1, "a"), joinC("+I", 1, "a")))
	// One right row joins both copies of the left row.
	h.expect(joinR, joinCs(joinC("+I", 1, "x")), "+I[1, a, 1, x]", "+I[1, a, 1, x]")
	h.expect(joinR, joinCs(joinC("+I", 1, "x")), "+I[1, a, 1, x]", "+I[1, a, 1, x]")
	// 2 x 2 = 4 joined rows; one left copy goes with its 2 partners.
	h.expect(joinL, joinCs(joinC("-D", 1, "a")), "-D[1, a, 1, x]", "-D[1, a, 1, x]")
	h.expectTable("[1, a, 1, x]", "[1, a, 1, x]")
}

func TestJoinRetractUnknownRowFails(t *testing.T) {
	for _, jt := range []JoinType{InnerJoin, LeftJoin, RightJoin, FullJoin} {
		h := joinOpen(t, NewJoin(joinSpec2(jt)))
		h.expect(joinL, joinCs(joinC("+I", 1, "a")), map[JoinType][]string{
			LeftJoin: {"+I[1, a, NULL, NULL]"}, FullJoin: {"+I[1, a, NULL, NULL]"},
		}[jt]...)
		h.expect(joinR, joinCs(joinC("+I", 1, "x")), map[JoinType][]string{
			InnerJoin: {"+I[1, a, 1, x]"},
			LeftJoin:  {"-D[1, a, NULL, NULL]", "+I[1, a, 1, x]"},
			RightJoin: {"+I[1, a, 1, x]"},
			FullJoin:  {"-D[1, a, NULL, NULL]", "+I[1, a, 1, x]"},
		}[jt]...)
		for _, tc := range []struct {
			input int
			ch    dyntable.Change
		}{
			{joinL, joinC("-D", 1, "b")},   // same key, other row
			{joinR, joinC("-U", 2, "x")},   // unknown key
			{joinL, joinC("-D", nil, "a")}, // NULL key never stored
		} {
			got, err := h.pushErr(tc.input, tc.ch)
			if err == nil || !strings.Contains(err.Error(), "Join("+jt.String()+")") {
				t.Fatalf("%s: retracting unknown %s: err = %v, want an error naming the join", jt, dyntable.FormatChange(tc.ch, nil), err)
			}
			if len(got) != 0 {
				t.Fatalf("%s: output on failed retraction: %v", jt, got)
			}
		}
		// Retracting the known row twice: the second one fails.
		h.push(joinL, joinC("-D", 1, "a"))
		if _, err := h.pushErr(joinL, joinC("-D", 1, "a")); err == nil {
			t.Fatalf("%s: second retraction of [1, a] succeeded", jt)
		}
	}
}

func TestJoinRejectsBadInput(t *testing.T) {
	h := joinOpen(t, NewJoin(joinSpec2(InnerJoin)))
	if _, err := h.pushErr(joinL, joinC("+I", 1, "a", "extra")); err == nil {
		t.Fatal("row of the wrong width accepted")
	}
	if _, err := h.pushErr(2, joinC("+I", 1, "a")); err == nil {
		t.Fatal("input 2 accepted")
	}
	bad := joinSpec2(InnerJoin)
	bad.RightKeys = []int{0, 1}
	if err := NewJoin(bad).Open(joinNewCtx()); err == nil {
		t.Fatal("mismatched key counts accepted")
	}
	bad = joinSpec2(InnerJoin)
	bad.LeftKeys = []int{2}
	if err := NewJoin(bad).Open(joinNewCtx()); err == nil {
		t.Fatal("key column out of range accepted")
	}
	spec := joinSpec2(InnerJoin)
	spec.Condition = func(types.Row) (bool, error) { return false, fmt.Errorf("boom") }
	h = joinOpen(t, NewJoin(spec))
	h.push(joinL, joinC("+I", 1, "a"))
	if _, err := h.pushErr(joinR, joinC("+I", 1, "x")); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("condition error not returned: %v", err)
	}
}

func TestJoinDecimalAndFloatKeysByValue(t *testing.T) {
	h := joinOpen(t, NewJoin(joinSpec2(InnerJoin)))
	h.expect(joinL, joinCs(dyntable.Change{Kind: dyntable.Insert, Row: types.Row{joinDec("1.50"), joinV("a")}}))
	// 1.5 = 1.50 as SQL values.
	h.expect(joinR, joinCs(dyntable.Change{Kind: dyntable.Insert, Row: types.Row{joinDec("1.5"), joinV("x")}}), "+I[1.50, a, 1.5, x]")
	h.expect(joinL, joinCs(joinC("+I", math.Copysign(0, -1), "n")))
	h.expect(joinR, joinCs(joinC("+I", 0.0, "p")), "+I[-0, n, 0, p]")
}

func TestJoinEntryCodec(t *testing.T) {
	c := joinEntryCodec{}
	for _, e := range []joinEntry{{1, 0}, {3, 7}, {1 << 40, 1<<62 + 5}, {math.MaxInt64, math.MaxInt64}} {
		b := c.Encode([]byte("prefix"), e)
		if !bytes.HasPrefix(b, []byte("prefix")) {
			t.Fatalf("Encode did not append")
		}
		got, err := c.Decode(b[len("prefix"):])
		if err != nil || got != e {
			t.Fatalf("round trip of %+v: %+v, %v", e, got, err)
		}
	}
	good := c.Encode(nil, joinEntry{300, 2})
	for _, bad := range [][]byte{nil, {0x80}, good[:len(good)-1], append(good, 0)} {
		if _, err := c.Decode(bad); err == nil {
			t.Fatalf("Decode(%x) succeeded", bad)
		}
	}
}

// TestJoinCanonicalEncoding checks that kit.AppendKeyValue orders values of
// one kind as types.Compare does and makes SQL-equal values equal bytes.
func TestJoinCanonicalEncoding(t *testing.T) {
	groups := [][]types.Value{
		{types.NullValue, joinDec("-1E+3"), joinDec("-12.5"), joinDec("-12.45"), joinDec("-1"), joinDec("-0.001"),
			joinDec("0"), joinDec("0.000"), joinDec("-0"), joinDec("0.0012"), joinDec("0.1"), joinDec("1"), joinDec("1.0"),
			joinDec("1.5"), joinDec("1.50"), joinDec("10"), joinDec("12"), joinDec("12.01"), joinDec("99.99"), joinDec("1E+2")},
		{types.NullValue, joinV(math.Inf(-1)), joinV(-2.5), joinV(math.Copysign(0, -1)), joinV(0.0), joinV(1e-300),
			joinV(3.0), joinV(math.Inf(1)), joinV(math.NaN())},
		{types.NullValue, joinV(""), joinV("\x00"), joinV("a"), joinV("a\x00"), joinV("a\x00b"), joinV("ab"), joinV("b")},
		{types.NullValue, joinV(math.MinInt64), joinV(-1), joinV(0), joinV(1), joinV(math.MaxInt64)},
	}
	for _, g := range groups {
		for _, a := range g {
			for _, b := range g {
				ea, eb := kit.AppendKeyValue(nil, a), kit.AppendKeyValue(nil, b)
				if got, want := bytes.Compare(ea, eb), types.Compare(a, b); got != want {
					t.Errorf("%v vs %v: bytes.Compare = %d, types.Compare = %d", types.FormatRow(types.Row{a}, nil, ""), types.FormatRow(types.Row{b}, nil, ""), got, want)
				}
				// Prefix freedom: a composite key compares by its first column.
				ca := append(kit.AppendKeyValue(nil, a), 0xFF)
				cb := append(kit.AppendKeyValue(nil, b), 0x00)
				if types.Compare(a, b) < 0 && bytes.Compare(ca, cb) >= 0 {
					t.Errorf("encoding of %v is not prefix-free against %v", a, b)
				}
			}
		}
	}
}

// TestJoinRandomAgainstBruteForce feeds random valid changelogs to both
// sides and, after every chunk, compares the materialized output with the
// join recomputed from the materialized inputs.
func TestJoinRandomAgainstBruteForce(t *testing.T) {
	// left (k, v), right (k, w); condition (optional): v < w.
	lessCond := func(j types.Row) (bool, error) {
		if j[1].IsNull() || j[3].IsNull() {
			return false, nil
		}
		return j[1].Int() < j[3].Int(), nil
	}
	for _, jt := range []JoinType{InnerJoin, LeftJoin, RightJoin, FullJoin} {
		for _, withCond := range []bool{false, true} {
			for seed := uint64(1); seed <= 15; seed++ {
				name := fmt.Sprintf("%s/cond=%v/seed=%d", jt, withCond, seed)
				t.Run(name, func(t *testing.T) {
					spec := joinSpec2(jt)
					if withCond {
						spec.Condition = lessCond
					}
					joinRandomRun(t, spec, rand.New(rand.NewPCG(seed, 99)))
				})
			}
		}
	}
}

func joinRandomRun(t *testing.T, spec JoinSpec, rng *rand.Rand) {
	h := joinOpen(t, NewJoin(spec))
	var inputs [2][]types.Row
	randVal := func(n int) types.Value {
		if rng.IntN(6) == 0 {
			return types.NullValue
		}
		return types.NewInt(int64(rng.IntN(n)))
	}
	for step := 0; step < 200; step++ {
		side := rng.IntN(2)
		var chunk []dyntable.Change
		for n := 1 + rng.IntN(4); n > 0; n-- {
			cur := inputs[side]
			// Retract more often as the input grows, so it stays around 20 rows.
			if len(cur) > 0 && rng.IntN(100) < 20+2*len(cur) {
				r := cur[rng.IntN(len(cur))]
				kind := dyntable.Delete
				if rng.IntN(2) == 0 {
					kind = dyntable.UpdateBefore
				}
				chunk = append(chunk, dyntable.Change{Kind: kind, Row: r})
				inputs[side] = joinRemoveRow(cur, r)
			} else {
				r := types.Row{randVal(3), randVal(4)}
				kind := dyntable.Insert
				if rng.IntN(3) == 0 {
					kind = dyntable.UpdateAfter
				}
				chunk = append(chunk, dyntable.Change{Kind: kind, Row: r})
				inputs[side] = append(inputs[side], r)
			}
		}
		h.push(side, chunk...)
		joinSameMultiset(t, fmt.Sprintf("step %d (%s on input %d)", step, joinFormatChanges(chunk), side),
			h.table.Rows(), joinBruteForce(t, spec, inputs[0], inputs[1]))
	}
}

// joinBruteForce computes the join of two multisets from scratch.
func joinBruteForce(t *testing.T, spec JoinSpec, left, right []types.Row) []types.Row {
	match := func(l, r types.Row) bool {
		for i := range spec.LeftKeys {
			a, b := l[spec.LeftKeys[i]], r[spec.RightKeys[i]]
			if a.IsNull() || b.IsNull() || types.Compare(a, b) != 0 {
				return false
			}
		}
		if spec.Condition == nil {
			return true
		}
		ok, err := spec.Condition(append(l.Copy(), r...))
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	nulls := func(n int) types.Row { return make(types.Row, n) }
	var out []types.Row
	rightMatched := make([]bool, len(right))
	for _, l := range left {
		found := false
		for i, r := range right {
			if match(l, r) {
				found = true
				rightMatched[i] = true
				out = append(out, append(l.Copy(), r...))
			}
		}
		if !found && (spec.Type == LeftJoin || spec.Type == FullJoin) {
			out = append(out, append(l.Copy(), nulls(spec.RightWidth)...))
		}
	}
	if spec.Type == RightJoin || spec.Type == FullJoin {
		for i, r := range right {
			if !rightMatched[i] {
				out = append(out, append(nulls(spec.LeftWidth), r...))
			}
		}
	}
	return out
}

func TestJoinWithoutEquiKeys(t *testing.T) {
	// LEFT JOIN ON l.a < r.b with no equi-key: every pair is a candidate.
	spec := JoinSpec{Type: LeftJoin, LeftWidth: 1, RightWidth: 1,
		Condition: func(j types.Row) (bool, error) { return j[0].Int() < j[1].Int(), nil }}
	h := joinOpen(t, NewJoin(spec))
	h.expect(joinL, joinCs(joinC("+I", 1), joinC("+I", 5)), "+I[1, NULL]", "+I[5, NULL]")
	// 1 < 3 joins; 5 < 3 does not.
	h.expect(joinR, joinCs(joinC("+I", 3)), "-D[1, NULL]", "+I[1, 3]")
	h.expectTable("[1, 3]", "[5, NULL]")
}

func TestJoinSpecHolds(t *testing.T) {
	if ok, err := (JoinSpec{}).Holds("J", types.Row{}); !ok || err != nil {
		t.Fatalf("no condition: Holds = %v, %v, want true", ok, err)
	}
	s := JoinSpec{Condition: func(r types.Row) (bool, error) {
		if r[0].IsNull() {
			return false, errors.New("boom")
		}
		return r[0].Int() > 1, nil
	}}
	if ok, err := s.Holds("J", types.Row{types.NewInt(2)}); !ok || err != nil {
		t.Fatalf("Holds(2) = %v, %v, want true", ok, err)
	}
	if ok, err := s.Holds("J", types.Row{types.NewInt(1)}); ok || err != nil {
		t.Fatalf("Holds(1) = %v, %v, want false", ok, err)
	}
	if _, err := s.Holds("J", types.Row{types.NullValue}); err == nil || err.Error() != "J: join condition: boom" {
		t.Fatalf("a failing condition: err = %v", err)
	}
	if err := (JoinSpec{}).Open(nil, "J", [2][]int{}); err == nil || err.Error() != "J: no state store" {
		t.Fatalf("Open without a state store: err = %v", err)
	}
}
