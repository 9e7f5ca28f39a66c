// Command billing runs the billing example end to end on one machine
// with nothing but Go:
//
//	go run ./examples/billing
//
// It starts a local Kafka-protocol broker (in process), writes generated
// bill events to its "bills" topic (4 partitions, ~5% resends, some late,
// a few malformed), and runs the job of tables.sql with to_mysql.sql when
// a MySQL server answers (STREAMSQL_TEST_MYSQL_DSN, default
// root@tcp(127.0.0.1:3306)/test) or to_files.sql otherwise. While it runs
// it prints progress; at the end it prints the totals and checks them
// against the reference computed straight from the generated events.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	_ "github.com/streamsql/streamsql/connectors/all"
	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/examples/billing/bills"
	"github.com/streamsql/streamsql/internal/secrets"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/repl"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout))
}

func run(args []string, out io.Writer) int {
	fs := flag.NewFlagSet("billing", flag.ContinueOnError)
	n := fs.Int("bills", 200_000, "distinct bills to generate")
	rate := fs.Int("rate", 50_000, "bill events per second written to Kafka (0: as fast as possible)")
	dsn := fs.String("mysql", envOr("STREAMSQL_TEST_MYSQL_DSN", "root@tcp(127.0.0.1:3306)/test"), "MySQL DSN; the file sink is used when it does not answer")
	files := fs.Bool("files", false, "write to the exactly-once filesystem sink even if MySQL answers")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	here := sourceDir()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	work, err := os.MkdirTemp("", "streamsql-billing-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(work)

	b, err := broker.Start(broker.Config{Topics: []string{"bills", "user_totals"}, Partitions: 4})
	if err != nil {
		return fail(err)
	}
	defer b.Close()
	fmt.Fprintf(out, "local Kafka broker on %s, topics bills and user_totals (4 partitions each)\n", b.Addr())

	cfg := bills.DefaultConfig()
	cfg.Bills = *n
	recs := bills.Generate(cfg)
	ref := bills.Reference(recs)
	dups, bad := 0, 0
	for _, r := range recs {
		if r.Duplicate {
			dups++
		}
		if r.Bill == nil {
			bad++
		}
	}
	fmt.Fprintf(out, "generated %d events: %d bills, %d resends, %d malformed, %d users\n", len(recs), cfg.Bills, dups, bad, len(ref))

	vars := repl.Vars{"bootstrap": b.Addr(), "checkpoints": filepath.Join(work, "checkpoints"), "out": filepath.Join(work, "out"), "mysql_url": *dsn}
	var db *sql.DB
	jobFile := "to_files.sql"
	if !*files {
		var demoDSN string
		if db, demoDSN, err = openMySQL(*dsn); err == nil {
			jobFile = "to_mysql.sql"
			vars["mysql_url"] = demoDSN
			fmt.Fprintln(out, mysqlNote)
			defer db.Close()
		} else {
			fmt.Fprintf(out, "MySQL at %s does not answer (%s); writing to the exactly-once filesystem sink instead\n",
				secrets.Mask(*dsn), secrets.Mask(err.Error()))
		}
	}
	fmt.Fprintf(out, "job: tables.sql + %s, checkpoints every second\n", jobFile)
	fmt.Fprintln(out, committedNote)

	s := engine.NewSession(io.Discard)
	for _, f := range []string{"tables.sql", jobFile} {
		text, err := os.ReadFile(filepath.Join(here, f))
		if err != nil {
			return fail(err)
		}
		stmts, err := parser.Parse(repl.Substitute(string(text), vars, os.Stderr, f))
		if err != nil {
			return fail(fmt.Errorf("%s: %w", f, err))
		}
		for _, st := range stmts {
			if _, err := s.Execute(ctx, st); err != nil {
				return fail(fmt.Errorf("%s: %w", f, err))
			}
		}
	}

	var produced atomic.Int64
	prodErr := make(chan error, 1)
	go func() {
		prodErr <- bills.Produce(ctx, b.Addr(), "bills", recs, *rate, func(k int) { produced.Store(int64(k)) })
	}()

	read := func() (map[int64]bills.Total, error) {
		if db != nil {
			return bills.MySQLTotals(db, "user_totals")
		}
		return bills.FileTotals(filepath.Join(work, "out"))
	}
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var got map[int64]bills.Total
	lastSec := 0
	for done := false; !done; {
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "interrupted")
			return 130
		case err := <-prodErr:
			if err != nil {
				return fail(err)
			}
			prodErr = nil
			continue // progress is printed on the next tick, once a second
		case <-tick.C:
		}
		for _, j := range s.Jobs() {
			if err := j.Err(); err != nil {
				return fail(fmt.Errorf("job %s: %w", j.Name, err))
			}
		}
		got, err = read()
		if err != nil {
			return fail(err)
		}
		var n int64
		for _, t := range got {
			n += t.Bills
		}
		ckpt := "none yet"
		for _, j := range s.Jobs() {
			if st, ok := j.CheckpointStats(); ok && st.Completed > 0 {
				ckpt = fmt.Sprintf("%d completed", st.Completed)
			}
		}
		// One line a second: a tick read late and the next one on time
		// would otherwise both print the same second.
		if sec := int(time.Since(start) / time.Second); sec > lastSec {
			lastSec = sec
			fmt.Fprintf(out, "%5ds  produced %7d/%d  committed bills in the totals %7d/%d  checkpoints %s\n",
				sec, produced.Load(), len(recs), n, cfg.Bills, ckpt)
		}
		lost, dup, mis := bills.Diff(ref, got)
		done = prodErr == nil && lost == 0 && dup == 0 && mis == 0
		if time.Since(start) > 10*time.Minute {
			fmt.Fprintln(out, "giving up after 10 minutes")
			break
		}
	}
	for _, j := range s.Jobs() {
		j.Cancel()
		_ = j.Wait()
	}
	printTotals(out, got)
	lost, dup, mis := bills.Diff(ref, got)
	fmt.Fprintf(out, "against the reference computed from the input: lost=%d duplicated=%d mismatched=%d\n", lost, dup, mis)
	if lost+dup+mis > 0 {
		return 1
	}
	return 0
}

func printTotals(out io.Writer, got map[int64]bills.Total) {
	users := make([]int64, 0, len(got))
	var cents, n int64
	for u, t := range got {
		users = append(users, u)
		cents += t.Cents
		n += t.Bills
	}
	sort.Slice(users, func(i, j int) bool { return got[users[i]].Cents > got[users[j]].Cents })
	fmt.Fprintf(out, "final totals: %d users, %d bills, %d.%02d in all; the top five:\n", len(got), n, cents/100, cents%100)
	for _, u := range users[:min(5, len(users))] {
		t := got[u]
		fmt.Fprintf(out, "  user %4d  %6d bills  %12d.%02d\n", u, t.Bills, t.Cents/100, t.Cents%100)
	}
}

// demoDatabase is the database the demo writes to, created if needed, so
// that it never touches a table of the server's other databases.
const demoDatabase = "streamsql_billing_demo"

// The lines that explain what the demo does to a newcomer.
const (
	mysqlNote = "writing to MySQL table " + demoDatabase + ".user_totals (the demo creates the database " +
		demoDatabase + " if it is missing, and empties that table)"
	committedNote = "'committed' lags 'produced': the sink commits on each completed checkpoint, " +
		"so the totals grow in steps, once a second"
)

// openMySQL connects to the server of dsn, (re)creates the sink table,
// empty, in demoDatabase, and returns the DSN of that database.
func openMySQL(dsn string) (*sql.DB, string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, "", err
	}
	cfg.DBName = ""
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	srv, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, "", err
	}
	defer srv.Close()
	if err := srv.PingContext(ctx); err != nil {
		return nil, "", err
	}
	if _, err := srv.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+demoDatabase); err != nil {
		return nil, "", err
	}
	cfg.DBName = demoDatabase
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, "", err
	}
	for _, q := range []string{"DROP TABLE IF EXISTS user_totals", "CREATE TABLE user_totals (user_id BIGINT PRIMARY KEY, total_cents BIGINT NOT NULL, bills BIGINT NOT NULL)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			db.Close()
			return nil, "", err
		}
	}
	return db, cfg.FormatDSN(), nil
}

// sourceDir finds the example's SQL files: next to this program when run
// from the repository root or from its own directory.
func sourceDir() string {
	for _, d := range []string{"examples/billing", "."} {
		if _, err := os.Stat(filepath.Join(d, "tables.sql")); err == nil {
			return d
		}
	}
	return "examples/billing"
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "billing: %v\n", err)
	return 1
}
