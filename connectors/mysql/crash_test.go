package mysql_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/streamsql/streamsql/connectors/mysql"
	"github.com/streamsql/streamsql/engine"
)

// The worst moment of two-phase commit: a checkpoint has completed, its
// XA transactions are prepared, and the process dies before committing
// them (the framework's crash point, set by the session option
// 'test.crash.before-commit', exits
// right there). The job runs in a child process that dies so; the
// restarted job commits what the checkpoint holds, rolls back the rest,
// and ends with the reference table and nothing prepared.
func TestCrashBetweenPrepareAndCommit(t *testing.T) {
	if os.Getenv("STREAMSQL_MYSQL_CRASH_CHILD") == "1" {
		s := engine.NewSession(&bytes.Buffer{})
		run(t, s, "SET 'test.crash.before-commit' = '4';")
		j := lastJob(t, run(t, s, fmt.Sprintf(aggJob, os.Getenv("CRASH_JOB"), os.Getenv("CRASH_DIR"), 10000, crashRows,
			os.Getenv("CRASH_DSN"), os.Getenv("CRASH_TABLE"), 2)))
		_ = j.Wait()
		t.Fatal("the crash hook did not fire")
	}
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	table := mysql.TableForTest(t, db, "eo_crash", "g BIGINT PRIMARY KEY, n BIGINT NOT NULL, s BIGINT NOT NULL")
	job := mysql.UniqueForTest("eocrash")
	mysql.CleanupPreparedForTest(t, db, "streamsql:"+job)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashBetweenPrepareAndCommit$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STREAMSQL_MYSQL_CRASH_CHILD=1",
		"CRASH_JOB="+job, "CRASH_DIR="+dir, "CRASH_DSN="+dsn, "CRASH_TABLE="+table)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 137 {
		t.Fatalf("the child did not die in the hook (%v):\n%s", err, out)
	}
	// The hook fired on a commit round: transactions of a completed
	// checkpoint are prepared, not committed.
	if p := mysql.PreparedForTest(t, db, "streamsql:"+job); len(p) == 0 {
		t.Fatal("no prepared transaction survived the crash")
	}
	s := engine.NewSession(&bytes.Buffer{})
	j := lastJob(t, run(t, s, fmt.Sprintf(aggJob, job, dir, 0, crashRows, dsn, table, 2)))
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	equal(t, "final table", mysql.RowsForTest(t, db, "SELECT g, n, s FROM "+table), reference(crashRows))
	if p := mysql.PreparedForTest(t, db, "streamsql:"+job); len(p) != 0 {
		t.Fatalf("XA transactions left prepared: %v", p)
	}
}

const crashRows = 20000
