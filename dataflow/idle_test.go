package dataflow

import (
	"context"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dyntable"
)

// scriptedSource emits the watermarks it is sent, and takes control
// elements (idleness checks) while it waits, until the job is cancelled.
type scriptedSource struct {
	BaseSource
	wms chan int64
}

func (s *scriptedSource) Open(*OpContext) error { return nil }
func (s *scriptedSource) Close() error          { return nil }
func (s *scriptedSource) Run(ctx context.Context, out SourceOutput) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case w := <-s.wms:
			if err := out.EmitWatermark(w); err != nil {
				return err
			}
		case e := <-out.Control():
			if err := out.Handle(e); err != nil {
				return err
			}
		}
	}
}

// wmProbe reports every watermark it processes.
type wmProbe struct {
	BaseOperator
	seen chan int64
}

func (p *wmProbe) Open(*OpContext) error                              { return nil }
func (p *wmProbe) ProcessChunk(int, *dyntable.Chunk, Collector) error { return nil }
func (p *wmProbe) ProcessWatermark(wm int64, _ Collector) error {
	p.seen <- wm
	return nil
}
func (p *wmProbe) Finish(Collector) error { return nil }
func (p *wmProbe) Close() error           { return nil }

// idleJob runs sources a and b into one probe with the given idle timeout.
func idleJob(t *testing.T, timeout time.Duration) (a, b chan int64, seen chan int64, stop func()) {
	t.Helper()
	a, b, seen = make(chan int64, 4), make(chan int64, 4), make(chan int64, 16)
	g := &Graph{IdleTimeout: timeout}
	na := g.AddNode(&Node{Name: "a", Parallelism: 1, NewSource: func(int) (Source, error) { return &scriptedSource{wms: a}, nil }})
	nb := g.AddNode(&Node{Name: "b", Parallelism: 1, NewSource: func(int) (Source, error) { return &scriptedSource{wms: b}, nil }})
	g.AddNode(&Node{Name: "probe", Parallelism: 1,
		Inputs:      []Edge{{From: na, Partition: Forward}, {From: nb, Partition: Forward}},
		NewOperator: func(int) (Operator, error) { return &wmProbe{seen: seen}, nil }})
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a, b, seen, func() { j.Cancel(); _ = j.Wait() }
}

func expectWatermark(t *testing.T, seen chan int64, want int64) {
	t.Helper()
	select {
	case w := <-seen:
		if w != want {
			t.Fatalf("watermark %d, want %d", w, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no watermark within 5 s, want %d", want)
	}
}

func expectNoWatermark(t *testing.T, seen chan int64, wait time.Duration) {
	t.Helper()
	select {
	case w := <-seen:
		t.Fatalf("unexpected watermark %d", w)
	case <-time.After(wait):
	}
}

// Without an idle timeout, a silent input holds the watermark back for
// good.
func TestSilentInputHoldsWatermarkBack(t *testing.T) {
	a, _, seen, stop := idleJob(t, 0)
	defer stop()
	a <- 100
	expectNoWatermark(t, seen, 300*time.Millisecond)
}

// With table.exec.source.idle-timeout, a silent input stops holding the
// watermark back after the timeout; when it speaks again it counts
// again, and the combined watermark never goes back.
func TestIdleInputStopsHoldingWatermarkBack(t *testing.T) {
	a, b, seen, stop := idleJob(t, 40*time.Millisecond)
	defer stop()
	a <- 100
	expectWatermark(t, seen, 100) // b, silent, became idle
	b <- 50                       // b is back, behind: no regression
	expectNoWatermark(t, seen, 20*time.Millisecond)
	b <- 150 // a has been idle since it went silent: b's 150 counts alone
	expectWatermark(t, seen, 150)
	a <- 120                      // a is back at 120 < 150: nothing moves
	b <- 300                      // min(120, 300) = 120 <= 150 while both are active
	expectWatermark(t, seen, 300) // then a idles again and b's 300 counts
}

// ticker counts processing-time calls.
type ticker struct {
	BaseOperator
	calls chan time.Time
}

func (p *ticker) Open(*OpContext) error                              { return nil }
func (p *ticker) ProcessChunk(int, *dyntable.Chunk, Collector) error { return nil }
func (p *ticker) ProcessWatermark(int64, Collector) error            { return nil }
func (p *ticker) Finish(Collector) error                             { return nil }
func (p *ticker) Close() error                                       { return nil }
func (p *ticker) ProcessingTimeInterval() time.Duration              { return 5 * time.Millisecond }
func (p *ticker) OnProcessingTime(now time.Time, _ Collector) error {
	select {
	case p.calls <- now:
	default:
	}
	return nil
}

// An operator with a ProcessingTimeInterval is called at that interval
// while no element arrives.
func TestProcessingTimerIsCalledWhileIdle(t *testing.T) {
	calls := make(chan time.Time, 100)
	g := &Graph{}
	src := g.AddNode(&Node{Name: "src", Parallelism: 1, NewSource: func(int) (Source, error) { return &scriptedSource{wms: make(chan int64)}, nil }})
	g.AddNode(&Node{Name: "ticker", Parallelism: 1, Inputs: []Edge{{From: src, Partition: Forward}},
		NewOperator: func(int) (Operator, error) { return &ticker{calls: calls}, nil }})
	j, err := Start(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { j.Cancel(); _ = j.Wait() }()
	for i := 0; i < 3; i++ {
		select {
		case <-calls:
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d processing-time calls in 5 s", i)
		}
	}
}
