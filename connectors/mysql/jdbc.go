package mysql

import (
	"fmt"
	"maps"
	"strings"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/jdbc"
)

// Flink's JDBC connector, 'connector' = 'jdbc', for the databases
// streamsql has a driver for: MySQL (and MariaDB) through a
// 'jdbc:mysql://host:port/db' URL. Its option names are Flink's JDBC
// options, which the mysql connector already uses ('url', 'table-name',
// 'username', 'password', 'sink.buffer-flush.*', 'sink.max-retries',
// 'lookup.*', ...), plus 'driver', the JDBC driver class a Flink DDL
// names, which must be MySQL's or MariaDB's. A table of this connector
// is exactly a mysql table.

// The 'jdbc' connector (connectors/jdbc) hands it the tables whose URL
// is 'jdbc:mysql://...'.
func init() { jdbc.RegisterDialect("mysql", jdbcConnector{}) }

type jdbcConnector struct{}

// jdbcDrivers are the driver classes a Flink DDL for MySQL names.
var jdbcDrivers = map[string]bool{"com.mysql.cj.jdbc.Driver": true, "com.mysql.jdbc.Driver": true, "org.mariadb.jdbc.Driver": true}

func (jdbcConnector) Name() string { return "jdbc" }

func (jdbcConnector) Options() []connectors.OptionDef {
	return append([]connectors.OptionDef{{Key: "driver", Description: "the JDBC driver class, as Flink takes it: com.mysql.cj.jdbc.Driver, com.mysql.jdbc.Driver or org.mariadb.jdbc.Driver; MySQL's is used whatever it names"}},
		options...)
}

// asMySQL checks what is particular to 'connector' = 'jdbc' and returns
// the table as the mysql connector takes it.
func asMySQL(t *connectors.Table) (*connectors.Table, error) {
	if err := connectors.CheckOptions(jdbcConnector{}, t.Options); err != nil {
		return nil, err
	}
	if d, ok := t.Options["driver"]; ok && !jdbcDrivers[d] {
		return nil, fmt.Errorf("option 'driver' = '%s': streamsql's JDBC connector has MySQL's driver only (com.mysql.cj.jdbc.Driver)", d)
	}
	url := t.Options["url"]
	if !strings.HasPrefix(url, "jdbc:mysql://") {
		// Only a JDBC scheme is quoted: the URL may hold a password.
		what := "a non-JDBC URL"
		if rest, ok := strings.CutPrefix(url, "jdbc:"); ok {
			scheme, _, _ := strings.Cut(rest, ":")
			what = "'jdbc:" + scheme + ":'"
		}
		return nil, fmt.Errorf("option 'url': 'connector' = 'jdbc' supports MySQL URLs ('jdbc:mysql://host:port/database') only, not %s", what)
	}
	c := *t
	c.Options = maps.Clone(t.Options)
	delete(c.Options, "driver")
	c.Options["connector"] = "mysql"
	return &c, nil
}

func (jdbcConnector) NewScan(t *connectors.Table, env *connectors.Env) (connectors.ScanSource, error) {
	m, err := asMySQL(t)
	if err != nil {
		return nil, err
	}
	return connector{}.NewScan(m, env)
}

func (jdbcConnector) NewSink(t *connectors.Table, env *connectors.Env) (connectors.TableSink, error) {
	m, err := asMySQL(t)
	if err != nil {
		return nil, err
	}
	return connector{}.NewSink(m, env)
}
