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
		{"'url' = 'jdbc:mysql://h:3306/db', 'table-name' = 't', 'scan.auto-commit' = 'false'", "unsupported option(s) for connector 'jdbc': 'scan.auto-commit'"},
		{"'url' = 'jdbc:mysql://h:3306/db', 'table-name' = 't', 'scan.partition.column' = 'a'", "go together"},
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

// The same scan options as for PostgreSQL, through a 'jdbc:mysql://'
// URL: 3 partitions of a non-key column's [0, 20] over 2 subtasks
// (rows outside the bounds and NULLs are not read), and pages of the
// key. The copies are compared with what MySQL itself selects.
func TestJDBCScanOptions(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	cols := "id BIGINT PRIMARY KEY, grp INT, name VARCHAR(20)"
	src := mysql.TableForTest(t, db, "jscan", cols)
	var vals []string
	for i := 1; i <= 2500; i++ {
		g := fmt.Sprint(i%31 - 5)
		if i%40 == 0 {
			g = "NULL"
		}
		vals = append(vals, fmt.Sprintf("(%d, %s, 'n%d')", i, g, i))
	}
	if _, err := db.Exec("INSERT INTO " + src + " VALUES " + strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
	cfg, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ opts, where string }{
		{"'scan.partition.column' = 'grp', 'scan.partition.num' = '3', 'scan.partition.lower-bound' = '0', 'scan.partition.upper-bound' = '20'", " WHERE grp BETWEEN 0 AND 20"},
		{"'scan.fetch-size' = '300'", ""},
	} {
		dst := mysql.TableForTest(t, db, "jscan_out", cols)
		url := fmt.Sprintf("jdbc:mysql://%s/%s", cfg.Addr, cfg.DBName)
		rs := run(t, engine.NewSession(&bytes.Buffer{}), fmt.Sprintf(`SET 'parallelism.default' = '2';
CREATE TABLE src (id BIGINT, grp INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '%[1]s',
  'username' = '%[2]s', 'password' = '%[3]s', 'table-name' = '%[4]s', %[5]s);
CREATE TABLE dst (id BIGINT, grp INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '%[1]s',
  'username' = '%[2]s', 'password' = '%[3]s', 'table-name' = '%[6]s');
INSERT INTO dst SELECT * FROM src;
`, url, cfg.User, cfg.Passwd, src, tc.opts, dst))
		if err := lastJob(t, rs).Wait(); err != nil {
			t.Fatal(err)
		}
		got := mysql.RowsForTest(t, db, "SELECT * FROM "+dst)
		want := mysql.RowsForTest(t, db, "SELECT * FROM "+src+tc.where)
		if len(want) < 1000 {
			t.Fatalf("%s: MySQL selects only %d rows", tc.opts, len(want))
		}
		equal(t, tc.opts, got, want)
	}
}
