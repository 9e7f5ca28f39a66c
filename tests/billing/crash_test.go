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

	_ "github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/connectors/mysql/mysqltest"
	"github.com/streamsql/streamsql/examples/billing/bills"
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
	rollbackLeftovers(t, db) // of an earlier, interrupted run of this test
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
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = ef, ef
		cmd.Env = os.Environ()
		hook := !finish && run%3 == 2
		if hook {
			// Die at this process's first or second commit round: after a
			// checkpoint completed, with its transactions prepared and none
			// committed.
			cmd.Env = append(cmd.Env, fmt.Sprintf("STREAMSQL_TEST_CRASH_BEFORE_COMMIT=%d", 1+r.IntN(2)))
		}
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
				t.Logf("run %d: the commit hook did not fire within %s; its log:\n%s", run, delay, tail(string(msg), 3000))
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
	topicLost, topicDup, topicBad := checkTopic(t, b.Addr(), ref)
	prepared := preparedXids(t, db)
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

// checkTopic reads the output topic as a read_committed consumer
// (franz-go, a client independent of the product's) and checks, per
// user, that the bill counts it sees strictly increase and end at the
// reference. It returns the users whose final value is missing or
// short, the users with a repeated or decreasing count (a change
// delivered twice, or an aborted one seen), and the users with a wrong
// final total.
func checkTopic(t *testing.T, addr string, ref map[int64]bills.Total) (short, repeated, wrong int64) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("user_totals"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	last := map[int64]bills.Total{}
	bad := map[int64]bool{}
	// The first records may take long to arrive on a loaded machine (the
	// client connects and fetches metadata first): wait up to a minute
	// for them; once records flow, 3 s without any mark the end.
	start, lastRecord, got := time.Now(), time.Now(), false
	for got && time.Since(lastRecord) < 3*time.Second || !got && time.Since(start) < time.Minute {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(rec *kgo.Record) {
			n++
			if rec.Value == nil {
				return // a tombstone; the job deletes no user
			}
			var v struct {
				UserID     *int64 `json:"user_id"`
				TotalCents int64  `json:"total_cents"`
				Bills      int64  `json:"bills"`
			}
			if err := json.Unmarshal(rec.Value, &v); err != nil {
				t.Fatalf("output record %q: %v", rec.Value, err)
			}
			if v.UserID == nil {
				var k struct {
					UserID int64 `json:"user_id"`
				}
				if err := json.Unmarshal(rec.Key, &k); err != nil {
					t.Fatalf("output key %q: %v", rec.Key, err)
				}
				v.UserID = &k.UserID
			}
			u := *v.UserID
			if prev, ok := last[u]; ok && v.Bills <= prev.Bills {
				bad[u] = true
			}
			last[u] = bills.Total{Cents: v.TotalCents, Bills: v.Bills}
		})
		if n > 0 {
			got, lastRecord = true, time.Now()
		}
	}
	for u, w := range ref {
		switch g, ok := last[u]; {
		case !ok || g.Bills < w.Bills:
			short++
		case g != w:
			wrong++
		}
	}
	return short, int64(len(bad)), wrong
}

// preparedXids lists the prepared XA transactions of the billing job.
func preparedXids(t *testing.T, db *sql.DB) []string {
	rows, err := db.Query("XA RECOVER")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var format, gl, bl int
		var data []byte
		if err := rows.Scan(&format, &gl, &bl, &data); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "billing-mysql") {
			out = append(out, string(data))
		}
	}
	return out
}

// rollbackLeftovers rolls back prepared XA transactions of the billing
// job left by an interrupted earlier run of this test.
func rollbackLeftovers(t *testing.T, db *sql.DB) {
	rows, err := db.Query("XA RECOVER")
	if err != nil {
		t.Fatal(err)
	}
	type x struct {
		format, gl int
		data       []byte
	}
	var xs []x
	for rows.Next() {
		var v x
		var bl int
		if err := rows.Scan(&v.format, &v.gl, &bl, &v.data); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(v.data), "billing-mysql") {
			xs = append(xs, v)
		}
	}
	rows.Close()
	for _, v := range xs {
		q := fmt.Sprintf("XA ROLLBACK X'%x',X'%x',%d", v.data[:v.gl], v.data[v.gl:], v.format)
		if _, err := db.Exec(q); err != nil {
			t.Logf("rolling back a leftover xid: %v", err)
		}
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
