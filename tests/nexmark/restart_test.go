package nexmark_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

// A windowed job over the nexmark source, checkpointed every 50 ms: bids
// per auction per 10 s tumbling window, written to a print sink keyed by
// (auction, window start). The first run is rate-limited so that it is
// cancelled (a crash, as far as the job is concerned) part-way; the second
// run restores the newest checkpoint and finishes. Their combined output,
// folded as upserts, must be exactly the windows of the whole input.
const restartJob = `
SET 'pipeline.name' = 'nexmark-restart';
SET 'execution.checkpointing.interval' = '50 ms';
SET 'state.checkpoints.dir' = '%s';
CREATE TABLE bid (auction BIGINT, price BIGINT, dateTime TIMESTAMP(3),
  WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
WITH ('connector' = 'nexmark', 'table' = 'bid', 'events.num' = '%d', 'tps' = '%d',
  'first-event.rate' = '%d', 'first-event.time' = '%s', 'seed' = '%d');
CREATE TABLE res (auction BIGINT, wstart TIMESTAMP(3), n BIGINT, top BIGINT,
  PRIMARY KEY (auction, wstart) NOT ENFORCED) WITH ('connector' = 'print');
INSERT INTO res
SELECT auction, window_start, COUNT(*), MAX(price)
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;
`

const restartEvents = 20000

func startRestartJob(t *testing.T, dir string, tps int) (*engine.Job, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	s := engine.NewSession(&out)
	stmts, err := parser.Parse(fmt.Sprintf(restartJob, dir, restartEvents, tps, eventRate, firstEvent, testSeed))
	if err != nil {
		t.Fatal(err)
	}
	var job *engine.Job
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		if r.Job != nil {
			job = r.Job
		}
	}
	return job, &out
}

var printed = regexp.MustCompile(`^(?:\d+> )?(\+I|-U|\+U|-D)\[(\d+), ([0-9: .-]+), (\d+), (\d+)\]$`)

// foldUpserts applies print output to a view keyed by (auction, start).
func foldUpserts(t *testing.T, out string, view map[string]string) {
	for _, line := range strings.Split(out, "\n") {
		if line == "" {
			continue
		}
		m := printed.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unexpected output line %q", line)
		}
		key := m[2] + "|" + m[3]
		switch m[1] {
		case "+I", "+U":
			view[key] = m[4] + "|" + m[5]
		case "-D":
			delete(view, key)
		}
	}
}

func TestRestartFromCheckpoint(t *testing.T) {
	dir := t.TempDir()
	j1, out1 := startRestartJob(t, dir, 10000) // about 2 s of wall time
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ := j1.CheckpointStats()
		if st.Completed >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no two checkpoints completed in 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	j1.Cancel()
	_ = j1.Wait()
	if in, _ := j1.Records(); in >= restartEvents*46/50 {
		t.Fatalf("the first run read all %d bids before it was cancelled; nothing is left to restore", in)
	}
	j2, out2 := startRestartJob(t, dir, 0)
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	st, _ := j2.CheckpointStats()
	if st.RestoredFrom == "" {
		t.Fatal("the second run did not restore a checkpoint")
	}
	if in, _ := j2.Records(); in <= 0 || in >= restartEvents*46/50 {
		t.Fatalf("the restored run read %d bids of %d: it did not resume from the saved position", in, restartEvents*46/50)
	}
	view := map[string]string{}
	foldUpserts(t, out1.String(), view)
	foldUpserts(t, out2.String(), view)

	// The expected windows, from the generated events.
	want := map[string]string{}
	type agg struct{ n, top int64 }
	aggs := map[string]*agg{}
	for _, b := range split(eventsN(t, restartEvents)).bids {
		k := row(b.Auction, ts(floorTo(b.DateTime, 10*second)))
		a := aggs[k]
		if a == nil {
			a = &agg{}
			aggs[k] = a
		}
		a.n++
		a.top = max(a.top, b.Price)
	}
	for k, a := range aggs {
		want[k] = row(a.n, a.top)
	}
	if len(view) != len(want) {
		t.Errorf("%d windows after the restart, want %d", len(view), len(want))
	}
	bad := 0
	for k, w := range want {
		if got := view[k]; got != w && bad < 5 {
			t.Errorf("window %s: got %q, want %q", k, got, w)
			bad++
		}
	}
}
