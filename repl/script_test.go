package repl

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/streamsql/streamsql/engine"
)

// With table.dml-sync an INSERT returns only when its job ends (here: when
// the script's context ends and cancels it); without it the script goes
// on while the job runs.
func TestScriptDMLSync(t *testing.T) {
	const ddl = `CREATE TABLE g (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '10');
CREATE TABLE b (k INT) WITH ('connector' = 'blackhole');
`
	for _, sync := range []bool{false, true} {
		s := engine.NewSession(io.Discard)
		sql := ddl
		if sync {
			sql += "SET 'table.dml-sync' = 'true';\n"
		}
		sql += "INSERT INTO b SELECT k FROM g;\nSELECT 1;\n"
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		var out bytes.Buffer
		start := time.Now()
		_ = RunScript(ctx, s, sql, ScriptOptions{Name: "t", Init: true, Out: &out, Err: &out})
		took := time.Since(start)
		cancel()
		jobs := s.Jobs()
		if len(jobs) != 1 {
			t.Fatalf("sync=%v: %d jobs", sync, len(jobs))
		}
		status := jobs[0].Status()
		jobs[0].Cancel()
		_ = jobs[0].Wait()
		if sync {
			if status != "CANCELED" || took < 250*time.Millisecond || bytes.Contains(out.Bytes(), []byte("+I[1]")) {
				t.Errorf("dml-sync: the INSERT returned after %s with the job %s; output:\n%s", took, status, out.String())
			}
		} else if status != "RUNNING" || !bytes.Contains(out.Bytes(), []byte("+I[1]")) {
			t.Errorf("without dml-sync the script waited (%s, job %s); output:\n%s", took, status, out.String())
		}
	}
}
