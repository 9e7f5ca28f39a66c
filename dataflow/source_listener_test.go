package dataflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// listeningSource emits one row, then waits on its control channel only
// (it never emits again), until it is told that checkpoint 7 completed.
type listeningSource struct {
	BaseSource
	saved    atomic.Int64 // the checkpoint its position was saved for
	notified atomic.Int64
}

func (s *listeningSource) SnapshotPosition(id int64) ([]byte, error) {
	s.saved.Store(id)
	return []byte("pos-1"), nil
}

func (s *listeningSource) RestorePosition([]byte) error { return nil }

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
	deadline := time.After(10 * time.Second)
	for s.notified.Load() != 7 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			return errors.New("never notified of checkpoint 7")
		case e := <-out.Control():
			if err := out.Handle(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// noticeLog is an operator that records the checkpoint elements it sees,
// in order with its rows.
type noticeLog struct {
	BaseOperator
	mu     sync.Mutex
	events []string
}

func (n *noticeLog) log(e string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.events = append(n.events, e)
}

func (n *noticeLog) ProcessChunk(_ int, c *dyntable.Chunk, _ Collector) error {
	n.log(fmt.Sprintf("rows %d", c.Len()))
	return nil
}

func (n *noticeLog) SnapshotState(b Barrier) error {
	n.log(fmt.Sprintf("barrier %d", b.CheckpointID))
	return nil
}

func (n *noticeLog) NotifyCheckpointComplete(id int64) error {
	n.log(fmt.Sprintf("complete %d", id))
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
func (b *barrierLog) SnapshotSubtask(Barrier, *Node, int, state.Store, func(int64)) error { return nil }
func (b *barrierLog) Decline(Barrier, *Node, int, error)                                  {}

func (b *barrierLog) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.got)
}

// TestSourceTakesBarriersWhileWaiting: a source that waits on its
// control channel, emitting nothing, saves its position for the barrier
// it is given, and learns on its own goroutine that the checkpoint
// completed; the notice then travels to the operator in order, after the
// barrier, and only once.
func TestSourceTakesBarriersWhileWaiting(t *testing.T) {
	src := &listeningSource{}
	sink := &noticeLog{}
	g := &Graph{}
	s := g.AddNode(&Node{Name: "src", Parallelism: 1, NewSource: func(int) (Source, error) { return src, nil }})
	g.AddNode(&Node{Name: "sink", Parallelism: 1, Inputs: []Edge{{From: s, Partition: Rebalance}},
		NewOperator: func(int) (Operator, error) { return sink, nil }})
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
	if id := src.saved.Load(); id != 7 {
		t.Fatalf("position saved for checkpoint %d, want 7", id)
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
	got := strings.Join(sink.events, ", ")
	if want := "rows 1, barrier 7, complete 7"; got != want {
		t.Fatalf("the operator saw %q, want %q", got, want)
	}
}

// decliningSource emits a row per barrier it takes, until it has taken
// two, then runs on until the sink has aligned both; subtask 1 cannot
// save its position.
type decliningSource struct {
	BaseSource
	subtask int
	taken   int
	aligned <-chan struct{}
}

func (s *decliningSource) SnapshotPosition(int64) ([]byte, error) {
	s.taken++
	if s.subtask == 1 {
		return nil, errors.New("no position")
	}
	return []byte("p"), nil
}

func (s *decliningSource) Run(ctx context.Context, out SourceOutput) error {
	for s.taken < 2 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e := <-out.Control():
			if err := out.Handle(e); err != nil {
				return err
			}
			c := &dyntable.Chunk{}
			c.Append(dyntable.Insert, types.Row{types.NewInt(int64(s.subtask))})
			if err := out.Emit(c); err != nil {
				return err
			}
		}
	}
	select {
	case <-s.aligned:
		return nil
	case <-time.After(5 * time.Second):
		return errors.New("the sink never aligned both barriers")
	}
}

// alignLog is a noticeLog that closes aligned once it has aligned
// barrier 2.
type alignLog struct {
	noticeLog
	aligned chan struct{}
}

func (a *alignLog) SnapshotState(b Barrier) error {
	if b.CheckpointID == 2 {
		close(a.aligned)
	}
	return a.noticeLog.SnapshotState(b)
}

// A source subtask that declines a checkpoint still sends the barrier
// on: the operator aligning it over both source subtasks completes its
// alignment, and the next checkpoint aligns as well.
func TestDeclinedBarrierStillTravels(t *testing.T) {
	sink := &alignLog{aligned: make(chan struct{})}
	g := &Graph{}
	s := g.AddNode(&Node{Name: "src", Parallelism: 2, NewSource: func(i int) (Source, error) {
		return &decliningSource{subtask: i, aligned: sink.aligned}, nil
	}})
	g.AddNode(&Node{Name: "sink", Parallelism: 1, Inputs: []Edge{{From: s, Partition: Single}},
		NewOperator: func(int) (Operator, error) { return sink, nil }})
	cp := &barrierLog{}
	j, err := Start(context.Background(), g, Options{Checkpointer: cp})
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 2; id++ {
		deadline := time.Now().Add(10 * time.Second)
		for j.TriggerBarrier(Barrier{CheckpointID: id}) != nil {
			if time.Now().After(deadline) {
				t.Fatalf("barrier %d could not be triggered", id)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	var snapshots []string
	for _, e := range sink.events {
		if strings.HasPrefix(e, "barrier") {
			snapshots = append(snapshots, e)
		}
	}
	if got := strings.Join(snapshots, ", "); got != "barrier 1, barrier 2" {
		t.Fatalf("the sink aligned %q, want both barriers", got)
	}
	if cp.count() != 2 {
		t.Fatalf("%d source barriers acknowledged, want 2 (subtask 0 only)", cp.count())
	}
}
