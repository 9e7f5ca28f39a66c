package mysql_test

import (
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/streamsql/streamsql/connectors/mysql"
	"github.com/streamsql/streamsql/engine"
)

// A SQL lookup join against a MySQL table, written into MySQL: each
// order looks its customer up when it is processed.
func TestLookupJoinJob(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	dim := mysql.TableForTest(t, db, "lkdim", "id BIGINT PRIMARY KEY, name VARCHAR(20)")
	out := mysql.TableForTest(t, db, "lkout", "oid VARCHAR(10), name VARCHAR(20)")
	if _, err := db.Exec("INSERT INTO " + dim + " VALUES (1, 'ann'), (2, 'bob')"); err != nil {
		t.Fatal(err)
	}
	s := engine.NewSession(io.Discard)
	rs := run(t, s, fmt.Sprintf(`
CREATE TABLE orders (oid STRING, cust BIGINT) WITH ('connector' = 'values');
INSERT INTO orders VALUES ('o1', 1), ('o2', 2), ('o3', 3), ('o4', 1), ('o5', 2), ('o6', 1);
CREATE TABLE dim (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'mysql', 'url' = '%[1]s', 'table-name' = '%[2]s',
  'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '10', 'lookup.partial-cache.expire-after-access' = '1 min');
CREATE TABLE snk (oid STRING, name STRING) WITH ('connector' = 'mysql', 'url' = '%[1]s', 'table-name' = '%[3]s');
INSERT INTO snk SELECT o.oid, d.name FROM orders AS o LEFT JOIN dim FOR SYSTEM_TIME AS OF PROCTIME() AS d ON o.cust = d.id;
`, dsn, dim, out))
	if err := lastJob(t, rs).Wait(); err != nil {
		t.Fatal(err)
	}
	// o1, o4, o6 -> ann; o2, o5 -> bob; o3 has no customer: NULL.
	want := []string{"o1|ann", "o2|bob", "o3|NULL", "o4|ann", "o5|bob", "o6|ann"}
	got := mysql.RowsForTest(t, db, "SELECT oid, name FROM "+out)
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
