// Package jdbc is Flink's 'connector' = 'jdbc': one connector name for
// every database, chosen by the URL's subprotocol, as a JDBC driver
// would be:
//
//	'url' = 'jdbc:postgresql://host:5432/db'  ->  connectors/postgres
//	'url' = 'jdbc:mysql://host:3306/db'       ->  connectors/mysql
//
// The dispatcher holds no logic of its own: the database's connector
// validates the options (Flink's JDBC option names) and creates the
// source or sink. A database package registers itself with
// RegisterDialect; a subprotocol without one falls back on the
// connector registered under that name ('mysql').
package jdbc

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
)

func init() { connectors.Register(connector{}) }

var (
	mu       sync.RWMutex
	dialects = map[string]connectors.Connector{}
)

// RegisterDialect makes c the connector of 'jdbc:<subprotocol>://' URLs.
// It panics on a duplicate, a programming error at init time.
func RegisterDialect(subprotocol string, c connectors.Connector) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := dialects[subprotocol]; dup {
		panic("jdbc: duplicate dialect " + subprotocol)
	}
	dialects[subprotocol] = c
}

// dialectFor finds the connector of a table's URL. Its errors never
// quote the URL, which may hold a password.
func dialectFor(opts map[string]string) (connectors.Connector, error) {
	u, ok := opts["url"]
	if !ok {
		return nil, errors.New("connector 'jdbc' requires option 'url' ('jdbc:postgresql://host:port/database' or 'jdbc:mysql://host:port/database')")
	}
	rest, ok := strings.CutPrefix(u, "jdbc:")
	sub, _, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || sub == "" {
		return nil, errors.New("option 'url' must start with 'jdbc:<database>://', e.g. 'jdbc:postgresql://host:5432/db'")
	}
	mu.RLock()
	c, found := dialects[sub]
	mu.RUnlock()
	if found {
		return c, nil
	}
	if c, err := connectors.Lookup(sub); err == nil && sub != "jdbc" {
		return c, nil
	}
	return nil, fmt.Errorf("option 'url': no JDBC dialect for 'jdbc:%s:'; supported: %s", sub, strings.Join(supported(), ", "))
}

func supported() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := []string{"mysql"}
	for n := range dialects {
		if n != "mysql" { // connectors/mysql registers its JDBC dialect too
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

type connector struct{}

func (connector) Name() string { return "jdbc" }

// common are the options every dialect has, described for all of them.
var common = []connectors.OptionDef{
	{Key: "url", Required: true, Description: "the database: 'jdbc:postgresql://host:port/database' or 'jdbc:mysql://host:port/database'; the subprotocol picks the database (docs/postgres.md, docs/mysql.md)"},
	{Key: "table-name", Required: true, Description: "the table, 'name' or 'schema.name'; sink tables are created by the user"},
	{Key: "username", Description: "the user; overrides one in 'url'"},
	{Key: "password", Description: "the password; overrides one in 'url'. Never shown by SHOW CREATE TABLE, EXPLAIN, logs or errors"},
	{Key: "sink.semantic", Kind: config.Enum, Enum: []string{"exactly-once", "upsert", "at-least-once"}, Description: "exactly-once (PostgreSQL prepared transactions, MySQL XA, committed on checkpoint completion), upsert (by primary key, at-least-once, idempotent), or at-least-once (plain INSERT, tables without a primary key). Default: upsert with a PRIMARY KEY, else at-least-once"},
}

// Options are the common options, then the union of the dialects' other
// options (the first description of a key wins), for documentation and
// completion; each dialect validates its own.
func (connector) Options() []connectors.OptionDef {
	seen := map[string]bool{}
	out := append([]connectors.OptionDef(nil), common...)
	for _, d := range common {
		seen[d.Key] = true
	}
	names := supported()
	sort.SliceStable(names, func(i, j int) bool { return names[i] == "postgresql" && names[j] != "postgresql" })
	for _, n := range names {
		c, err := dialectFor(map[string]string{"url": "jdbc:" + n + "://"})
		if err != nil {
			continue
		}
		for _, d := range c.Options() {
			if !seen[d.Key] {
				seen[d.Key] = true
				out = append(out, d)
			}
		}
	}
	return out
}

func (connector) NewSink(t *connectors.Table, env *connectors.Env) (connectors.TableSink, error) {
	c, err := dialectFor(t.Options)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(connectors.SinkConnector)
	if !ok {
		return nil, fmt.Errorf("the JDBC dialect '%s' cannot write tables", c.Name())
	}
	return sc.NewSink(t, env)
}

func (connector) NewScan(t *connectors.Table, env *connectors.Env) (connectors.ScanSource, error) {
	c, err := dialectFor(t.Options)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(connectors.SourceConnector)
	if !ok {
		return nil, fmt.Errorf("the JDBC dialect '%s' cannot be read yet; it can only be written: %w", c.Name(), connectors.ErrWriteOnly)
	}
	return sc.NewScan(t, env)
}
