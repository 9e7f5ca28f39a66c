package dataflow

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// listeningSource emits one row, then idles (injecting barriers) until
// it is told that checkpoint 7 completed.
type listeningSource struct {
	saved    atomic.Pointer[string] // "id:pos" of PositionSaved
	notified atomic.Int64
}

func (s *listeningSource) Open(*OpContext) error { return nil }
func (s *listeningSource) Close() error          { return nil }

func (s *listeningSource) SnapshotPosition() ([]byte, error) { return []byte("pos-1"), nil }
func (s *listeningSource) RestorePosition([]byte) error      { return nil }

func (s *listeningSource) PositionSaved(id int64, pos []byte) {
	v := string(pos)
	if id != 7 {
		v = "wrong id"
	}
	s.saved.Store(&v)
}

func (s *listeningSource) NotifyCheckpointComplete(id int64) error {
	s.notified.Store(id)
	return nil
}

func (s *listeningSource) Run(ctx context.Context, out SourceOutput) error {
	c := &dyntable.Chunk{}
	c.Append(dyntable.Insert, types.Row{types.NewInt(1)})
	if err := out.Emit(c); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.notified.Load() != 7 {
		if time.Now().After(deadline) {
			return errors.New("never notified of checkpoint 7")
		}
		if err := out.EmitWatermark(MinWatermark); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// barrierLog is a Checkpointer that records source barriers.
type barrierLog struct {
	mu  sync.Mutex
	got []string
}

func (b *barrierLog) SourceBarrier(br Barrier, _ *Node, _ int, pos []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, string(pos))
}
func (b *barrierLog) SnapshotSubtask(Barrier, *Node, int, state.Store) error { return nil }
func (b *barrierLog) Decline(Barrier, *Node, int, error)                     {}

func (b *barrierLog) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.got)
}

// TestSourceCheckpointListener: a source learns the position it saved for
// a checkpoint and, once the job is told the checkpoint completed, that
// it did.
func TestSourceCheckpointListener(t *testing.T) {
	src := &listeningSource{}
	var x rec
	g := &Graph{}
	s := g.AddNode(&Node{Name: "src", Parallelism: 1, NewSource: func(int) (Source, error) { return src, nil }})
	g.AddNode(&Node{Name: "sink", Parallelism: 1, Inputs: []Edge{{From: s, Partition: Forward}},
		NewOperator: func(int) (Operator, error) { return x.op(), nil }})
	cp := &barrierLog{}
	j, err := Start(context.Background(), g, Options{Checkpointer: cp})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.TriggerBarrier(Barrier{CheckpointID: 7}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for cp.count() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the barrier was never injected")
		}
		time.Sleep(time.Millisecond)
	}
	if p := src.saved.Load(); p == nil || *p != "pos-1" {
		t.Fatalf("PositionSaved: %v", p)
	}
	if src.notified.Load() != 0 {
		t.Fatal("notified before the checkpoint completed")
	}
	if err := j.NotifyCheckpointComplete(7); err != nil {
		t.Fatal(err)
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(x.rows) != 1 {
		t.Fatalf("rows %v", x.rows)
	}
}
