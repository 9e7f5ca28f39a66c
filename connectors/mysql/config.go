package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/cenkalti/backoff/v5"
	sessconfig "github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/connectors/internal/jdbcscan"
)

// config is a table's parsed options. It holds the password: never
// format it into an error or a log line (String redacts it).
type config struct {
	dsn         *gomysql.Config
	table       string // as given in 'table-name'
	schema      string // the database part of 'table-name', or "" for the DSN's
	semantic    dbconn.Semantic
	maxRows     int
	interval    time.Duration
	maxRetries  int
	parallelism int
	password    string // kept apart for redaction
}

// String never shows the password.
func (c *config) String() string {
	return fmt.Sprintf("mysql(%s@%s/%s table=%s)", c.dsn.User, c.dsn.Addr, c.dsn.DBName, c.table)
}

var options = []connectors.OptionDef{
	{Key: "url", Required: true, Description: "the server: 'jdbc:mysql://host:port/db' (Flink's JDBC form) or a go-sql-driver DSN 'user:pass@tcp(host:port)/db'"},
	{Key: "table-name", Required: true, Description: "the MySQL table, 'name' or 'db.name'; sink tables are created by the user"},
	{Key: "username", Description: "the user; overrides a user in 'url'"},
	{Key: "password", Description: "the password; overrides one in 'url'. Never shown by SHOW CREATE TABLE, EXPLAIN, logs or errors"},
	{Key: "sink.semantic", Kind: sessconfig.Enum, Enum: []string{string(dbconn.ExactlyOnce), string(dbconn.Upsert), string(dbconn.AtLeastOnce)}, Description: "exactly-once (XA transactions committed on checkpoint completion), upsert (INSERT ... ON DUPLICATE KEY UPDATE / DELETE by primary key, at-least-once, idempotent), or at-least-once (plain INSERT, tables without a primary key). Default: upsert with a PRIMARY KEY, else at-least-once"},
	{Key: "sink.buffer-flush.max-rows", Kind: sessconfig.Int, Min: 1, Default: "500", Description: "rows per multi-row statement; the upsert sink also flushes when this many changes are buffered"},
	{Key: "sink.buffer-flush.interval", Kind: sessconfig.Duration, Default: "1 s", Description: "the upsert sink flushes buffered changes at least this often ('0' flushes only by size and at checkpoints); the exactly-once sink writes at each checkpoint"},
	{Key: "sink.max-retries", Kind: sessconfig.Int, Min: 1, Default: "10", Description: "attempts of a failed write or prepare, with exponential backoff from 100 ms to 5 s (about 26 s in all at the default). XA commits are retried by the two-phase-commit framework"},
	{Key: "sink.parallelism", Kind: sessconfig.Int, Min: 1, Description: "the sink's parallelism"},
}

func init() { options = append(options, jdbcscan.OptionDefs()...) }

// jdbcParamsIgnored are JDBC URL parameters that Flink examples carry and
// that have no meaning for the Go driver.
var jdbcParamsIgnored = map[string]bool{
	"useSSL": true, "useUnicode": true, "characterEncoding": true, "serverTimezone": true,
	"allowPublicKeyRetrieval": true, "rewriteBatchedStatements": true, "autoReconnect": true,
}

// parseURL accepts 'jdbc:mysql://host[:port]/db[?params]' and the Go
// driver's DSN 'user:pass@tcp(host:port)/db?params'. Its errors never
// quote the URL, which may hold a password.
func parseURL(s string) (*gomysql.Config, error) {
	if rest, ok := strings.CutPrefix(s, "jdbc:"); ok {
		u, err := url.Parse(rest)
		if err != nil || u.Scheme != "mysql" || u.Host == "" {
			return nil, errors.New("option 'url': expected 'jdbc:mysql://host:port/database'")
		}
		c := gomysql.NewConfig()
		c.Net = "tcp"
		c.Addr = u.Host
		if _, _, err := net.SplitHostPort(u.Host); err != nil {
			c.Addr = net.JoinHostPort(u.Host, "3306")
		}
		c.DBName = strings.TrimPrefix(u.Path, "/")
		if u.User != nil {
			c.User = u.User.Username()
			c.Passwd, _ = u.User.Password()
		}
		for k, vs := range u.Query() {
			switch {
			case k == "user":
				c.User = vs[0]
			case k == "password":
				c.Passwd = vs[0]
			case jdbcParamsIgnored[k]:
			default:
				return nil, fmt.Errorf("option 'url': unsupported JDBC parameter '%s'", k)
			}
		}
		if c.DBName == "" {
			return nil, errors.New("option 'url': the database is missing ('jdbc:mysql://host:port/database')")
		}
		return c, nil
	}
	c, err := gomysql.ParseDSN(s)
	if err != nil {
		// The driver's messages describe the shape, not the content; still,
		// never pass on anything that could hold the password.
		return nil, errors.New("option 'url': not a valid DSN; expected 'jdbc:mysql://host:port/database' or 'user:pass@tcp(host:port)/database'")
	}
	if c.DBName == "" {
		return nil, errors.New("option 'url': the database is missing")
	}
	return c, nil
}

// parseConfig validates a table's options.
func parseConfig(t *connectors.Table) (*config, error) {
	if err := dbconn.CheckColumnTypes(t, "MySQL"); err != nil {
		return nil, err
	}
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	dsn, err := parseURL(t.Options["url"])
	if err != nil {
		return nil, err
	}
	if u, ok := t.Options["username"]; ok {
		dsn.User = u
	}
	if p, ok := t.Options["password"]; ok {
		dsn.Passwd = p
	}
	// Values go into statements by client-side interpolation: one round
	// trip per statement instead of prepare, execute and close.
	dsn.InterpolateParams = true
	dsn.ParseTime = true
	dsn.Loc = time.UTC
	if dsn.Timeout == 0 {
		dsn.Timeout = 5 * time.Second
	}
	c := &config{dsn: dsn, password: dsn.Passwd}
	c.table = t.Options["table-name"]
	if db, name, ok := strings.Cut(c.table, "."); ok {
		c.schema, c.table = db, name
	}
	if c.table == "" {
		return nil, errors.New("option 'table-name' is empty")
	}
	o, err := dbconn.ParseSinkOptions(t, "MySQL")
	if err != nil {
		return nil, err
	}
	c.semantic, c.maxRows, c.interval, c.maxRetries, c.parallelism = o.Semantic, o.MaxRows, o.Interval, o.MaxRetries, o.Parallelism
	return c, nil
}

// redact removes the password from an error's text (dbconn.Redact).
func (c *config) redact(err error) error { return dbconn.Redact(err, c.password) }

// openDB opens a pool whose every connection runs at READ COMMITTED: the
// sink then takes only record locks on the primary keys it writes, so
// sink subtasks, which write disjoint keys, never wait on each other's
// prepared transactions (REPEATABLE READ would take gap locks).
func (c *config) openDB() (*sql.DB, error) {
	conn, err := gomysql.NewConnector(c.dsn)
	if err != nil {
		return nil, c.redact(err)
	}
	return sql.OpenDB(readCommitted{conn}), nil
}

type readCommitted struct{ driver.Connector }

func (r readCommitted) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := r.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, errors.New("mysql: driver connection cannot execute statements")
	}
	if _, err := ex.ExecContext(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", nil); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// isTransient reports whether err is a connection-level failure that a
// retry on a fresh connection may cure.
func isTransient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, gomysql.ErrInvalidConn) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1040, // too many connections
			1053, // server shutdown in progress
			1205, // lock wait timeout
			1213, // deadlock
			2002, 2003, 2006, 2013:
			return true
		}
		return false
	}
	return dbconn.LostConnection(err, "i/o timeout")
}

// errNumber is the MySQL error number of err, or 0.
func errNumber(err error) uint16 {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// newBackoff is the delay between attempts of a write or a prepare:
// 100 ms, doubling, at most 5 s.
func newBackoff() *backoff.ExponentialBackOff { return dbconn.NewBackoff() }
