package repl

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func row(k string, v int64) types.Row {
	return types.Row{types.NewString(k), types.NewInt(v)}
}

func rowsText(rows []types.Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, types.FormatRow(r, nil, ","))
	}
	return out
}

// An update replaces its row where it stands, keyed or not; a delete
// removes it; an insert goes at the end.
func TestResultSetUpdatesInPlace(t *testing.T) {
	for _, key := range [][]int{{0}, nil} {
		rs := newResultSet(key, 0)
		for _, ch := range []dyntable.Change{
			{Kind: dyntable.Insert, Row: row("a", 1)},
			{Kind: dyntable.Insert, Row: row("b", 1)},
			{Kind: dyntable.Insert, Row: row("c", 1)},
			{Kind: dyntable.UpdateBefore, Row: row("a", 1)},
			{Kind: dyntable.UpdateAfter, Row: row("a", 2)},
			{Kind: dyntable.Delete, Row: row("b", 1)},
			{Kind: dyntable.Insert, Row: row("d", 1)},
			{Kind: dyntable.UpdateBefore, Row: row("c", 1)},
			{Kind: dyntable.UpdateAfter, Row: row("c", 5)},
		} {
			rs.apply(ch)
		}
		got := strings.Join(rowsText(rs.window(0, 10)), " ")
		if want := "a,2 c,5 d,1"; got != want {
			t.Errorf("key %v: rows %q, want %q", key, got, want)
		}
		if rs.len() != 3 || rs.changes != 9 || rs.anomalies != 0 {
			t.Errorf("key %v: len %d changes %d anomalies %d", key, rs.len(), rs.changes, rs.anomalies)
		}
		if got := strings.Join(rowsText(rs.window(1, 1)), " "); got != "c,5" {
			t.Errorf("key %v: window(1, 1) = %q", key, got)
		}
	}
}

// Whatever the changelog, the rows are those dyntable.Table materializes,
// and a row that is only updated never moves.
func TestResultSetMatchesDyntable(t *testing.T) {
	for _, keyed := range []bool{true, false} {
		rng := rand.New(rand.NewPCG(1, 2))
		var key []int
		if keyed {
			key = []int{0}
		}
		rs := newResultSet(key, 0)
		ref := dyntable.NewTable(key)
		cur := map[string]int64{} // key -> value, for a consistent changelog
		firstPos := map[string]int{}
		for i := 0; i < 20000; i++ {
			k := string(rune('A' + rng.IntN(50)))
			var chs []dyntable.Change
			v, ok := cur[k]
			switch {
			case !ok:
				cur[k] = rng.Int64N(5)
				chs = append(chs, dyntable.Change{Kind: dyntable.Insert, Row: row(k, cur[k])})
			case rng.IntN(10) == 0:
				delete(cur, k)
				delete(firstPos, k) // it may come back, at the end
				chs = append(chs, dyntable.Change{Kind: dyntable.Delete, Row: row(k, v)})
			default:
				cur[k] = v + 1
				chs = append(chs, dyntable.Change{Kind: dyntable.UpdateBefore, Row: row(k, v)},
					dyntable.Change{Kind: dyntable.UpdateAfter, Row: row(k, v+1)})
			}
			for _, ch := range chs {
				rs.apply(ch)
				if err := ref.Apply(ch); err != nil {
					t.Fatal(err)
				}
			}
			if i%997 == 0 {
				got, want := rowsText(rs.window(0, 1000)), rowsText(ref.Rows())
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("keyed=%v step %d: rows %v, want %v", keyed, i, got, want)
				}
			}
			// Positions: a key's row stays where it was first seen until deleted.
			if i%101 == 0 {
				for pos, r := range rs.window(0, 1000) {
					k := types.Format(r[0], types.TypeString)
					if p, ok := firstPos[k]; ok && p < pos {
						// Only deletes before it may move it up; never down.
						t.Fatalf("keyed=%v: row %s moved down from %d to %d", keyed, k, p, pos)
					}
					firstPos[k] = pos
				}
			}
		}
		if rs.anomalies != 0 {
			t.Errorf("keyed=%v: %d anomalies", keyed, rs.anomalies)
		}
	}
}

func TestResultSetAnomalies(t *testing.T) {
	rs := newResultSet(nil, 0)
	rs.apply(dyntable.Change{Kind: dyntable.Delete, Row: row("x", 1)})
	if rs.anomalies != 1 || rs.len() != 0 {
		t.Fatalf("anomalies %d len %d", rs.anomalies, rs.len())
	}
}

// Past its limit the set drops its oldest rows (the first listed), and a
// retraction of a dropped row is not an anomaly.
func TestResultSetDropsOldestPastTheLimit(t *testing.T) {
	for _, key := range [][]int{{0}, nil} {
		rs := newResultSet(key, 3)
		for i, k := range []string{"a", "b", "c", "d", "e"} {
			rs.apply(dyntable.Change{Kind: dyntable.Insert, Row: row(k, int64(i))})
		}
		// An update of a kept row stays in place and drops nothing.
		rs.apply(dyntable.Change{Kind: dyntable.UpdateBefore, Row: row("d", 3)})
		rs.apply(dyntable.Change{Kind: dyntable.UpdateAfter, Row: row("d", 30)})
		// A retraction of a dropped row.
		rs.apply(dyntable.Change{Kind: dyntable.Delete, Row: row("a", 0)})
		got := rowsText(rs.window(0, 10))
		if want := []string{"c,2", "d,30", "e,4"}; !slices.Equal(got, want) || rs.len() != 3 || rs.dropped != 2 || rs.anomalies != 0 {
			t.Fatalf("key %v: %v (len %d, dropped %d, anomalies %d), want %v", key, got, rs.len(), rs.dropped, rs.anomalies, want)
		}
		// Many more: the set stays at its limit, in arrival order.
		for i := 0; i < 1000; i++ {
			rs.apply(dyntable.Change{Kind: dyntable.Insert, Row: row("x"+string(rune('a'+i%26))+string(rune('a'+i/26)), int64(i))})
		}
		if got := rowsText(rs.window(0, 10)); rs.len() != 3 || rs.dropped != 1002 || len(got) != 3 || !strings.HasSuffix(got[2], ",999") {
			t.Fatalf("key %v: %v (len %d, dropped %d)", key, got, rs.len(), rs.dropped)
		}
	}
}
