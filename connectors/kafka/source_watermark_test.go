package kafka

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

var wmT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// wmTable is (id BIGINT, ts TIMESTAMP(3)) with the strategy ts - 1 s
// pushed down, as the planner does for `WATERMARK FOR ts AS ts - INTERVAL '1' SECOND`.
func wmTable(t testing.TB, addr, topic string, idle time.Duration, opts ...string) *scan {
	t.Helper()
	o := map[string]string{"connector": "kafka", "topic": topic, "properties.bootstrap.servers": addr,
		"scan.startup.mode": "earliest-offset", "scan.bounded.mode": "latest-offset", "format": "json"}
	for i := 0; i+1 < len(opts); i += 2 {
		if opts[i+1] == "" {
			delete(o, opts[i])
		} else {
			o[opts[i]] = opts[i+1]
		}
	}
	sc, err := newScan(&connectors.Table{Name: topic, Options: o, HasWatermark: true, Columns: []connectors.Column{
		{Name: "id", Type: types.TypeBigInt}, {Name: "ts", Type: types.Type{ID: types.Timestamp, Precision: 3}}}})
	if err != nil {
		t.Fatal(err)
	}
	ok := sc.PushWatermark(func(r types.Row) (int64, bool, error) {
		if r[1].IsNull() {
			return 0, false, nil
		}
		return r[1].Timestamp() - int64(time.Second), true, nil
	}, idle)
	if !ok {
		t.Fatal("PushWatermark refused")
	}
	return sc
}

func tsMsg(p, id int, at time.Duration) srcMsg {
	return srcMsg{p: p, value: fmt.Sprintf(`{"id": %d, "ts": "%s"}`, id, wmT0.Add(at).Format("2006-01-02 15:04:05.000"))}
}

// wmRecorder keeps rows and watermarks in emission order.
type wmRecorder struct {
	dataflow.NoControl
	mu     sync.Mutex
	events []wmEvent
	late   []string // rows at or behind the watermark emitted before them
	wm     int64
}

type wmEvent struct {
	row bool
	ts  int64 // the row's ts, or the watermark
}

func (r *wmRecorder) Emit(c *dyntable.Chunk) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range c.Changes {
		ts := ch.Row[1].Timestamp()
		if ts <= r.wm {
			r.late = append(r.late, fmt.Sprintf("id %d at %v behind watermark %v", ch.Row[0].Int(), time.Duration(ts-wmT0.UnixNano()), time.Duration(r.wm-wmT0.UnixNano())))
		}
		r.events = append(r.events, wmEvent{row: true, ts: ts})
	}
	return nil
}

func (r *wmRecorder) EmitWatermark(ts int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ts > r.wm {
		r.wm = ts
		r.events = append(r.events, wmEvent{ts: ts})
	}
	return nil
}

func (r *wmRecorder) watermark() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wm
}

func (r *wmRecorder) rows() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.row {
			n++
		}
	}
	return n
}

func runWM(t testing.TB, sc *scan, subtask, parallelism int, shared *dataflow.Shared, ctx context.Context) (*wmRecorder, chan error) {
	t.Helper()
	src, err := sc.Create(subtask, parallelism)
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*Source)
	if err := s.Open(&dataflow.OpContext{Subtask: subtask, Parallelism: parallelism, Shared: shared}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r := &wmRecorder{wm: dataflow.MinWatermark}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, r) }()
	return r, done
}

// TestWatermarkPerPartition: partition 0 holds 3000 rows at 100 s .. 103 s
// (more than a chunk), partition 1 five rows at 1 s .. 5 s, read by one
// subtask. The watermark is the minimum over the partitions, so no row of
// partition 1 is behind it although partition 0 is read first; a
// subtask-wide maximum would have passed 100 s after the first chunk.
// By hand: once all is read the watermark is min(103 s - 1 ms, 5 s) - 1 s
// = 4 s, and it stays there (no idle timeout).
func TestWatermarkPerPartition(t *testing.T) {
	b := srcBroker(t, 2, "wm")
	var msgs []srcMsg
	for i := 0; i < 3000; i++ {
		msgs = append(msgs, tsMsg(0, i, 100*time.Second+time.Duration(i)*time.Millisecond))
	}
	for i := 1; i <= 5; i++ {
		msgs = append(msgs, tsMsg(1, 10000+i, time.Duration(i)*time.Second))
	}
	produce(t, b.Addr(), "wm", msgs...)
	ctx, cancel := context.WithCancel(context.Background())
	r, done := runWM(t, wmTable(t, b.Addr(), "wm", 0, "scan.bounded.mode", ""), 0, 1, dataflow.NewShared(), ctx)
	waitFor(t, func() bool { return r.rows() == 3005 })
	time.Sleep(200 * time.Millisecond) // a few idle rounds: the watermark must stay
	cancel()
	<-done
	if n := r.rows(); n != 3005 {
		t.Fatalf("%d rows, want 3005", n)
	}
	if len(r.late) > 0 {
		t.Fatalf("%d late rows, first: %s", len(r.late), r.late[0])
	}
	if want := wmT0.Add(4 * time.Second).UnixNano(); r.watermark() != want {
		t.Fatalf("last watermark %v, want 4 s", time.Duration(r.watermark()-wmT0.UnixNano()))
	}
}

// TestWatermarkIdlePartition: partition 1 never gets a record. Without an
// idle timeout it holds the watermark at its start; with one of 100 ms it
// stops holding it back, and the watermark reaches partition 0's: its
// largest row (10 s) - 1 s = 9 s. At parallelism 2 subtask 1 reads only
// the idle partition; it then follows subtask 0's watermark.
func TestWatermarkIdlePartition(t *testing.T) {
	b := srcBroker(t, 2, "idle")
	produce(t, b.Addr(), "idle", tsMsg(0, 1, 5*time.Second), tsMsg(0, 2, 10*time.Second))
	want := wmT0.Add(9 * time.Second).UnixNano()
	unbounded := []string{"scan.bounded.mode", ""}

	ctx, cancel := context.WithCancel(context.Background())
	r, done := runWM(t, wmTable(t, b.Addr(), "idle", 0, unbounded...), 0, 1, dataflow.NewShared(), ctx)
	waitFor(t, func() bool { return r.rows() == 2 })
	time.Sleep(400 * time.Millisecond)
	if r.watermark() != dataflow.MinWatermark {
		t.Fatalf("without an idle timeout the empty partition let the watermark reach %v", time.Duration(r.watermark()-wmT0.UnixNano()))
	}
	cancel()
	<-done

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	r, done = runWM(t, wmTable(t, b.Addr(), "idle", 100*time.Millisecond, unbounded...), 0, 1, dataflow.NewShared(), ctx)
	waitFor(t, func() bool { return r.watermark() == want })
	cancel()
	<-done

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	sc, shared := wmTable(t, b.Addr(), "idle", 100*time.Millisecond, unbounded...), dataflow.NewShared()
	r0, d0 := runWM(t, sc, 0, 2, shared, ctx)
	r1, d1 := runWM(t, sc, 1, 2, shared, ctx)
	waitFor(t, func() bool { return r0.watermark() == want && r1.watermark() == want })
	if r1.rows() != 0 {
		t.Fatal("subtask 1 read rows of partition 0")
	}
	cancel()
	<-d0
	<-d1
}
