package engine

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streamsql/streamsql/parser"
)

// The job: a bounded sequence 1..rows (source parallelism 1), grouped by
// k % 97 with COUNT and SUM, written to a print sink keyed by the group.
const ckptJob = `
SET 'pipeline.name' = 'ckpt-test';
SET 'execution.checkpointing.interval' = '50 ms';
SET 'state.checkpoints.dir' = '%s';
SET 'parallelism.default' = '%d';
CREATE TABLE seq (k BIGINT) WITH ('connector' = 'datagen', 'scan.parallelism' = '1', 'rows-per-second' = '%d',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '%d');
CREATE TABLE res (g BIGINT, n BIGINT, s BIGINT, PRIMARY KEY (g) NOT ENFORCED) WITH ('connector' = 'print');
INSERT INTO res SELECT k %% 97, COUNT(*), SUM(k) FROM seq GROUP BY k %% 97;
`

type gs struct{ n, s int64 }

func reference(rows int) map[int64]gs {
	ref := map[int64]gs{}
	for k := int64(1); k <= int64(rows); k++ {
		g := ref[k%97]
		g.n++
		g.s += k
		ref[k%97] = g
	}
	return ref
}

var outLine = regexp.MustCompile(`^(?:\d+> )?(\+I|-U|\+U|-D)\[(\d+), (\d+), (\d+)\]$`)

// applyOut folds print output into the upsert view of the sink.
func applyOut(out string, view map[int64]gs) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		m := outLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		g, _ := strconv.ParseInt(m[2], 10, 64)
		n, _ := strconv.ParseInt(m[3], 10, 64)
		s, _ := strconv.ParseInt(m[4], 10, 64)
		switch m[1] {
		case "+I", "+U":
			view[g] = gs{n, s}
		case "-D":
			delete(view, g)
		}
	}
}

// startCkptJob runs the job's statements in a fresh session (a fresh
// process, as far as state goes) and returns the INSERT's job.
func startCkptJob(t *testing.T, dir string, parallelism, rps, rows int, extra ...string) (*Session, *Job, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	s := NewSession(&out)
	sql := strings.Join(extra, "\n") + fmt.Sprintf(ckptJob, dir, parallelism, rps, rows)
	stmts, err := parser.Parse(sql)
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
	return s, job, &out
}

func compare(t *testing.T, view, ref map[int64]gs) {
	t.Helper()
	if len(view) != len(ref) {
		t.Fatalf("%d groups, want %d", len(view), len(ref))
	}
	for g, want := range ref {
		if view[g] != want {
			t.Fatalf("group %d: got %+v, want %+v", g, view[g], want)
		}
	}
}

func TestRestoreAfterCrashEqualsUninterruptedRun(t *testing.T) {
	dir := t.TempDir()
	const rows = 30000
	_, j1, out1 := startCkptJob(t, dir, 2, 10000, rows)
	// Kill after a checkpoint that holds part of the input: one completed
	// once a quarter of the rows were read.
	waitFor(t, "a quarter of the rows", func() bool { in, _ := j1.Records(); return in >= rows/4 })
	before := j1.coord.Stats().Completed
	waitFor(t, "a checkpoint mid-way", func() bool { return j1.coord.Stats().Completed > before })
	j1.Cancel() // the process "dies": only checkpoints survive
	_ = j1.Wait()
	_, j2, out2 := startCkptJob(t, dir, 2, 0, rows)
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	if j2.coord.Stats().RestoredFrom == "" {
		t.Fatal("the second run did not restore")
	}
	// It resumed from the saved position instead of re-reading everything.
	if in, _ := j2.Records(); in <= 0 || in >= rows {
		t.Fatalf("the restored run read %d rows of %d", in, rows)
	}
	view := map[int64]gs{}
	applyOut(out1.String(), view)
	applyOut(out2.String(), view)
	compare(t, view, reference(rows))
}

func TestSavepointRescaling(t *testing.T) {
	const rows = 30000
	ref := reference(rows)
	for _, p := range []int{1, 4} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			dir := t.TempDir()
			sp := filepath.Join(t.TempDir(), "sp")
			_, j1, out1 := startCkptJob(t, dir, 2, 10000, rows)
			waitFor(t, "rows out of the first run", func() bool { in, _ := j1.Records(); return in > 0 })
			if err := j1.coord.Savepoint(sp); err != nil {
				t.Fatal(err)
			}
			j1.Cancel()
			_ = j1.Wait()
			// Copy the savepoint elsewhere: it must stay valid.
			moved := filepath.Join(t.TempDir(), "moved")
			if err := os.Rename(sp, moved); err != nil {
				t.Fatal(err)
			}
			_, j2, out2 := startCkptJob(t, t.TempDir(), p, 0, rows, fmt.Sprintf("SET 'execution.savepoint.path' = '%s';", moved))
			if err := j2.Wait(); err != nil {
				t.Fatal(err)
			}
			if in, _ := j2.Records(); in <= 0 || in >= rows {
				t.Fatalf("the restored run read %d rows of %d: it did not resume from the savepoint", in, rows)
			}
			view := map[int64]gs{}
			applyOut(out1.String(), view)
			applyOut(out2.String(), view)
			compare(t, view, ref)
		})
	}
}

// TestSavepointSwitchesBackend: a savepoint taken on one state backend
// (in the canonical format: key-group files) restores on the other, at
// another parallelism. (The kill -9 tests cover each backend restoring
// its own checkpoints.)
func TestSavepointSwitchesBackend(t *testing.T) {
	const rows = 30000
	ref := reference(rows)
	for _, c := range []struct{ from, to string }{{"pebble", "hashmap"}, {"hashmap", "pebble"}} {
		t.Run(c.from+"->"+c.to, func(t *testing.T) {
			set := func(b string) string { return fmt.Sprintf("SET 'state.backend.type' = '%s';", b) }
			sp := filepath.Join(t.TempDir(), "sp")
			_, j1, out1 := startCkptJob(t, t.TempDir(), 2, 10000, rows, set(c.from))
			waitFor(t, "rows out of the first run", func() bool { in, _ := j1.Records(); return in > 0 })
			if err := j1.coord.Savepoint(sp); err != nil {
				t.Fatal(err)
			}
			j1.Cancel()
			_ = j1.Wait()
			if kgs, _ := filepath.Glob(filepath.Join(sp, "node-*", "kg-*")); len(kgs) == 0 {
				t.Fatalf("the %s savepoint has no key-group files: not in the canonical format", c.from)
			}
			_, j2, out2 := startCkptJob(t, t.TempDir(), 3, 0, rows, set(c.to), fmt.Sprintf("SET 'execution.savepoint.path' = '%s';", sp))
			if err := j2.Wait(); err != nil {
				t.Fatal(err)
			}
			if in, _ := j2.Records(); in <= 0 || in >= rows {
				t.Fatalf("the restored run read %d rows of %d: it did not resume from the savepoint", in, rows)
			}
			view := map[int64]gs{}
			applyOut(out1.String(), view)
			applyOut(out2.String(), view)
			compare(t, view, ref)
		})
	}
}

func TestCorruptNewestCheckpointFallsBack(t *testing.T) {
	dir := t.TempDir()
	const rows = 30000
	_, j1, out1 := startCkptJob(t, dir, 1, 20000, rows)
	deadline := time.Now().Add(5 * time.Second)
	for j1.coord.Stats().Completed < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	j1.Cancel()
	_ = j1.Wait()
	jobDir := filepath.Join(dir, "ckpt-test")
	ids, _ := checkpointIDs(jobDir)
	if len(ids) < 2 {
		t.Fatalf("want at least 2 retained checkpoints, have %v", ids)
	}
	// Flip a byte of the newest metadata.
	meta := filepath.Join(jobDir, fmt.Sprintf("chk-%d", ids[0]), "_metadata")
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x5a
	if err := os.WriteFile(meta, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, j2, out2 := startCkptJob(t, dir, 1, 0, rows)
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := j2.coord.Stats().RestoredFrom; !strings.HasSuffix(got, fmt.Sprintf("chk-%d", ids[1])) {
		t.Fatalf("restored from %q, want the previous checkpoint chk-%d", got, ids[1])
	}
	view := map[int64]gs{}
	applyOut(out1.String(), view)
	applyOut(out2.String(), view)
	compare(t, view, reference(rows))
}

func TestChangedPlanIsRefused(t *testing.T) {
	dir := t.TempDir()
	_, j1, _ := startCkptJob(t, dir, 1, 20000, 30000)
	deadline := time.Now().Add(5 * time.Second)
	for j1.coord.Stats().Completed < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	j1.Cancel()
	_ = j1.Wait()
	s := NewSession(&bytes.Buffer{})
	stmts, _ := parser.Parse(fmt.Sprintf(strings.Replace(ckptJob, "COUNT(*), SUM(k)", "COUNT(*), MAX(k)", 1), dir, 1, 0, 30000))
	var err error
	for _, st := range stmts {
		if _, err = s.Execute(context.Background(), st); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "different query plan") {
		t.Fatalf("err = %v", err)
	}
}

func checkpointIDs(dir string) ([]int64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), "chk-"); ok {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "_metadata")); err != nil {
				continue
			}
			v, _ := strconv.ParseInt(n, 10, 64)
			ids = append(ids, v)
		}
	}
	for i := 0; i < len(ids); i++ { // newest first
		for k := i + 1; k < len(ids); k++ {
			if ids[k] > ids[i] {
				ids[i], ids[k] = ids[k], ids[i]
			}
		}
	}
	return ids, nil
}

func TestTruncatedStateFileFallsBack(t *testing.T) {
	dir := t.TempDir()
	const rows = 30000
	_, j1, out1 := startCkptJob(t, dir, 1, 20000, rows)
	deadline := time.Now().Add(5 * time.Second)
	for j1.coord.Stats().Completed < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	j1.Cancel()
	_ = j1.Wait()
	jobDir := filepath.Join(dir, "ckpt-test")
	ids, _ := checkpointIDs(jobDir)
	if len(ids) < 2 {
		t.Fatalf("want at least 2 retained checkpoints, have %v", ids)
	}
	// Truncate the state files that belong to the newest checkpoint alone
	// (those shared by hard link with older ones are the same files).
	newest := filepath.Join(jobDir, fmt.Sprintf("chk-%d", ids[0]))
	truncated := 0
	_ = filepath.WalkDir(newest, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "_metadata" {
			info, _ := d.Info()
			if st, ok := info.Sys().(*syscall.Stat_t); ok && st.Nlink == 1 && info.Size() > 10 {
				truncated++
				return os.Truncate(p, info.Size()/2)
			}
		}
		return nil
	})
	if truncated == 0 {
		t.Fatal("no state file to truncate")
	}
	_, j2, out2 := startCkptJob(t, dir, 1, 0, rows)
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := j2.coord.Stats().RestoredFrom; !strings.HasSuffix(got, fmt.Sprintf("chk-%d", ids[1])) {
		t.Fatalf("restored from %q, want the previous checkpoint chk-%d", got, ids[1])
	}
	view := map[int64]gs{}
	applyOut(out1.String(), view)
	applyOut(out2.String(), view)
	compare(t, view, reference(rows))
}

// Checkpoints go on after one source has finished (FLIP-147): a bounded
// values table unioned with an unbounded datagen stream keeps
// checkpointing while the stream runs. (Before, the first finished source
// stopped all checkpoints.)
func TestCheckpointsContinueAfterASourceFinishes(t *testing.T) {
	s := NewSession(io.Discard)
	stmts, err := parser.Parse(`SET 'execution.checkpointing.interval' = '30 ms';
SET 'state.checkpoints.dir' = '` + t.TempDir() + `';
CREATE TABLE fixed (k BIGINT) WITH ('connector' = 'values');
INSERT INTO fixed VALUES (1), (2);
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '1000');
CREATE TABLE out_t (k BIGINT, n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out_t SELECT k % 10, COUNT(*) FROM (SELECT k FROM fixed UNION ALL SELECT k FROM gen) GROUP BY k % 10;`)
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
	// The values source ends at once; wait until checkpoints have had time
	// to stop, then check that they did not.
	time.Sleep(300 * time.Millisecond)
	st, _ := job.CheckpointStats()
	before := st.Completed
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ = job.CheckpointStats()
		if st.Completed >= before+3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoints stopped: %d completed before, %d after 10 s", before, st.Completed)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
