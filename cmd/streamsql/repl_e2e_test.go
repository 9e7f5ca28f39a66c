package main

// End-to-end tests of the interactive client: they build the real binary
// and drive it through a pseudo-terminal, as a person at a keyboard would,
// reading what appears on the screen. Every wait is for an expected text
// to appear (with a generous timeout), never a fixed sleep.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
)

const (
	termCols = 140
	termRows = 40
	// timeout bounds each wait; the machine may be slow and busy.
	timeout = 45 * time.Second
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds streamsql once per test run (with the race detector when
// the tests run with it).
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "streamsql-e2e-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "streamsql")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// term is the binary running on a pseudo-terminal, with a terminal
// emulator keeping the screen as a person would see it.
type ptyTerm struct {
	t    *testing.T
	cmd  *exec.Cmd
	pty  *os.File
	home string

	mu   sync.Mutex
	raw  []byte
	vt   vt10x.Terminal
	seen int // what expect has consumed, in the text without escapes

	exited   chan struct{}
	exitErr  error
	readDone chan struct{} // closed when all output has been read
}

func startTerm(t *testing.T, args ...string) *ptyTerm {
	t.Helper()
	bin := binary(t)
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "TERM=xterm", "NO_COLOR=")
	p, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: termRows, Cols: termCols})
	if err != nil {
		t.Fatal(err)
	}
	tm := &ptyTerm{t: t, cmd: cmd, pty: p, home: home, exited: make(chan struct{}),
		vt: vt10x.New(vt10x.WithSize(termCols, termRows))}
	readDone := make(chan struct{})
	tm.readDone = readDone
	go func() {
		defer close(readDone)
		buf := make([]byte, 32*1024)
		for {
			n, err := p.Read(buf)
			if n > 0 {
				tm.mu.Lock()
				tm.raw = append(tm.raw, buf[:n]...)
				_, _ = tm.vt.Write(buf[:n])
				tm.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		tm.exitErr = cmd.Wait()
		close(tm.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-tm.exited:
		default:
			_ = cmd.Process.Kill()
			<-tm.exited
		}
		p.Close()
		<-readDone
		if strings.Contains(tm.text(), "DATA RACE") {
			t.Errorf("the race detector fired:\n%s", tm.text())
		}
		if t.Failed() {
			t.Logf("screen at the end:\n%s", tm.screen())
		}
	})
	return tm
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][A-Za-z0-9]|\x1b[=>78DEHMNOPZc]|\r`)

// text is everything the program wrote, without escape sequences.
func (tm *ptyTerm) text() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return ansiRE.ReplaceAllString(string(tm.raw), "")
}

// ended reports whether the program has exited, after waiting for the
// rest of its output to be read.
func (tm *ptyTerm) ended() bool {
	select {
	case <-tm.exited:
	default:
		return false
	}
	select {
	case <-tm.readDone:
	case <-time.After(5 * time.Second):
	}
	return true
}

// screen is what the terminal shows now.
func (tm *ptyTerm) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.vt.String()
}

func (tm *ptyTerm) send(s string) {
	tm.t.Helper()
	if _, err := tm.pty.WriteString(s); err != nil {
		tm.t.Fatalf("writing %q: %v", s, err)
	}
}

// line types a line and Enter.
func (tm *ptyTerm) line(s string) { tm.t.Helper(); tm.send(s + "\r") }

// expect waits until want appears in the output after what earlier calls
// consumed, consumes up to its end, and returns the output up to it.
func (tm *ptyTerm) expect(want string) string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		text := tm.text()
		if i := strings.Index(text[min(tm.seen, len(text)):], want); i >= 0 {
			from := tm.seen
			tm.seen += i + len(want)
			return text[from:tm.seen]
		}
		if tm.ended() {
			if text := tm.text(); strings.Contains(text[min(tm.seen, len(text)):], want) {
				continue // the last output arrived with the exit
			}
			tm.t.Fatalf("the program exited (%v) before %q appeared; output:\n%s", tm.exitErr, want, text[min(tm.seen, len(text)):])
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("%q did not appear in %s; output since the last match:\n%s", want, timeout, text[min(tm.seen, len(text)):])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// expectRE is expect for a regular expression; it returns the match.
func (tm *ptyTerm) expectRE(re string) []string {
	tm.t.Helper()
	r := regexp.MustCompile(re)
	deadline := time.Now().Add(timeout)
	for {
		text := tm.text()
		rest := text[min(tm.seen, len(text)):]
		if loc := r.FindStringSubmatchIndex(rest); loc != nil {
			m := r.FindStringSubmatch(rest)
			tm.seen += loc[1]
			return m
		}
		if tm.ended() {
			if text := tm.text(); r.MatchString(text[min(tm.seen, len(text)):]) {
				continue // the last output arrived with the exit
			}
			tm.t.Fatalf("the program exited (%v) before /%s/ matched; output:\n%s", tm.exitErr, re, rest)
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("/%s/ did not match in %s; output since the last match:\n%s", re, timeout, rest)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitScreen waits until the screen satisfies ok.
func (tm *ptyTerm) waitScreen(what string, ok func(string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s := tm.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen did not show %s in %s:\n%s", what, timeout, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// prompt waits for the main prompt.
func (tm *ptyTerm) prompt() { tm.t.Helper(); tm.expect("streamsql> ") }

// run types a one-line statement and waits for want.
func (tm *ptyTerm) run(stmt, want string) string {
	tm.t.Helper()
	tm.line(stmt)
	return tm.expect(want)
}

// exitWithCtrlD types Ctrl-D on an empty line and checks a clean exit.
func (tm *ptyTerm) exitWithCtrlD() {
	tm.t.Helper()
	tm.send("\x04")
	select {
	case <-tm.exited:
	case <-time.After(timeout):
		tm.t.Fatal("Ctrl-D on an empty line did not exit")
	}
	if tm.exitErr != nil {
		tm.t.Fatalf("exit: %v\n%s", tm.exitErr, tm.text())
	}
}

const valuesTable = `CREATE TABLE t (k STRING,
  v INT) WITH ('connector' = 'values');`

// createValues types a CREATE TABLE over two lines and fills the table.
func (tm *ptyTerm) createValues() {
	tm.t.Helper()
	lines := strings.Split(valuesTable, "\n")
	tm.prompt()
	tm.line(lines[0])
	tm.expect("     -> ")
	tm.line(lines[1])
	tm.expect("[INFO] Table 't' created")
	tm.prompt()
	tm.run("INSERT INTO t VALUES ('a', 1), ('a', 2), ('b', 5);", "3 row(s) inserted into 't'")
	tm.prompt()
}

func TestREPLResultModes(t *testing.T) {
	tm := startTerm(t)
	tm.expect("HELP; lists what it takes")
	tm.createValues()

	// tableau, the default: a bordered table with an op column.
	out := tm.run("SELECT k, SUM(v) AS total FROM t GROUP BY k;", "Received a total of 4 rows")
	want := `+----+--------------------------------+-------------+
| op | k                              |       total |
+----+--------------------------------+-------------+
| +I | a                              |           1 |
| -U | a                              |           1 |
| +U | a                              |           3 |
| +I | b                              |           5 |
+----+--------------------------------+-------------+
`
	if !strings.Contains(out, want) {
		t.Fatalf("tableau result:\n%s\nwant:\n%s", out, want)
	}
	tm.prompt()

	// changelog
	tm.run("SET 'sql-client.execution.result-mode' = 'changelog';", "[INFO] OK")
	out = tm.run("SELECT k, SUM(v) AS total FROM t GROUP BY k;", "Received a total of 4 changes")
	if !strings.Contains(out, "+I[a, 1]\n-U[a, 1]\n+U[a, 3]\n+I[b, 5]\n") {
		t.Fatalf("changelog result:\n%s", out)
	}
	tm.prompt()

	// table: a live view on the alternate screen, left with q.
	tm.run("SET 'sql-client.execution.result-mode' = 'table';", "[INFO] OK")
	tm.line("SELECT k, SUM(v) AS total FROM t GROUP BY k;")
	screen := tm.waitScreen("the finished table", func(s string) bool { return strings.Contains(s, "FINISHED") })
	lines := strings.Split(screen, "\n")
	if !strings.HasPrefix(lines[3], "| a    |     3 |") || !strings.HasPrefix(lines[4], "| b    |     5 |") || !strings.HasPrefix(lines[5], "+---") {
		t.Fatalf("table mode shows:\n%s", screen)
	}
	status := lines[termRows-1]
	for _, want := range []string{"FINISHED", "rows 1-2 of 2", "changes/s:", "last checkpoint: n/a", "q quit"} {
		if !strings.Contains(status, want) {
			t.Errorf("status line %q lacks %q", status, want)
		}
	}
	if strings.Contains(screen, "-U") || strings.Contains(screen, "streamsql>") {
		t.Fatalf("the table view is not on a screen of its own:\n%s", screen)
	}
	tm.send("q")
	tm.expect("[INFO] Query finished: 2 row(s) in the result, from 4 change(s)")
	tm.prompt()
	// Back on the normal screen, the final rows stay visible.
	after := tm.screen()
	if !strings.Contains(after, "| a    |     3 |") || !strings.Contains(after, "Received a total of 4 changes") {
		t.Fatalf("after leaving the view:\n%s", after)
	}
	tm.exitWithCtrlD()
}

func TestREPLCtrlCCancelsUnboundedQueries(t *testing.T) {
	tm := startTerm(t)
	tm.prompt()
	tm.run("CREATE TABLE gen (k INT, v INT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'fields.k.min' = '1', 'fields.k.max' = '4', 'fields.v.min' = '0', 'fields.v.max' = '9');",
		"Table 'gen' created")
	tm.prompt()

	// Ctrl-C at the prompt clears the input and stays.
	tm.send("SELECT oops")
	tm.send("\x03")
	tm.expect("^C")
	tm.prompt()

	// tableau: rows stream until Ctrl-C.
	tm.line("SELECT * FROM gen;")
	tm.expect("| op |")
	tm.expectRE(`(\| \+I \|\s+\d+ \|\s+\d+ \|\n){100}`)
	tm.send("\x03")
	tm.expectRE(`\[INFO\] Query cancelled after \d+ rows\.`)
	tm.prompt()
	tm.run("SELECT 1 AS one;", "Received a total of 1 rows")
	tm.prompt()

	// table: an unbounded aggregation updates its rows in place.
	tm.run("SET 'sql-client.execution.result-mode' = 'table';", "[INFO] OK")
	tm.line("SELECT k, COUNT(*) AS c FROM gen GROUP BY k;")
	rowRE := regexp.MustCompile(`^\|\s+(\d) \|\s+(\d+) \|`)
	// snapshot reads the view's rows: k -> (screen line, count).
	type cell struct{ line, count int }
	snapshot := func(s string) map[string]cell {
		rows := map[string]cell{}
		for i, l := range strings.Split(s, "\n") {
			if m := rowRE.FindStringSubmatch(l); m != nil {
				var c int
				fmt.Sscan(m[2], &c)
				rows[m[1]] = cell{i, c}
			}
		}
		return rows
	}
	first := tm.waitScreen("four groups", func(s string) bool { return len(snapshot(s)) == 4 && strings.Contains(s, "RUNNING") })
	a := snapshot(first)
	second := tm.waitScreen("the counts growing", func(s string) bool {
		b := snapshot(s)
		for k, c := range a {
			if b[k].count <= c.count {
				return false
			}
		}
		return len(b) == 4
	})
	b := snapshot(second)
	for k, c := range a {
		if b[k].line != c.line {
			t.Errorf("group %s moved from line %d to %d: rows must change in place", k, c.line, b[k].line)
		}
	}
	hdr1, hdr2 := strings.Split(first, "\n")[:3], strings.Split(second, "\n")[:3]
	if strings.Join(hdr1, "\n") != strings.Join(hdr2, "\n") || !strings.Contains(hdr1[1], "| k |") && !strings.Contains(hdr1[1], "|    k |") {
		t.Errorf("the header did not stay at the top:\n%s\n---\n%s", first, second)
	}
	if lines := strings.Split(second, "\n"); !regexp.MustCompile(`RUNNING · rows 1-4 of 4 · changes/s: \d+`).MatchString(lines[termRows-1]) {
		t.Errorf("status line: %q", lines[termRows-1])
	}
	tm.send("\x03")
	tm.expectRE(`\[INFO\] Query cancelled: 4 row\(s\) in the result, from \d+ change\(s\)`)
	tm.prompt()
	tm.run("SHOW TABLES;", "| gen        |")
	tm.exitWithCtrlD()
}

func TestREPLJobs(t *testing.T) {
	tm := startTerm(t, "--http", "127.0.0.1:0")
	url := tm.expectRE(`HTTP endpoint on (http://127\.0\.0\.1:\d+)`)[1]
	tm.prompt()
	tm.run("CREATE TABLE gen (k INT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000');", "Table 'gen' created")
	tm.run("CREATE TABLE bh (k INT, v BIGINT) WITH ('connector' = 'blackhole');", "Table 'bh' created")
	tm.prompt()
	tm.run("INSERT INTO bh SELECT * FROM gen;", "[INFO] Job 'job-1' submitted (insert-into-bh)")
	tm.prompt()
	tm.run("SHOW JOBS;", "| id    | name           | status  | start time          | records in | records out | last checkpoint | ckpt duration |")
	tm.expectRE(`\| job-1 \| insert-into-bh \| RUNNING \| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \|\s+\d+ \|\s+\d+ \| n/a\s+\| n/a\s+\|`)
	tm.prompt()

	// The HTTP endpoint sees the job and its counters.
	var info struct {
		Status    string
		Operators []struct {
			Name       string
			RecordsOut int64 `json:"records_out"`
		}
		Checkpoints []any
	}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url + "/jobs/job-1")
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&info)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Operators) > 0 && info.Operators[0].RecordsOut > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /jobs/job-1: %+v", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if info.Status != "RUNNING" || info.Operators[0].Name != "TableSourceScan(gen)" || info.Checkpoints == nil {
		t.Fatalf("GET /jobs/job-1: %+v", info)
	}
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`streamsql_operator_records_out_total\{job_id="job-1",job_name="insert-into-bh",operator="TableSourceScan\(gen\)",operator_id="0"\} [1-9]`).Match(metrics) {
		t.Fatalf("GET /metrics:\n%s", metrics)
	}

	tm.run("STOP JOB 'job-1' WITH SAVEPOINT;", "needs checkpointing, and this job runs without it")
	tm.prompt()
	tm.run("STOP JOB 'job-1';", "[INFO] Job 'job-1' stopped")
	tm.prompt()
	tm.line("SHOW JOBS;")
	tm.expectRE(`\| job-1 \| insert-into-bh \| CANCELED \|`)
	tm.prompt()

	// A bounded job tells when it finishes; one still running is stopped
	// when the client exits.
	tm.run("CREATE TABLE few (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');", "Table 'few' created")
	tm.run("CREATE TABLE bh2 (k INT) WITH ('connector' = 'blackhole');", "Table 'bh2' created")
	tm.run("INSERT INTO bh2 SELECT * FROM few;", "Job 'job-2' submitted")
	tm.expect("[INFO] Job 'job-2' finished: 10 rows written to 'bh2'")
	tm.run("INSERT INTO bh SELECT * FROM gen;", "Job 'job-3' submitted")
	tm.prompt()
	tm.send("\x04")
	tm.expect("[INFO] Stopping 1 running job(s): job-3")
	select {
	case <-tm.exited:
	case <-time.After(timeout):
		t.Fatal("the client did not exit")
	}
	if tm.exitErr != nil {
		t.Fatal(tm.exitErr)
	}
}

func TestREPLErrorsCommandsAndHistory(t *testing.T) {
	tm := startTerm(t)
	tm.createValues()

	// A planning error: message, the offending line, a caret; the REPL stays.
	tm.line("SELECT k,")
	tm.expect("     -> ")
	tm.line("  nope FROM t;")
	out := tm.expect("Unknown column 'nope'\n  nope FROM t;\n  ^\n")
	if !strings.Contains(out, "[ERROR] line 2, column 3: Unknown column 'nope'") {
		t.Fatalf("error display:\n%s", out)
	}
	tm.prompt()
	// A syntax error.
	out = tm.run("SELEC 1;", "\nSELEC 1;\n^\n")
	if !strings.Contains(out, "[ERROR] line 1, column 1:") {
		t.Fatalf("syntax error display:\n%s", out)
	}
	tm.prompt()

	// Commands.
	tm.run("HELP;", "STOP JOB 'id'")
	tm.expect("Ctrl-R searches the history")
	tm.prompt()
	tm.line("SET;")
	tm.expectRE(`\| sql-client\.execution\.result-mode\s+\| tableau\s+\|`)
	tm.prompt()
	tm.run("SET 'parallelism.default' = '2';", "[INFO] OK")
	tm.line("SET;")
	tm.expectRE(`\| parallelism\.default\s+\| 2\s+\|`)
	tm.run("RESET;", "[INFO] OK")
	tm.line("SET;")
	tm.expectRE(`\| parallelism\.default\s+\| 1\s+\|`)
	tm.run("SHOW CREATE TABLE t;", "CREATE TABLE")
	tm.expect("'connector' = 'values'")
	tm.line("DESCRIBE t;")
	tm.expectRE(`\| k\s+\| STRING\s+\| true\s+\|`)
	tm.run("EXPLAIN SELECT k, COUNT(*) FROM t GROUP BY k;", "GroupAggregate(")
	tm.prompt()

	// Tab completes keywords and table names.
	tm.send("SEL\t")
	tm.expect("SELECT ")
	tm.send("* FROM \t")
	tm.line("t;")
	tm.expect("Received a total of 3 rows")
	tm.prompt()

	// Ctrl-R finds an earlier statement, which runs again.
	tm.send("\x12")
	tm.expect("bck-i-search")
	tm.send("nope")
	tm.expect("SELECT k, nope FROM t;")
	tm.send("\r")
	tm.expect("Unknown column 'nope'")
	tm.prompt()
	tm.exitWithCtrlD()

	hist := filepath.Join(tm.home, ".streamsql_history")
	fi, err := os.Stat(hist)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("history file mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(hist)
	if !strings.Contains(string(data), "SELECT k, nope FROM t;\n") || !strings.Contains(string(data), "CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'values');\n") {
		t.Errorf("history:\n%s", data)
	}
}

// -i runs before the client opens; -f --detach opens it with the jobs.
func TestREPLInitAndDetach(t *testing.T) {
	dir := t.TempDir()
	init := filepath.Join(dir, "init.sql")
	job := filepath.Join(dir, "job.sql")
	os.WriteFile(init, []byte(valuesTable+"\nINSERT INTO t VALUES ('z', 26);\n"), 0o644)
	os.WriteFile(job, []byte(unboundedScript), 0o644)
	tm := startTerm(t, "-i", init, "-f", job, "--detach")
	tm.expect("1 job(s) running in the background")
	tm.prompt()
	tm.line("SHOW JOBS;")
	tm.expectRE(`\| job-1 \| insert-into-bh \| RUNNING \|`)
	tm.run("SELECT * FROM t;", "| +I | z ")
	tm.expect("Received a total of 1 rows")
	tm.prompt()
	tm.send("\x04")
	tm.expect("Stopping 1 running job(s): job-1")
	<-tm.exited
}

// SIGTERM ends the client like Ctrl-D: the running query is cancelled,
// the jobs are stopped, the terminal is restored.
func TestREPLSIGTERM(t *testing.T) {
	tm := startTerm(t)
	tm.prompt()
	for _, st := range strings.Split(strings.TrimSpace(unboundedScript), "\n") {
		tm.line(st)
	}
	tm.expect("Job 'job-1' submitted")
	tm.run("SET 'sql-client.execution.result-mode' = 'table';", "[INFO] OK")
	tm.line("SELECT k, COUNT(*) FROM gen GROUP BY k;")
	tm.waitScreen("the table view", func(s string) bool { return strings.Contains(s, "RUNNING") })
	if err := tm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	tm.expect("Query cancelled")
	tm.expect("Stopping 1 running job(s): job-1")
	select {
	case <-tm.exited:
	case <-time.After(timeout):
		t.Fatal("SIGTERM did not end the client")
	}
	if tm.exitErr != nil {
		t.Fatal(tm.exitErr)
	}
	if raw := tm.rawText(); strings.LastIndex(raw, "\x1b[?1049l") < strings.LastIndex(raw, "\x1b[?1049h") {
		t.Fatal("the alternate screen was not left")
	}
}

func (tm *ptyTerm) rawText() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return string(tm.raw)
}
