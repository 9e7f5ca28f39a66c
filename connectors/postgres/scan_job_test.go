package postgres_test

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/streamsql/streamsql/connectors/postgres/pgtest"
	"github.com/streamsql/streamsql/engine"
)

// scanTables creates a source table of 3,000 rows on the machine's
// server (grp = id % 45 - 10, NULL for every 50th id) and empty copies
// for the jobs to fill; all are dropped when the test ends.
func scanTables(t *testing.T, s *pgtest.Server, copies ...string) string {
	t.Helper()
	c := s.Conn(t)
	src := fmt.Sprintf("scan_src_%d", os.Getpid())
	ddl := " (id BIGINT PRIMARY KEY, grp INTEGER, amount NUMERIC(10,2), d DATE, ts TIMESTAMP(3), name TEXT)"
	s.Exec(t, c, "DROP TABLE IF EXISTS "+src, "CREATE TABLE "+src+ddl,
		"INSERT INTO "+src+` SELECT i, CASE WHEN i % 50 = 0 THEN NULL ELSE i % 45 - 10 END, i * 1.25, DATE '2024-01-01' + i % 366,
			TIMESTAMP '2024-01-01 00:00:00' + i * INTERVAL '1.5 second', 'n' || i FROM generate_series(1, 3000) AS i`)
	for _, name := range copies {
		s.Exec(t, c, "DROP TABLE IF EXISTS "+name, "CREATE TABLE "+name+ddl)
	}
	t.Cleanup(func() {
		for _, name := range append(copies, src) {
			s.Exec(t, s.Conn(t), "DROP TABLE IF EXISTS "+name)
		}
	})
	return src
}

const scanJob = `
SET 'parallelism.default' = '2';
CREATE TABLE src (id BIGINT, grp INT, amount DECIMAL(10, 2), d DATE, ts TIMESTAMP(3), name STRING, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'jdbc', 'url' = '%[1]s', 'table-name' = '%[2]s', %[3]s);
CREATE TABLE dst (id BIGINT, grp INT, amount DECIMAL(10, 2), d DATE, ts TIMESTAMP(3), name STRING, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'jdbc', 'url' = '%[1]s', 'table-name' = '%[4]s');
INSERT INTO dst SELECT * FROM src;
`

// 'connector' = 'jdbc' reads PostgreSQL tables: partitioned on a
// non-key column with Flink's scan.partition.* options (4 partitions of
// [-5, 30] over 2 subtasks: rows outside the bounds and NULLs are not
// read), and split by the primary key in pages of scan.fetch-size. The
// copies written back are compared with what PostgreSQL itself selects.
func TestJDBCScanJob(t *testing.T) {
	s := pgtest.Machine(t)
	part, keyed := fmt.Sprintf("scan_part_%d", os.Getpid()), fmt.Sprintf("scan_keyed_%d", os.Getpid())
	src := scanTables(t, s, part, keyed)
	for _, tc := range []struct {
		dst, opts, want string
	}{
		{part, `'scan.partition.column' = 'grp', 'scan.partition.num' = '4', 'scan.partition.lower-bound' = '-5', 'scan.partition.upper-bound' = '30'`,
			"SELECT * FROM " + src + " WHERE grp BETWEEN -5 AND 30"},
		{keyed, `'scan.fetch-size' = '170'`, "SELECT * FROM " + src},
	} {
		j := run(t, engine.NewSession(&bytes.Buffer{}), fmt.Sprintf(scanJob, s.JDBC(), src, tc.opts, tc.dst))
		if err := j.Wait(); err != nil {
			t.Fatal(err)
		}
		c := s.Conn(t)
		got, want := pgtest.Rows(t, c, "SELECT * FROM "+tc.dst), pgtest.Rows(t, c, tc.want)
		if len(want) < 1000 || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: %d rows copied, %d selected by PostgreSQL", tc.opts, len(got), len(want))
		}
	}
}

// A lookup join against a PostgreSQL table, with Flink's lookup cache
// options, written into PostgreSQL: each order looks its customer up.
func TestJDBCLookupJoinJob(t *testing.T) {
	s := pgtest.Machine(t)
	c := s.Conn(t)
	dim, out := fmt.Sprintf("lk_dim_%d", os.Getpid()), fmt.Sprintf("lk_out_%d", os.Getpid())
	s.Exec(t, c, "DROP TABLE IF EXISTS "+dim, "DROP TABLE IF EXISTS "+out,
		"CREATE TABLE "+dim+" (id BIGINT PRIMARY KEY, name TEXT, since DATE)", "CREATE TABLE "+out+" (oid TEXT, name TEXT, since DATE)",
		"INSERT INTO "+dim+" VALUES (1, 'ann', '2020-02-29'), (2, 'bob', NULL)")
	t.Cleanup(func() { s.Exec(t, s.Conn(t), "DROP TABLE IF EXISTS "+dim, "DROP TABLE IF EXISTS "+out) })
	j := run(t, engine.NewSession(&bytes.Buffer{}), fmt.Sprintf(`
CREATE TABLE orders (oid STRING, cust BIGINT) WITH ('connector' = 'values');
INSERT INTO orders VALUES ('o1', 1), ('o2', 2), ('o3', 3), ('o4', 1), ('o5', 2), ('o6', 1);
CREATE TABLE dim (id BIGINT, name STRING, since DATE, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'jdbc', 'url' = '%[1]s', 'table-name' = '%[2]s',
  'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '10', 'lookup.partial-cache.expire-after-access' = '1 min',
  'lookup.partial-cache.expire-after-write' = '10 min', 'lookup.partial-cache.cache-missing-key' = 'false', 'lookup.max-retries' = '2');
CREATE TABLE snk (oid STRING, name STRING, since DATE) WITH ('connector' = 'jdbc', 'url' = '%[1]s', 'table-name' = '%[3]s');
INSERT INTO snk SELECT o.oid, d.name, d.since FROM orders AS o LEFT JOIN dim FOR SYSTEM_TIME AS OF PROCTIME() AS d ON o.cust = d.id;
`, s.JDBC(), dim, out))
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	// o1, o4, o6 -> ann; o2, o5 -> bob; o3 has no customer: NULLs.
	want := []string{"o1|ann|2020-02-29", "o2|bob|NULL", "o3|NULL|NULL", "o4|ann|2020-02-29", "o5|bob|NULL", "o6|ann|2020-02-29"}
	if got := pgtest.Rows(t, c, "SELECT * FROM "+out); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
