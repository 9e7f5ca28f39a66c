package engine_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/engine/enginetest"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// sdRow is a row of TestSplitDistinctRandomized's input: k, x and y,
// each NULL when its flag is false.
type sdRow struct {
	k, x, y    int64
	kn, xn, yn bool // non-NULL
}

func (r sdRow) sql() string {
	v := func(i int64, ok bool) string {
		if !ok {
			return "CAST(NULL AS BIGINT)"
		}
		return strconv.FormatInt(i, 10)
	}
	return v(r.k, r.kn) + ", " + v(r.x, r.xn) + ", " + v(r.y, r.yn)
}

// sdAgg is one aggregate of the randomized queries: its SQL and a
// brute-force computation over a group's live rows, rendered as the
// engine renders it.
type sdAgg struct {
	sql      string
	distinct bool
	eval     func(rows []sdRow) string
}

func sdNull(s string, ok bool) string {
	if !ok {
		return "NULL"
	}
	return s
}

// countDistinct and sumDistinct are COUNT(DISTINCT) and SUM(DISTINCT)
// of a column over the rows that pass a filter.
func countDistinct(col func(sdRow) (int64, bool), pass func(sdRow) bool) func([]sdRow) string {
	return func(rows []sdRow) string {
		seen := map[int64]bool{}
		for _, r := range rows {
			if v, ok := col(r); ok && pass(r) {
				seen[v] = true
			}
		}
		return strconv.Itoa(len(seen))
	}
}

func sumDistinct(col func(sdRow) (int64, bool), pass func(sdRow) bool) func([]sdRow) string {
	return func(rows []sdRow) string {
		seen := map[int64]bool{}
		var sum int64
		for _, r := range rows {
			if v, ok := col(r); ok && pass(r) && !seen[v] {
				seen[v] = true
				sum += v
			}
		}
		return sdNull(strconv.FormatInt(sum, 10), len(seen) > 0)
	}
}

func colX(r sdRow) (int64, bool) { return r.x, r.xn }
func colY(r sdRow) (int64, bool) { return r.y, r.yn }
func always(sdRow) bool          { return true }

var sdAggs = []sdAgg{
	{"COUNT(DISTINCT x)", true, countDistinct(colX, always)},
	{"COUNT(DISTINCT x) FILTER (WHERE y > 0)", true, countDistinct(colX, func(r sdRow) bool { return r.yn && r.y > 0 })},
	{"SUM(DISTINCT y)", true, sumDistinct(colY, always)},
	{"SUM(DISTINCT x) FILTER (WHERE y < 2)", true, sumDistinct(colX, func(r sdRow) bool { return r.yn && r.y < 2 })},
	{"COUNT(DISTINCT y) FILTER (WHERE x IS NULL)", true, countDistinct(colY, func(r sdRow) bool { return !r.xn })},
	{"COUNT(*)", false, func(rows []sdRow) string { return strconv.Itoa(len(rows)) }},
	{"COUNT(*) FILTER (WHERE x > 4)", false, func(rows []sdRow) string {
		n := 0
		for _, r := range rows {
			if r.xn && r.x > 4 {
				n++
			}
		}
		return strconv.Itoa(n)
	}},
	{"SUM(y)", false, func(rows []sdRow) string {
		var sum int64
		n := 0
		for _, r := range rows {
			if r.yn {
				sum += r.y
				n++
			}
		}
		return sdNull(strconv.FormatInt(sum, 10), n > 0)
	}},
	{"MIN(x)", false, func(rows []sdRow) string {
		var m int64
		ok := false
		for _, r := range rows {
			if r.xn && (!ok || r.x < m) {
				m, ok = r.x, true
			}
		}
		return sdNull(strconv.FormatInt(m, 10), ok)
	}},
	{"MAX(y)", false, func(rows []sdRow) string {
		var m int64
		ok := false
		for _, r := range rows {
			if r.yn && (!ok || r.y > m) {
				m, ok = r.y, true
			}
		}
		return sdNull(strconv.FormatInt(m, 10), ok)
	}},
}

// TestSplitDistinctRandomized runs random aggregations with COUNT and
// SUM DISTINCT (with and without FILTER, mixed with other aggregates,
// with and without GROUP BY) over random changelogs (insert-only, or
// with -D and -U/+U of live rows), with split distinct aggregation off
// and on (1, 2, 3 or 16 buckets), with and without mini-batch, at
// parallelism 1 and 2. The materialized result must equal a brute-force
// computation over the live rows of each group; the values source
// applies the changelog strictly (a retraction of a row that is not
// there fails the query).
func TestSplitDistinctRandomized(t *testing.T) {
	seeds := 48
	if testing.Short() {
		seeds = 12
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		r := rand.New(rand.NewPCG(seed, 12))
		retracts := seed%2 == 0
		groupBy := seed%3 != 0
		// The aggregates: at least one distinct.
		var aggs []sdAgg
		for _, i := range r.Perm(len(sdAggs))[:1+r.IntN(5)] {
			aggs = append(aggs, sdAggs[i])
		}
		if !slices.ContainsFunc(aggs, func(a sdAgg) bool { return a.distinct }) {
			aggs = append(aggs, sdAggs[r.IntN(5)])
		}
		// The input changelog and the live rows it leaves.
		var live []sdRow
		var changes []string
		for n := 10 + r.IntN(60); n > 0; n-- {
			if retracts && len(live) > 0 && r.IntN(4) == 0 {
				i := r.IntN(len(live))
				old := live[i]
				live = append(live[:i:i], live[i+1:]...)
				if r.IntN(2) == 0 {
					changes = append(changes, "('-D', "+old.sql()+")")
					continue
				}
				nu := sdRandomRow(r)
				if groupBy { // an update keeps its key
					nu.k, nu.kn = old.k, old.kn
				}
				live = append(live, nu)
				changes = append(changes, "('-U', "+old.sql()+")", "('+U', "+nu.sql()+")")
				continue
			}
			nu := sdRandomRow(r)
			live = append(live, nu)
			if retracts {
				changes = append(changes, "('+I', "+nu.sql()+")")
			} else {
				changes = append(changes, "("+nu.sql()+")")
			}
		}
		want := sdExpected(live, aggs, groupBy)
		var sel []string
		if groupBy {
			sel = append(sel, "k")
		}
		for _, a := range aggs {
			sel = append(sel, a.sql)
		}
		query := "SELECT " + strings.Join(sel, ", ") + " FROM t"
		if groupBy {
			query += " GROUP BY k"
		}
		mode := "insert-only"
		if retracts {
			mode = "all"
		}
		setup := "CREATE TABLE t (k BIGINT, x BIGINT, y BIGINT) WITH ('connector' = 'values', 'changelog-mode' = '" + mode + "');\n" +
			"INSERT INTO t VALUES " + strings.Join(changes, ", ") + ";\n"
		for _, v := range []struct {
			name string
			sets []string
		}{
			{"off", nil},
			{"split", []string{"table.optimizer.distinct-agg.split.enabled=true",
				"table.optimizer.distinct-agg.split.bucket-num=" + strconv.Itoa([]int{1, 2, 3, 16}[r.IntN(4)])}},
			{"split+mini-batch", []string{"table.optimizer.distinct-agg.split.enabled=true",
				"table.optimizer.distinct-agg.split.bucket-num=" + strconv.Itoa([]int{1, 2, 3, 16}[r.IntN(4)]),
				"table.exec.mini-batch.enabled=true", "table.exec.mini-batch.allow-latency=1h",
				"table.exec.mini-batch.size=" + strconv.Itoa(1+r.IntN(20))}},
		} {
			par := 1 + r.IntN(2)
			name := fmt.Sprintf("seed=%d/%s/par=%d", seed, v.name, par)
			t.Run(name, func(t *testing.T) {
				got := sdRun(t, setup, query, par, v.sets)
				if !slices.Equal(got, want) {
					t.Fatalf("%s\n%s\ngot:\n  %s\nwant:\n  %s", query, v.sets, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
				}
			})
		}
	}
}

func sdRandomRow(r *rand.Rand) sdRow {
	return sdRow{k: int64(r.IntN(4)), kn: r.IntN(8) != 0, x: int64(r.IntN(10)), xn: r.IntN(6) != 0, y: int64(r.IntN(10) - 3), yn: r.IntN(6) != 0}
}

// sdExpected is the brute force: one row per key with live rows (one row
// for all of them without GROUP BY, none when nothing is live), sorted.
func sdExpected(live []sdRow, aggs []sdAgg, groupBy bool) []string {
	groups := map[string][]sdRow{}
	for _, r := range live {
		k := ""
		if groupBy {
			k = sdNull(strconv.FormatInt(r.k, 10), r.kn)
		}
		groups[k] = append(groups[k], r)
	}
	var out []string
	for k, rows := range groups {
		var f []string
		if groupBy {
			f = append(f, k)
		}
		for _, a := range aggs {
			f = append(f, a.eval(rows))
		}
		out = append(out, strings.Join(f, " "))
	}
	slices.Sort(out)
	return out
}

// sdRun runs the query in a fresh session and returns its materialized
// rows, sorted.
func sdRun(t *testing.T, setup, query string, par int, sets []string) []string {
	t.Helper()
	s := engine.NewSession(io.Discard)
	sets = append([]string{"parallelism.default=" + strconv.Itoa(par)}, sets...)
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		if err := s.Conf.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	enginetest.Exec(t, s, setup)
	stmts, err := parser.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Execute(context.Background(), stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	ts := make([]types.Type, len(res.Query.Columns))
	for i, c := range res.Query.Columns {
		ts[i] = c.Type
	}
	table := dyntable.NewTable(nil)
	if err := res.Query.Run(context.Background(), func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			if err := table.Apply(ch); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, row := range table.Rows() {
		out = append(out, types.FormatRow(row, ts, " "))
	}
	slices.Sort(out)
	return out
}
