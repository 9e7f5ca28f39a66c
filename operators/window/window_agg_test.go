package window

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/internal/metrics"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/internal/kit"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// The window operators are checked against a straightforward model: for
// every row that is not late, add it to each window that holds it and
// has not fired yet (enumerated directly, without slices); a window
// fires when the watermark reaches its window_time. The model knows
// nothing of slices, timers or state.

const sec = int64(1e9)

// winRow is a test input row: key, value, time.
func winRow(k, v int64, ts int64) types.Row {
	return types.Row{types.NewInt(k), types.NewInt(v), types.NewTimestamp(ts)}
}

var winAggs = []operators.AggCall{
	{Kind: operators.AggCountStar, ResultType: types.TypeBigInt.WithNotNull(true)},
	{Kind: operators.AggSum, Arg: 1, ArgType: types.TypeBigInt, ResultType: types.TypeBigInt},
	{Kind: operators.AggMax, Arg: 1, ArgType: types.TypeBigInt, ResultType: types.TypeBigInt},
	{Kind: operators.AggCount, Arg: 1, Distinct: true, ArgType: types.TypeBigInt, ResultType: types.TypeBigInt.WithNotNull(true)},
}

var winOut = []WindowOutCol{{Kind: WinKey}, {Kind: WinStart}, {Kind: WinEnd}, {Kind: WinTime}}

// winModel accumulates what each window should hold.
type winModel struct {
	rows map[string][]int64 // "k|start|end" -> values
	late int
}

func (m *winModel) add(spec WindowSpec, k, v, ts, wm int64) {
	var wins [][2]int64
	switch spec.Kind {
	case WindowTumble:
		s := floorDiv(ts, spec.Size) * spec.Size
		wins = append(wins, [2]int64{s, s + spec.Size})
	case WindowHop:
		// Every start that is a multiple of the slide with start <= ts < start+size.
		for s := floorDiv(ts-spec.Size, spec.Slide)*spec.Slide - spec.Slide; s <= ts; s += spec.Slide {
			if s <= ts && ts < s+spec.Size {
				wins = append(wins, [2]int64{s, s + spec.Size})
			}
		}
	case WindowCumulate:
		s := floorDiv(ts, spec.Size) * spec.Size
		for e := s + spec.Slide; e <= s+spec.Size; e += spec.Slide {
			if ts < e {
				wins = append(wins, [2]int64{s, e})
			}
		}
	}
	open := 0
	for _, w := range wins {
		if w[1]-WindowTimeOffset > wm {
			open++
			key := fmt.Sprintf("%d|%d|%d", k, w[0], w[1])
			m.rows[key] = append(m.rows[key], v)
		}
	}
	if open == 0 {
		m.late++
	}
}

func (m *winModel) results() []string {
	var out []string
	for key, vs := range m.rows {
		var k, s, e int64
		fmt.Sscanf(key, "%d|%d|%d", &k, &s, &e)
		sum, mx := int64(0), vs[0]
		distinct := map[int64]bool{}
		for _, v := range vs {
			sum += v
			mx = max(mx, v)
			distinct[v] = true
		}
		row := types.Row{types.NewInt(k), types.NewTimestamp(s), types.NewTimestamp(e), types.NewTimestamp(e - WindowTimeOffset),
			types.NewInt(int64(len(vs))), types.NewInt(sum), types.NewInt(mx), types.NewInt(int64(len(distinct)))}
		out = append(out, types.FormatRow(row, nil, ", "))
	}
	sort.Strings(out)
	return out
}

type winCollector struct {
	t    *testing.T
	rows []string
}

func (c *winCollector) Emit(ch *dyntable.Chunk) {
	for _, x := range ch.Changes {
		if x.Kind != dyntable.Insert {
			c.t.Fatalf("window output must be insert-only, got %s", x.Kind)
		}
		c.rows = append(c.rows, types.FormatRow(x.Row, nil, ", "))
	}
}

func (*winCollector) EmitWatermark(int64) error { return nil }

// runWindowOp drives op through rows with a watermark of max(ts) - delay
// after each chunk of 1..3 rows, then the final watermark.
func runWindowOp(t *testing.T, op dataflow.Operator, ctx *dataflow.OpContext, rows []types.Row, delay int64, r *rand.Rand, model func(row types.Row, wm int64)) []string {
	t.Helper()
	if err := op.Open(ctx); err != nil {
		t.Fatal(err)
	}
	out := &winCollector{t: t}
	wm, maxTs := int64(dataflow.MinWatermark), int64(dataflow.MinWatermark)
	for i := 0; i < len(rows); {
		n := min(1+r.IntN(40), len(rows)-i) // big chunks: rows of one key and slice combine
		c := &dyntable.Chunk{}
		for _, row := range rows[i : i+n] {
			c.Append(dyntable.Insert, row)
			if model != nil {
				model(row, wm)
			}
			maxTs = max(maxTs, row[2].Timestamp())
		}
		i += n
		if err := op.ProcessChunk(0, c, out); err != nil {
			t.Fatal(err)
		}
		if maxTs-delay > wm {
			wm = maxTs - delay
			if err := op.ProcessWatermark(wm, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := op.ProcessWatermark(dataflow.MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(out); err != nil {
		t.Fatal(err)
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out.rows)
	return out.rows
}

// winRandomRows draws rows in roughly increasing time with some
// disorder, so that some are late under small delays.
func winRandomRows(r *rand.Rand, n int) []types.Row {
	var rows []types.Row
	base := int64(1_700_000_000) * sec
	for i := 0; i < n; i++ {
		ts := base + int64(i)*sec/2 - int64(r.IntN(8))*sec + int64(r.IntN(1000))*1e6
		rows = append(rows, winRow(int64(r.IntN(3)), int64(r.IntN(5)), ts))
	}
	return rows
}

func TestWindowAggMatchesModel(t *testing.T) {
	specs := []WindowSpec{
		{Kind: WindowTumble, Size: 5 * sec},
		{Kind: WindowHop, Size: 10 * sec, Slide: 2 * sec},
		{Kind: WindowHop, Size: 6 * sec, Slide: 4 * sec}, // slices of gcd 2 s
		{Kind: WindowCumulate, Size: 12 * sec, Slide: 3 * sec},
	}
	totalLate := 0
	defer func() {
		if totalLate == 0 {
			t.Errorf("no input had late rows: the lateness rule went untested")
		}
	}()
	for _, spec := range specs {
		for _, delay := range []int64{0, 2 * sec, 10 * sec} {
			for seed := uint64(1); seed <= 5; seed++ {
				t.Run(fmt.Sprintf("%s/delay%d/seed%d", spec, delay/sec, seed), func(t *testing.T) {
					r := rand.New(rand.NewPCG(seed, 7))
					rows := winRandomRows(r, 200)
					lateBefore := lateCounter(t)
					m := &winModel{rows: map[string][]int64{}}
					op, err := NewWindowAgg(WindowAggSpec{Window: spec, TimeCol: 2, Keys: []int{0}, Aggs: winAggs, Out: winOut})
					if err != nil {
						t.Fatal(err)
					}
					ctx := joinNewCtx()
					got := runWindowOp(t, op, ctx, rows, delay, r, func(row types.Row, wm int64) {
						m.add(spec, row[0].Int(), row[1].Int(), row[2].Timestamp(), wm)
					})
					want := m.results()
					if !slices.Equal(got, want) {
						t.Fatalf("got %d windows, want %d\n%s", len(got), len(want), winDiff(got, want))
					}
					if ctx.Metrics.LateRecords() != int64(m.late) {
						t.Fatalf("late rows: got %d, want %d", ctx.Metrics.LateRecords(), m.late)
					}
					if d := lateCounter(t) - lateBefore; d < float64(m.late) {
						t.Fatalf("streamsql_late_records_dropped_total grew by %v, want at least %d", d, m.late)
					}
					totalLate += m.late
				})
			}
		}
	}
}

// TestWindowAggNoKeys checks the global (no GROUP BY key) case.
func TestWindowAggNoKeys(t *testing.T) {
	spec := WindowSpec{Kind: WindowHop, Size: 10 * sec, Slide: 5 * sec}
	op, err := NewWindowAgg(WindowAggSpec{Window: spec, TimeCol: 2, Aggs: winAggs[:2],
		Out: []WindowOutCol{{Kind: WinStart}, {Kind: WinEnd}}})
	if err != nil {
		t.Fatal(err)
	}
	// Rows at 1 s (10) and 4 s (30) share the slice [0, 5): windows
	// [-5, 5) and [0, 10) each count 2 rows, sum 40; 12 s (5) is in
	// [5, 15) and [10, 20).
	rows := []types.Row{winRow(0, 10, 1*sec), winRow(0, 30, 4*sec), winRow(0, 5, 12*sec)}
	got := runWindowOp(t, op, joinNewCtx(), rows, 0, rand.New(rand.NewPCG(1, 1)), nil)
	ts := func(s int64) string { return types.Format(types.NewTimestamp(s*sec), types.Type{}) }
	want := []string{
		ts(-5) + ", " + ts(5) + ", 2, 40",
		ts(0) + ", " + ts(10) + ", 2, 40",
		ts(5) + ", " + ts(15) + ", 1, 5",
		ts(10) + ", " + ts(20) + ", 1, 5",
	}
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("\n got  %v\n want %v", got, want)
	}
}

// lateCounter reads streamsql_late_records_dropped_total.
func lateCounter(t *testing.T) float64 {
	var m dto.Metric
	if err := metrics.LateRecordsDropped.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// winDiff lists the rows only one side has.
func winDiff(got, want []string) string {
	var out []string
	count := map[string]int{}
	for _, g := range got {
		count[g]++
	}
	for _, w := range want {
		count[w]--
	}
	for r, n := range count {
		if n > 0 {
			out = append(out, fmt.Sprintf("extra x%d: %s", n, r))
		} else if n < 0 {
			out = append(out, fmt.Sprintf("missing x%d: %s", -n, r))
		}
	}
	sort.Strings(out)
	if len(out) > 10 {
		out = append(out[:10], "...")
	}
	return strings.Join(out, "\n")
}

var _ = state.NewMemoryStore

// chunkCollector records each chunk's size and its rows' window ends.
type chunkCollector struct {
	sizes []int
	ends  []int64
	count int64
}

func (c *chunkCollector) Emit(ch *dyntable.Chunk) {
	c.sizes = append(c.sizes, len(ch.Changes))
	for _, x := range ch.Changes {
		c.ends = append(c.ends, x.Row[1].Timestamp())
		c.count += x.Row[2].Int()
	}
}

func (*chunkCollector) EmitWatermark(int64) error { return nil }

// TestWindowAggStreamsLargeFirings checks that a watermark closing the
// windows of many keys at once streams their rows in chunks of at most
// kit.MaxChunk, in window order, instead of gathering them into one: 10,000
// keys with one row each at 1 s, in HOP 10 s / 2 s windows, are 50,000
// rows (windows ending at 2, 4, 6, 8 and 10 s), all fired by the end of
// input.
func TestWindowAggStreamsLargeFirings(t *testing.T) {
	const keys = 10_000
	spec := WindowSpec{Kind: WindowHop, Size: 10 * sec, Slide: 2 * sec}
	op, err := NewWindowAgg(WindowAggSpec{Window: spec, TimeCol: 2, Keys: []int{0}, Aggs: winAggs[:1],
		Out: []WindowOutCol{{Kind: WinKey}, {Kind: WinEnd}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(joinNewCtx()); err != nil {
		t.Fatal(err)
	}
	out := &chunkCollector{}
	c := &dyntable.Chunk{}
	for k := int64(0); k < keys; k++ {
		c.Append(dyntable.Insert, winRow(k, 1, 1*sec))
	}
	if err := op.ProcessChunk(0, c, out); err != nil {
		t.Fatal(err)
	}
	if len(out.sizes) != 0 {
		t.Fatalf("rows emitted before any window closed: %v", out.sizes)
	}
	if err := op.ProcessWatermark(dataflow.MaxWatermark, out); err != nil {
		t.Fatal(err)
	}
	if err := op.Close(); err != nil {
		t.Fatal(err)
	}
	if len(out.ends) != 5*keys || out.count != 5*keys {
		t.Fatalf("got %d rows counting %d, want %d rows of count 1", len(out.ends), out.count, 5*keys)
	}
	for i, n := range out.sizes {
		if n > kit.MaxChunk {
			t.Fatalf("chunk %d holds %d rows, more than %d", i, n, kit.MaxChunk)
		}
	}
	if min := (5*keys + kit.MaxChunk - 1) / kit.MaxChunk; len(out.sizes) != min {
		t.Fatalf("%d chunks, want %d full ones and the rest", len(out.sizes), min)
	}
	for i := 1; i < len(out.ends); i++ {
		if out.ends[i] < out.ends[i-1] {
			t.Fatalf("row %d ends its window at %d, before row %d's %d", i, out.ends[i], i-1, out.ends[i-1])
		}
	}
	if out.ends[0] != 2*sec || out.ends[len(out.ends)-1] != 10*sec {
		t.Fatalf("windows end from %d to %d, want 2 s to 10 s", out.ends[0], out.ends[len(out.ends)-1])
	}
}
