package mysqltest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BinlogServer is a private MariaDB server with a ROW binlog, started by
// a test in a temporary directory on a free port: the machine's server
// logs no binlog, and a test cannot reconfigure it. root has no
// password; the database test exists.
type BinlogServer struct {
	Port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// DSN is the server's go-sql-driver DSN for database test.
func (s *BinlogServer) DSN() string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/test", s.Port)
}

var (
	binlogMu     sync.Mutex
	binlogShared *BinlogServer
	binlogErr    error
)

// SharedBinlog returns the test process's private binlog server,
// starting it on first use; StopSharedBinlog (from TestMain) stops it.
// Without MariaDB's binaries the test is skipped, or fails under
// CI=true.
func SharedBinlog(t testing.TB) *BinlogServer {
	t.Helper()
	binlogMu.Lock()
	defer binlogMu.Unlock()
	if binlogShared == nil && binlogErr == nil {
		binlogShared, binlogErr = startBinlog()
	}
	if binlogErr != nil {
		msg := fmt.Sprintf("\n*** BINLOG TESTS SKIPPED: cannot start a private MariaDB server (%v).\n*** Under CI=true this fails.", binlogErr)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return binlogShared
}

// StopSharedBinlog stops the shared binlog server, if one was started.
func StopSharedBinlog() {
	binlogMu.Lock()
	defer binlogMu.Unlock()
	if binlogShared != nil {
		binlogShared.stop()
		_ = os.RemoveAll(binlogShared.dir)
		binlogShared = nil
	}
}

func startBinlog() (*BinlogServer, error) {
	for _, b := range []string{"mariadb-install-db", "mariadbd"} {
		if _, err := lookPath(b); err != nil {
			return nil, fmt.Errorf("%s not found: install MariaDB's server package", b)
		}
	}
	dir, err := os.MkdirTemp("", "streamsql-mariadb-")
	if err != nil {
		return nil, err
	}
	s := &BinlogServer{dir: dir}
	// --no-defaults: the system configuration would point the server at
	// files it may not write.
	inst, _ := lookPath("mariadb-install-db")
	out, err := exec.Command(inst, "--no-defaults", "--user=root", "--datadir="+filepath.Join(dir, "data"),
		"--auth-root-authentication-method=normal", "--skip-test-db").CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("mariadb-install-db: %v\n%s", err, out)
	}
	for try := 0; try < 3; try++ { // a free port may be taken before the server binds it
		if s.Port, err = freePort(); err != nil {
			break
		}
		if err = s.start(); err == nil {
			break
		}
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", s.Port))
	if err == nil {
		_, err = db.Exec("CREATE DATABASE test")
		db.Close()
	}
	if err != nil {
		s.stop()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	// Debian puts mariadbd in sbin, which a test's PATH may lack.
	for _, d := range []string{"/usr/sbin", "/usr/local/sbin"} {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs mariadbd on s.Port and waits until it answers.
func (s *BinlogServer) start() error {
	bin, _ := lookPath("mariadbd")
	data := filepath.Join(s.dir, "data")
	s.cmd = exec.Command(bin, "--no-defaults", "--user=root", "--datadir="+data,
		fmt.Sprintf("--port=%d", s.Port), "--bind-address=127.0.0.1", "--socket="+filepath.Join(s.dir, "sock"),
		"--pid-file="+filepath.Join(s.dir, "pid"), "--log-bin="+filepath.Join(s.dir, "binlog"), "--binlog-format=ROW",
		"--server-id=1", "--skip-name-resolve", "--innodb-buffer-pool-size=32M", "--innodb-flush-log-at-trx-commit=2",
		"--log-error="+filepath.Join(s.dir, "error.log"))
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { _ = c.Wait(); close(done) }(s.cmd, s.done)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			return fmt.Errorf("mariadbd exited at start:\n%s", log)
		default:
		}
		db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/", s.Port))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err = db.PingContext(ctx)
			cancel()
			db.Close()
			if err == nil {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.stop()
	return fmt.Errorf("mariadbd did not answer on port %d within 60 s", s.Port)
}

// stop kills the server and waits for it to exit.
func (s *BinlogServer) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.done
		s.cmd = nil
	}
}

// Restart kills the server (as a crash would) and starts it again on the
// same port, with its data and binlog.
func (s *BinlogServer) Restart(t testing.TB) {
	t.Helper()
	s.stop()
	var err error
	for try := 0; try < 50; try++ { // the port may linger briefly
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal(err)
}
