// Package crash holds the kill -9 test: a checkpointed job runs as a real
// separate process and is killed with SIGKILL at random moments, some of
// them in the middle of a snapshot, restarted each time, and finally
// allowed to finish. Its output must then equal the result computed
// straight from the input, key by key.
//
// Run the full version with scripts/crashloop.sh; `go test` runs it with
// the defaults below.
package crash

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/s3test"
)

var (
	kills = flag.Int("kills", 20, "SIGKILLs before the job may finish (on pebble; hashmap gets a third: see backends)")
	rows  = flag.Int("rows", 2_000_000, "input rows")
	users = flag.Int("users", 5000, "distinct user ids")
	seed  = flag.Uint64("seed", 1, "random seed for data and kill times")
)

type agg struct{ n, sum, lo, hi int64 }

// generate writes the input (JSON lines; about 5% duplicates of earlier
// bill ids with different amounts, which deduplication must drop) and
// returns the reference result computed directly from it.
func generate(t *testing.T, path string, r *rand.Rand) map[string]agg {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	seen := map[int64]bool{}
	ref := map[string]agg{}
	var next int64
	for seq := 0; seq < *rows; seq++ {
		var bill int64
		if next > 0 && r.IntN(100) < 5 {
			bill = r.Int64N(next) // a duplicate of an earlier bill
		} else {
			next++
			bill = next
		}
		user := fmt.Sprintf("u%d", r.IntN(*users))
		amount := r.Int64N(10000) - 100
		fmt.Fprintf(w, `{"seq":%d,"bill_id":%d,"user_id":"%s","amount":%d}`+"\n", seq, bill, user, amount)
		if seen[bill] {
			continue // keep-first: later copies are dropped
		}
		seen[bill] = true
		a, ok := ref[user]
		if !ok {
			a = agg{lo: amount, hi: amount}
		}
		a.n++
		a.sum += amount
		a.lo, a.hi = min(a.lo, amount), max(a.hi, amount)
		ref[user] = a
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return ref
}

// backends are the state backends every kill -9 test runs on: the one
// 'auto' picks for a checkpointed job (pebble) with the full number of
// kills, hashmap with a third of them (at least 4), to keep CI time in
// check.
var backends = []struct {
	name string
	div  int
}{{"pebble", 1}, {"hashmap", 3}}

// backendKills is the number of kills for a backend's run of a test
// that plans n on the default backend.
func backendKills(n, div int) int { return max(n/div, min(n, 4)) }

const job = `
SET 'state.backend.type' = '%s';
SET 'pipeline.name' = 'crashloop';
SET 'execution.checkpointing.interval' = '200 ms';
SET 'state.checkpoints.dir' = '%s';
CREATE TABLE bills (seq BIGINT, bill_id BIGINT, user_id STRING, amount BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE totals (user_id STRING, n BIGINT, total BIGINT, lo BIGINT, hi BIGINT,
  PRIMARY KEY (user_id) NOT ENFORCED) WITH ('connector' = 'print');
INSERT INTO totals
SELECT user_id, COUNT(*), SUM(amount), MIN(amount), MAX(amount)
FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bill_id ORDER BY seq) AS rn FROM bills)
WHERE rn = 1
GROUP BY user_id;
`

var line = regexp.MustCompile(`^(\+I|-U|\+U|-D)\[(u\d+), (-?\d+), (-?\d+), (-?\d+), (-?\d+)\]$`)

// apply reads one run's output into the upsert view: the last +I/+U of
// a key wins, -D removes it. A line cut by the kill is ignored.
func apply(t *testing.T, path string, view map[string]agg) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var v [4]int64
		for i := range v {
			v[i], _ = strconv.ParseInt(m[3+i], 10, 64)
		}
		switch m[1] {
		case "+I", "+U":
			view[m[2]] = agg{v[0], v[1], v[2], v[3]}
		case "-D":
			delete(view, m[2])
		}
	}
}

func TestCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash loop takes a minute; it runs in CI without -short")
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { crashLoop(t, b.name, backendKills(*kills, b.div), "") })
	}
}

// TestCrashLoopS3 is the crash loop with the checkpoints in S3 (an
// in-process server in the test, which outlives every killed job
// process): a job killed while uploading, or after uploading and before
// its metadata, restores from the bucket alone.
func TestCrashLoopS3(t *testing.T) {
	if testing.Short() {
		t.Skip("the crash loop takes a minute; it runs in CI without -short")
	}
	s := s3test.Start(t, "crash")
	crashLoop(t, "pebble", backendKills(*kills, 5), s.Location("jobs"))
}

// crashLoop runs the loop with the checkpoints in ckpt, or in a local
// directory if it is empty.
func crashLoop(t *testing.T, backend string, kills int, ckpt string) {
	dir := t.TempDir()
	if ckpt == "" {
		ckpt = filepath.Join(dir, "ckpt")
	}
	bin := filepath.Join(dir, "streamsql")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/streamsql")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	r := rand.New(rand.NewPCG(*seed, 7))
	data := filepath.Join(dir, "bills.jsonl")
	ref := generate(t, data, r)
	script := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(job, backend, ckpt, data)), 0o644); err != nil {
		t.Fatal(err)
	}
	view := map[string]agg{}
	killed, inSnapshot := 0, 0
	for run := 0; ; run++ {
		out := filepath.Join(dir, fmt.Sprintf("run-%d.out", run))
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		errPath := filepath.Join(dir, fmt.Sprintf("run-%d.err", run))
		ef, _ := os.Create(errPath)
		finish := killed >= kills
		hook := !finish && run%4 == 3
		args := []string{"-f", script}
		if hook {
			// Die inside this run's first checkpoint, after the state
			// snapshots are written and before the metadata is.
			args = append(args, "--set", "test.crash.in-checkpoint=1")
		}
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = f, ef
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var werr error
		if finish {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			select {
			case werr = <-done:
			case <-ctx.Done():
				_ = cmd.Process.Kill()
				t.Fatal("the final run did not finish")
			}
			cancel()
		} else {
			delay := time.Duration(100+r.IntN(1400)) * time.Millisecond
			if hook {
				delay = 10 * time.Second // let the hook fire first
			}
			select {
			case werr = <-done:
			case <-time.After(delay):
				_ = cmd.Process.Signal(syscall.SIGKILL)
				werr = <-done
			}
		}
		f.Close()
		ef.Close()
		status := cmd.ProcessState.Sys().(syscall.WaitStatus)
		switch {
		case status.Signaled():
			killed++
		case status.ExitStatus() == 137:
			killed++
			inSnapshot++
		case werr != nil:
			msg, _ := os.ReadFile(errPath)
			t.Fatalf("run %d failed: %v\n%s", run, werr, msg)
		}
		apply(t, out, view)
		if status.Exited() && status.ExitStatus() == 0 {
			break
		}
		if run > kills*4+20 {
			t.Fatalf("no clean finish after %d runs", run)
		}
	}
	mismatched := 0
	for k, want := range ref {
		if got, ok := view[k]; !ok || got != want {
			if mismatched < 5 {
				t.Errorf("user %s: got %+v (present %v), want %+v", k, view[k], ok, want)
			}
			mismatched++
		}
	}
	for k := range view {
		if _, ok := ref[k]; !ok {
			mismatched++
			t.Errorf("user %s is in the output but not in the input", k)
		}
	}
	t.Logf("%s: kills=%d (in snapshot: %d) mismatched_keys=%d keys=%d rows=%d", backend, killed, inSnapshot, mismatched, len(ref), *rows)
	fmt.Printf("%s: kills=%d mismatched_keys=%d\n", backend, killed, mismatched)
	if killed < kills {
		t.Fatalf("only %d kills", killed)
	}
	if strings.TrimSpace(os.Getenv("CRASH_KEEP")) != "" {
		t.Logf("work dir kept: %s", dir)
	}
}
