package operators

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/types"
)

// Schema used below unless stated otherwise: (k, ts, v), partitioned by k.

func TestRankDedupKeepFirst(t *testing.T) {
	// ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts ASC) = 1
	h := joinOpen(t, NewRank(RankSpec{PartitionKeys: []int{0}, OrderBy: []SortKey{{Col: 1}}, Limit: 1, Width: 3}))
	h.expect(0, joinCs(joinC("+I", "a", 1, "x")), "+I[a, 1, x]")
	h.expect(0, joinCs(joinC("+I", "a", 2, "y"))) // ranks 2nd
	h.expect(0, joinCs(joinC("+I", "a", 1, "z"))) // ties with x, arrived later: 2nd
	h.expect(0, joinCs(joinC("+I", "b", 5, "w")), "+I[b, 5, w]")
	// An earlier timestamp replaces the row at rank 1: -D/+I, as Flink's
	// Top-N without row number (the Deduplicate operator gives -U/+U).
	h.expect(0, joinCs(joinC("+I", "a", 0, "q")), "-D[a, 1, x]", "+I[a, 0, q]")
	h.expectTable("[a, 0, q]", "[b, 5, w]")
}

func TestRankDedupKeepLast(t *testing.T) {
	// ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) = 1
	h := joinOpen(t, NewRank(RankSpec{PartitionKeys: []int{0}, OrderBy: []SortKey{{Col: 1, Desc: true}}, Limit: 1, Width: 3}))
	h.expect(0, joinCs(joinC("+I", "a", 1, "x")), "+I[a, 1, x]")
	h.expect(0, joinCs(joinC("+I", "a", 2, "y")), "-D[a, 1, x]", "+I[a, 2, y]")
	// Equal timestamps, all sort keys DESC: the later arrival ranks first.
	h.expect(0, joinCs(joinC("+I", "a", 2, "z")), "-D[a, 2, y]", "+I[a, 2, z]")
	h.expect(0, joinCs(joinC("+I", "a", 1, "q")))
	// An identical copy of the visible row takes rank 1: nothing changes.
	h.expect(0, joinCs(joinC("+I", "a", 2, "z")))
	// Order now (arrival numbers): z5, z3, y2, q4, x1. A retraction of z
	// removes the copy ranked last, z3: nothing visible changes.
	h.expect(0, joinCs(joinC("-D", "a", 2, "z")))
	// The other z goes too: y is promoted.
	h.expect(0, joinCs(joinC("-D", "a", 2, "z")), "-D[a, 2, z]", "+I[a, 2, y]")
	h.expectTable("[a, 2, y]")
}

func TestRankTop3(t *testing.T) {
	// (k, score, name); ROW_NUMBER() OVER (PARTITION BY k ORDER BY score DESC) <= 3
	h := joinOpen(t, NewRank(RankSpec{PartitionKeys: []int{0}, OrderBy: []SortKey{{Col: 1, Desc: true}}, Limit: 3, Width: 3}))
	h.expect(0, joinCs(joinC("+I", "g", 10, "a"), joinC("+I", "g", 20, "b"), joinC("+I", "g", 30, "c")),
		"+I[g, 10, a]", "+I[g, 20, b]", "+I[g, 30, c]")
	h.expect(0, joinCs(joinC("+I", "g", 5, "d"))) // rank 4
	// Top is [c, b, a]; e (25) enters at rank 2, a falls out from rank 3.
	h.expect(0, joinCs(joinC("+I", "g", 25, "e")), "-D[g, 10, a]", "+I[g, 25, e]")
	// Deleting the top row c promotes a (rank 4 -> 3): [e, b, a].
	h.expect(0, joinCs(joinC("-D", "g", 30, "c")), "-D[g, 30, c]", "+I[g, 10, a]")
	// Update of b from 20 to 40: -U leaves [e, a, d]; +U gives [b, e, a].
	h.expect(0, joinCs(joinC("-U", "g", 20, "b"), joinC("+U", "g", 40, "b")),
		"-D[g, 20, b]", "+I[g, 5, d]", "-D[g, 5, d]", "+I[g, 40, b]")
	// Update of a from 10 to 12: -U a leaves [b, e, d], d replacing a at
	// rank 3; +U a12 replaces d at rank 3 again. Rows leave (-D) and
	// enter (+I) whatever their positions, as in Flink.
	h.expect(0, joinCs(joinC("-U", "g", 10, "a"), joinC("+U", "g", 12, "a")),
		"-D[g, 10, a]", "+I[g, 5, d]", "-D[g, 5, d]", "+I[g, 12, a]")
	// Another partition is independent.
	h.expect(0, joinCs(joinC("+I", "h", 1, "z")), "+I[h, 1, z]")
	h.expectTable("[g, 40, b]", "[g, 25, e]", "[g, 12, a]", "[h, 1, z]")
}

func TestRankTop3WithRowNumber(t *testing.T) {
	h := joinOpen(t, NewRank(RankSpec{PartitionKeys: []int{0}, OrderBy: []SortKey{{Col: 1, Desc: true}}, Limit: 3, OutputRank: true, Width: 3}))
	h.expect(0, joinCs(joinC("+I", "g", 10, "a")), "+I[g, 10, a, 1]")
	// b takes rank 1, a moves to rank 2: per rank position.
	h.expect(0, joinCs(joinC("+I", "g", 20, "b")), "-U[g, 10, a, 1]", "+U[g, 20, b, 1]", "+I[g, 10, a, 2]")
	// [b, c, a]: rank 1 unchanged.
	h.expect(0, joinCs(joinC("+I", "g", 15, "c")), "-U[g, 10, a, 2]", "+U[g, 15, c, 2]", "+I[g, 10, a, 3]")
	// [d, b, c]: every rank shifts, a falls out.
	h.expect(0, joinCs(joinC("+I", "g", 30, "d")),
		"-U[g, 20, b, 1]", "+U[g, 30, d, 1]", "-U[g, 15, c, 2]", "+U[g, 20, b, 2]", "-U[g, 10, a, 3]", "+U[g, 15, c, 3]")
	// b goes: [d, c, a], a promoted back to rank 3.
	h.expect(0, joinCs(joinC("-D", "g", 20, "b")), "-U[g, 20, b, 2]", "+U[g, 15, c, 2]", "-U[g, 15, c, 3]", "+U[g, 10, a, 3]")
	// d goes: [c, a], rank 3 becomes empty.
	h.expect(0, joinCs(joinC("-D", "g", 30, "d")),
		"-U[g, 30, d, 1]", "+U[g, 15, c, 1]", "-U[g, 15, c, 2]", "+U[g, 10, a, 2]", "-D[g, 10, a, 3]")
	h.expect(0, joinCs(joinC("+I", "h", 1, "z")), "+I[h, 1, z, 1]")
	h.expect(0, joinCs(joinC("+I", "g", 1, "low")), "+I[g, 1, low, 3]")
	h.expectTable("[g, 15, c, 1]", "[g, 10, a, 2]", "[g, 1, low, 3]", "[h, 1, z, 1]")
}

func TestRankGlobalLimitOffset(t *testing.T) {
	// SELECT * FROM t ORDER BY v ASC LIMIT 2 OFFSET 1; schema (v, name).
	h := joinOpen(t, NewRank(RankSpec{OrderBy: []SortKey{{Col: 0}}, Offset: 1, Limit: 2, Width: 2}))
	h.expect(0, joinCs(joinC("+I", 5, "a"))) // [a]: rank 1 is skipped
	h.expect(0, joinCs(joinC("+I", 3, "b")), "+I[5, a]")
	// With an offset the changes are per rank position (Flink's Top-N
	// with an offset), without the number. [b, c, a]:
	h.expect(0, joinCs(joinC("+I", 4, "c")), "-U[5, a]", "+U[4, c]", "+I[5, a]")
	// [d, b, c, a]: rank 2 c -> b, rank 3 a -> c.
	h.expect(0, joinCs(joinC("+I", 1, "d")), "-U[4, c]", "+U[3, b]", "-U[5, a]", "+U[4, c]")
	// [d, c, a]: rank 2 b -> c, rank 3 c -> a.
	h.expect(0, joinCs(joinC("-D", 3, "b")), "-U[3, b]", "+U[4, c]", "-U[4, c]", "+U[5, a]")
	// NULL sorts first for ASC: [e, d, c, a]: rank 2 c -> d, rank 3 a -> c.
	h.expect(0, joinCs(joinC("+I", nil, "e")), "-U[4, c]", "+U[1, d]", "-U[5, a]", "+U[4, c]")
	h.expectTable("[1, d]", "[4, c]")
}

func TestRankDescNullsLastAndTwoKeys(t *testing.T) {
	// ORDER BY a DESC, b ASC LIMIT 2; schema (a, b). Not all keys DESC, so
	// ties (none here) would go by arrival.
	h := joinOpen(t, NewRank(RankSpec{OrderBy: []SortKey{{Col: 0, Desc: true}, {Col: 1}}, Limit: 2, OutputRank: true, Width: 2}))
	h.expect(0, joinCs(joinC("+I", nil, 1)), "+I[NULL, 1, 1]")
	// 1 > NULL under DESC NULLS LAST.
	h.expect(0, joinCs(joinC("+I", 1, 5)), "-U[NULL, 1, 1]", "+U[1, 5, 1]", "+I[NULL, 1, 2]")
	// Same a, smaller b ranks first.
	h.expect(0, joinCs(joinC("+I", 1, 2)), "-U[1, 5, 1]", "+U[1, 2, 1]", "-U[NULL, 1, 2]", "+U[1, 5, 2]")
	h.expectTable("[1, 2, 1]", "[1, 5, 2]")
}

func TestRankRetractUnknownRowFails(t *testing.T) {
	h := joinOpen(t, NewRank(RankSpec{PartitionKeys: []int{0}, OrderBy: []SortKey{{Col: 1}}, Limit: 2, Width: 3}))
	h.expect(0, joinCs(joinC("+I", "a", 1, "x")), "+I[a, 1, x]")
	for _, ch := range []dyntable.Change{
		joinC("-D", "a", 1, "y"), // same partition and order key, other row
		joinC("-U", "b", 1, "x"), // other partition
	} {
		got, err := h.pushErr(0, ch)
		if err == nil || !strings.Contains(err.Error(), "Rank") {
			t.Fatalf("retracting unknown %s: err = %v, want an error naming Rank", dyntable.FormatChange(ch, nil), err)
		}
		if len(got) != 0 {
			t.Fatalf("output on failed retraction: %v", got)
		}
	}
	h.expect(0, joinCs(joinC("-D", "a", 1, "x")), "-D[a, 1, x]")
	if _, err := h.pushErr(0, joinC("-D", "a", 1, "x")); err == nil {
		t.Fatal("second retraction succeeded")
	}
	// An input declared insert-only refuses retractions.
	h = joinOpen(t, NewRank(RankSpec{OrderBy: []SortKey{{Col: 1}}, Limit: 2, Width: 3, InputInsertOnly: true}))
	h.expect(0, joinCs(joinC("+I", "a", 1, "x")), "+I[a, 1, x]")
	if _, err := h.pushErr(0, joinC("-D", "a", 1, "x")); err == nil || !strings.Contains(err.Error(), "Rank") {
		t.Fatalf("retraction on insert-only input: %v", err)
	}
	if _, err := h.pushErr(0, joinC("+I", "a", 1)); err == nil {
		t.Fatal("row of the wrong width accepted")
	}
	for _, bad := range []RankSpec{
		{OrderBy: []SortKey{{Col: 3}}, Limit: 1, Width: 3},
		{PartitionKeys: []int{-1}, Limit: 1, Width: 3},
		{Limit: -1, Width: 3},
	} {
		if err := NewRank(bad).Open(joinNewCtx()); err == nil {
			t.Fatalf("bad spec %+v accepted", bad)
		}
	}
}

// TestRankInsertOnlyStateIsBounded checks that an insert-only Top-N keeps
// only Offset+Limit entries per partition.
func TestRankInsertOnlyStateIsBounded(t *testing.T) {
	op := NewRank(RankSpec{PartitionKeys: []int{0}, OrderBy: []SortKey{{Col: 1, Desc: true}}, Offset: 1, Limit: 2, Width: 2, InputInsertOnly: true})
	h := joinOpen(t, op)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 500; i++ {
		h.push(0, joinC("+I", i%2, rng.IntN(1000)))
	}
	r := op.(*rankOp)
	for p := 0; p < 2; p++ {
		pk, _ := kit.EncodeKey(nil, joinRow(p), []int{0})
		n := 0
		if err := r.entries.Range(pk, func([]byte, types.Row) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Fatalf("partition %d keeps %d entries, want 3", p, n)
		}
	}
	if h.table.Len() != 4 {
		t.Fatalf("output has %d rows, want 2 per partition", h.table.Len())
	}
}

func TestRankCodecs(t *testing.T) {
	row := types.Row{types.NullValue, joinV(-7), joinV("a\x00b"), joinV(2.5), joinDec("-12.340"),
		types.NewBool(true), types.NewDate(19000), types.NewTimestamp(1700000000123000000)}
	b := rankRowCodec{}.Encode(nil, row)
	got, err := rankRowCodec{}.Decode(b)
	if err != nil || !types.RowsEqual(got, row) || types.FormatRow(got, nil, "|") != types.FormatRow(row, nil, "|") {
		t.Fatalf("row round trip: %v, %v", got, err)
	}
	if _, err := (rankRowCodec{}).Decode(b[:len(b)-1]); err == nil {
		t.Fatal("truncated row decoded")
	}
	nb := normRowCodec{}.Encode(nil, row)
	if got, err := (normRowCodec{}).Decode(nb); err != nil || !types.RowsEqual(got, row) {
		t.Fatalf("normalize row round trip: %v, %v", got, err)
	}
	for _, s := range [][]int64{nil, {1}, {1, 2, 300, 1 << 40}, {math.MaxInt64 - 1, math.MaxInt64}} {
		b := rankSeqListCodec{}.Encode([]byte{9}, s)
		got, err := rankSeqListCodec{}.Decode(b[1:])
		if err != nil || !slices.Equal(got, s) && len(s)+len(got) > 0 {
			t.Fatalf("seq list round trip of %v: %v, %v", s, got, err)
		}
	}
	good := rankSeqListCodec{}.Encode(nil, []int64{5, 600})
	for _, bad := range [][]byte{nil, {5}, good[:len(good)-1], append(slices.Clone(good), 1)} {
		if _, err := (rankSeqListCodec{}).Decode(bad); err == nil {
			t.Fatalf("seq list Decode(%x) succeeded", bad)
		}
	}
	for _, v := range []int64{1, 127, 128, math.MaxInt64} {
		got, err := rankSeqCodec{}.Decode(rankSeqCodec{}.Encode(nil, v))
		if err != nil || got != v {
			t.Fatalf("seq round trip of %d: %d, %v", v, got, err)
		}
	}
	if _, err := (rankSeqCodec{}).Decode([]byte{0x80}); err == nil {
		t.Fatal("corrupt seq decoded")
	}
}

// TestRankRandomAgainstBruteForce feeds random valid changelogs to random
// rank specs and, after every chunk, compares the materialized output
// with the ranking recomputed from the materialized input.
func TestRankRandomAgainstBruteForce(t *testing.T) {
	for seed := uint64(1); seed <= 150; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		spec := rankRandomSpec(rng)
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rankRandomRun(t, spec, rng)
		})
	}
}

// Random schema: (p INT, a INT, d DECIMAL, s STRING, f DOUBLE), few
// distinct values per column so that ties and duplicates are common.
const rankRandomWidth = 5

func rankRandomSpec(rng *rand.Rand) RankSpec {
	spec := RankSpec{Width: rankRandomWidth, Offset: int64(rng.IntN(3)), Limit: int64(1 + rng.IntN(3)),
		OutputRank: rng.IntN(2) == 0, InputInsertOnly: rng.IntN(4) == 0}
	if rng.IntN(3) > 0 {
		spec.PartitionKeys = []int{0}
	}
	cols := rng.Perm(4)[:1+rng.IntN(2)]
	allDesc := rng.IntN(3) == 0
	for _, c := range cols {
		spec.OrderBy = append(spec.OrderBy, SortKey{Col: c + 1, Desc: allDesc || rng.IntN(2) == 0})
	}
	return spec
}

func rankRandomRow(rng *rand.Rand) types.Row {
	pick := func(vs ...types.Value) types.Value { return vs[rng.IntN(len(vs))] }
	return types.Row{
		pick(types.NullValue, joinV(0), joinV(1)),
		pick(types.NullValue, joinV(-1), joinV(0), joinV(2)),
		pick(types.NullValue, joinDec("1.5"), joinDec("1.50"), joinDec("-2"), joinDec("0.0"), joinDec("10")),
		pick(types.NullValue, joinV(""), joinV("a"), joinV("a\x00"), joinV("ab")),
		pick(types.NullValue, joinV(math.Copysign(0, -1)), joinV(0.0), joinV(1.5), joinV(math.NaN()), joinV(math.Inf(-1))),
	}
}

// rankModelEntry is one input copy in the reference model.
type rankModelEntry struct {
	row types.Row
	seq int
}

func rankRandomRun(t *testing.T, spec RankSpec, rng *rand.Rand) {
	t.Logf("spec %+v", spec)
	h := joinOpen(t, NewRank(spec))
	// With OutputRank the changelog must also be an upsert stream keyed by
	// (partition keys, rn).
	var keyed *dyntable.Table
	if spec.OutputRank {
		keyed = dyntable.NewTable(append(slices.Clone(spec.PartitionKeys), spec.Width))
	}
	var model []rankModelEntry
	seq := 0
	laterFirst := true
	for _, o := range spec.OrderBy {
		laterFirst = laterFirst && o.Desc
	}
	for step := 0; step < 150; step++ {
		var chunk []dyntable.Change
		for n := 1 + rng.IntN(3); n > 0; n-- {
			// Retract more often as the input grows, so it stays around 25 rows.
			if len(model) > 0 && !spec.InputInsertOnly && rng.IntN(100) < 20+len(model)*3/2 {
				r := model[rng.IntN(len(model))].row
				kind := dyntable.Delete
				if rng.IntN(2) == 0 {
					kind = dyntable.UpdateBefore
				}
				chunk = append(chunk, dyntable.Change{Kind: kind, Row: r})
				model = rankModelRetract(spec, model, r, laterFirst)
			} else {
				r := rankRandomRow(rng)
				kind := dyntable.Insert
				if rng.IntN(3) == 0 {
					kind = dyntable.UpdateAfter
				}
				chunk = append(chunk, dyntable.Change{Kind: kind, Row: r})
				seq++
				model = append(model, rankModelEntry{row: r, seq: seq})
			}
		}
		prev := joinFormatRows(h.table.Rows())
		got := h.push(0, chunk...)
		want := rankBruteForce(spec, model, laterFirst)
		what := fmt.Sprintf("step %d (%s)", step, joinFormatChanges(chunk))
		joinSameMultiset(t, what, h.table.Rows(), want)
		// A single change that leaves the visible rows as they were must
		// emit nothing.
		if len(chunk) == 1 && slices.Equal(prev, joinFormatRows(want)) && len(got) > 0 {
			t.Fatalf("%s: visible rows unchanged but emitted %v", what, got)
		}
		if keyed != nil {
			for _, ch := range h.out.changes {
				if err := keyed.Apply(ch); err != nil {
					t.Fatalf("%s: upsert materialization: %v", what, err)
				}
			}
			joinSameMultiset(t, what+" (upsert by partition, rn)", keyed.Rows(), want)
		}
	}
}

// rankModelRetract removes the copy of r ranked last among the identical
// copies: the latest arrival, or the earliest when later arrivals rank
// first.
func rankModelRetract(spec RankSpec, model []rankModelEntry, r types.Row, laterFirst bool) []rankModelEntry {
	k := types.EncodeRow(nil, r)
	best := -1
	for i, e := range model {
		if !bytes.Equal(types.EncodeRow(nil, e.row), k) {
			continue
		}
		if best < 0 || (!laterFirst && e.seq > model[best].seq) || (laterFirst && e.seq < model[best].seq) {
			best = i
		}
	}
	return slices.Delete(model, best, best+1)
}

// rankBruteForce ranks the model from scratch with types.Compare.
func rankBruteForce(spec RankSpec, model []rankModelEntry, laterFirst bool) []types.Row {
	parts := map[string][]rankModelEntry{}
	for _, e := range model {
		var pk []string
		for _, c := range spec.PartitionKeys {
			pk = append(pk, types.FormatRow(types.Row{e.row[c]}, nil, ""))
		}
		k := strings.Join(pk, "|")
		parts[k] = append(parts[k], e)
	}
	var out []types.Row
	for _, es := range parts {
		sort.SliceStable(es, func(i, j int) bool {
			a, b := es[i], es[j]
			for _, o := range spec.OrderBy {
				c := types.Compare(a.row[o.Col], b.row[o.Col])
				if o.Desc {
					c = -c
				}
				if c != 0 {
					return c < 0
				}
			}
			if laterFirst {
				return a.seq > b.seq
			}
			return a.seq < b.seq
		})
		for i := spec.Offset; i < spec.Offset+spec.Limit && i < int64(len(es)); i++ {
			r := es[i].row.Copy()
			if spec.OutputRank {
				r = append(r, types.NewInt(i+1))
			}
			out = append(out, r)
		}
	}
	return out
}
