// Package pgtest gives tests and benchmarks their PostgreSQL servers:
//
//   - Machine: the machine's server, STREAMSQL_TEST_POSTGRES_URL or by
//     default postgres://postgres@127.0.0.1:5432/test (trust
//     authentication). Its settings cannot be changed by a test (its
//     max_prepared_transactions is typically 0).
//   - Start / Shared: a private server started in a temporary directory
//     on a free port, with wal_level=logical and
//     max_prepared_transactions=10, for the exactly-once sink and
//     postgres-cdc. Shared starts one per test process; the package's
//     TestMain stops it with StopShared.
//
// Without a server (or without PostgreSQL's binaries) a test is skipped
// with a loud message, except under CI=true, where it fails.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a PostgreSQL server reachable as User with trust
// authentication, with a database Database.
type Server struct {
	Host     string
	Port     int
	User     string
	Database string

	dir  string // the private server's directory, "" for the machine's
	bin  string
	asPG bool // commands run as the postgres user (this process is root)
}

// JDBC is the server's address as a jdbc connector's 'url'.
func (s *Server) JDBC() string {
	return fmt.Sprintf("jdbc:postgresql://%s:%d/%s?user=%s&sslmode=disable", s.Host, s.Port, s.Database, s.User)
}

// URL is the server's address for pgx.
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", s.User, s.Host, s.Port, s.Database)
}

// Conn connects to the server; the connection closes when the test ends.
func (s *Server) Conn(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// Exec runs statements, failing the test on an error.
func (s *Server) Exec(t testing.TB, c *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := c.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Rows runs a query and returns its rows as sorted "a|b|c" strings, NULL
// as "NULL".
func Rows(t testing.TB, c *pgx.Conn, q string) []string {
	t.Helper()
	rows, err := c.Query(context.Background(), q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := rows.RawValues()
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = string(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// unavailable skips the test, or fails it under CI=true.
func unavailable(t testing.TB, why string) {
	t.Helper()
	msg := fmt.Sprintf("\n*** POSTGRESQL TESTS SKIPPED: %s.\n*** Under CI=true this fails.", why)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Machine returns the machine's server, or skips (fails under CI=true)
// when it does not answer.
func Machine(t testing.TB) *Server {
	t.Helper()
	u := os.Getenv("STREAMSQL_TEST_POSTGRES_URL")
	if u == "" {
		u = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	cfg, err := pgx.ParseConfig(u)
	if err != nil {
		t.Fatalf("STREAMSQL_TEST_POSTGRES_URL: %v", err)
	}
	s := &Server{Host: cfg.Host, Port: int(cfg.Port), User: cfg.User, Database: cfg.Database}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		unavailable(t, fmt.Sprintf("no PostgreSQL server reachable at %s:%d (%v); start one or set STREAMSQL_TEST_POSTGRES_URL", s.Host, s.Port, err))
	}
	c.Close(context.Background())
	return s
}

var (
	sharedMu  sync.Mutex
	shared    *Server
	sharedErr error
)

// Shared returns the test process's private server, starting it on first
// use. StopShared (from TestMain) stops it.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = start()
	}
	if sharedErr != nil {
		unavailable(t, sharedErr.Error())
	}
	return shared
}

// StopShared stops the shared server, if one was started.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Stop()
		shared = nil
	}
}

// Start starts a private server that stops when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if err != nil {
		unavailable(t, err.Error())
	}
	t.Cleanup(s.Stop)
	return s
}

// binDir finds PostgreSQL's server binaries: STREAMSQL_TEST_PG_BINDIR,
// or pg_config --bindir.
func binDir() (string, error) {
	if d := os.Getenv("STREAMSQL_TEST_PG_BINDIR"); d != "" {
		return d, nil
	}
	out, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return "", fmt.Errorf("PostgreSQL's binaries not found (pg_config --bindir: %v); set STREAMSQL_TEST_PG_BINDIR", err)
	}
	d := strings.TrimSpace(string(out))
	if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
		return "", fmt.Errorf("no initdb in %s: install the PostgreSQL server package", d)
	}
	return d, nil
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func start() (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "streamsql-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Host: "127.0.0.1", User: "postgres", Database: "test", dir: dir, bin: bin}
	fail := func(err error) (*Server, error) {
		s.Stop()
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		return fail(err)
	}
	// initdb refuses to run as root: run the server as postgres, which
	// must be able to reach its directory.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fail(fmt.Errorf("running as root, and there is no postgres user to run the server as: %v", err))
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			return fail(err)
		}
		if err := os.Chown(data, uid, gid); err != nil {
			return fail(err)
		}
		s.asPG = true
	}
	if out, err := s.cmd("initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}
	for try := 0; try < 3; try++ { // a free port may be taken before the server binds it
		if s.Port, err = FreePort(); err != nil {
			return fail(err)
		}
		if err = s.pgctlStart(); err == nil {
			break
		}
	}
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.Port))
	if err != nil {
		return fail(err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "CREATE DATABASE test"); err != nil {
		return fail(err)
	}
	return s, nil
}

// cmd runs one of PostgreSQL's programs, as postgres when this process
// is root.
func (s *Server) cmd(name string, args ...string) *exec.Cmd {
	p := filepath.Join(s.bin, name)
	if s.asPG {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", p}, args...)...)
	}
	return exec.Command(p, args...)
}

// Restart stops the private server at once (as a crash would) and starts
// it again on the same port.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	data := filepath.Join(s.dir, "data")
	if out, err := s.cmd("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop").CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
	if err := s.pgctlStart(); err != nil {
		t.Fatal(err)
	}
}

// pgctlStart starts the server on s.Port and waits until it accepts
// connections.
func (s *Server) pgctlStart() error {
	data := filepath.Join(s.dir, "data")
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c wal_level=logical -c max_prepared_transactions=10 "+
		"-c max_replication_slots=10 -c max_wal_senders=10 -c fsync=off -c synchronous_commit=off", s.Port, data)
	out, err := s.cmd("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(data, "log"), "-w", "-t", "60", "start").CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(data, "log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// Stop stops a private server and removes its directory; it does
// nothing for the machine's server.
func (s *Server) Stop() {
	if s.dir == "" {
		return
	}
	data := filepath.Join(s.dir, "data")
	if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); err == nil {
		_ = s.cmd("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop").Run()
	}
	_ = os.RemoveAll(s.dir)
	s.dir = ""
}
