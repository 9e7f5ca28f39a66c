package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const script = `CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'values');
INSERT INTO t VALUES ('a', 1), ('a', 2);
SELECT k, SUM(v) FROM t GROUP BY k;
`

func TestScriptPrintsChangelog(t *testing.T) {
	code, out, errOut := runCLI(t, "", "-f", writeFile(t, "job.sql", script))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"+I[a, 1]", "-U[a, 1]", "+U[a, 3]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestScriptStopsAtFirstErrorWithFileLine(t *testing.T) {
	body := script + "SELECT nope FROM t;\nSELECT 'after' FROM t;\n"
	p := writeFile(t, "bad.sql", body)
	code, out, errOut := runCLI(t, "", "-f", p)
	if code == 0 {
		t.Fatal("a failing script must exit non-zero")
	}
	if !strings.Contains(errOut, p+":4:8:") || !strings.Contains(errOut, "Unknown column 'nope'") || !strings.Contains(errOut, "^") {
		t.Fatalf("error lacks file:line:col, message or caret:\n%s", errOut)
	}
	if strings.Contains(out, "after") {
		t.Fatal("statements after the failing one must not run")
	}
}

func TestContinueOnError(t *testing.T) {
	body := script + "SELECT nope FROM t;\nSELECT CONCAT(k, '!') FROM t;\nSELECT bad FROM t;\n"
	code, out, errOut := runCLI(t, "", "--continue-on-error", "-f", writeFile(t, "bad.sql", body))
	if code == 0 {
		t.Fatal("must exit non-zero at the end")
	}
	if !strings.Contains(out, "+I[a!]") {
		t.Fatalf("statement after the error did not run:\n%s", out)
	}
	if !strings.Contains(errOut, "2 statement(s) failed") {
		t.Fatalf("no summary:\n%s", errOut)
	}
}

func TestSyntaxErrorInScript(t *testing.T) {
	code, _, errOut := runCLI(t, "", "-e", "SELECT 1;\nSELEC 2")
	if code == 0 || !strings.Contains(errOut, "line 2, column 1") {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
}

func TestInitScriptAndStdin(t *testing.T) {
	init := writeFile(t, "init.sql", "CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'values');\n")
	code, out, errOut := runCLI(t, "INSERT INTO t VALUES ('z', 5);\nSELECT * FROM t;\n", "-i", init)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "+I[z, 5]") {
		t.Fatalf("stdin statements did not run after the init script:\n%s", out)
	}
}

func TestSetFlag(t *testing.T) {
	code, _, errOut := runCLI(t, "", "--set", "parallelism.defualt=2", "-e", "SELECT 1")
	if code != 2 || !strings.Contains(errOut, "did you mean 'parallelism.default'") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, out, errOut := runCLI(t, "", "--set", "parallelism.default=3", "-e", "SET")
	if code != 0 || !strings.Contains(out, "| parallelism.default ") || !strings.Contains(out, "| 3 ") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
}

func TestTestCommand(t *testing.T) {
	good := "statement ok\nCREATE TABLE t (a INT) WITH ('connector' = 'values')\n\nstatement ok\nINSERT INTO t VALUES (1), (2)\n\nquery rowsort\nSELECT a * 10 FROM t\n----\n10\n20\n"
	bad := strings.Replace(good, "20\n", "21\n", 1)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "good.test"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "", "test", dir)
	if code != 0 || !strings.Contains(out, "3 passed, 0 failed") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.test"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "test", dir)
	if code == 0 || !strings.Contains(out, "5 passed, 1 failed") || !strings.Contains(errOut, "bad.test:7") || !strings.Contains(errOut, "+ 20") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	// -rewrite refills the expected output.
	code, _, _ = runCLI(t, "", "test", "-rewrite", filepath.Join(dir, "bad.test"))
	if code != 0 {
		t.Fatalf("rewrite exit %d", code)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "bad.test"))
	if string(got) != good {
		t.Fatalf("rewrite produced:\n%s", got)
	}
}

func TestVersionAndHelp(t *testing.T) {
	if code, out, _ := runCLI(t, "", "version"); code != 0 || !strings.HasPrefix(out, "streamsql ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, errOut := runCLI(t, "", "--help"); code != 0 || !strings.Contains(errOut, "streamsql test") {
		t.Fatalf("help: %d %q", code, errOut)
	}
}

// --help lists every subcommand that run dispatches (kafka and bench were
// missing when the list was written by hand), and each listed one runs.
func TestHelpListsEverySubcommand(t *testing.T) {
	_, _, help := runCLI(t, "", "--help")
	for _, want := range []string{"streamsql test", "streamsql bench", "streamsql kafka", "streamsql options", "streamsql functions", "streamsql version"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q:\n%s", want, help)
		}
	}
	for _, c := range subcommands {
		if !strings.Contains(help, "  streamsql "+c.name+" ") && !strings.Contains(help, "  streamsql "+c.name+"\n") {
			t.Errorf("--help lacks subcommand %q", c.name)
		}
	}
}

// docs/options.md is what `streamsql options` prints: the session options
// and every connector's, from their declarations.
func TestOptionsDocIsGenerated(t *testing.T) {
	got, err := os.ReadFile("../../docs/options.md")
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "", "options")
	if code != 0 || string(got) != out {
		t.Fatal("docs/options.md is stale: run `go run ./cmd/streamsql options > docs/options.md`")
	}
	for _, want := range []string{"`parallelism.default`", "## kafka", "## mysql", "`sink.buffer-flush.interval` | Duration | `1 s`", "`scan.startup.mode`"} {
		if !strings.Contains(out, want) {
			t.Errorf("options reference lacks %q", want)
		}
	}
}

func TestContinueOnErrorReportsEachFailure(t *testing.T) {
	body := script + "SELECT nope FROM t;\nSELECT CAST(k AS INT) FROM t;\nSELECT 'ok' AS s FROM t;\n"
	p := writeFile(t, "bad.sql", body)
	code, out, errOut := runCLI(t, "", "--continue-on-error", "-f", p)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{
		p + ":4:8:", "Unknown column 'nope'", // a planning error: file:line:col, message, caret
		p + ":5: error in statement:\n  SELECT CAST(k AS INT) FROM t\n", "cannot cast 'a' to INT", // a runtime error: file:line, statement, error
		p + ": 2 statement(s) failed",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "+I[ok]") {
		t.Errorf("the statement after the errors did not run:\n%s", out)
	}
}

func TestRuntimeErrorStopsScript(t *testing.T) {
	body := script + "SELECT CAST(k AS INT) FROM t;\nSELECT 'after' FROM t;\n"
	p := writeFile(t, "bad.sql", body)
	code, out, errOut := runCLI(t, "", "-f", p)
	if code != 1 || !strings.Contains(errOut, p+":4: error in statement:\n  SELECT CAST(k AS INT) FROM t\n") ||
		!strings.Contains(errOut, "cannot cast 'a' to INT") {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	if strings.Contains(out, "after") || strings.Contains(errOut, "statement(s) failed") {
		t.Fatalf("the script went on after the error:\n%s\n%s", out, errOut)
	}
}

func TestInitScriptBeforeFile(t *testing.T) {
	init := writeFile(t, "init.sql", "CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'values');\nSET 'parallelism.default' = '2';\n")
	job := writeFile(t, "job.sql", "INSERT INTO t VALUES ('x', 1);\nSELECT k, v * 10 FROM t;\nSET;\n")
	code, out, errOut := runCLI(t, "", "-i", init, "-f", job)
	if code != 0 || !strings.Contains(out, "+I[x, 10]") || !regexp.MustCompile(`\| parallelism\.default +\| 2 `).MatchString(out) {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	// A failing init script stops everything, with its own file name.
	bad := writeFile(t, "badinit.sql", "CREATE TABLE (;\n")
	code, _, errOut = runCLI(t, "", "-i", bad, "-f", job)
	if code == 0 || !strings.Contains(errOut, bad+":1:") {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
}

const unboundedScript = `CREATE TABLE gen (k INT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000');
CREATE TABLE bh (k INT, v BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT * FROM gen;
`

// --detach returns from the script at once; without a terminal the jobs
// are then managed by the statements on standard input.
func TestDetach(t *testing.T) {
	job := writeFile(t, "job.sql", unboundedScript)
	stdin := "SHOW JOBS;\nSTOP JOB 'job-1';\nSHOW JOBS;\n"
	done := make(chan struct{})
	var code int
	var out, errOut string
	go func() {
		defer close(done)
		code, out, errOut = runCLI(t, stdin, "--detach", "-f", job)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("--detach with an unbounded job did not return")
	}
	if code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	running := regexp.MustCompile(`\| job-1 \| insert-into-bh \| RUNNING +\|`)
	canceled := regexp.MustCompile(`\| job-1 \| insert-into-bh \| CANCELED +\|`)
	if !running.MatchString(out) || !strings.Contains(out, "Job 'job-1' stopped") || !canceled.MatchString(out) {
		t.Fatalf("output:\n%s", out)
	}
	if !strings.Contains(errOut, "1 job(s) running in the background") {
		t.Fatalf("stderr:\n%s", errOut)
	}
	if i, j := strings.Index(out, "RUNNING"), strings.Index(out, "CANCELED"); i < 0 || j < i {
		t.Fatalf("SHOW JOBS before and after STOP JOB are out of order:\n%s", out)
	}
}

// A bounded INSERT under --detach is not waited for: the script goes on
// while it runs.
func TestDetachDoesNotWaitForBoundedJobs(t *testing.T) {
	body := `CREATE TABLE gen (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '100000', 'rows-per-second' = '20000');
CREATE TABLE bh (k INT) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT * FROM gen;
SHOW JOBS;
`
	start := time.Now()
	code, out, errOut := runCLI(t, "STOP JOB 'job-1';", "--detach", "-e", body)
	if code != 0 || !regexp.MustCompile(`\| job-1 \| insert-into-bh \| RUNNING +\|`).MatchString(out) {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("--detach took %s, as if it waited for the 5 s job", d)
	}
	// Without --detach the same script waits for the job before SHOW JOBS.
	code, out, _ = runCLI(t, "", "-e", strings.Replace(body, "100000", "2000", 1))
	if code != 0 || !regexp.MustCompile(`\| job-1 \| insert-into-bh \| FINISHED +\| .* \| +2000 \| +2000 \|`).MatchString(out) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestHTTPFlag(t *testing.T) {
	code, _, errOut := runCLI(t, "", "--http", "127.0.0.1:0", "-e", "SHOW JOBS")
	if code != 0 || !regexp.MustCompile(`\[INFO\] HTTP endpoint on http://127\.0\.0\.1:\d+: GET /jobs`).MatchString(errOut) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "--http", "nonsense", "-e", "SHOW JOBS")
	if code != 2 || !strings.Contains(errOut, "--http") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestVersionFlag(t *testing.T) {
	code, out, _ := runCLI(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "streamsql "+Version) {
		t.Fatalf("%d %q", code, out)
	}
}

// -e and -f together are refused: neither is silently ignored.
func TestStatementAndFileRefused(t *testing.T) {
	p := writeFile(t, "job.sql", "SELECT 'from the file';\n")
	code, out, errOut := runCLI(t, "", "-e", "SELECT 'from -e';", "-f", p)
	if code != 2 || out != "" || !strings.Contains(errOut, "-e and -f cannot be used together") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
	// -i runs a file first, then -e.
	code, out, errOut = runCLI(t, "", "-i", p, "-e", "SELECT 'from -e';")
	if code != 0 || !strings.Contains(out, "from the file") || !strings.Contains(out, "from -e") ||
		strings.Index(out, "from the file") > strings.Index(out, "from -e") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
}

// A bounded INSERT says how it ended: rows written, or the failure.
func TestBoundedJobSaysHowItEnded(t *testing.T) {
	body := `CREATE TABLE gen (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
CREATE TABLE bh (k INT) WITH ('connector' = 'blackhole');
INSERT INTO bh SELECT k FROM gen;
INSERT INTO bh SELECT CAST(CONCAT('x', CAST(k AS STRING)) AS INT) FROM gen;
`
	code, out, errOut := runCLI(t, "", "-f", writeFile(t, "jobs.sql", body))
	if code == 0 || !strings.Contains(out, "[INFO] Job 'job-1' finished: 10 rows written to 'bh'\n") ||
		!strings.Contains(errOut, "Job 'job-2' failed: Calc: cannot cast 'x") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
}

// --http-token (or STREAMSQL_HTTP_TOKEN) is wired to the endpoint and never
// printed; an address beyond loopback is warned about.
func TestHTTPTokenAndWarning(t *testing.T) {
	code, _, errOut := runCLI(t, "", "--http", "0.0.0.0:0", "--http-token", "tok-4c1d", "-e", "SELECT 1;")
	if code != 0 || !strings.Contains(errOut, "(bearer token required)") || !strings.Contains(errOut, "[WARN] the HTTP endpoint listens on") ||
		strings.Contains(errOut, "tok-4c1d") {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "--http-token", "tok-4c1d", "-e", "SELECT 1;")
	if code != 2 || !strings.Contains(errOut, "--http-token needs --http") {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	t.Setenv(httpTokenEnv, "tok-from-env")
	tm := startTerm(t, "--http", "127.0.0.1:0")
	url := tm.expectRE(`HTTP endpoint on (http://127\.0\.0\.1:\d+): GET /jobs, /jobs/\{id\}, /metrics \(bearer token required\)`)[1]
	tm.prompt()
	for auth, want := range map[string]int{"": 401, "Bearer nope": 401, "Bearer tok-from-env": 200} {
		req, _ := http.NewRequest("GET", url+"/jobs", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /jobs with %q: %d, want %d", auth, resp.StatusCode, want)
		}
	}
	tm.exitWithCtrlD()
	if strings.Contains(tm.text(), "tok-from-env") {
		t.Fatal("the token was printed")
	}
}
