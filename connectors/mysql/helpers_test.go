package mysql

// Test helpers, exported so that the external test package (the SQL
// job tests, which import the engine) shares them.

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/streamsql/streamsql/connectors/mysql/mysqltest"
)

// DSNForTest returns the test server's DSN (see mysqltest.DSN).
func DSNForTest(t testing.TB) string {
	t.Helper()
	return mysqltest.DSN(t)
}

// OpenForTest opens the test server.
func OpenForTest(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// UniqueForTest returns prefix_<random hex>, a name no other test or
// helper uses.
func UniqueForTest(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// TableForTest creates a uniquely named table "(cols)" and drops it when
// the test ends.
func TableForTest(t testing.TB, db *sql.DB, prefix, cols string) string {
	t.Helper()
	name := UniqueForTest(prefix)
	if _, err := db.Exec("CREATE TABLE " + name + " (" + cols + ")"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := db.Exec("DROP TABLE IF EXISTS " + name); err != nil {
			t.Errorf("dropping %s: %v", name, err)
		}
	})
	return name
}

// RowsForTest runs a query at READ COMMITTED, as a downstream reader
// would, and returns its rows as sorted "a|b|c" strings.
func RowsForTest(t testing.TB, db *sql.DB, q string) []string {
	t.Helper()
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"); err != nil {
		t.Fatal(err)
	}
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(cols))
		for i, v := range vals {
			parts[i] = v.String
			if !v.Valid {
				parts[i] = "NULL"
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

// PreparedForTest lists the prepared XA transactions whose gtrid starts
// with prefix, as "gtrid/bqual".
func PreparedForTest(t testing.TB, db *sql.DB, prefix string) []string {
	t.Helper()
	rows, err := db.Query("XA RECOVER")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var f, gl, bl int64
		var data []byte
		if err := rows.Scan(&f, &gl, &bl, &data); err != nil {
			t.Fatal(err)
		}
		g := string(data[:gl])
		if strings.HasPrefix(g, prefix) {
			out = append(out, g+"/"+string(data[gl:gl+bl]))
		}
	}
	sort.Strings(out)
	return out
}

// WithAddrForTest returns dsn with its address replaced.
func WithAddrForTest(t testing.TB, dsn, addr string) string {
	t.Helper()
	c, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c.Addr = addr
	return c.FormatDSN()
}

// AddrForTest is the server address of dsn.
func AddrForTest(t testing.TB, dsn string) string {
	t.Helper()
	c, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return c.Addr
}

// Proxy is a TCP forwarder to the MySQL server that a test can take
// down and bring back, to make the server unreachable without stopping
// it (other tests and helpers share the server).
type Proxy struct {
	target string
	Addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// NewProxy starts a proxy to target on a free local port.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p := &Proxy{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.Addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.Down)
	return p
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[s] = true, true
			p.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				_, _ = io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			go pipe(c, s)
			go pipe(s, c)
		}
	}()
}

// Down closes the listener and cuts every connection, both ways: the
// client sees the server vanish, the server sees the client disconnect.
func (p *Proxy) Down() {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	p.wg.Wait()
}

// Up listens again on the same address.
func (p *Proxy) Up(t testing.TB) {
	t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger briefly
		if ln, err = net.Listen("tcp", p.Addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	p.serve(ln)
}

// CleanupPreparedForTest rolls back, when the test ends, the prepared XA
// transactions whose gtrid starts with prefix: a failed test must not
// leave locks behind for the table's DROP and for other tests.
func CleanupPreparedForTest(t testing.TB, db *sql.DB, prefix string) {
	t.Cleanup(func() {
		for _, x := range PreparedForTest(t, db, prefix) {
			g, b, _ := strings.Cut(x, "/")
			q := fmt.Sprintf("XA ROLLBACK X'%s',X'%s',%d", hex.EncodeToString([]byte(g)), hex.EncodeToString([]byte(b)), xaFormatID)
			// A transaction still attached to a connection that is closing
			// (the test's own handlers, closed just before) is unknown to
			// XA ROLLBACK until the server has seen the disconnect.
			var err error
			for i := 0; i < 40; i++ {
				if _, err = db.Exec(q); err == nil {
					break
				}
				time.Sleep(250 * time.Millisecond)
			}
			if err != nil {
				t.Errorf("rolling back %s: %v", x, err)
			}
		}
	})
}
