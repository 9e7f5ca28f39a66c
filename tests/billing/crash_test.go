// Package billing holds the end-to-end exactly-once proof of the billing
// example: the job of examples/billing (Kafka → dedup → aggregate → MySQL
// XA and a transactional upsert-kafka topic) runs as a real separate
// process and is killed with SIGKILL at random moments, some of them
// exactly between a checkpoint's pre-commit and its commit, and
// restarted each time while the generator keeps writing bills. At the
// end:
//
//   - the MySQL table equals the totals computed straight from the input;
//   - a read_committed consumer of the output topic sees, per user, a
//     strictly increasing bill count ending at the final value: no
//     change is lost or delivered twice;
//   - no XA transaction of the job is left prepared.
//
// It runs on both state backends and prints "<backend>: kills=N lost=0
// duplicated=0 mismatched=0" for each. Run the long
// version with scripts/billing_crashloop.sh.
package billing

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/connectors/mysql/mysqltest"
	"github.com/streamsql/streamsql/examples/billing/bills"
	"github.com/streamsql/streamsql/examples/billing/bills/billstest"
)

var (
	kills    = flag.Int("kills", 20, "SIGKILLs before the job may finish")
	nBills   = flag.Int("bills", 40_000, "distinct bills")
	rate     = flag.Int("rate", 0, "bill events per second from the generator; 0 spreads the input over the kills (about 3 s each)")
	seed     = flag.Uint64("seed", 1, "random seed for kill times")
	database = "streamsql_billing_crash"
)

// backends are the state backends the proof runs on: the one 'auto'
// picks for a checkpointed job (pebble) with the full number of kills,
// hashmap with a third of them (at least 4), to keep CI time in check.
var backends = []struct {
	name string
	div  int
}{{"pebble", 1}, {"hashmap", 3}}

func TestBillingCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("the billing crash loop takes about two minutes; it runs in CI without -short")
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { billingCrashLoop(t, b.name, max(*kills/b.div, min(*kills, 4))) })
	}
}

func billingCrashLoop(t *testing.T, backend string, kills int) {
	dsn := mysqltest.Database(t, database)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	billstest.RollbackLeftovers(t, db, "billing-mysql") // of an earlier, interrupted run of this test
	for _, q := range []string{"DROP TABLE IF EXISTS user_totals",
		"CREATE TABLE user_totals (user_id BIGINT PRIMARY KEY, total_cents BIGINT NOT NULL, bills BIGINT NOT NULL)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "streamsql")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/streamsql").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	b, err := broker.Start(broker.Config{Topics: []string{"bills", "user_totals"}, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	cfg := bills.DefaultConfig()
	cfg.Bills = *nBills
	recs := bills.Generate(cfg)
	ref := bills.Reference(recs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prodDone := make(chan error, 1)
	perSec := *rate
	if perSec == 0 {
		// Keep bills flowing through the whole kill phase, so that every run
		// has transactions to pre-commit and commit.
		perSec = max(100, len(recs)/(kills*3))
	}
	go func() { prodDone <- bills.Produce(ctx, b.Addr(), "bills", recs, perSec, nil) }()

	examples, _ := filepath.Abs("../../examples/billing")
	// The example's init script, with the backend chosen first.
	tables, err := os.ReadFile(filepath.Join(examples, "tables.sql"))
	if err != nil {
		t.Fatal(err)
	}
	initScript := filepath.Join(dir, "tables.sql")
	if err := os.WriteFile(initScript, append([]byte(fmt.Sprintf("SET 'state.backend.type' = '%s';\n", backend)), tables...), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-i", initScript, "-f", filepath.Join(examples, "to_mysql.sql"),
		"--var", "bootstrap=" + b.Addr(), "--var", "checkpoints=" + filepath.Join(dir, "ckpt"), "--var", "mysql_url=" + dsn}
	r := rand.New(rand.NewPCG(*seed, 11))
	killed, hooked := 0, 0
	var prodErr error
	produced := false
	for run := 0; ; run++ {
		if !produced {
			select {
			case prodErr = <-prodDone:
				produced = true
				if prodErr != nil {
					t.Fatal(prodErr)
				}
			default:
			}
		}
		finish := killed >= kills
		errPath := filepath.Join(dir, fmt.Sprintf("run-%d.err", run))
		ef, _ := os.Create(errPath)
		hook := !finish && run%3 == 2
		runArgs := args
		if hook {
			// Die at this process's first or second commit round: after a
			// checkpoint completed, with its transactions prepared and none
			// committed.
			runArgs = append(slices.Clip(args), "--set", fmt.Sprintf("test.crash.before-commit=%d", 1+r.IntN(2)))
		}
		cmd := exec.Command(bin, runArgs...)
		cmd.Stdout, cmd.Stderr = ef, ef
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if finish {
			// Let the last run catch up: the input fully produced and the
			// table equal to the reference, then a few more checkpoints so
			// that every transaction is committed and none is open.
			if !produced {
				if prodErr = <-prodDone; prodErr != nil {
					t.Fatal(prodErr)
				}
				produced = true
			}
			deadline := time.Now().Add(5 * time.Minute)
			for {
				got, err := bills.MySQLTotals(db, "user_totals")
				if err != nil {
					t.Fatal(err)
				}
				if l, d, m := bills.Diff(ref, got); l+d+m == 0 {
					break
				}
				select {
				case err := <-done:
					msg, _ := os.ReadFile(errPath)
					t.Fatalf("the final run ended early: %v\n%s", err, msg)
				case <-time.After(200 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					break
				}
			}
			time.Sleep(3500 * time.Millisecond)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("the final run did not stop on SIGTERM")
			}
			ef.Close()
			break
		}
		delay := time.Duration(1500+r.IntN(2500)) * time.Millisecond
		if hook {
			delay = 15 * time.Second // let the hook fire first
		}
		var werr error
		select {
		case werr = <-done:
		case <-time.After(delay):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			werr = <-done
		}
		ef.Close()
		status := cmd.ProcessState.Sys().(syscall.WaitStatus)
		switch {
		case status.Signaled():
			killed++
			if hook {
				msg, _ := os.ReadFile(errPath)
				t.Logf("run %d: the commit hook did not fire within %s; its log:\n%s", run, delay, billstest.Tail(string(msg), 3000))
			}
		case status.ExitStatus() == 137:
			killed++
			hooked++
		default:
			msg, _ := os.ReadFile(errPath)
			t.Fatalf("run %d ended by itself: %v\n%s", run, werr, msg)
		}
		if run > kills*3+20 {
			t.Fatalf("no final run after %d runs", run)
		}
	}

	got, err := bills.MySQLTotals(db, "user_totals")
	if err != nil {
		t.Fatal(err)
	}
	lost, duplicated, mismatched := bills.Diff(ref, got)
	topicLost, topicDup, topicBad := billstest.CheckTopic(t, b.Addr(), "user_totals", ref)
	prepared := billstest.PreparedXids(t, db, "billing-mysql")
	t.Logf("mysql: lost=%d duplicated=%d mismatched=%d; topic: users short=%d repeated or decreasing counts=%d wrong finals=%d; prepared xids left=%d; hook kills=%d",
		lost, duplicated, mismatched, topicLost, topicDup, topicBad, len(prepared), hooked)
	fmt.Printf("%s: kills=%d lost=%d duplicated=%d mismatched=%d\n", backend, killed, lost+topicLost, duplicated+topicDup, mismatched+topicBad)
	if lost+duplicated+mismatched+topicLost+topicDup+topicBad != 0 {
		for u, w := range ref {
			if got[u] != w {
				t.Errorf("user %d: mysql has %+v, want %+v", u, got[u], w)
				break
			}
		}
		t.Fatal("the output differs from the reference")
	}
	if len(prepared) > 0 {
		t.Fatalf("XA transactions of the job left prepared: %v", prepared)
	}
	if killed < kills || hooked == 0 {
		t.Fatalf("only %d kills, %d of them between pre-commit and commit", killed, hooked)
	}
}
