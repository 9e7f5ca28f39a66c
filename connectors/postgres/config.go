package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	sessconfig "github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
)

// conn is how to reach the server: host, port, database, user and
// password, from a 'jdbc:postgresql://' URL and the username/password
// options. It holds the password: never format it into an error or a
// log line.
type conn struct {
	host, port, database, user, password string
	params                               map[string]string // sslmode and other libpq parameters
}

// config is a sink table's parsed options.
type config struct {
	conn
	schema, table string // schema "" means the search path's
	semantic      dbconn.Semantic
	maxRows       int
	interval      time.Duration
	maxRetries    int
	parallelism   int
}

var connOptions = []connectors.OptionDef{
	{Key: "url", Required: true, Description: "the server: 'jdbc:postgresql://host:port/database' (Flink's JDBC form; ?user=, ?password=, ?sslmode= are understood)"},
	{Key: "username", Description: "the user; overrides ?user= in 'url'"},
	{Key: "password", Description: "the password; overrides ?password= in 'url'. Never shown by SHOW CREATE TABLE, EXPLAIN, logs or errors"},
}

var sinkOptions = append(append([]connectors.OptionDef(nil), connOptions...),
	connectors.OptionDef{Key: "table-name", Required: true, Description: "the PostgreSQL table, 'name' or 'schema.name'; sink tables are created by the user"},
	connectors.OptionDef{Key: "driver", Description: "the JDBC driver class name; accepted for Flink compatibility and ignored (the URL names the database)"},
	connectors.OptionDef{Key: "sink.semantic", Kind: sessconfig.Enum, Enum: []string{string(dbconn.ExactlyOnce), string(dbconn.Upsert), string(dbconn.AtLeastOnce)}, Description: "exactly-once (one transaction per checkpoint: PREPARE TRANSACTION at the barrier, COMMIT PREPARED when the checkpoint completes; needs max_prepared_transactions > 0), upsert (INSERT ... ON CONFLICT DO UPDATE / DELETE by primary key, at-least-once, idempotent), or at-least-once (plain INSERT, tables without a primary key). Default: upsert with a PRIMARY KEY, else at-least-once"},
	connectors.OptionDef{Key: "sink.buffer-flush.max-rows", Kind: sessconfig.Int, Min: 1, Default: "500", Description: "rows per multi-row statement; the upsert sink also flushes when this many changes are buffered"},
	connectors.OptionDef{Key: "sink.buffer-flush.interval", Kind: sessconfig.Duration, Default: "1 s", Description: "the upsert sink flushes buffered changes at least this often ('0' flushes only by size and at checkpoints); the exactly-once sink writes at each checkpoint"},
	connectors.OptionDef{Key: "sink.max-retries", Kind: sessconfig.Int, Min: 1, Default: "10", Description: "attempts of a failed write or prepare, with exponential backoff from 100 ms to 5 s. Commits of prepared transactions are retried by the two-phase-commit framework"},
	connectors.OptionDef{Key: "sink.parallelism", Kind: sessconfig.Int, Min: 1, Description: "the sink's parallelism"},
)

// parseConn reads 'url', 'username' and 'password'. prefix is the URL's
// required scheme. Errors never quote the URL.
func parseConn(opts map[string]string) (conn, error) {
	var c conn
	raw := opts["url"]
	rest, ok := strings.CutPrefix(raw, "jdbc:")
	if !ok {
		return c, errors.New("option 'url': expected 'jdbc:postgresql://host:port/database'")
	}
	u, err := url.Parse(rest)
	if err != nil || u.Scheme != "postgresql" || u.Host == "" {
		return c, errors.New("option 'url': expected 'jdbc:postgresql://host:port/database'")
	}
	c.host, c.port = u.Hostname(), u.Port()
	if c.port == "" {
		c.port = "5432"
	}
	c.database = strings.TrimPrefix(u.Path, "/")
	if c.database == "" {
		return c, errors.New("option 'url': the database is missing ('jdbc:postgresql://host:port/database')")
	}
	if u.User != nil {
		c.user = u.User.Username()
		c.password, _ = u.User.Password()
	}
	c.params = map[string]string{}
	for k, vs := range u.Query() {
		switch k {
		case "user":
			c.user = vs[0]
		case "password":
			c.password = vs[0]
		case "sslmode", "connect_timeout", "application_name":
			c.params[k] = vs[0]
		case "ssl", "currentSchema", "stringtype", "reWriteBatchedInserts", "prepareThreshold", "ApplicationName":
			// JDBC-driver knobs that have no meaning here.
		default:
			return c, fmt.Errorf("option 'url': unsupported JDBC parameter '%s'", k)
		}
	}
	if v, ok := opts["username"]; ok {
		c.user = v
	}
	if v, ok := opts["password"]; ok {
		c.password = v
	}
	if c.user == "" {
		return c, errors.New("option 'username' is missing (or ?user= in 'url')")
	}
	return c, nil
}

// poolConfig is the pgx pool configuration of c. Every session runs in
// UTC, so TIMESTAMP values read and write unshifted.
func (c conn) poolConfig(maxConns int32) (*pgxpool.Config, error) {
	q := url.Values{}
	for k, v := range c.params {
		q.Set(k, v)
	}
	if _, ok := c.params["connect_timeout"]; !ok {
		q.Set("connect_timeout", "5")
	}
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(c.host, c.port), Path: "/" + c.database, RawQuery: q.Encode()}
	pc, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		return nil, errors.New("option 'url': not a valid PostgreSQL address")
	}
	pc.ConnConfig.User = c.user
	pc.ConnConfig.Password = c.password
	pc.ConnConfig.RuntimeParams["timezone"] = "UTC"
	pc.MaxConns = maxConns
	pc.MaxConnIdleTime = 5 * time.Minute
	return pc, nil
}

// open connects a pool of at most maxConns connections.
func (c conn) open(ctx context.Context, maxConns int32) (*pgxpool.Pool, error) {
	pc, err := c.poolConfig(maxConns)
	if err != nil {
		return nil, err
	}
	p, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, c.redact(err)
	}
	return p, nil
}

// String never shows the password.
func (c conn) String() string {
	return fmt.Sprintf("postgres(%s@%s/%s)", c.user, net.JoinHostPort(c.host, c.port), c.database)
}

// redact removes the password from an error's text (dbconn.Redact).
func (c conn) redact(err error) error { return dbconn.Redact(err, c.password) }

// parseConfig validates a sink table's options.
func parseConfig(t *connectors.Table) (*config, error) {
	if err := dbconn.CheckColumnTypes(t, "PostgreSQL"); err != nil {
		return nil, err
	}
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	cn, err := parseConn(t.Options)
	if err != nil {
		return nil, err
	}
	c := &config{conn: cn}
	c.table = t.Options["table-name"]
	if s, name, ok := strings.Cut(c.table, "."); ok {
		c.schema, c.table = s, name
	}
	if c.table == "" {
		return nil, errors.New("option 'table-name' is empty")
	}
	if d, ok := t.Options["driver"]; ok && d != "org.postgresql.Driver" {
		return nil, fmt.Errorf("option 'driver': '%s' is not PostgreSQL's driver (org.postgresql.Driver)", d)
	}
	o, err := dbconn.ParseSinkOptions(t, "PostgreSQL")
	if err != nil {
		return nil, err
	}
	c.semantic, c.maxRows, c.interval, c.maxRetries, c.parallelism = o.Semantic, o.MaxRows, o.Interval, o.MaxRetries, o.Parallelism
	return c, nil
}

// isTransient reports whether err is a connection-level or concurrency
// failure that a retry on a fresh connection may cure.
func isTransient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "40001", pe.Code == "40P01", // serialization failure, deadlock
			pe.Code == "53300",                                         // too many connections
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // shutdown, cannot connect now
			pe.Code == "55006": // object in use (a prepared transaction busy in another session)
			return true
		}
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	return dbconn.LostConnection(err, "conn closed")
}

// sqlState is the SQLSTATE of err, or "".
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// retry runs fn up to attempts times while it fails transiently
// (dbconn.Retry).
func retry(ctx context.Context, attempts int, fn func() error) error {
	return dbconn.Retry(ctx, attempts, isTransient, fn)
}

// newBackoff is the delay between attempts: 100 ms, doubling, at most
// 5 s.
func newBackoff() *backoff.ExponentialBackOff { return dbconn.NewBackoff() }

// opTimeout bounds one statement round, so that a connection that hangs
// turns into a retryable error.
const opTimeout = 30 * time.Second
