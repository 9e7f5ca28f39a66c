package engine

import (
	"bufio"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/parser"
)

// A windowed job killed mid-way and restarted from its checkpoint
// produces exactly the windows of an uninterrupted run: its slices,
// timers and watermark are keyed state in Pebble, and the nexmark source
// resumes at its saved event number.
//
// The job: HOP windows (slide 100 ms, size 500 ms, so slices and the
// chain of next-window timers are in the state) over the bids of the
// nexmark generator (one source subtask: sources cannot be rescaled), per
// auction % 7, the aggregation at parallelism 2, into a print sink
// keyed by (k, window_start). The reference is the same job run to the
// end without interruption (its own directory, no restore); besides the
// final upsert views being equal, every row either run ever printed must
// be the reference's row for that window (the sink is at-least-once: the
// restarted run may print again what the killed one printed after its
// last checkpoint, but never a different value).
const windowCkptJob = `
SET 'pipeline.name' = 'window-ckpt-test';
SET 'execution.checkpointing.interval' = '50 ms';
SET 'state.checkpoints.dir' = '%s';
SET 'state.backend.type' = 'pebble';
SET 'parallelism.default' = '%d';
CREATE TABLE bid (auction BIGINT, price BIGINT, dateTime TIMESTAMP(3),
  WATERMARK FOR dateTime AS dateTime - INTERVAL '1' SECOND)
WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '%d', 'tps' = '%d', 'first-event.rate' = '20000', 'scan.parallelism' = '1');
CREATE TABLE res (k BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), c BIGINT, s BIGINT,
  PRIMARY KEY (k, ws) NOT ENFORCED) WITH ('connector' = 'print');
INSERT INTO res SELECT auction %% 7, window_start, window_end, COUNT(*), SUM(price)
FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '100' MILLISECOND, INTERVAL '500' MILLISECOND))
GROUP BY auction %% 7, window_start, window_end;
`

var windowOutLine = regexp.MustCompile(`^(?:\d+> )?(\+I|-U|\+U|-D)\[(\d+), ([^,]+), ([^,]+), (\d+), (\d+)\]$`)

// waitWindows polls cond for up to 20 s.
func waitWindows(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func startWindowJob(t *testing.T, dir string, events, tps int, extra ...string) (*Job, *syncBuffer) {
	return startWindowJobAt(t, dir, 2, events, tps, extra...)
}

func startWindowJobAt(t *testing.T, dir string, parallelism, events, tps int, extra ...string) (*Job, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	s := NewSession(out)
	stmts, err := parser.Parse(strings.Join(extra, "\n") + fmt.Sprintf(windowCkptJob, dir, parallelism, events, tps))
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
	return job, out
}

// windowRows parses printed rows into window -> "count, sum"; a window
// printed twice with different values is an error.
func windowRows(t *testing.T, out string, into map[string]string) int {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := windowOutLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		if m[1] != "+I" {
			t.Fatalf("a window aggregation printed %s: %s", m[1], sc.Text())
		}
		key, val := m[2]+"|"+m[3]+"|"+m[4], m[5]+", "+m[6]
		if old, ok := into[key]; ok && old != val {
			t.Fatalf("window %s printed as %s and as %s", key, old, val)
		}
		into[key] = val
		n++
	}
	return n
}

func TestWindowRestoreEqualsUninterruptedRun(t *testing.T) {
	const events = 60000
	// The reference: one uninterrupted run, as fast as possible.
	ref := map[string]string{}
	j0, out0 := startWindowJob(t, t.TempDir(), events, 0)
	if err := j0.Wait(); err != nil {
		t.Fatal(err)
	}
	if windowRows(t, out0.String(), ref) < 100 {
		t.Fatalf("the reference run printed only %d windows", len(ref))
	}

	dir := t.TempDir()
	j1, out1 := startWindowJob(t, dir, events, 20000)
	// Wait until a checkpoint completed after some windows were printed.
	waitWindows(t, func() bool {
		st, ok := j1.CheckpointStats()
		return ok && st.Completed > 0 && strings.Contains(out1.String(), "+I[")
	})
	j1.Cancel() // the process "dies": only checkpoints survive
	_ = j1.Wait()
	// The restored run must read part of the input only (checked below):
	// that, not how many windows the first run printed before the cancel
	// reached it, shows that the kill came mid-way.
	got := map[string]string{}
	windowRows(t, out1.String(), got)
	j2, out2 := startWindowJob(t, dir, events, 0)
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	if st, ok := j2.CheckpointStats(); !ok || st.RestoredFrom == "" {
		t.Fatal("the second run did not restore")
	}
	if in, _ := j2.Records(); in <= 0 || in >= events {
		t.Fatalf("the restored run read %d events of %d: it did not resume", in, events)
	}
	windowRows(t, out2.String(), got)
	if len(got) != len(ref) {
		t.Fatalf("%d windows after the restart, %d in the uninterrupted run", len(got), len(ref))
	}
	for k, want := range ref {
		if got[k] != want {
			t.Fatalf("window %s: %q after the restart, %q uninterrupted", k, got[k], want)
		}
	}
}

// A savepoint of the windowed job restored at parallelism 1 and 3: the
// slices, timers and watermarks are re-split by key group (the timers and
// watermarks live under per-key-group anchors), and the windows are those
// of the uninterrupted run.
func TestWindowSavepointRescaling(t *testing.T) {
	const events = 60000
	ref := map[string]string{}
	j0, out0 := startWindowJob(t, t.TempDir(), events, 0)
	if err := j0.Wait(); err != nil {
		t.Fatal(err)
	}
	windowRows(t, out0.String(), ref)
	for _, p := range []int{1, 3} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			sp := t.TempDir() + "/sp"
			j1, out1 := startWindowJob(t, t.TempDir(), events, 10000)
			waitWindows(t, func() bool { return strings.Contains(out1.String(), "+I[") })
			if err := j1.coord.Savepoint(sp); err != nil {
				t.Fatal(err)
			}
			j1.Cancel()
			_ = j1.Wait()
			// The restored run reads part of the input only (checked
			// below): the savepoint was taken mid-way, however many windows
			// the first run printed before the cancel reached it.
			got := map[string]string{}
			windowRows(t, out1.String(), got)
			j2, out2 := startWindowJobAt(t, t.TempDir(), p, events, 0, fmt.Sprintf("SET 'execution.savepoint.path' = '%s';", sp))
			if err := j2.Wait(); err != nil {
				t.Fatal(err)
			}
			if in, _ := j2.Records(); in <= 0 || in >= events {
				t.Fatalf("the restored run read %d events of %d: it did not resume", in, events)
			}
			windowRows(t, out2.String(), got)
			if len(got) != len(ref) {
				t.Fatalf("%d windows after the rescaled restore, %d in the uninterrupted run", len(got), len(ref))
			}
			for k, want := range ref {
				if got[k] != want {
					t.Fatalf("window %s: %q after the rescaled restore, %q uninterrupted", k, got[k], want)
				}
			}
		})
	}
}
