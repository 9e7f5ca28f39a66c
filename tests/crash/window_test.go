package crash

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var windowRows = flag.Int("window-rows", 4_000_000, "input rows of the windowed kill -9 test")

// windowJob: a TUMBLE window aggregation over event time (watermark 1 s
// behind), written to the exactly-once filesystem sink, checkpoints every
// 100 ms.
const windowJob = `
SET 'state.backend.type' = '%s';
SET 'pipeline.name' = 'window-crashloop';
SET 'execution.checkpointing.interval' = '100 ms';
SET 'state.checkpoints.dir' = '%s';
CREATE TABLE ev (seq BIGINT, user_id BIGINT, v BIGINT, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
CREATE TABLE out_t (user_id BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, total BIGINT)
  WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO out_t
SELECT user_id, window_start, window_end, COUNT(*), SUM(v)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY user_id, window_start, window_end;
`

type winKey struct {
	user int64
	ws   string
}

type winVal struct{ n, total int64 }

// TestWindowCrashLoop kills a windowed job with SIGKILL at random
// moments, restarts it from its checkpoints each time, and lets the last
// run finish. The committed part files must then hold exactly the
// windows of an uninterrupted run, each once: the windows computed
// straight from the input. Rows are up to 500 ms out of order, inside
// the 1 s watermark delay, so none is late.
func TestWindowCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("the windowed crash loop takes a minute; it runs in CI without -short")
	}
	for _, b := range backends {
		// 10 kills planned on the default backend; see the check at the end.
		t.Run(b.name, func(t *testing.T) { windowCrashLoop(t, b.name, backendKills(10, b.div)) })
	}
}

func windowCrashLoop(t *testing.T, backend string, kills int) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "streamsql")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/streamsql").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	r := rand.New(rand.NewPCG(*seed, 13))
	data := filepath.Join(dir, "ev.jsonl")
	f, err := os.Create(data)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	ref := map[winKey]winVal{}
	for seq := 0; seq < *windowRows; seq++ {
		ts := base.Add(time.Duration(seq)*100*time.Microsecond - time.Duration(r.IntN(500))*time.Millisecond)
		user := int64(r.IntN(50))
		v := int64(r.IntN(1000))
		fmt.Fprintf(w, `{"seq":%d,"user_id":%d,"v":%d,"ts":"%s"}`+"\n", seq, user, v, ts.Format("2006-01-02 15:04:05.000"))
		ws := ts.Truncate(10 * time.Second).Format("2006-01-02 15:04:05.000")
		k := winKey{user, ws}
		a := ref[k]
		a.n++
		a.total += v
		ref[k] = a
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := filepath.Join(dir, "out")
	script := filepath.Join(dir, "job.sql")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(windowJob, backend, filepath.Join(dir, "ckpt"), data, out)), 0o644); err != nil {
		t.Fatal(err)
	}
	killed, restored := 0, 0
	for run := 0; ; run++ {
		errPath := filepath.Join(dir, fmt.Sprintf("run-%d.err", run))
		ef, _ := os.Create(errPath)
		cmd := exec.Command(bin, "-f", script)
		cmd.Stdout, cmd.Stderr = ef, ef
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var werr error
		if killed >= kills {
			select {
			case werr = <-done:
			case <-time.After(10 * time.Minute):
				_ = cmd.Process.Kill()
				t.Fatal("the final run did not finish")
			}
		} else {
			// Every other kill waits for a checkpoint of this run to
			// complete first, so that the next run restores from it however
			// slow the machine is; the others come at any moment, also
			// before the first checkpoint.
			var due <-chan time.Time
			if run%2 == 1 {
				due = afterNewCheckpoint(filepath.Join(dir, "ckpt", "window-crashloop"), time.Now(),
					time.Duration(r.IntN(150))*time.Millisecond)
			} else {
				due = time.After(time.Duration(100+r.IntN(350)) * time.Millisecond)
			}
			select {
			case werr = <-done:
			case <-due:
				_ = cmd.Process.Signal(syscall.SIGKILL)
				werr = <-done
			}
		}
		ef.Close()
		if msg, _ := os.ReadFile(errPath); strings.Contains(string(msg), "restoring from checkpoint") {
			restored++
		}
		if st := cmd.ProcessState.Sys().(syscall.WaitStatus); st.Signaled() {
			killed++
			continue
		}
		if werr != nil {
			msg, _ := os.ReadFile(errPath)
			t.Fatalf("run %d failed: %v\n%s", run, werr, msg)
		}
		break // finished cleanly
	}
	got := map[winKey]winVal{}
	dup := 0
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("in-progress file left: %s", e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var row struct {
				UserID int64  `json:"user_id"`
				WS     string `json:"ws"`
				N      int64  `json:"n"`
				Total  int64  `json:"total"`
			}
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("%s: %q: %v", e.Name(), line, err)
			}
			k := winKey{row.UserID, row.WS}
			if _, seen := got[k]; seen {
				dup++
			}
			got[k] = winVal{row.N, row.Total}
		}
	}
	mismatched := 0
	for k, want := range ref {
		if got[k] != want {
			if mismatched < 3 {
				t.Errorf("window %+v: got %+v, want %+v", k, got[k], want)
			}
			mismatched++
		}
	}
	extra := len(got) - (len(ref) - mismatched)
	t.Logf("windowed, %s: kills=%d restored runs=%d windows=%d duplicated=%d mismatched=%d extra=%d rows=%d", backend, killed, restored, len(ref), dup, mismatched, max(extra, 0), *windowRows)
	fmt.Printf("windowed, %s: kills=%d duplicated=%d mismatched=%d\n", backend, killed, dup, mismatched)
	if dup != 0 || mismatched != 0 || len(got) != len(ref) {
		t.Fatalf("%d windows written twice, %d wrong, %d written in all for %d", dup, mismatched, len(got), len(ref))
	}
	// A restored run may finish before its kill comes: the input is then
	// done, with fewer kills than planned, which is fine if enough came.
	if killed < kills/2 {
		t.Fatalf("only %d kills", killed)
	}
	if restored < 3 {
		t.Fatalf("only %d runs restored from a checkpoint: the kills came too early to prove much", restored)
	}
}

// afterNewCheckpoint fires delay after a checkpoint of the job in dir
// completed (its _metadata was written) after since, or after 30 s.
func afterNewCheckpoint(dir string, since time.Time, delay time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	go func() {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			metas, _ := filepath.Glob(filepath.Join(dir, "chk-*", "_metadata"))
			for _, m := range metas {
				if fi, err := os.Stat(m); err == nil && fi.ModTime().After(since) {
					time.Sleep(delay)
					ch <- time.Now()
					return
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		ch <- time.Now()
	}()
	return ch
}
