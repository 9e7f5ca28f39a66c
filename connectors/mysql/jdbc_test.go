package mysql_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/streamsql/streamsql/connectors/mysql"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// A Flink JDBC DDL, unchanged but for the server's address, writes and
// reads the MySQL table as the mysql connector does.
func TestJDBCConnectorIsMySQL(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	table := mysql.TableForTest(t, db, "jdbc_job", "id INT PRIMARY KEY, name VARCHAR(20)")
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ddl := fmt.Sprintf(`CREATE TABLE %%s (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'jdbc',
  'url' = 'jdbc:mysql://%s/%s?useSSL=false',
  'driver' = 'com.mysql.cj.jdbc.Driver',
  'table-name' = '%s',
  'username' = '%s',
  'password' = '%s',
  'sink.buffer-flush.max-rows' = '2',
  'sink.buffer-flush.interval' = '0'
)`, cfg.Addr, cfg.DBName, table, cfg.User, cfg.Passwd)
	s := engine.NewSession(&bytes.Buffer{})
	rs := run(t, s, fmt.Sprintf(ddl, "out_users")+`;
CREATE TABLE users (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'values', 'changelog-mode' = 'upsert');
INSERT INTO users VALUES ('+I', 1, 'ann'), ('+I', 2, 'bob'), ('+U', 1, 'anne'), ('-D', 2, 'bob'), ('+I', 3, 'cy');
INSERT INTO out_users SELECT id, name FROM users;
`)
	if err := lastJob(t, rs).Wait(); err != nil {
		t.Fatal(err)
	}
	equal(t, "table", mysql.RowsForTest(t, db, "SELECT id, name FROM "+table), []string{"1|anne", "3|cy"})

	// Read back through a second JDBC table: the rows, in id order.
	rs = run(t, s, fmt.Sprintf(ddl, "in_users")+";\nSELECT id, name FROM in_users")
	var got []string
	err = rs[len(rs)-1].Query.Run(context.Background(), func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			got = append(got, ch.Kind.String()+types.FormatRow(ch.Row, nil, "|"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "scan", got, []string{"+I1|anne", "+I3|cy"})
}

// What 'connector' = 'jdbc' cannot do is refused by name, without
// quoting the URL.
func TestJDBCConnectorRefusals(t *testing.T) {
	for _, c := range []struct{ opts, want string }{
		{"'url' = 'jdbc:derby://h:1527/db?password=secret', 'table-name' = 't'", "no JDBC dialect for 'jdbc:derby:'"},
		{"'url' = 'root:secret@tcp(h:3306)/db', 'table-name' = 't'", "option 'url' must start with 'jdbc:<database>://'"},
		{"'url' = 'jdbc:mysql://h:3306/db', 'table-name' = 't', 'driver' = 'org.postgresql.Driver'", "option 'driver' = 'org.postgresql.Driver'"},
		{"'url' = 'jdbc:mysql://h:3306/db', 'table-name' = 't', 'scan.fetch-size' = '10'", "unsupported option(s) for connector 'jdbc': 'scan.fetch-size'"},
	} {
		s := engine.NewSession(&bytes.Buffer{})
		stmts, err := parser.Parse("CREATE TABLE j (a INT) WITH ('connector' = 'jdbc', " + c.opts + "); INSERT INTO j SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		var msg string
		for _, st := range stmts {
			if _, err := s.Execute(context.Background(), st); err != nil {
				msg = err.Error()
				break
			}
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s: got %q, want it to contain %q", c.opts, msg, c.want)
		}
		if strings.Contains(msg, "secret") {
			t.Errorf("%s: the error shows the password: %q", c.opts, msg)
		}
	}
}
