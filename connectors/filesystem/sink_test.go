package filesystem_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/streamsql/streamsql/connectors/all"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/engine/enginetest"
)

// fsJob writes the sequence 1..rows, unchanged, to a filesystem sink at
// parallelism 2 with checkpoints every 50 ms.
const fsJob = `
SET 'pipeline.name' = 'fs-sink-test';
SET 'execution.checkpointing.interval' = '50 ms';
SET 'state.checkpoints.dir' = '%s';
SET 'parallelism.default' = '2';
CREATE TABLE seq (k BIGINT) WITH ('connector' = 'datagen', 'scan.parallelism' = '1', 'rows-per-second' = '%d',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '%d');
CREATE TABLE out_t (k BIGINT, s STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = '%s');
INSERT INTO out_t SELECT k, CONCAT('v', CAST(k AS STRING)) FROM seq;
`

func startFS(t *testing.T, ckpt, out, format string, rps, rows int) *engine.Job {
	t.Helper()
	return enginetest.Exec(t, engine.NewSession(&bytes.Buffer{}), fmt.Sprintf(fsJob, ckpt, rps, rows, out, format))[0]
}

// visible reads the committed part files the way a reader of the
// directory does (hidden files skipped) and counts each k.
func visible(t *testing.T, dir string) (map[int64]int, []string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	var hidden []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			hidden = append(hidden, e.Name())
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			line := sc.Text()
			var k int64
			var s string
			if strings.HasPrefix(line, "{") {
				if _, err := fmt.Sscanf(line, `{"k":%d,"s":%q}`, &k, &s); err != nil {
					t.Fatalf("%s: line %q: %v", e.Name(), line, err)
				}
			} else {
				ks, ss, _ := strings.Cut(line, ",")
				if k, err = strconv.ParseInt(ks, 10, 64); err != nil {
					t.Fatalf("%s: line %q: %v", e.Name(), line, err)
				}
				s = ss
			}
			if s != "v"+strconv.FormatInt(k, 10) {
				t.Fatalf("%s: line %q: wrong value", e.Name(), line)
			}
			seen[k]++
		}
	}
	return seen, hidden
}

// A job stopped mid-stream (only its checkpoints survive), with a
// leftover in-progress file such as a kill -9 leaves, restarted from its
// checkpoint: every row is in the committed files exactly once.
func TestFileSinkExactlyOnceAcrossRestart(t *testing.T) {
	for _, format := range []string{"json", "csv"} {
		t.Run(format, func(t *testing.T) {
			ckpt, out := t.TempDir(), t.TempDir()
			const rows = 20000
			j1 := startFS(t, ckpt, out, format, 2000, rows) // 10 s of input: the stop comes mid-stream even on a loaded machine
			// Wait until a checkpoint has committed some part files.
			deadline := time.Now().Add(20 * time.Second)
			var before map[int64]int
			for {
				before, _ = visible(t, out)
				if len(before) > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(before) == 0 {
				t.Fatal("no part file committed while the job ran")
			}
			j1.Cancel()
			_ = j1.Wait()
			// What a crash leaves behind: an in-progress part of a subtask,
			// named as the sink names them, holding rows that must never
			// become visible.
			_, hiddenBefore := visible(t, out)
			ents, _ := os.ReadDir(out)
			var committed string
			for _, e := range ents {
				if !strings.HasPrefix(e.Name(), ".") {
					committed = e.Name()
				}
			}
			parts := strings.Split(committed, "-") // part-out_t-<hash>-<p>-<subtask>-<seq>-<rand>.<ext>
			stray := fmt.Sprintf(".part-%s-%s-%s-%s-999999-deadbeef.%s.inprogress", parts[1], parts[2], parts[3], parts[4], format)
			if err := os.WriteFile(filepath.Join(out, stray), []byte("junk\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			j2 := startFS(t, ckpt, out, format, 0, rows)
			if err := j2.Wait(); err != nil {
				t.Fatal(err)
			}
			if in, _ := j2.Records(); in <= 0 || in >= rows {
				t.Fatalf("the restarted job read %d rows of %d: it did not resume", in, rows)
			}
			seen, hidden := visible(t, out)
			if len(hidden) != 0 {
				t.Fatalf("in-progress files left after the job finished: %v (before restart: %v)", hidden, hiddenBefore)
			}
			for k := int64(1); k <= rows; k++ {
				if seen[k] != 1 {
					t.Fatalf("k=%d is in the committed files %d times, want once", k, seen[k])
				}
			}
			if len(seen) != rows {
				t.Fatalf("%d distinct rows, want %d", len(seen), rows)
			}
		})
	}
}

// A bounded job without checkpoints commits everything when it ends.
func TestFileSinkBoundedJobCommitsAtEnd(t *testing.T) {
	out := t.TempDir()
	enginetest.Run(t, fmt.Sprintf(`
CREATE TABLE src (k BIGINT, s STRING) WITH ('connector' = 'values');
INSERT INTO src VALUES (1, 'v1'), (2, 'v2'), (3, 'v3');
CREATE TABLE out_t (k BIGINT, s STRING) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO out_t SELECT k, s FROM src WHERE k <> 2;`, out))
	seen, hidden := visible(t, out)
	if len(hidden) != 0 || len(seen) != 2 || seen[1] != 1 || seen[3] != 1 {
		t.Fatalf("committed rows %v, hidden files %v; want k=1 and k=3 once", seen, hidden)
	}
}

// An updating query cannot write to the append-only file sink.
func TestFileSinkRejectsUpdates(t *testing.T) {
	out := t.TempDir()
	_, last := enginetest.TryExec(engine.NewSession(&bytes.Buffer{}), fmt.Sprintf(`
CREATE TABLE src (k BIGINT) WITH ('connector' = 'values');
CREATE TABLE out_t (k BIGINT, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO out_t SELECT k, COUNT(*) FROM src GROUP BY k;`, out))
	if last == nil || !strings.Contains(last.Error(), "append-only") {
		t.Fatalf("error %v, want the append-only refusal", last)
	}
}

// The worst moment of two-phase commit: a checkpoint has completed, its
// part files are pre-committed, and the process dies before renaming
// them. The child process runs the job with the test hook that exits
// right there; the restarted job must commit those files from its
// checkpoint and finish with every row exactly once.
func TestFileSinkCrashBetweenPreCommitAndCommit(t *testing.T) {
	if dirs := os.Getenv("FS_SINK_CHILD"); dirs != "" {
		ckpt, out, _ := strings.Cut(dirs, "|")
		j := startFS(t, ckpt, out, "json", 20000, 1_000_000)
		_ = j.Wait()
		t.Fatal("the job ended without the crash hook firing")
	}
	ckpt, out := t.TempDir(), t.TempDir()
	const rows = 1_000_000
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileSinkCrashBetweenPreCommitAndCommit$")
	cmd.Env = append(os.Environ(), "FS_SINK_CHILD="+ckpt+"|"+out, "STREAMSQL_TEST_CRASH_BEFORE_COMMIT=3")
	b, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 137 {
		t.Fatalf("child: %v, want exit 137 from the crash hook\n%s", err, b)
	}
	if !strings.Contains(string(b), "between pre-commit and commit") {
		t.Fatalf("child output lacks the hook's message:\n%s", b)
	}
	_, hidden := visible(t, out)
	if len(hidden) == 0 {
		t.Fatal("the crash left no pre-committed part file: the test would prove nothing")
	}
	j2 := startFS(t, ckpt, out, "json", 0, rows)
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	seen, hidden := visible(t, out)
	if len(hidden) != 0 {
		t.Fatalf("in-progress files left: %v", hidden)
	}
	for k := int64(1); k <= rows; k++ {
		if seen[k] != 1 {
			t.Fatalf("k=%d is in the committed files %d times, want once", k, seen[k])
		}
	}
}

// An unbounded job into an exactly-once sink without checkpointing
// would never commit: it is refused, naming the sink and the option.
func TestFileSinkUnboundedNeedsCheckpointing(t *testing.T) {
	out := t.TempDir()
	jobs, last := enginetest.TryExec(engine.NewSession(&bytes.Buffer{}), fmt.Sprintf(`
CREATE TABLE gen (k BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE out_t (k BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO out_t SELECT k FROM gen;`, out))
	for _, j := range jobs {
		j.Cancel()
	}
	if last == nil || !strings.Contains(last.Error(), "Sink(out_t)") || !strings.Contains(last.Error(), "execution.checkpointing.interval") {
		t.Fatalf("error %v, want a refusal naming the sink and the checkpoint option", last)
	}
}

// An updating query written as Debezium events: replaying the committed
// lines gives the final table. By hand: a gets 1 then 2 (count 2, sum
// 3), b gets 5 (count 1, sum 5); the events are c{a,1,1}, d{a,1,1},
// c{a,2,3}, c{b,1,5} in some order per key, a's in that order.
func TestFileSinkDebeziumChangelog(t *testing.T) {
	out := t.TempDir()
	s := engine.NewSession(&bytes.Buffer{})
	for _, j := range enginetest.Exec(t, s, fmt.Sprintf(`
CREATE TABLE src (k STRING, v BIGINT) WITH ('connector' = 'values');
INSERT INTO src VALUES ('a', 1), ('b', 5), ('a', 2);
CREATE TABLE out_t (k STRING, n BIGINT, s BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'debezium-json');
INSERT INTO out_t SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;`, out)) {
		if err := j.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := os.ReadDir(out)
	table := map[string]string{}
	var events []string
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(out, e.Name()))
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			events = append(events, line)
			var ev struct {
				Before, After *struct {
					K    string
					N, S int64
				}
				Op string
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			switch {
			case ev.Op == "c" && ev.After != nil && ev.Before == nil:
				table[ev.After.K] = fmt.Sprint(ev.After.N, ",", ev.After.S)
			case ev.Op == "d" && ev.Before != nil && ev.After == nil:
				if table[ev.Before.K] != fmt.Sprint(ev.Before.N, ",", ev.Before.S) {
					t.Fatalf("line %q retracts a row that is not there (%q)", line, table[ev.Before.K])
				}
				delete(table, ev.Before.K)
			default:
				t.Fatalf("malformed event %q", line)
			}
		}
	}
	if len(events) != 4 || len(table) != 2 || table["a"] != "2,3" || table["b"] != "1,5" {
		t.Fatalf("events %q give %v; want 4 events giving a=2,3 b=1,5", events, table)
	}
	// The table can be written but not read.
	if _, err := enginetest.TryExec(s, "SELECT * FROM out_t"); err == nil || !strings.Contains(err.Error(), "can only be written") {
		t.Fatalf("reading the debezium-json table: %v, want a write-only error", err)
	}
}

// A bounded job commits its tail on a final checkpoint taken once every
// source is at its end (FLIP-147): submitting the finished job again
// restores that checkpoint, reads nothing more, and writes nothing twice.
// (Committing the tail without a checkpoint, a restart would replay it
// from the last periodic checkpoint.)
func TestFileSinkFinalCheckpoint(t *testing.T) {
	ckpt, out := t.TempDir(), t.TempDir()
	const rows = 30000
	if err := startFS(t, ckpt, out, "json", 0, rows).Wait(); err != nil {
		t.Fatal(err)
	}
	j2 := startFS(t, ckpt, out, "json", 0, rows)
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	if in, _ := j2.Records(); in != 0 {
		t.Fatalf("the resubmitted finished job read %d rows, want 0 (restored at the end)", in)
	}
	seen, hidden := visible(t, out)
	if len(hidden) != 0 || len(seen) != rows {
		t.Fatalf("%d distinct rows and hidden files %v; want %d rows", len(seen), hidden, rows)
	}
	for k, n := range seen {
		if n != 1 {
			t.Fatalf("k=%d committed %d times", k, n)
		}
	}
}
