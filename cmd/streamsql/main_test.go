package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
