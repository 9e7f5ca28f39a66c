package operators

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

func mbOpen(t testing.TB, spec GroupAggSpec, mb MiniBatch) *MiniBatchGroupAgg {
	t.Helper()
	g, err := NewMiniBatchGroupAgg(spec, mb)
	if err != nil {
		t.Fatalf("NewMiniBatchGroupAgg: %v", err)
	}
	ctx := &dataflow.OpContext{JobName: "test", NodeName: "agg", Parallelism: 1, State: state.NewMemoryStore("agg")}
	if err := g.Open(ctx); err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return g
}

// mbStrict materializes a retract changelog keyed by the group keys and
// fails on any change that does not follow from the rows before it: +I
// of a present key, -U or -D of a row that is not the key's current row,
// +U not right after the key's -U.
type mbStrict struct {
	t       testing.TB
	keyCols []int
	rows    map[string]types.Row
	pending string // key whose -U awaits its +U
}

func (s *mbStrict) apply(ch dyntable.Change) {
	s.t.Helper()
	k := string(types.EncodeKey(nil, ch.Row, s.keyCols))
	cur, ok := s.rows[k]
	if s.pending != "" && (ch.Kind != dyntable.UpdateAfter || k != s.pending) {
		s.t.Fatalf("-U not followed by its +U: got %s", dyntable.FormatChange(ch, nil))
	}
	switch ch.Kind {
	case dyntable.Insert:
		if ok {
			s.t.Fatalf("+I of a key already present: %s", dyntable.FormatChange(ch, nil))
		}
		s.rows[k] = ch.Row
	case dyntable.UpdateBefore, dyntable.Delete:
		if !ok || !types.RowsEqual(cur, ch.Row) {
			s.t.Fatalf("%s of a row that is not the current one [%s]", dyntable.FormatChange(ch, nil), types.FormatRow(cur, nil, ", "))
		}
		delete(s.rows, k)
		if ch.Kind == dyntable.UpdateBefore {
			s.pending = k
		}
	case dyntable.UpdateAfter:
		if s.pending != k {
			s.t.Fatalf("+U without its -U: %s", dyntable.FormatChange(ch, nil))
		}
		s.pending = ""
		s.rows[k] = ch.Row
	}
}

// TestMiniBatchGroupAggRandomized feeds random changelogs to the
// mini-batch aggregation and ends batches at random (size, tick,
// watermark, barrier). After every batch the materialized output must
// equal a brute-force recomputation over all input so far (the model of
// TestGroupAggRandomized), and each batch must emit at most one change
// per group: +I, -U/+U or -D.
func TestMiniBatchGroupAggRandomized(t *testing.T) {
	for _, retracts := range []bool{false, true} {
		for seed := uint64(1); seed <= 12; seed++ {
			t.Run(fmt.Sprintf("retracts=%v/seed=%d", retracts, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 99))
				keys := []int{gaK}
				switch seed % 4 {
				case 2:
					keys = []int{}
				case 3:
					keys = []int{gaK, gaS}
				}
				aggs := gaAggs
				if seed > 1 {
					aggs = nil
					for _, i := range r.Perm(len(gaAggs))[:1+r.IntN(5)] {
						aggs = append(aggs, gaAggs[i])
					}
				}
				size := 1 + r.IntN(40)
				spec := GroupAggSpec{GroupKeys: keys, Aggs: aggs, InputRetracts: retracts}
				g := mbOpen(t, spec, MiniBatch{Latency: time.Second, Size: size})
				m := newGaModel(t, keys, aggs)
				s := &mbStrict{t: t, keyCols: gaKeyCols(len(keys)), rows: map[string]types.Row{}}
				col := &gaCollector{t: t}
				check := func(step int, what string) {
					t.Helper()
					perKey := map[string]int{}
					for _, ch := range col.changes {
						s.apply(ch)
						if ch.Kind != dyntable.UpdateAfter {
							perKey[string(types.EncodeKey(nil, ch.Row, s.keyCols))]++
						}
					}
					for k, n := range perKey {
						if n > 1 {
							t.Fatalf("step %d (%s): %d changes for group %q in one batch: %s", step, what, n, k, gaFormat(col.changes))
						}
					}
					col.changes = nil
				}
				buffered := 0
				steps := 150
				if !retracts {
					steps = 60
				}
				wm, sawWm := int64(0), false
				for step := 0; step < steps; step++ {
					in := make([]dyntable.Change, 1+r.IntN(16))
					for i := range in {
						in[i] = m.next(r, retracts)
						m.apply(in[i])
					}
					// The size trigger may end a batch in the middle of the
					// chunk: feed the rows one chunk each then, so that a
					// batch boundary is always between chunks and the model
					// can be compared.
					for i := range in {
						if err := g.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{in[i]}}, col); err != nil {
							t.Fatalf("step %d: %v", step, err)
						}
						buffered++
						if buffered == size {
							buffered = 0
						} else if len(col.changes) > 0 {
							t.Fatalf("step %d: %d of %d rows buffered, yet it emitted %s", step, buffered, size, gaFormat(col.changes))
						}
						check(step, "size")
					}
					var err error
					what := ""
					switch r.IntN(6) {
					case 0:
						what, err = "tick", g.OnProcessingTime(time.Now(), col)
					case 1:
						what, err = "barrier", g.PrepareSnapshotPreBarrier(dataflow.Barrier{CheckpointID: int64(step)}, col)
					case 2:
						wm += int64(2 * time.Second)
						sawWm = true
						what, err = "watermark", g.ProcessWatermark(wm, col)
					case 3:
						// Less than the latency past the last batch's watermark:
						// the batch goes on.
						if !sawWm {
							continue
						}
						wm++
						if err := g.ProcessWatermark(wm, col); err != nil {
							t.Fatal(err)
						}
						if len(col.changes) > 0 {
							t.Fatalf("step %d: a watermark 1ns later ended the batch", step)
						}
						continue
					default:
						continue
					}
					if err != nil {
						t.Fatalf("step %d: %s: %v", step, what, err)
					}
					buffered = 0
					check(step, what)
					tab := dyntable.NewTable(gaKeyCols(len(keys)))
					for _, row := range s.rows {
						_ = tab.Apply(dyntable.Change{Kind: dyntable.Insert, Row: row})
					}
					m.checkTable(tab, step)
				}
				if err := g.Finish(col); err != nil {
					t.Fatal(err)
				}
				check(steps, "finish")
				tab := dyntable.NewTable(gaKeyCols(len(keys)))
				for _, row := range s.rows {
					_ = tab.Apply(dyntable.Change{Kind: dyntable.Insert, Row: row})
				}
				m.checkTable(tab, steps)
			})
		}
	}
}

// TestMiniBatchGroupAggCoarser checks by hand that a batch folds a
// group's rows into one update: five rows of two groups in one batch
// emit one +I each, and the next batch one -U/+U for the group that
// changed only.
func TestMiniBatchGroupAggCoarser(t *testing.T) {
	sum := AggCall{Kind: AggSum, Arg: 1, ArgType: types.TypeBigInt, ResultType: types.TypeBigInt}
	g := mbOpen(t, GroupAggSpec{GroupKeys: []int{0}, Aggs: []AggCall{gaAggs[0], sum}}, MiniBatch{Latency: time.Hour, Size: 1000})
	ins := func(k, v int64) dyntable.Change { return gaC(dyntable.Insert, types.NewInt(k), types.NewInt(v)) }
	col := &gaCollector{t: t}
	if err := g.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{ins(1, 10), ins(2, 5), ins(1, 20), ins(1, 30), ins(2, 6)}}, col); err != nil {
		t.Fatal(err)
	}
	if len(col.changes) != 0 {
		t.Fatalf("emitted before the batch ended: %s", gaFormat(col.changes))
	}
	if err := g.OnProcessingTime(time.Now(), col); err != nil {
		t.Fatal(err)
	}
	if got, want := gaFormat(col.changes), "+I[1, 3, 60] +I[2, 2, 11]"; got != want {
		t.Fatalf("first batch: got %s, want %s", got, want)
	}
	col.changes = nil
	if err := g.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{ins(1, 1), ins(1, 2)}}, col); err != nil {
		t.Fatal(err)
	}
	if err := g.PrepareSnapshotPreBarrier(dataflow.Barrier{CheckpointID: 1}, col); err != nil {
		t.Fatal(err)
	}
	if got, want := gaFormat(col.changes), "-U[1, 3, 60] +U[1, 5, 63]"; got != want {
		t.Fatalf("second batch: got %s, want %s", got, want)
	}
	// Nothing buffered: ending a batch emits nothing.
	col.changes = nil
	if err := g.Finish(col); err != nil || len(col.changes) != 0 {
		t.Fatalf("empty batch: err %v, emitted %s", err, gaFormat(col.changes))
	}
}

// TestMiniBatchGroupAggInsertDeleteInOneBatch: a group inserted and
// deleted within one batch emits nothing; one that existed and empties
// emits -D; a retraction for a group with no state fails as in GroupAgg.
func TestMiniBatchGroupAggInsertDeleteInOneBatch(t *testing.T) {
	spec := GroupAggSpec{GroupKeys: []int{0}, Aggs: []AggCall{gaAggs[0]}, InputRetracts: true}
	g := mbOpen(t, spec, MiniBatch{Latency: time.Hour, Size: 1000})
	row := func(k dyntable.RowKind, key int64) dyntable.Change { return gaC(k, types.NewInt(key), types.NewInt(0)) }
	col := &gaCollector{t: t}
	push := func(chs ...dyntable.Change) error {
		if err := g.ProcessChunk(0, &dyntable.Chunk{Changes: chs}, col); err != nil {
			return err
		}
		return g.Finish(col)
	}
	if err := push(row(dyntable.Insert, 1), row(dyntable.Insert, 2), row(dyntable.Delete, 1)); err != nil {
		t.Fatal(err)
	}
	if got, want := gaFormat(col.changes), "+I[2, 1]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	col.changes = nil
	if err := push(row(dyntable.Delete, 2), row(dyntable.Insert, 2), row(dyntable.Delete, 2)); err != nil {
		t.Fatal(err)
	}
	if got, want := gaFormat(col.changes), "-D[2, 1]"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	col.changes = nil
	err := push(row(dyntable.Insert, 3), row(dyntable.Delete, 3), row(dyntable.UpdateBefore, 3))
	if err == nil || !strings.Contains(err.Error(), "no state") {
		t.Fatalf("retracting from a group emptied in the batch: err = %v, want a 'no state' error", err)
	}
}

func TestMiniBatchNeedsLatencyAndSize(t *testing.T) {
	for _, mb := range []MiniBatch{{}, {Latency: time.Second}, {Size: 10}} {
		if _, err := NewMiniBatchGroupAgg(GroupAggSpec{Aggs: gaAggs[:1]}, mb); err == nil {
			t.Errorf("%s: no error", mb)
		}
	}
}
