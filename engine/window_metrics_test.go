package engine

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/parser"
)

// The window aggregation's late rows show in the job's operator metrics.
// The rows (watermark = largest time seen, after every row): 01, 04, 10
// (fires [0, 10)), 09 and 05 (both late), 19, 25: two late rows.
func TestWindowLateRowsInJobMetrics(t *testing.T) {
	var out bytes.Buffer
	s := NewSession(&out)
	stmts, err := parser.Parse(`
CREATE TABLE bids (auction BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'values');
INSERT INTO bids VALUES (1, TIMESTAMP '2024-01-01 00:00:01'), (2, TIMESTAMP '2024-01-01 00:00:04'),
  (1, TIMESTAMP '2024-01-01 00:00:10'), (1, TIMESTAMP '2024-01-01 00:00:09'), (2, TIMESTAMP '2024-01-01 00:00:05'),
  (2, TIMESTAMP '2024-01-01 00:00:19'), (1, TIMESTAMP '2024-01-01 00:00:25');
CREATE TABLE res (auction BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO res SELECT auction, COUNT(*) FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;`)
	if err != nil {
		t.Fatal(err)
	}
	var job *Job
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		if r.Job != nil {
			job = r.Job
		}
	}
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range job.Metrics() {
		if m.Name != "WindowAggregate" {
			if m.LateRecordsDropped != 0 {
				t.Errorf("%s counts %d late rows", m.Name, m.LateRecordsDropped)
			}
			continue
		}
		found = true
		if m.LateRecordsDropped != 2 {
			t.Fatalf("WindowAggregate: %d late rows, want 2", m.LateRecordsDropped)
		}
	}
	if !found {
		t.Fatal("no WindowAggregate node in the job")
	}
}

// Over an unbounded source the watermark assigner emits periodically
// (pipeline.auto-watermark-interval), and windows fire while the job
// runs: an unbounded nexmark stream at 5,000 events/s, event time
// advancing at the same pace, 200 ms windows and a 100 ms interval.
func TestPeriodicWatermarksFireWindowsOfAnUnboundedSource(t *testing.T) {
	var out syncBuffer
	s := NewSession(&out)
	stmts, err := parser.Parse(`
SET 'pipeline.auto-watermark-interval' = '100 ms';
CREATE TABLE bid (auction BIGINT, dateTime TIMESTAMP(3), WATERMARK FOR dateTime AS dateTime)
WITH ('connector' = 'nexmark', 'table' = 'bid', 'tps' = '5000', 'scan.parallelism' = '1');
CREATE TABLE res (ws TIMESTAMP(3), c BIGINT) WITH ('connector' = 'print');
INSERT INTO res SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '200' MILLISECOND))
GROUP BY window_start, window_end;`)
	if err != nil {
		t.Fatal(err)
	}
	var job *Job
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		if r.Job != nil {
			job = r.Job
		}
	}
	defer func() { job.Cancel(); _ = job.Wait() }()
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(out.String(), "+I[") < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no windows from an unbounded source within 10 s; output:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for a job writing while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Each node reports the size of its state in the last checkpoint, next
// to its checkpoint duration: the aggregation keeps 1,000 groups, so its
// state cannot be smaller than their keys.
func TestStateSizePerNode(t *testing.T) {
	s := NewSession(&bytes.Buffer{})
	dir := t.TempDir()
	stmts, err := parser.Parse(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'state.checkpoints.dir' = '` + dir + `';
CREATE TABLE seq (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20000', 'number-of-rows' = '20000',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '20000');
CREATE TABLE res (g BIGINT, c BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO res SELECT k % 1000, COUNT(*) FROM seq GROUP BY k % 1000;`)
	if err != nil {
		t.Fatal(err)
	}
	var job *Job
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		if r.Job != nil {
			job = r.Job
		}
	}
	if err := job.Wait(); err != nil {
		t.Fatal(err)
	}
	var agg int64
	for _, m := range job.Metrics() {
		if m.StateBytes < 0 {
			t.Errorf("%s: state size %d", m.Name, m.StateBytes)
		}
		if strings.Contains(m.Name, "Aggregate") {
			agg = m.StateBytes
			if m.SnapshotDuration <= 0 {
				t.Errorf("%s: no checkpoint duration next to its state size", m.Name)
			}
		}
	}
	// 1,000 groups of a BIGINT key and a count: at least 1,000 * 8 bytes.
	if agg < 8000 {
		t.Fatalf("the aggregation's state in the last checkpoint: %d bytes, want at least 8000", agg)
	}
}
