package window

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Session windows and window ranks against straightforward models, and
// every window operator through a Pebble snapshot restored at another
// parallelism.

// sessModel keeps each key's open sessions as plain lists.
type sessModel struct {
	gap, wm int64
	open    map[int64][]*sessM
	out     []string
	late    int
}

type sessM struct {
	start, end int64
	vals       []int64
}

func (m *sessModel) add(k, v, ts int64) {
	start, end := ts, ts+m.gap
	var keep, merged []*sessM
	for _, s := range m.open[k] {
		if s.start <= end && s.end >= start {
			merged = append(merged, s)
			start, end = min(start, s.start), max(end, s.end)
		} else {
			keep = append(keep, s)
		}
	}
	if end-WindowTimeOffset <= m.wm {
		m.late++
		return
	}
	ns := &sessM{start: start, end: end, vals: []int64{v}}
	for _, s := range merged {
		ns.vals = append(ns.vals, s.vals...)
	}
	m.open[k] = append(keep, ns)
}

func (m *sessModel) advance(wm int64) {
	m.wm = wm
	for k, ss := range m.open {
		var keep []*sessM
		for _, s := range ss {
			if s.end-WindowTimeOffset <= wm {
				m.out = append(m.out, winResult(k, s.start, s.end, s.vals))
			} else {
				keep = append(keep, s)
			}
		}
		m.open[k] = keep
	}
}

// winResult formats a window row as winOut and winAggs lay it out.
func winResult(k, s, e int64, vals []int64) string {
	sum, mx := int64(0), vals[0]
	distinct := map[int64]bool{}
	for _, v := range vals {
		sum += v
		mx = max(mx, v)
		distinct[v] = true
	}
	row := types.Row{types.NewInt(k), types.NewTimestamp(s), types.NewTimestamp(e), types.NewTimestamp(e - WindowTimeOffset),
		types.NewInt(int64(len(vals))), types.NewInt(sum), types.NewInt(mx), types.NewInt(int64(len(distinct)))}
	return types.FormatRow(row, nil, ", ")
}

func TestSessionAggMatchesModel(t *testing.T) {
	merges := 0
	for _, delay := range []int64{0, 3 * sec, 20 * sec} {
		for seed := uint64(1); seed <= 6; seed++ {
			t.Run(fmt.Sprintf("delay%d/seed%d", delay/sec, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 11))
				// Sparse times so that sessions open, close and bridge.
				var rows []types.Row
				base := int64(1_700_000_000) * sec
				for i := 0; i < 150; i++ {
					ts := base + int64(i)*sec*2 - int64(r.IntN(10))*sec + int64(r.IntN(1000))*1e6
					rows = append(rows, winRow(int64(r.IntN(3)), int64(r.IntN(5)), ts))
				}
				m := &sessModel{gap: 3 * sec, wm: dataflow.MinWatermark, open: map[int64][]*sessM{}}
				op, err := NewSessionAgg(WindowAggSpec{Window: WindowSpec{Kind: WindowSession, Size: 3 * sec},
					TimeCol: 2, Keys: []int{0}, Aggs: winAggs, Out: winOut})
				if err != nil {
					t.Fatal(err)
				}
				ctx := joinNewCtx()
				got := driveWindowOps(t, []dataflow.Operator{op}, []int{0}, []*dataflow.OpContext{ctx}, rows, delay,
					func(row types.Row) {
						before := len(m.open[row[0].Int()])
						m.add(row[0].Int(), row[1].Int(), row[2].Timestamp())
						if len(m.open[row[0].Int()]) < before {
							merges++
						}
					}, m.advance)
				m.advance(dataflow.MaxWatermark)
				sort.Strings(m.out)
				if !slices.Equal(got, m.out) {
					t.Fatalf("got %d sessions, want %d\n%s", len(got), len(m.out), winDiff(got, m.out))
				}
				if ctx.Metrics.LateRecords() != int64(m.late) {
					t.Fatalf("late rows: got %d, want %d", ctx.Metrics.LateRecords(), m.late)
				}
			})
		}
	}
	if merges == 0 {
		t.Fatal("no row bridged two sessions: merging went untested")
	}
}

// driveWindowOps feeds rows one per chunk to the operator of their key's
// subtask (by key group, as a hash exchange routes them), with a
// watermark of max(ts) - delay after each, then the final watermark.
// onRow and onWatermark let a model follow along. It returns every
// emitted row, formatted and sorted.
func driveWindowOps(t *testing.T, ops []dataflow.Operator, keys []int, ctxs []*dataflow.OpContext, rows []types.Row, delay int64,
	onRow func(types.Row), onWatermark func(int64)) []string {
	t.Helper()
	for i, op := range ops {
		if ctxs[i] != nil {
			if err := op.Open(ctxs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := &winCollector{t: t}
	wm, maxTs := int64(dataflow.MinWatermark), int64(dataflow.MinWatermark)
	var kb []byte
	for _, row := range rows {
		if onRow != nil {
			onRow(row)
		}
		kb = types.EncodeKey(kb[:0], row, keys)
		op := ops[state.SubtaskFor(state.KeyGroup(kb), len(ops))]
		if err := op.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: row}}}, out); err != nil {
			t.Fatal(err)
		}
		maxTs = max(maxTs, row[2].Timestamp())
		if maxTs-delay > wm {
			wm = maxTs - delay
			for _, op := range ops {
				if err := op.ProcessWatermark(wm, out); err != nil {
					t.Fatal(err)
				}
			}
			if onWatermark != nil {
				onWatermark(wm)
			}
		}
	}
	for _, op := range ops {
		if err := op.ProcessWatermark(dataflow.MaxWatermark, out); err != nil {
			t.Fatal(err)
		}
		if err := op.Finish(out); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(out.rows)
	return out.rows
}

// rankModel buffers each window's rows and ranks them when it fires.
type rankModel struct {
	n    int
	wm   int64
	open map[[2]int64][]types.Row // (window_end, key) -> rows in arrival order
	out  []string
	late int
}

func (m *rankModel) add(row types.Row) {
	end := row[3].Timestamp()
	if end-WindowTimeOffset <= m.wm {
		m.late++
		return
	}
	k := [2]int64{end, row[0].Int()}
	m.open[k] = append(m.open[k], row)
}

func (m *rankModel) advance(wm int64) {
	m.wm = wm
	for k, rows := range m.open {
		if k[0]-WindowTimeOffset > wm {
			continue
		}
		// ORDER BY v DESC, ties by arrival: a stable sort.
		sorted := slices.Clone(rows)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i][1].Int() > sorted[j][1].Int() })
		for i := 0; i < len(sorted) && i < m.n; i++ {
			r := append(slices.Clone(sorted[i]), types.NewInt(int64(i+1)))
			m.out = append(m.out, types.FormatRow(r, nil, ", "))
		}
		delete(m.open, k)
	}
}

// rankRows draws (key, value, ts, window_end of a 5 s tumble) rows.
func rankRows(r *rand.Rand, n int) []types.Row {
	var rows []types.Row
	base := int64(1_700_000_000) * sec
	for i := 0; i < n; i++ {
		ts := base + int64(i)*sec/3 - int64(r.IntN(6))*sec
		end := floorDiv(ts, 5*sec)*5*sec + 5*sec
		rows = append(rows, types.Row{types.NewInt(int64(r.IntN(3))), types.NewInt(int64(r.IntN(8))),
			types.NewTimestamp(ts), types.NewTimestamp(end)})
	}
	return rows
}

func TestWindowRankMatchesModel(t *testing.T) {
	for _, delay := range []int64{0, 2 * sec, 10 * sec} {
		for seed := uint64(1); seed <= 4; seed++ {
			t.Run(fmt.Sprintf("delay%d/seed%d", delay/sec, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 5))
				rows := rankRows(r, 200)
				m := &rankModel{n: 3, wm: dataflow.MinWatermark, open: map[[2]int64][]types.Row{}}
				op, err := NewWindowRank(WindowRankSpec{PartitionKeys: []int{3, 0}, EndCol: 3,
					OrderBy: []operators.SortKey{{Col: 1, Desc: true}}, Limit: 3, OutputRank: true})
				if err != nil {
					t.Fatal(err)
				}
				ctx := joinNewCtx()
				got := driveWindowOps(t, []dataflow.Operator{op}, []int{3, 0}, []*dataflow.OpContext{ctx}, rows, delay,
					m.add, m.advance)
				m.advance(dataflow.MaxWatermark)
				sort.Strings(m.out)
				if !slices.Equal(got, m.out) {
					t.Fatalf("got %d rows, want %d\n%s", len(got), len(m.out), winDiff(got, m.out))
				}
				if ctx.Metrics.LateRecords() != int64(m.late) {
					t.Fatalf("late rows: got %d, want %d", ctx.Metrics.LateRecords(), m.late)
				}
			})
		}
	}
}

// TestWindowOpsRescaledRestore runs each window operator over half the
// input on Pebble state, snapshots it, restores the snapshot into two
// subtasks (state re-split by key group, through the codecs), runs the
// rest, and compares with one uninterrupted in-memory operator. A tiny
// cache makes the store encode and decode state while running too.
func TestWindowOpsRescaledRestore(t *testing.T) {
	type opCase struct {
		name string
		make func() dataflow.Operator
		keys []int
		rows func(r *rand.Rand) []types.Row
	}
	winAgg := func(spec WindowSpec) func() dataflow.Operator {
		return func() dataflow.Operator {
			op, err := NewWindowAgg(WindowAggSpec{Window: spec, TimeCol: 2, Keys: []int{0}, Aggs: winAggs, Out: winOut})
			if err != nil {
				t.Fatal(err)
			}
			return op
		}
	}
	cases := []opCase{
		{"hop", winAgg(WindowSpec{Kind: WindowHop, Size: 10 * sec, Slide: 2 * sec}), []int{0}, func(r *rand.Rand) []types.Row { return winRandomRows(r, 400) }},
		{"cumulate", winAgg(WindowSpec{Kind: WindowCumulate, Size: 12 * sec, Slide: 3 * sec}), []int{0}, func(r *rand.Rand) []types.Row { return winRandomRows(r, 400) }},
		{"session", func() dataflow.Operator {
			op, err := NewSessionAgg(WindowAggSpec{Window: WindowSpec{Kind: WindowSession, Size: 2 * sec}, TimeCol: 2, Keys: []int{0}, Aggs: winAggs, Out: winOut})
			if err != nil {
				t.Fatal(err)
			}
			return op
		}, []int{0}, func(r *rand.Rand) []types.Row { return winRandomRows(r, 400) }},
		{"rank", func() dataflow.Operator {
			op, err := NewWindowRank(WindowRankSpec{PartitionKeys: []int{3, 0}, EndCol: 3, OrderBy: []operators.SortKey{{Col: 1, Desc: true}}, Limit: 2, OutputRank: true})
			if err != nil {
				t.Fatal(err)
			}
			return op
		}, []int{3, 0}, func(r *rand.Rand) []types.Row { return rankRows(r, 400) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := c.rows(rand.New(rand.NewPCG(3, 3)))
			const delay = 3 * sec
			want := driveWindowOps(t, []dataflow.Operator{c.make()}, c.keys, []*dataflow.OpContext{joinNewCtx()}, rows, delay, nil, nil)

			dir := t.TempDir()
			all := state.RangeFor(0, 1)
			opts := state.PebbleOptions{CacheEntries: 16}
			st, err := state.OpenPebbleStore(dir+"/a", "w", all, opts)
			if err != nil {
				t.Fatal(err)
			}
			first := c.make()
			if err := first.Open(&dataflow.OpContext{Parallelism: 1, State: st}); err != nil {
				t.Fatal(err)
			}
			half := len(rows) / 2
			got := driveWindowOpsNoFinish(t, first, c.keys, rows[:half], delay)
			if err := first.SnapshotState(dataflow.Barrier{CheckpointID: 1}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Checkpoint(dir + "/ckpt"); err != nil {
				t.Fatal(err)
			}
			_ = first.Close()
			_ = st.Close()

			var ops []dataflow.Operator
			var ctxs []*dataflow.OpContext
			for s := 0; s < 2; s++ {
				kgs := state.RangeFor(s, 2)
				work := fmt.Sprintf("%s/b%d", dir, s)
				if err := state.RestorePebble(work, []state.RestoreSource{{Dir: dir + "/ckpt", KeyGroups: all}}, kgs, opts); err != nil {
					t.Fatal(err)
				}
				ps, err := state.OpenPebbleStore(work, "w", kgs, opts)
				if err != nil {
					t.Fatal(err)
				}
				defer ps.Close()
				ops = append(ops, c.make())
				ctxs = append(ctxs, &dataflow.OpContext{Subtask: s, Parallelism: 2, State: ps})
			}
			// The restored operators start from the snapshot's watermark;
			// the rest of the input begins with its own.
			got = append(got, driveWindowOps(t, ops, c.keys, ctxs, rows[half:], delay, nil, nil)...)
			sort.Strings(got)
			if len(want) < 50 {
				t.Fatalf("only %d output rows", len(want))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("restored run: %d rows, uninterrupted: %d\n%s", len(got), len(want), winDiff(got, want))
			}
		})
	}
}

// driveWindowOpsNoFinish is the first half of driveWindowOps: rows and
// watermarks, no final watermark.
func driveWindowOpsNoFinish(t *testing.T, op dataflow.Operator, keys []int, rows []types.Row, delay int64) []string {
	t.Helper()
	out := &winCollector{t: t}
	wm, maxTs := int64(dataflow.MinWatermark), int64(dataflow.MinWatermark)
	for _, row := range rows {
		if err := op.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: row}}}, out); err != nil {
			t.Fatal(err)
		}
		maxTs = max(maxTs, row[2].Timestamp())
		if maxTs-delay > wm {
			wm = maxTs - delay
			if err := op.ProcessWatermark(wm, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out.rows
}

// TestProcTimeTumbleFiresByClock drives a processing-time TUMBLE with an
// injected clock: rows belong to the window of the clock when they
// arrive, a window fires at the first chunk or watermark after the
// clock passed its end, and the end of input fires the rest.
func TestProcTimeTumbleFiresByClock(t *testing.T) {
	now := int64(1_700_000_000) * sec // a multiple of 10 s
	clock := func() time.Time { return time.Unix(0, now) }
	op, err := NewWindowAgg(WindowAggSpec{Window: WindowSpec{Kind: WindowTumble, Size: 10 * sec}, TimeCol: 2,
		Keys: []int{0}, Aggs: winAggs[:2], Out: []WindowOutCol{{Kind: WinKey}, {Kind: WinStart}}, ProcTime: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if err := op.Open(joinNewCtx()); err != nil {
		t.Fatal(err)
	}
	out := &winCollector{t: t}
	push := func(k, v int64) {
		// The row's own time column is ignored: processing time rules.
		row := winRow(k, v, 0)
		if err := op.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: row}}}, out); err != nil {
			t.Fatal(err)
		}
	}
	ws := func(s int64) string { return types.Format(types.NewTimestamp(now/sec*sec+s*sec), types.Type{}) }
	base := ws(0)
	push(1, 5) // clock 0 s: window [0, 10)
	now += 3 * sec
	push(1, 7) // 3 s: same window
	push(2, 1)
	if len(out.rows) != 0 {
		t.Fatalf("fired early: %v", out.rows)
	}
	now += 7 * sec // 10 s: [0, 10) is over; the next chunk fires it first
	push(1, 100)   // this row is in [10, 20)
	want := []string{"1, " + base + ", 2, 12", "2, " + base + ", 1, 1"}
	if !slices.Equal(out.rows, want) {
		t.Fatalf("at 10 s got %v, want %v", out.rows, want)
	}
	now += 20 * sec // 30 s: a watermark (of any value) fires by the clock too
	if err := op.ProcessWatermark(0, out); err != nil {
		t.Fatal(err)
	}
	want = append(want, "1, "+types.Format(types.NewTimestamp(now/sec*sec-20*sec), types.Type{})+", 1, 100")
	if !slices.Equal(out.rows, want) {
		t.Fatalf("at 30 s got %v, want %v", out.rows, want)
	}
	push(3, 4) // [30, 40), fired by the end of input
	if err := op.Finish(out); err != nil {
		t.Fatal(err)
	}
	if len(out.rows) != 4 || !strings.HasPrefix(out.rows[3], "3, ") {
		t.Fatalf("the end of input did not fire the last window: %v", out.rows)
	}
}

// TestProcTimeTumbleFiresOnTick: with no row arriving, the runtime's
// processing-time tick fires a window once the clock passed its end.
func TestProcTimeTumbleFiresOnTick(t *testing.T) {
	now := int64(1_700_000_000) * sec
	op, err := NewWindowAgg(WindowAggSpec{Window: WindowSpec{Kind: WindowTumble, Size: 10 * sec}, TimeCol: 2,
		Keys: []int{0}, Aggs: winAggs[:1], Out: []WindowOutCol{{Kind: WinKey}}, ProcTime: true,
		Clock: func() time.Time { return time.Unix(0, now) }})
	if err != nil {
		t.Fatal(err)
	}
	if d := op.ProcessingTimeInterval(); d != 100*time.Millisecond {
		t.Fatalf("tick interval %v, want 100ms for 10 s windows", d)
	}
	if err := op.Open(joinNewCtx()); err != nil {
		t.Fatal(err)
	}
	out := &winCollector{t: t}
	if err := op.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: winRow(4, 1, 0)}}}, out); err != nil {
		t.Fatal(err)
	}
	now += 9 * sec
	if err := op.OnProcessingTime(time.Time{}, out); err != nil || len(out.rows) != 0 {
		t.Fatalf("fired before the window's end: %v %v", out.rows, err)
	}
	now += 1 * sec
	if err := op.OnProcessingTime(time.Time{}, out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.rows, []string{"4, 1"}) {
		t.Fatalf("at the window's end the tick emitted %v, want [4, 1]", out.rows)
	}
}
