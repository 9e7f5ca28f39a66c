package jdbcscan

import (
	"context"
	"errors"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// The ranges are worked out by hand from the formula in Split's comment.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		lo, hi int64
		n      int
		want   []Range
	}{
		{1, 10, 3, []Range{{1, 3}, {4, 6}, {7, 10}}},
		{0, 99, 4, []Range{{0, 24}, {25, 49}, {50, 74}, {75, 99}}},
		{0, 1, 5, []Range{{0, 0}, {1, 1}}}, // fewer values than partitions
		{7, 7, 1, []Range{{7, 7}}},
		{-5, 4, 2, []Range{{-5, -1}, {0, 4}}},
		{math.MinInt64, math.MaxInt64, 2, []Range{{math.MinInt64, -1}, {0, math.MaxInt64}}},
		{5, 4, 2, nil},
	} {
		if got := Split(tc.lo, tc.hi, tc.n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Split(%d, %d, %d) = %v, want %v", tc.lo, tc.hi, tc.n, got, tc.want)
		}
	}
}

func table(opts map[string]string) *connectors.Table {
	return &connectors.Table{Name: "t", Columns: []connectors.Column{
		{Name: "id", Type: types.TypeBigInt}, {Name: "grp", Type: types.TypeInt}, {Name: "name", Type: types.TypeString}},
		PrimaryKey: []int{0}, Options: opts}
}

func partitioned(col string) map[string]string {
	return map[string]string{"scan.partition.column": col, "scan.partition.num": "3",
		"scan.partition.lower-bound": "-10", "scan.partition.upper-bound": "20"}
}

func TestParsePlan(t *testing.T) {
	p, err := ParsePlan(table(partitioned("GRP")))
	if err != nil || p.Column != 1 || p.Unique || !p.Fixed || p.Num != 3 || p.Lower != -10 || p.Upper != 20 || p.PageRows != DefaultPageRows {
		t.Fatalf("%+v %v", p, err)
	}
	o := partitioned("id")
	o["scan.fetch-size"] = "50"
	if p, err = ParsePlan(table(o)); err != nil || p.Column != 0 || !p.Unique || p.PageRows != 50 {
		t.Fatalf("%+v %v", p, err)
	}
	if p, err = ParsePlan(table(map[string]string{"scan.parallelism": "4"})); err != nil || p.Column != 0 || !p.Unique || p.Fixed || p.Parallelism != 4 {
		t.Fatalf("by the key: %+v %v", p, err)
	}
	nokey := table(map[string]string{})
	nokey.PrimaryKey = nil
	if p, err = ParsePlan(nokey); err != nil || p.Column != -1 {
		t.Fatalf("no key: %+v %v", p, err)
	}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"scan.partition.column": "grp", "scan.partition.num": "2"}, "go together: scan.partition.column, scan.partition.num given without the others"},
		{partitioned("nope"), "the table has no column 'nope'"},
		{partitioned("name"), "column 'name' is STRING; partitions are ranges of an integer column"},
		{func() map[string]string { o := partitioned("grp"); o["scan.partition.lower-bound"] = "30"; return o }(), "(30) is above 'scan.partition.upper-bound' (20)"},
		{func() map[string]string { o := partitioned("grp"); o["scan.partition.upper-bound"] = "1e3"; return o }(), "'scan.partition.upper-bound' must be an integer, got '1e3'"},
		{func() map[string]string { o := partitioned("grp"); o["scan.partition.num"] = "0"; return o }(), "'scan.partition.num' must be a positive integer"},
	} {
		if _, err := ParsePlan(table(tc.opts)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.opts, err, tc.want)
		}
	}
	nokey.Options = map[string]string{"scan.parallelism": "2"}
	if _, err := ParsePlan(nokey); err == nil || !strings.Contains(err.Error(), "needs 'scan.partition.column'") {
		t.Errorf("parallelism without a way to split: %v", err)
	}
}

// memReader serves rows (id, grp) from memory, as a database would
// answer the queries, and counts them.
type memReader struct {
	rows    []types.Row
	queries []Query
}

func (m *memReader) Open(context.Context) error { return nil }
func (m *memReader) Close() error               { return nil }
func (m *memReader) MinMax(_ context.Context, col int) (int64, int64, bool, error) {
	lo, hi, ok := int64(math.MaxInt64), int64(math.MinInt64), false
	for _, r := range m.rows {
		if !r[col].IsNull() {
			lo, hi, ok = min(lo, r[col].Int()), max(hi, r[col].Int()), true
		}
	}
	return lo, hi, ok, nil
}

func (m *memReader) Read(_ context.Context, q Query, emit func(types.Row) error) error {
	m.queries = append(m.queries, q)
	var sel []types.Row
	for _, r := range m.rows {
		if q.Column < 0 || (!r[q.Column].IsNull() && r[q.Column].Int() >= q.Lo && r[q.Column].Int() <= q.Hi) {
			sel = append(sel, r)
		}
	}
	if q.Limit > 0 {
		sort.Slice(sel, func(i, j int) bool { return sel[i][q.Column].Int() < sel[j][q.Column].Int() })
		sel = sel[:min(len(sel), q.Limit)]
	}
	for _, r := range sel {
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

// output keeps the ids emitted and the position (or the refusal) taken
// inside each Emit; it fails Emit number failAt, as a crash would.
type output struct {
	dataflow.NoControl
	src    *Source
	ids    []int64
	pos    [][]byte
	errs   []error
	failAt int
}

var errCrash = errors.New("crash")

func (o *output) Emit(c *dyntable.Chunk) error {
	for _, ch := range c.Changes {
		o.ids = append(o.ids, ch.Row[0].Int())
	}
	p, err := o.src.SnapshotPosition(0)
	o.pos, o.errs = append(o.pos, p), append(o.errs, err)
	if len(o.pos) == o.failAt {
		return errCrash
	}
	return nil
}
func (o *output) EmitWatermark(int64) error { return nil }

// rows: ids 1..n, grp = id % 40 - 15 (so -15..24), NULL for id % 97 == 0.
func rows(n int) []types.Row {
	var out []types.Row
	for i := 1; i <= n; i++ {
		g := types.NewInt(int64(i%40 - 15))
		if i%97 == 0 {
			g = types.NullValue
		}
		out = append(out, types.Row{types.NewInt(int64(i)), g, types.NewString("x")})
	}
	return out
}

func run(t *testing.T, plan Plan, m *memReader, subtask, par int, restore []byte, failAt int) *output {
	t.Helper()
	s := NewSource("t", plan, m, subtask, par)
	if restore != nil {
		if err := s.RestorePosition(restore); err != nil {
			t.Fatal(err)
		}
	}
	o := &output{src: s, failAt: failAt}
	if err := s.Run(context.Background(), o); err != nil && !errors.Is(err, errCrash) {
		t.Fatal(err)
	}
	return o
}

// Partitions of a non-key column: the subtasks together read exactly
// the rows within the bounds, each once (the expectation filters the
// rows directly); inside a partition a position is refused, and after a
// crash a restore from the last saved position reads the partitions
// after it and no row of a finished one again.
func TestSourcePartitionsOfAColumn(t *testing.T) {
	m := &memReader{rows: rows(5000)}
	plan, err := ParsePlan(table(partitioned("grp"))) // [-10, 20] in 3: [-10, -1] [0, 9] [10, 20]
	if err != nil {
		t.Fatal(err)
	}
	var want, got []int64
	for _, r := range m.rows {
		if !r[1].IsNull() && r[1].Int() >= -10 && r[1].Int() <= 20 {
			want = append(want, r[0].Int())
		}
	}
	for sub := 0; sub < 2; sub++ {
		got = append(got, run(t, plan, m, sub, 2, nil, 0).ids...)
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read %d rows, want %d", len(got), len(want))
	}
	// Subtask 0 has partitions 0 and 2 ([-10, -1] and [10, 20]), of more
	// than 1024 rows each: chunks of 1024 and the rest. It crashes on its
	// third emit, inside partition 2.
	o := run(t, plan, m, 0, 2, nil, 3)
	if o.errs[0] == nil || !strings.Contains(o.errs[0].Error(), "inside a partition of a column that is not the primary key") || o.errs[1] != nil || o.errs[2] == nil {
		t.Fatalf("positions inside and after partition 0: %v", o.errs)
	}
	after0 := len(o.ids) - 1024 // the rows of partition 0
	r := run(t, plan, m, 0, 2, o.pos[1], 0)
	all := append(o.ids[:after0], r.ids...)
	var want0 []int64
	for _, id := range want {
		g := m.rows[id-1][1].Int()
		if g <= -1 || g >= 10 {
			want0 = append(want0, id)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	if !reflect.DeepEqual(all, want0) {
		for i := range all {
			if all[i] != want0[i] {
				t.Fatalf("after the restore: %d rows, want %d; first difference at %d: %d vs %d", len(all), len(want0), i, all[i], want0[i])
			}
		}
	}
}

// Partitions of the primary key are read in pages, in key order, and a
// restore from any position goes on after the last key emitted.
func TestSourcePagesOfTheKey(t *testing.T) {
	m := &memReader{rows: rows(3000)}
	plan, err := ParsePlan(table(map[string]string{"scan.fetch-size": "700"})) // MIN..MAX of id over the subtasks
	if err != nil {
		t.Fatal(err)
	}
	o := run(t, plan, m, 1, 2, nil, 2) // ids 1501..3000; crash on the second emit
	if o.errs[0] != nil || o.errs[1] != nil {
		t.Fatal(o.errs)
	}
	r := run(t, plan, m, 1, 2, o.pos[1], 0)
	all := append(o.ids, r.ids...)
	for i, id := range all {
		if id != int64(1501+i) {
			t.Fatalf("row %d is id %d: a gap or a duplicate (%d rows)", i, id, len(all))
		}
	}
	if len(all) != 1500 {
		t.Fatalf("%d rows, want 1500", len(all))
	}
	for _, q := range m.queries {
		if q.Limit != 700 || q.Column != 0 {
			t.Fatalf("query %+v is not a page of the key", q)
		}
	}
}
