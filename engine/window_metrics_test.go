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
