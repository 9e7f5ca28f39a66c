package dataflow

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// seqSource emits rows 0..n-1 of one BIGINT column in chunks, then
// optionally barriers and watermarks between chunks.
type seqSource struct {
	BaseSource
	n, chunk int
	offset   int64
	wmEvery  bool
	barrier  int64 // emit barrier with this id after the first chunk
	emitErr  error
	done     chan struct{} // closed when Run has emitted everything
	waitFor  chan struct{} // Run does not return before this is closed
}

func (s *seqSource) Open(*OpContext) error { return nil }
func (s *seqSource) Close() error          { return nil }
func (s *seqSource) Run(ctx context.Context, out SourceOutput) error {
	for i := 0; i < s.n; i += s.chunk {
		c := &dyntable.Chunk{}
		for j := i; j < min(i+s.chunk, s.n); j++ {
			c.Append(dyntable.Insert, types.Row{types.NewInt(s.offset + int64(j))})
		}
		if err := out.Emit(c); err != nil {
			return err
		}
		if s.wmEvery {
			if err := out.EmitWatermark(s.offset + int64(i)); err != nil {
				return err
			}
		}
		if s.barrier != 0 && i == 0 {
			if bo, ok := out.(*sourceOutput); ok {
				for _, o := range bo.outs {
					if err := o.send(Element{Kind: KindBarrier, Barrier: Barrier{CheckpointID: s.barrier}}); err != nil {
						return err
					}
				}
			}
		}
	}
	if s.done != nil {
		close(s.done)
	}
	if s.waitFor != nil {
		select {
		case <-s.waitFor:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.emitErr
}

// recorder is a terminal operator that records what it sees.
type recorder struct {
	BaseOperator
	mu        *sync.Mutex
	rows      *[]int64
	events    *[]string
	finished  *int
	subtask   int
	failAt    int64
	panicAt   int64
	snapshots *[]string
}

func (r *recorder) Open(ctx *OpContext) error { r.subtask = ctx.Subtask; return nil }
func (r *recorder) ProcessChunk(in int, c *dyntable.Chunk, _ Collector) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range c.Changes {
		v := ch.Row[0].Int()
		if r.failAt != 0 && v == r.failAt {
			return fmt.Errorf("boom at %d", v)
		}
		if r.panicAt != 0 && v == r.panicAt {
			panic("operator bug")
		}
		*r.rows = append(*r.rows, v)
	}
	*r.events = append(*r.events, fmt.Sprintf("data(%d)", in))
	return nil
}
func (r *recorder) ProcessWatermark(wm int64, _ Collector) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.events = append(*r.events, fmt.Sprintf("wm(%d)", wm))
	return nil
}
func (r *recorder) Finish(Collector) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.finished++
	return nil
}
func (r *recorder) Close() error { return nil }
func (r *recorder) SnapshotState(b Barrier) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.snapshots != nil {
		*r.snapshots = append(*r.snapshots, fmt.Sprintf("snap(%d)@%d", b.CheckpointID, len(*r.rows)))
	}
	return nil
}

type rec struct {
	mu        sync.Mutex
	rows      []int64
	events    []string
	finished  int
	snapshots []string
}

func (x *rec) op() *recorder {
	return &recorder{mu: &x.mu, rows: &x.rows, events: &x.events, finished: &x.finished, snapshots: &x.snapshots}
}

// passThrough forwards chunks.
type passThrough struct{ BaseOperator }

func (passThrough) Open(*OpContext) error { return nil }
func (passThrough) ProcessChunk(_ int, c *dyntable.Chunk, out Collector) error {
	out.Emit(c)
	return nil
}
func (passThrough) ProcessWatermark(int64, Collector) error { return nil }
func (passThrough) Finish(Collector) error                  { return nil }
func (passThrough) Close() error                            { return nil }

func TestHashExchangeDeliversEveryRowOnce(t *testing.T) {
	for _, p := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			var x rec
			g := &Graph{}
			src := g.AddNode(&Node{Name: "src", Parallelism: 2, NewSource: func(s int) (Source, error) {
				return &seqSource{n: 5000, chunk: 100, offset: int64(s) * 5000}, nil
			}})
			mid := g.AddNode(&Node{Name: "pass", Parallelism: 2, Inputs: []Edge{{From: src, Partition: Forward}},
				NewOperator: func(int) (Operator, error) { return passThrough{}, nil }})
			g.AddNode(&Node{Name: "sink", Parallelism: p, Inputs: []Edge{{From: mid, Partition: Hash, Keys: []int{0}}},
				NewOperator: func(int) (Operator, error) { return x.op(), nil }})
			j, err := Start(context.Background(), g, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Wait(); err != nil {
				t.Fatal(err)
			}
			if len(x.rows) != 10000 {
				t.Fatalf("got %d rows, want 10000", len(x.rows))
			}
			sort.Slice(x.rows, func(i, k int) bool { return x.rows[i] < x.rows[k] })
			for i, v := range x.rows {
				if v != int64(i) {
					t.Fatalf("row %d is %d: a row was lost or duplicated", i, v)
				}
			}
			if x.finished != p {
				t.Fatalf("Finish called %d times, want once per subtask (%d)", x.finished, p)
			}
			m := j.Metrics()
			if m[2].RecordsIn != 10000 || m[0].RecordsOut != 10000 {
				t.Fatalf("metrics: %+v", m)
			}
		})
	}
}

func TestHashRoutesEqualKeysToOneSubtask(t *testing.T) {
	seen := map[int64]int{}
	var mu sync.Mutex
	g := &Graph{}
	src := g.AddNode(&Node{Name: "src", Parallelism: 3, NewSource: func(s int) (Source, error) {
		return &seqSource{n: 300, chunk: 7}, nil // every subtask emits keys 0..299
	}})
	g.AddNode(&Node{Name: "sink", Parallelism: 4, Inputs: []Edge{{From: src, Partition: Hash, Keys: []int{0}}},
		NewOperator: func(s int) (Operator, error) {
			return &keyOwner{sub: s, seen: seen, mu: &mu}, nil
		}})
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 300 {
		t.Fatalf("saw %d keys", len(seen))
	}
}

type keyOwner struct {
	passThrough
	sub  int
	seen map[int64]int
	mu   *sync.Mutex
}

func (k *keyOwner) ProcessChunk(_ int, c *dyntable.Chunk, _ Collector) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, ch := range c.Changes {
		key := ch.Row[0].Int()
		if owner, ok := k.seen[key]; ok && owner != k.sub {
			return fmt.Errorf("key %d reached subtasks %d and %d", key, owner, k.sub)
		}
		k.seen[key] = k.sub
	}
	return nil
}

func TestWatermarkIsMinimumOverInputs(t *testing.T) {
	var x rec
	g := &Graph{}
	// b stays open until a has emitted everything, so b's watermark
	// holds a's back for the whole of a's stream.
	aDone := make(chan struct{})
	a := g.AddNode(&Node{Name: "a", Parallelism: 1, NewSource: func(int) (Source, error) {
		return &seqSource{n: 3, chunk: 1, offset: 100, wmEvery: true, done: aDone}, nil
	}})
	b := g.AddNode(&Node{Name: "b", Parallelism: 1, NewSource: func(int) (Source, error) {
		return &seqSource{n: 3, chunk: 1, offset: 10, wmEvery: true, waitFor: aDone}, nil
	}})
	g.AddNode(&Node{Name: "sink", Parallelism: 1,
		Inputs:      []Edge{{From: a, Partition: Forward}, {From: b, Partition: Forward}},
		NewOperator: func(int) (Operator, error) { return x.op(), nil }})
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	// b's watermarks (10, 11, 12) hold back a's (100, 101, 102); after both
	// end the final watermark is MaxWatermark. Every watermark seen must
	// be <= 12 until the final one, and strictly increasing.
	var wms []int64
	for _, e := range x.events {
		var w int64
		if _, err := fmt.Sscanf(e, "wm(%d)", &w); err == nil {
			wms = append(wms, w)
		}
	}
	if len(wms) == 0 || wms[len(wms)-1] != MaxWatermark {
		t.Fatalf("watermarks %v must end with MaxWatermark", wms)
	}
	for i, w := range wms[:len(wms)-1] {
		if w > 12 {
			t.Fatalf("watermark %d passed the slower input's 12: %v", w, wms)
		}
		if i > 0 && w <= wms[i-1] {
			t.Fatalf("watermarks not increasing: %v", wms)
		}
	}
}

func TestBarrierAlignmentHoldsBackAlignedInput(t *testing.T) {
	var x rec
	g := &Graph{}
	a := g.AddNode(&Node{Name: "a", Parallelism: 1, NewSource: func(int) (Source, error) {
		return &seqSource{n: 200, chunk: 10, barrier: 7}, nil
	}})
	b := g.AddNode(&Node{Name: "b", Parallelism: 1, NewSource: func(int) (Source, error) {
		return &seqSource{n: 200, chunk: 10, offset: 1000, barrier: 7}, nil
	}})
	g.AddNode(&Node{Name: "sink", Parallelism: 1,
		Inputs:      []Edge{{From: a, Partition: Forward}, {From: b, Partition: Forward}},
		NewOperator: func(int) (Operator, error) { return x.op(), nil }})
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	// Each source sends its barrier after its first chunk of 10 rows, so
	// the snapshot must see exactly those 20 rows: rows after a barrier
	// are held back until the other input's barrier arrives.
	if len(x.snapshots) != 1 || x.snapshots[0] != "snap(7)@20" {
		t.Fatalf("snapshots %v, want [snap(7)@20]", x.snapshots)
	}
	if len(x.rows) != 400 {
		t.Fatalf("got %d rows", len(x.rows))
	}
}

func TestOperatorErrorFailsJob(t *testing.T) {
	var x rec
	g := &Graph{}
	src := g.AddNode(&Node{Name: "src", Parallelism: 1, NewSource: func(int) (Source, error) {
		return &seqSource{n: 100000, chunk: 10}, nil
	}})
	g.AddNode(&Node{Name: "sink", Parallelism: 1, Inputs: []Edge{{From: src, Partition: Forward}},
		NewOperator: func(int) (Operator, error) { r := x.op(); r.failAt = 55; return r, nil }})
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = j.Wait()
	if err == nil || !strings.Contains(err.Error(), "boom at 55") {
		t.Fatalf("err = %v", err)
	}
}

func TestOperatorPanicIsALoudJobError(t *testing.T) {
	var x rec
	g := &Graph{}
	src := g.AddNode(&Node{Name: "src", Parallelism: 1, NewSource: func(int) (Source, error) {
		return &seqSource{n: 100, chunk: 10}, nil
	}})
	g.AddNode(&Node{Name: "sink", Parallelism: 1, Inputs: []Edge{{From: src, Partition: Forward}},
		NewOperator: func(int) (Operator, error) { r := x.op(); r.panicAt = 42; return r, nil }})
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = j.Wait()
	if err == nil || !strings.Contains(err.Error(), "internal error") || !strings.Contains(err.Error(), "operator bug") {
		t.Fatalf("err = %v", err)
	}
}

// endless never ends until cancelled.
type endless struct{ BaseSource }

func (endless) Open(*OpContext) error { return nil }
func (endless) Close() error          { return nil }
func (endless) Run(ctx context.Context, out SourceOutput) error {
	for i := int64(0); ; i++ {
		c := &dyntable.Chunk{}
		c.Append(dyntable.Insert, types.Row{types.NewInt(i)})
		if err := out.Emit(c); err != nil {
			return err
		}
	}
}

func TestCancelStopsUnboundedJob(t *testing.T) {
	var x rec
	g := &Graph{}
	src := g.AddNode(&Node{Name: "src", Parallelism: 2, NewSource: func(int) (Source, error) { return endless{}, nil }})
	g.AddNode(&Node{Name: "sink", Parallelism: 3, Inputs: []Edge{{From: src, Partition: Hash, Keys: []int{0}}},
		NewOperator: func(int) (Operator, error) { return x.op(), nil }})
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	j.Cancel()
	select {
	case <-j.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("job did not stop after Cancel")
	}
	if err := j.Wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestValidateRejectsBadGraphs(t *testing.T) {
	src := &Node{Name: "s", Parallelism: 2, NewSource: func(int) (Source, error) { return endless{}, nil }}
	g := &Graph{}
	g.AddNode(src)
	g.AddNode(&Node{Name: "op", Parallelism: 3, Inputs: []Edge{{From: src, Partition: Forward}},
		NewOperator: func(int) (Operator, error) { return passThrough{}, nil }})
	if _, err := Start(context.Background(), g, Options{}); err == nil || !strings.Contains(err.Error(), "forward edge") {
		t.Fatalf("err = %v", err)
	}
}
