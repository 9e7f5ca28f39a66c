// Package cluster holds the end-to-end exactly-once proof of cluster
// mode: the billing job of examples/billing (tables.sql with
// cluster.sql: Kafka → dedup → aggregate → MySQL XA and a transactional
// upsert-kafka topic) runs on `streamsql worker` processes that share
// its tasks through a Kafka consumer group, while bills keep arriving:
//
//   - workers are SIGKILLed at random moments and restarted, so their
//     tasks move to the others and back, restoring their checkpoints
//     wherever they land;
//   - once, the cluster is rescaled 3 → 2 → 4 workers (one stopped
//     cleanly, then two more started);
//
// and at the end the MySQL table equals the totals computed straight
// from the generated bills, a read_committed consumer of the output
// topic sees, per user, strictly increasing bill counts ending at the
// reference, and no XA transaction of the job is left prepared.
//
// It prints "workers=3 kills=N rebalances=M lost=0 duplicated=0
// mismatched=0". The short version runs in `go test`; the long one is
// scripts/cluster_crashloop.sh.
package cluster

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/segmentio/kafka-go"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/connectors/mysql/mysqltest"
	"github.com/streamsql/streamsql/examples/billing/bills"
	"github.com/streamsql/streamsql/examples/billing/bills/billstest"
)

// The defaults are CI's short run; scripts/cluster_crashloop.sh runs the
// long one (30 kills).
var (
	kills  = flag.Int("kills", 3, "SIGKILLs of workers before the job may finish (at least 2)")
	nBills = flag.Int("bills", 3_000, "distinct bills")
	seed   = flag.Uint64("seed", 1, "random seed for kill times and victims")
)

const (
	database = "streamsql_cluster_crash"
	job      = "billing-cluster" // pipeline.name in examples/billing/cluster.sql
)

// proc is one worker process; a restarted worker is a new proc of the
// same name, appending to the same log.
type proc struct {
	name   string
	cmd    *exec.Cmd
	done   chan error
	hooked bool // started with the commit hook: it exits 137 by itself
}

type harness struct {
	t         *testing.T
	bin       string
	args      []string
	dir       string
	live      map[string]*proc
	next      int // for new worker names
	hookKills int
}

func (h *harness) logPath(name string) string { return filepath.Join(h.dir, name+".log") }

// start starts worker name; hookAt > 0 makes it exit between a
// checkpoint's pre-commit and commit at its hookAt-th commit round.
func (h *harness) start(name string, hookAt int) {
	f, err := os.OpenFile(h.logPath(name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		h.t.Fatal(err)
	}
	args := append(slices.Clip(h.args), "--name", name)
	if hookAt > 0 {
		args = append(args, "--set", fmt.Sprintf("test.crash.before-commit=%d", hookAt))
	}
	cmd := exec.Command(h.bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// The workers' local directories (a file:// store's working state)
	// in the test's own temporary directory, out of other processes' way.
	cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(h.dir, "tmp"))
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	f.Close()
	p := &proc{name: name, cmd: cmd, done: make(chan error, 1), hooked: hookAt > 0}
	go func() { p.done <- cmd.Wait() }()
	h.live[name] = p
}

func (h *harness) newWorker() {
	h.next++
	h.start(fmt.Sprintf("w%d", h.next), 0)
}

// check fails the test if a live worker ended by itself, except a
// worker started with the commit hook that exited through it: that one
// counts as a kill and is restarted. It returns the kills it counted.
func (h *harness) check() int {
	n := 0
	for name, p := range h.live {
		select {
		case err := <-p.done:
			if p.hooked && p.cmd.ProcessState.ExitCode() == 137 {
				h.hookKills++
				n++
				h.start(name, 0)
				continue
			}
			delete(h.live, name)
			msg, _ := os.ReadFile(h.logPath(name))
			h.t.Fatalf("worker %s ended by itself: %v\n%s", name, err, billstest.Tail(string(msg), 4000))
		default:
		}
	}
	return n
}

func (h *harness) kill(name string) {
	p := h.live[name]
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	delete(h.live, name)
}

// stop stops a worker with SIGTERM and checks it left cleanly.
func (h *harness) stop(name string) {
	p := h.live[name]
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		delete(h.live, name)
		if err != nil {
			msg, _ := os.ReadFile(h.logPath(name))
			h.t.Fatalf("worker %s did not stop cleanly on SIGTERM: %v\n%s", name, err, billstest.Tail(string(msg), 4000))
		}
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.done
		delete(h.live, name)
		h.t.Fatalf("worker %s did not stop within a minute of SIGTERM", name)
	}
}

func (h *harness) stopAll() {
	for name := range h.live {
		h.stop(name)
	}
}

func (h *harness) names() []string {
	var ns []string
	for n := range h.live {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// waitGroup waits until the job's group is stable with exactly the live
// workers as members: a rebalance finished, and the members of killed
// incarnations are gone (a worker killed while it waited in a JoinGroup
// stays a member until the next rebalance drops it).
func (h *harness) waitGroup(addr string) {
	c := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 5 * time.Second}
	want := strings.Join(h.names(), ",")
	deadline := time.Now().Add(3 * time.Minute)
	var last string
	for time.Now().Before(deadline) {
		h.check()
		res, err := c.DescribeGroups(context.Background(), &kafka.DescribeGroupsRequest{GroupIDs: []string{cluster.GroupID(job)}})
		if err == nil && len(res.Groups) == 1 {
			g := res.Groups[0]
			var got []string
			for _, m := range g.Members {
				got = append(got, m.ClientID)
			}
			slices.Sort(got)
			last = g.GroupState + " " + strings.Join(got, ",")
			if g.GroupState == "Stable" && strings.Join(got, ",") == want {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.t.Fatalf("the group did not settle with members %s; last seen: %s", want, last)
}

var genRE = regexp.MustCompile(`generation=(\d+)`)

// generations is the highest group generation any worker logged: the
// number of rebalances the group went through.
func (h *harness) generations() int {
	ents, _ := filepath.Glob(filepath.Join(h.dir, "w*.log"))
	most := 0
	for _, e := range ents {
		data, _ := os.ReadFile(e)
		for _, m := range genRE.FindAllSubmatch(data, -1) {
			if g, _ := strconv.Atoi(string(m[1])); g > most {
				most = g
			}
		}
	}
	return most
}

// brokerProc is the embedded broker (`streamsql kafka`) in a process of
// its own: in the test's process, a loaded machine's pauses of the test
// (its producer, its checks, the race detector) stalled the broker for
// tens of seconds, long enough for the group to drop live workers.
type brokerProc struct {
	addr string
	cmd  *exec.Cmd
	done chan error
}

func (b *brokerProc) Addr() string { return b.addr }

func startBroker(t *testing.T, bin, dir string) *brokerProc {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "kafka", "--port", "0", "--partitions", "4", "--topic", "bills:4", "--topic", "user_totals:4")
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &brokerProc{cmd: cmd, done: make(chan error, 1)}
	addrs := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if rest, ok := strings.CutPrefix(sc.Text(), "kafka broker listening on "); ok {
				addr, _, _ := strings.Cut(rest, " ")
				addrs <- addr
			}
		}
		b.done <- cmd.Wait()
		logf.Close()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-b.done
		}
	})
	select {
	case b.addr = <-addrs:
	case err := <-b.done:
		t.Fatalf("the broker ended: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the broker did not start within a minute")
	}
	return b
}

func TestClusterCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("the cluster crash loop takes a few minutes; it runs in CI without -short")
	}
	if *kills < 2 {
		t.Fatal("-kills must be at least 2")
	}
	began := time.Now()
	dsn := mysqltest.Database(t, database)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	billstest.RollbackLeftovers(t, db, job) // of an earlier, interrupted run
	for _, q := range []string{"DROP TABLE IF EXISTS user_totals",
		"CREATE TABLE user_totals (user_id BIGINT PRIMARY KEY, total_cents BIGINT NOT NULL, bills BIGINT NOT NULL)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}

	dir := t.TempDir()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		// Keep the workers' logs of a failed run.
		keep, err := os.MkdirTemp("", "streamsql-cluster-crash-logs-")
		if err != nil {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "w*.log"))
		for _, l := range logs {
			if data, err := os.ReadFile(l); err == nil {
				_ = os.WriteFile(filepath.Join(keep, filepath.Base(l)), data, 0o644)
			}
		}
		t.Logf("the workers' logs are in %s", keep)
	})
	bin := filepath.Join(dir, "streamsql")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/streamsql").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	b := startBroker(t, bin, dir)

	cfg := bills.DefaultConfig()
	cfg.Bills = *nBills
	recs := bills.Generate(cfg)
	ref := bills.Reference(recs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prodDone := make(chan error, 1)
	// Keep bills flowing through most of the kill phase (a kill, the
	// restart and the group settling take about 15 s, plus the rescale),
	// so that every run has transactions in flight.
	perSec := max(100, len(recs)/(*kills*15+30))
	go func() { prodDone <- bills.Produce(ctx, b.Addr(), "bills", recs, perSec, nil) }()

	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	examples, _ := filepath.Abs("../../examples/billing")
	h := &harness{t: t, bin: bin, dir: dir, live: map[string]*proc{}, args: []string{"worker",
		"--bootstrap-servers", b.Addr(), "--session-timeout", "15s", "--connect-timeout", "2m",
		"-i", filepath.Join(examples, "tables.sql"), "-f", filepath.Join(examples, "cluster.sql"),
		"--var", "bootstrap=" + b.Addr(), "--var", "checkpoints=file://" + filepath.Join(dir, "ckpt"), "--var", "mysql_url=" + dsn}}
	defer func() {
		for name := range h.live {
			h.kill(name)
		}
	}()
	for range 3 {
		h.newWorker()
	}
	h.waitGroup(b.Addr())

	killStart := time.Now()
	r := rand.New(rand.NewPCG(*seed, 14))
	killed, rescaled := 0, false
	for restarts := 0; killed < *kills; {
		time.Sleep(time.Duration(1500+r.IntN(2500)) * time.Millisecond)
		killed += h.check()
		if !rescaled && killed >= *kills/2 {
			// 3 → 2: one worker leaves for good; 2 → 4: two new ones.
			h.stop(h.names()[r.IntN(len(h.live))])
			h.waitGroup(b.Addr())
			h.newWorker()
			h.newWorker()
			h.waitGroup(b.Addr())
			rescaled = true
			continue
		}
		// A worker waiting for its commit hook is left to it.
		var victims []string
		for _, n := range h.names() {
			if !h.live[n].hooked {
				victims = append(victims, n)
			}
		}
		victim := victims[r.IntN(len(victims))]
		h.kill(victim)
		killed++
		// Restarted after a moment, sometimes before the group noticed;
		// every third restart, from the second on, with the hook that
		// exits between a checkpoint's pre-commit and its commit (the
		// second: so that the short run's hook fires during its kills).
		time.Sleep(time.Duration(r.IntN(1500)) * time.Millisecond)
		restarts++
		hookAt := 0
		if restarts%3 == 2 {
			hookAt = 1 + r.IntN(3)
		}
		h.start(victim, hookAt)
		// The next kill waits for the group to settle: kills faster than
		// the group's rebalances pile up members of dead incarnations
		// that each rebalance must wait out.
		h.waitGroup(b.Addr())
	}

	// A worker still waiting for its hook gets a minute for it, then
	// runs on without it.
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		killed += h.check()
		hooked := false
		for _, p := range h.live {
			hooked = hooked || p.hooked
		}
		if !hooked {
			break
		}
	}
	for _, name := range h.names() {
		if h.live[name].hooked {
			h.kill(name)
			killed++
			h.start(name, 0)
		}
	}

	killPhase := time.Since(killStart)
	// Let the job catch up: the input fully produced and the table equal
	// to the reference, then a few more checkpoints so that every
	// transaction is committed and none is open.
	if err := <-prodDone; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		h.check()
		got, err := bills.MySQLTotals(db, "user_totals")
		if err != nil {
			t.Fatal(err)
		}
		if l, d, m := bills.Diff(ref, got); l+d+m == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	time.Sleep(4 * time.Second)
	h.stopAll()

	got, err := bills.MySQLTotals(db, "user_totals")
	if err != nil {
		t.Fatal(err)
	}
	lost, duplicated, mismatched := bills.Diff(ref, got)
	topicLost, topicDup, topicBad := billstest.CheckTopic(t, b.Addr(), "user_totals", ref)
	prepared := billstest.PreparedXids(t, db, job)
	rebalances := h.generations()
	t.Logf("%s in all, kill phase %s", time.Since(began).Round(time.Second), killPhase.Round(time.Second))
	t.Logf("mysql: lost=%d duplicated=%d mismatched=%d; topic: users short=%d repeated or decreasing counts=%d wrong finals=%d; prepared xids left=%d; hook kills=%d",
		lost, duplicated, mismatched, topicLost, topicDup, topicBad, len(prepared), h.hookKills)
	fmt.Printf("workers=3 kills=%d rebalances=%d lost=%d duplicated=%d mismatched=%d\n",
		killed, rebalances, lost+topicLost, duplicated+topicDup, mismatched+topicBad)
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
	if !rescaled || rebalances < killed {
		t.Fatalf("rescaled=%v, %d rebalances for %d kills", rescaled, rebalances, killed)
	}
	if *kills >= 6 && h.hookKills == 0 {
		t.Fatal("no worker died between a checkpoint's pre-commit and its commit")
	}
}
