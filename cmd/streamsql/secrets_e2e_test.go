package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The secrets planted below, one per supported form. Each is looked for
// in every channel statement text leaves the process by; the pieces are
// what would show if masking stopped at an '@' or a ':' inside one.
const (
	optSecret  = "OptS3cret1"                                             // 'password' = '...'
	querySec   = "jdbc:mysql://127.0.0.1:1/db?user=u&password=UrlS3cret2" // a URL query
	dsnSecret  = "u:Dsn@S3c:ret3@tcp(127.0.0.1:1)/db"                     // a DSN, '@' and ':' in the password
	urlSecret  = "mysql://u:Url@S3c:ret4@127.0.0.1:1/db"                  // a URL's user information, the same
	jaasSecret = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="JaasS3cret5";`
	logSecret  = "LogS3cret6" // a token=... directory in a path a log line quotes
)

var secretPieces = []string{"OptS3cret1", "UrlS3cret2", "Dsn@S3c", "S3c:ret3", "Url@S3c", "S3c:ret4", "JaasS3cret5", "LogS3cret6"}

func assertNoSecret(t *testing.T, channel, text string) {
	t.Helper()
	for _, p := range secretPieces {
		if strings.Contains(text, p) {
			t.Errorf("%s leaks %q:\n%s", channel, p, text)
		}
	}
}

// runBinary runs the built binary without a terminal.
func runBinary(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = t.TempDir()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	_ = cmd.Run() // most of these fail on purpose
	return out.String(), errOut.String()
}

// Syntax errors, planner errors, runtime errors and logs of scripts.
func TestSecretsNeverLeaveScripts(t *testing.T) {
	syntax := []string{
		// The parser quotes the secret alone, without its key.
		"CREATE TABLE e1 (a INT) WITH ('connector' = 'mysql', 'password' '" + optSecret + "')",
		// The parser quotes the line holding the secret.
		"CREATE TABLE e2 (a INT) WITH ('url' = '" + querySec + "' 'connector' = 'mysql')",
		"CREATE TABLE e3 (a INT) WITH ('url' = '" + dsnSecret + "' 'connector' = 'mysql')",
		"CREATE TABLE e4 (a INT) WITH ('url' = '" + urlSecret + "' 'connector' = 'mysql')",
		"CREATE TABLE e5 (a INT) WITH ('properties.sasl.jaas.config' = '" + strings.ReplaceAll(jaasSecret, "'", "''") + "' 'x' = 'y')",
		// TiDB's own syntax error, on a line holding secrets.
		"SELEC '" + urlSecret + "', '" + querySec + "'",
		// A value cut short in the message.
		"CREATE TABLE e6 (a INT) WITH ('connector' = 'mysql', 'password' '" + optSecret + strings.Repeat("x", 60) + "')",
	}
	for _, st := range syntax {
		out, errOut := runBinary(t, "-e", st)
		if !strings.Contains(errOut, "line 1, column") {
			t.Fatalf("%s: not a positioned error:\n%s%s", st, out, errOut)
		}
		assertNoSecret(t, "a syntax error's output", out+errOut)
	}

	dir := t.TempDir()
	logDir := filepath.Join(dir, "token="+logSecret)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "part-0.json"), []byte("{\"a\": 1}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := strings.Join([]string{
		// Planner errors quoting a line with each form.
		"CREATE TABLE p1 (a INT) WITH ('connector' = 'mysql', 'url' = '" + dsnSecret + "', 'password' = '" + optSecret + "')",
		"CREATE TABLE p2 (a INT) WITH ('connector' = 'mysql', 'url' = '" + querySec + "')",
		"CREATE TABLE p3 (a INT) WITH ('connector' = 'mysql', 'url' = '" + urlSecret + "', 'table-name' = 'x')",
		"CREATE TABLE p4 (a INT) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'nope',\n  'properties.sasl.jaas.config' = '" + strings.ReplaceAll(jaasSecret, "'", "''") + "')",
		// A runtime error: the broker address holds a password.
		"CREATE TABLE k1 (a INT) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json', 'properties.bootstrap.servers' = 'u:Dsn@S3c:ret3@127.0.0.1:1')",
		"SELECT * FROM k1",
		// A log line quoting a path.
		"CREATE TABLE f (a INT) WITH ('connector' = 'filesystem', 'path' = '" + logDir + "', 'format' = 'json', 'json.ignore-parse-errors' = 'true')",
		"SELECT * FROM f",
	}, ";\n") + ";\n"
	p := filepath.Join(dir, "secrets.sql")
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut := runBinary(t, "--continue-on-error", "-f", p)
	for _, want := range []string{"secrets.sql:1:", "secrets.sql:2:", "secrets.sql:3:", "secrets.sql:4:", "SELECT * FROM k1", "skipped malformed records", "+I[1]"} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("the script's output lacks %q:\n%s%s", want, out, errOut)
		}
	}
	assertNoSecret(t, "a script's output and logs", out+errOut)
}

// The interactive client: its errors, SHOW CREATE TABLE, EXPLAIN, the
// history file, and the HTTP endpoint's jobs with their SQL, names and
// errors.
func TestSecretsNeverLeaveTheClient(t *testing.T) {
	tm := startTerm(t, "--http", "127.0.0.1:0")
	url := tm.expectRE(`HTTP endpoint on (http://127\.0\.0\.1:\d+)`)[1]
	tm.prompt()
	for i, u := range []string{querySec, dsnSecret} {
		tm.run("CREATE TABLE m"+string(rune('1'+i))+" (a INT) WITH ('connector' = 'mysql', 'url' = '"+u+"', 'table-name' = 'x', 'password' = '"+optSecret+"');", "created")
		tm.prompt()
	}
	tm.run("CREATE TABLE k (a INT) WITH ('connector' = 'kafka', 'topic' = 't', 'format' = 'json', 'properties.bootstrap.servers' = '127.0.0.1:1', 'properties.sasl.jaas.config' = '"+strings.ReplaceAll(jaasSecret, "'", "''")+"');", "created")
	tm.prompt()
	for _, n := range []string{"m1", "m2", "k"} {
		tm.run("SHOW CREATE TABLE "+n+";", "******")
		tm.prompt()
	}
	// A syntax error in the client.
	tm.run("CREATE TABLE e (a INT) WITH ('url' = '"+urlSecret+"' 'connector' = 'mysql');", "[ERROR] line 1, column")
	tm.prompt()
	tm.run("CREATE TABLE gen (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');", "created")
	tm.run("CREATE TABLE bh (k INT, u STRING) WITH ('connector' = 'blackhole');", "created")
	tm.run("EXPLAIN INSERT INTO bh SELECT k, '"+urlSecret+"' FROM gen;", "Calc(")
	tm.prompt()
	// A running job whose statement and name hold secrets, and one that
	// fails with an error quoting one.
	tm.run("SET 'pipeline.name' = '"+urlSecret+"';", "[INFO] OK")
	tm.run("INSERT INTO bh SELECT k, '"+querySec+"' FROM gen;", "Job 'job-1' submitted")
	tm.prompt()
	tm.run("RESET 'pipeline.name';", "[INFO] OK")
	tm.run("CREATE TABLE bh2 (k INT) WITH ('connector' = 'blackhole');", "created")
	tm.run("INSERT INTO bh2 SELECT CAST(CONCAT('"+urlSecret+"', CAST(k AS STRING)) AS INT) FROM gen;", "Job 'job-2' submitted")
	tm.expect("[ERROR] Job 'job-2' failed: Calc: cannot cast")
	tm.prompt()
	tm.run("SHOW JOBS;", "| job-2 ")
	tm.prompt()

	resp, err := http.Get(url + "/jobs")
	if err != nil {
		t.Fatal(err)
	}
	jobs, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(jobs), `"sql": "INSERT INTO bh SELECT k, 'jdbc:mysql://127.0.0.1:1/db?user=u\u0026password=******' FROM gen"`) ||
		!strings.Contains(string(jobs), `"name": "mysql://u:******@127.0.0.1:1/db"`) || !strings.Contains(string(jobs), `"error": `) {
		t.Errorf("GET /jobs:\n%s", jobs)
	}
	assertNoSecret(t, "GET /jobs", string(jobs))
	resp, err = http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assertNoSecret(t, "GET /metrics", string(metrics))

	tm.send("\x04")
	<-tm.exited
	// What the user types is echoed as typed; everything else is output.
	var shown []string
	for _, l := range strings.Split(tm.text(), "\n") {
		if !strings.Contains(l, "streamsql> ") {
			shown = append(shown, l)
		}
	}
	assertNoSecret(t, "the terminal", strings.Join(shown, "\n"))
	hist, err := os.ReadFile(filepath.Join(tm.home, ".streamsql_history"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hist), "SHOW CREATE TABLE k;") {
		t.Errorf("history:\n%s", hist)
	}
	assertNoSecret(t, "the history file", string(hist))
}
