package operators

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// gaMergeable are the aggregates of gaAggs computed in words, which the
// two phases can split (MIN(DISTINCT x) is MIN(x)).
var gaMergeable = []int{0, 1, 2, 3, 4, 5, 9, 10, 11, 22, 23, 24, 25, 26}

func TestMergeable(t *testing.T) {
	for i, a := range gaAggs {
		want := false
		for _, j := range gaMergeable {
			want = want || i == j
		}
		spec := GroupAggSpec{GroupKeys: []int{gaK}, Aggs: []AggCall{a}}
		if got := Mergeable(spec); got != want {
			t.Errorf("aggregate %d (%s distinct=%v over %s): Mergeable = %v, want %v", i, a.Kind, a.Distinct, a.ArgType, got, want)
		}
		spec.InputRetracts = true
		if Mergeable(spec) {
			t.Errorf("aggregate %d: Mergeable over a retracting input", i)
		}
	}
}

// TestTwoPhaseGroupAggRandomized splits random insert-only input over
// two LocalGroupAggs (two upstream subtasks), ends their batches at
// random, feeds their partials to the GlobalGroupAgg in random chunks,
// ends its batches at random, and checks after each global batch that
// the materialized output equals the brute-force result over the rows
// whose partials reached it, and at the end over all rows.
func TestTwoPhaseGroupAggRandomized(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 5))
			keys := []int{gaK}
			switch seed % 4 {
			case 2:
				keys = []int{}
			case 3:
				keys = []int{gaK, gaS}
			}
			var aggs []AggCall
			if seed == 1 {
				for _, i := range gaMergeable {
					aggs = append(aggs, gaAggs[i])
				}
			} else {
				for _, i := range r.Perm(len(gaMergeable))[:1+r.IntN(4)] {
					aggs = append(aggs, gaAggs[gaMergeable[i]])
				}
			}
			spec := GroupAggSpec{GroupKeys: keys, Aggs: aggs}
			mb := MiniBatch{Latency: time.Second, Size: 1 + r.IntN(30)}
			var locals [2]*LocalGroupAgg
			for i := range locals {
				l, err := NewLocalGroupAgg(spec, mb)
				if err != nil {
					t.Fatal(err)
				}
				locals[i] = l
			}
			global, err := NewGlobalGroupAgg(spec, MiniBatch{Latency: time.Second, Size: 1 + r.IntN(30)})
			if err != nil {
				t.Fatal(err)
			}
			ctx := &dataflow.OpContext{JobName: "test", NodeName: "global", Parallelism: 1, State: state.NewMemoryStore("global")}
			if err := global.Open(ctx); err != nil {
				t.Fatal(err)
			}
			cols, err := PartialColumns(spec)
			if err != nil {
				t.Fatal(err)
			}
			m := newGaModel(t, keys, aggs)
			s := &mbStrict{t: t, keyCols: gaKeyCols(len(keys)), rows: map[string]types.Row{}}
			partials := &gaCollector{t: t}
			out := &gaCollector{t: t}
			// Rows whose partials are in the partials collector or beyond.
			var pending [2][]types.Row
			applyOut := func() {
				for _, ch := range out.changes {
					s.apply(ch)
				}
				out.changes = nil
			}
			deliver := func(step int) {
				for _, ch := range partials.changes {
					if len(ch.Row) != len(keys)+len(cols) {
						t.Fatalf("step %d: partial of %d columns, want %d", step, len(ch.Row), len(keys)+len(cols))
					}
					if err := global.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{ch}}, out); err != nil {
						t.Fatalf("step %d: global: %v", step, err)
					}
				}
				partials.changes = nil
			}
			for step := 0; step < 80; step++ {
				for range 1 + r.IntN(12) {
					row := gaRandomRow(r)
					i := r.IntN(2)
					pending[i] = append(pending[i], row)
					if err := locals[i].ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: row}}}, partials); err != nil {
						t.Fatalf("step %d: local: %v", step, err)
					}
					if len(partials.changes) > 0 {
						// The local batch ended on its size: these rows' partials are out.
						for _, pr := range pending[i] {
							m.apply(dyntable.Change{Kind: dyntable.Insert, Row: pr})
						}
						pending[i] = nil
						deliver(step)
					}
				}
				switch r.IntN(4) {
				case 0:
					i := r.IntN(2)
					if err := locals[i].PrepareSnapshotPreBarrier(dataflow.Barrier{CheckpointID: int64(step)}, partials); err != nil {
						t.Fatal(err)
					}
					for _, pr := range pending[i] {
						m.apply(dyntable.Change{Kind: dyntable.Insert, Row: pr})
					}
					pending[i] = nil
					deliver(step)
				case 1:
					if err := global.OnProcessingTime(time.Now(), out); err != nil {
						t.Fatal(err)
					}
					applyOut()
					// Everything delivered so far is in the output.
					tab := dyntable.NewTable(gaKeyCols(len(keys)))
					for _, row := range s.rows {
						_ = tab.Apply(dyntable.Change{Kind: dyntable.Insert, Row: row})
					}
					m.checkTable(tab, step)
				}
			}
			for i := range locals {
				if err := locals[i].Finish(partials); err != nil {
					t.Fatal(err)
				}
				for _, pr := range pending[i] {
					m.apply(dyntable.Change{Kind: dyntable.Insert, Row: pr})
				}
				deliver(80)
			}
			if err := global.Finish(out); err != nil {
				t.Fatal(err)
			}
			applyOut()
			tab := dyntable.NewTable(gaKeyCols(len(keys)))
			for _, row := range s.rows {
				_ = tab.Apply(dyntable.Change{Kind: dyntable.Insert, Row: row})
			}
			m.checkTable(tab, 80)
		})
	}
}

// TestLocalGroupAggPartials checks one batch's partials by hand: SUM and
// MAX of BIGINT over groups 1 (10, NULL, 30) and 2 (5) give
// [key, rows, non-NULL count, sum, max] = [1, 3, 2, 40, 30] and
// [2, 1, 1, 5, 5].
func TestLocalGroupAggPartials(t *testing.T) {
	sum := AggCall{Kind: AggSum, Arg: 1, ArgType: types.TypeBigInt, ResultType: types.TypeBigInt}
	mx := AggCall{Kind: AggMax, Arg: 1, ArgType: types.TypeBigInt, ResultType: types.TypeBigInt}
	spec := GroupAggSpec{GroupKeys: []int{0}, Aggs: []AggCall{sum, mx}}
	l, err := NewLocalGroupAgg(spec, MiniBatch{Latency: time.Hour, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	cols, err := PartialColumns(spec)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cols {
		names = append(names, c.Name)
	}
	if got, want := fmt.Sprint(names), "[count1$ count$0 sum$1 max$2]"; got != want {
		t.Fatalf("partial columns %s, want %s", got, want)
	}
	col := &gaCollector{t: t}
	in := []dyntable.Change{
		gaC(dyntable.Insert, types.NewInt(1), types.NewInt(10)),
		gaC(dyntable.Insert, types.NewInt(2), types.NewInt(5)),
		gaC(dyntable.Insert, types.NewInt(1), types.NullValue),
		gaC(dyntable.Insert, types.NewInt(1), types.NewInt(30)),
	}
	if err := l.ProcessChunk(0, &dyntable.Chunk{Changes: in}, col); err != nil {
		t.Fatal(err)
	}
	if len(col.changes) != 0 {
		t.Fatalf("emitted before the batch ended: %s", gaFormat(col.changes))
	}
	if err := l.ProcessWatermark(dataflow.MaxWatermark, col); err != nil {
		t.Fatal(err)
	}
	if got, want := gaFormat(col.changes), "+I[1, 3, 2, 40, 30] +I[2, 1, 1, 5, 5]"; got != want {
		t.Fatalf("partials %s, want %s", got, want)
	}
	if err := l.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{gaC(dyntable.Delete, types.NewInt(1), types.NewInt(1))}}, col); err == nil {
		t.Fatal("a retraction into the local phase did not fail")
	}
}
