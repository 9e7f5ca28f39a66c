package mysql_test

// SQL jobs through the engine, writing to the test MySQL server. They
// live in the external test package because the engine imports every
// connector, this one included.

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/mysql"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/internal/metrics"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// run executes a script in s and returns the results of its statements.
func run(t testing.TB, s *engine.Session, script string) []*engine.Result {
	t.Helper()
	stmts, err := parser.Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	var out []*engine.Result
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			t.Fatalf("%s: %v", st.Text, err)
		}
		out = append(out, r)
	}
	return out
}

// jobErr runs one INSERT and returns its error, whether the engine
// reports it when the job starts (a sink's Open fails) or when it ends.
func jobErr(t testing.TB, s *engine.Session, insert string) error {
	t.Helper()
	stmts, err := parser.Parse(insert)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Execute(context.Background(), stmts[0])
	if err != nil {
		return err
	}
	if r.Job == nil {
		t.Fatalf("%s started no job", insert)
	}
	return r.Job.Wait()
}

func lastJob(t testing.TB, rs []*engine.Result) *engine.Job {
	t.Helper()
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].Job != nil {
			return rs[i].Job
		}
	}
	t.Fatal("the script started no job")
	return nil
}

// aggJob is the test job: the sequence 1..rows, grouped by k % 97 with
// COUNT and SUM, into a MySQL table keyed by the group.
const aggJob = `
SET 'pipeline.name' = '%[1]s';
SET 'execution.checkpointing.interval' = '100 ms';
SET 'state.checkpoints.dir' = '%[2]s';
SET 'parallelism.default' = '2';
CREATE TABLE seq (k BIGINT) WITH ('connector' = 'datagen', 'scan.parallelism' = '1', 'rows-per-second' = '%[3]d',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '%[4]d');
CREATE TABLE res (g BIGINT, n BIGINT, s BIGINT, PRIMARY KEY (g) NOT ENFORCED) WITH ('connector' = 'mysql',
  'url' = '%[5]s', 'table-name' = '%[6]s', 'sink.semantic' = 'exactly-once', 'sink.parallelism' = '%[7]d');
INSERT INTO res SELECT k %% 97, COUNT(*), SUM(k) FROM seq GROUP BY k %% 97;
`

// reference computes the expected table straight from the input: group
// g = k mod 97 has count and sum over k in 1..rows with that remainder.
func reference(rows int) []string {
	n := map[int64]int64{}
	s := map[int64]int64{}
	for k := int64(1); k <= int64(rows); k++ {
		n[k%97]++
		s[k%97] += k
	}
	var out []string
	for g := range n {
		out = append(out, fmt.Sprintf("%d|%d|%d", g, n[g], s[g]))
	}
	return sortStrings(out)
}

func sortStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d (got %v)", what, len(got), len(want), got)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: row %d is %s, want %s", what, i, got[i], want[i])
		}
	}
}

// watchPrefixes polls the sink table as a READ COMMITTED reader until
// stop is closed. Because the source is the sequence 1..m in order and
// the sink has one subtask, every state a reader may see is a completed
// checkpoint's: the rows cover exactly 1..m for some m, so the counts
// add up to m and the sums to m(m+1)/2. Partial writes would break that.
func watchPrefixes(t *testing.T, db *sql.DB, table string) (stopWatch func(), states func() int, bad func() string) {
	stop := make(chan struct{})
	var once sync.Once
	stopWatch = func() { once.Do(func() { close(stop) }) }
	var mu sync.Mutex
	seen := map[int64]bool{}
	violation := ""
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			var n, s sql.NullInt64
			err := db.QueryRow("SELECT SUM(n), SUM(s) FROM "+table).Scan(&n, &s)
			if err == nil && n.Valid {
				mu.Lock()
				seen[n.Int64] = true
				if s.Int64 != n.Int64*(n.Int64+1)/2 && violation == "" {
					violation = fmt.Sprintf("a reader saw counts adding up to %d with sums adding up to %d, not %d", n.Int64, s.Int64, n.Int64*(n.Int64+1)/2)
				}
				mu.Unlock()
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { stopWatch(); <-done })
	return stopWatch, func() int { mu.Lock(); defer mu.Unlock(); return len(seen) },
		func() string { mu.Lock(); defer mu.Unlock(); return violation }
}

// The SQL job through the exactly-once sink: the final table equals the
// reference, every intermediate state a reader sees is a completed
// checkpoint's, and no XA transaction is left prepared.
func TestExactlyOnceAggregateJob(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	table := mysql.TableForTest(t, db, "eo_agg", "g BIGINT PRIMARY KEY, n BIGINT NOT NULL, s BIGINT NOT NULL")
	job := mysql.UniqueForTest("eoagg")
	mysql.CleanupPreparedForTest(t, db, "streamsql:"+job)
	const rows = 30000
	commits := metrics.Snapshot(metrics.SinkCommitLatency)
	stop, states, bad := watchPrefixes(t, db, table)
	s := engine.NewSession(&bytes.Buffer{})
	j := lastJob(t, run(t, s, fmt.Sprintf(aggJob, job, t.TempDir(), 20000, rows, dsn, table, 1)))
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	stop()
	equal(t, "final table", mysql.RowsForTest(t, db, "SELECT g, n, s FROM "+table), reference(rows))
	if v := bad(); v != "" {
		t.Fatal(v)
	}
	// 1.5 s of input with checkpoints every 100 ms: several commits, and
	// a reader saw several of the intermediate states.
	if n := metrics.Snapshot(metrics.SinkCommitLatency).Since(commits).Count; n < 3 {
		t.Fatalf("%d XA commits, want several", n)
	}
	if n := states(); n < 3 {
		t.Fatalf("the reader saw %d distinct states, want several", n)
	}
	if p := mysql.PreparedForTest(t, db, "streamsql:"+job); len(p) != 0 {
		t.Fatalf("XA transactions left prepared: %v", p)
	}
}

// The server is unreachable for two seconds mid-run (a proxy between
// the job and the server goes down, cutting every connection): prepares
// and commits retry, the job catches up, nothing is lost or doubled.
func TestExactlyOnceSurvivesOutage(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	table := mysql.TableForTest(t, db, "eo_out", "g BIGINT PRIMARY KEY, n BIGINT NOT NULL, s BIGINT NOT NULL")
	job := mysql.UniqueForTest("eoout")
	mysql.CleanupPreparedForTest(t, db, "streamsql:"+job)
	proxy := mysql.NewProxy(t, mysql.AddrForTest(t, dsn))
	const rows = 40000
	s := engine.NewSession(&bytes.Buffer{})
	j := lastJob(t, run(t, s, fmt.Sprintf(aggJob, job, t.TempDir(), 10000, rows, mysql.WithAddrForTest(t, dsn, proxy.Addr), table, 2)))
	// Wait for a first commit, then cut the server off.
	deadline := time.Now().Add(10 * time.Second)
	for len(mysql.RowsForTest(t, db, "SELECT g FROM "+table)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no commit within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	proxy.Down()
	var during atomic.Int64
	var n sql.NullInt64
	_ = db.QueryRow("SELECT SUM(n) FROM " + table).Scan(&n)
	during.Store(n.Int64)
	time.Sleep(10 * time.Second) // the drill: unreachable for 10 s
	_ = db.QueryRow("SELECT SUM(n) FROM " + table).Scan(&n)
	if n.Int64 != during.Load() {
		t.Fatalf("rows were committed while the server was unreachable (%d -> %d): the outage did not happen", during.Load(), n.Int64)
	}
	proxy.Up(t)
	if err := j.Wait(); err != nil {
		t.Fatal(err)
	}
	equal(t, "final table", mysql.RowsForTest(t, db, "SELECT g, n, s FROM "+table), reference(rows))
	if p := mysql.PreparedForTest(t, db, "streamsql:"+job); len(p) != 0 {
		t.Fatalf("XA transactions left prepared: %v", p)
	}
}

// The default (upsert) sink from an upsert source with deletes: -D
// removes the MySQL row, +U replaces it, rows the job never touches stay.
func TestUpsertSinkJobWithDeletes(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	table := mysql.TableForTest(t, db, "ups_job", "id INT PRIMARY KEY, name VARCHAR(20)")
	if _, err := db.Exec("INSERT INTO " + table + " VALUES (2, 'old bob'), (9, 'untouched')"); err != nil {
		t.Fatal(err)
	}
	s := engine.NewSession(&bytes.Buffer{})
	rs := run(t, s, fmt.Sprintf(`
CREATE TABLE users (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'values', 'changelog-mode' = 'upsert');
INSERT INTO users VALUES ('+I', 1, 'ann'), ('+I', 2, 'bob'), ('+U', 1, 'anne'), ('-D', 2, 'bob'), ('+U', 3, 'cy'), ('+I', 4, 'dee'), ('-D', 4, 'dee');
CREATE TABLE out_users (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'mysql', 'url' = '%s', 'table-name' = '%s');
INSERT INTO out_users SELECT id, name FROM users;
`, dsn, table))
	if err := lastJob(t, rs).Wait(); err != nil {
		t.Fatal(err)
	}
	// 1: ann then anne; 2: deleted (also the row that was there); 3: cy;
	// 4: inserted then deleted; 9: not in the stream.
	equal(t, "table", mysql.RowsForTest(t, db, "SELECT id, name FROM "+table), []string{"1|anne", "3|cy", "9|untouched"})
}

// A sink whose MySQL table has a column of the wrong type fails at job
// start, naming the column.
func TestSchemaMismatchFailsJobStart(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	table := mysql.TableForTest(t, db, "sch_job", "g BIGINT PRIMARY KEY, n VARCHAR(5), s BIGINT")
	s := engine.NewSession(&bytes.Buffer{})
	run(t, s, fmt.Sprintf(`
CREATE TABLE src (k BIGINT) WITH ('connector' = 'values');
INSERT INTO src VALUES (1), (2);
CREATE TABLE res (g BIGINT, n BIGINT, s BIGINT, PRIMARY KEY (g) NOT ENFORCED) WITH ('connector' = 'mysql', 'url' = '%s', 'table-name' = '%s', 'sink.semantic' = 'exactly-once');
`, dsn, table))
	err := jobErr(t, s, "INSERT INTO res SELECT k, COUNT(*), SUM(k) FROM src GROUP BY k")
	if err == nil || !strings.Contains(err.Error(), "column 'n'") {
		t.Fatalf("got %v, want an error naming column 'n'", err)
	}
	if n := len(mysql.RowsForTest(t, db, "SELECT g FROM "+table)); n != 0 {
		t.Fatalf("%d rows written", n)
	}
}

// The password shows neither in SHOW CREATE TABLE, nor in EXPLAIN, nor
// in the error of a job that the server refuses.
func TestPasswordNeverShown(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	table := mysql.TableForTest(t, db, "pw", "id INT PRIMARY KEY, name VARCHAR(20)")
	const secret = "Sekr1t-Pw-4711"
	addr := mysql.AddrForTest(t, dsn)
	s := engine.NewSession(&bytes.Buffer{})
	rs := run(t, s, fmt.Sprintf(`
CREATE TABLE a (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'mysql',
  'url' = 'jdbc:mysql://%[1]s/test', 'table-name' = '%[2]s', 'username' = 'nosuchuser_pw', 'password' = '%[3]s');
CREATE TABLE b (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'mysql',
  'url' = 'nosuchuser_pw:%[3]s@tcp(%[1]s)/test', 'table-name' = '%[2]s');
CREATE TABLE src (id INT, name STRING) WITH ('connector' = 'values');
INSERT INTO src VALUES (1, 'x');
SHOW CREATE TABLE a;
SHOW CREATE TABLE b;
EXPLAIN INSERT INTO a SELECT id, name FROM src;
`, addr, table, secret))
	var texts []string
	for _, r := range rs {
		texts = append(texts, r.Text, r.Message)
	}
	all := strings.Join(texts, "\n")
	if strings.Contains(all, secret) {
		t.Fatalf("the password is shown:\n%s", all)
	}
	if strings.Count(all, "******") != 2 {
		t.Fatalf("SHOW CREATE TABLE does not show the masked password twice:\n%s", all)
	}
	// A DDL error quotes the offending line, which here holds the password.
	stmts, err := parser.Parse(fmt.Sprintf(`CREATE TABLE c (id INT) WITH ('connector' = 'mysql', 'url' = 'jdbc:mysql://%s/test', 'table-name' = 't', 'password' = '%s', 'sink.semantic' = 'twice')`, addr, secret))
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Execute(context.Background(), stmts[0])
	if err == nil || !strings.Contains(err.Error(), "sink.semantic") {
		t.Fatalf("bad DDL: %v", err)
	}
	if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "'password' = '******'") {
		t.Fatalf("the DDL error shows the password:\n%v", err)
	}
	for _, tbl := range []string{"a", "b"} {
		err := jobErr(t, s, "INSERT INTO "+tbl+" SELECT id, name FROM src")
		if err == nil {
			t.Fatalf("table %s: the server accepted an unknown user", tbl)
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("table %s: the error shows the password: %v", tbl, err)
		}
		if !strings.Contains(err.Error(), "Access denied") {
			t.Fatalf("table %s: unexpected error %v", tbl, err)
		}
	}
}

// The scan source in a query: a bounded read of a dimension table at
// parallelism 2, split by primary key.
func TestScanSourceQuery(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	table := mysql.TableForTest(t, db, "dim", "id BIGINT PRIMARY KEY, region VARCHAR(10), price DECIMAL(8,2)")
	var vals []string
	for i := 1; i <= 1000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'r%d', %d.25)", i, i%3, i))
	}
	if _, err := db.Exec("INSERT INTO " + table + " VALUES " + strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
	s := engine.NewSession(&bytes.Buffer{})
	rs := run(t, s, fmt.Sprintf(`
CREATE TABLE dim (id BIGINT, region STRING, price DECIMAL(8, 2), PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'mysql', 'url' = '%s', 'table-name' = '%s', 'scan.parallelism' = '2');
SELECT region, COUNT(*) AS c, SUM(price) AS p FROM dim GROUP BY region;
`, dsn, table))
	q := rs[len(rs)-1].Query
	final := map[string]string{}
	err := q.Run(context.Background(), func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			if ch.Kind.IsAccumulate() {
				final[ch.Row[0].Str()] = types.FormatRow(ch.Row, []types.Type{types.TypeString, types.TypeBigInt, types.DecimalType(38, 2)}, "|")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Region r = i mod 3 over i in 1..1000: r1 and r2 hold 334 and 333
	// ids; price i + 0.25 sums to (sum of i) + 0.25 * count.
	want := map[string]string{}
	for r := 0; r < 3; r++ {
		var c, sum int
		for i := 1; i <= 1000; i++ {
			if i%3 == r {
				c++
				sum += i
			}
		}
		want[fmt.Sprintf("r%d", r)] = fmt.Sprintf("r%d|%d|%d.%02d", r, c, sum+c/4, (c%4)*25)
	}
	if fmt.Sprint(final) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", final, want)
	}
}

// A job stopped mid-run (its process "dies": only checkpoints and the
// server's prepared transactions survive) and restarted from its last
// checkpoint: the restored handles are committed, what was prepared
// after the checkpoint is rolled back and rewritten, and the final table
// equals the reference: nothing lost, nothing counted twice.
func TestExactlyOnceRestoreAfterStop(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	table := mysql.TableForTest(t, db, "eo_rst", "g BIGINT PRIMARY KEY, n BIGINT NOT NULL, s BIGINT NOT NULL")
	job := mysql.UniqueForTest("eorst")
	mysql.CleanupPreparedForTest(t, db, "streamsql:"+job)
	dir := t.TempDir()
	const rows = 30000
	s1 := engine.NewSession(&bytes.Buffer{})
	j1 := lastJob(t, run(t, s1, fmt.Sprintf(aggJob, job, dir, 15000, rows, dsn, table, 2)))
	deadline := time.Now().Add(10 * time.Second)
	for len(mysql.RowsForTest(t, db, "SELECT g FROM "+table)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no commit within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	j1.Cancel()
	_ = j1.Wait()
	var n sql.NullInt64
	if err := db.QueryRow("SELECT SUM(n) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n.Int64 <= 0 || n.Int64 >= rows {
		t.Fatalf("the first run committed %d of %d rows; the test needs a partial run", n.Int64, rows)
	}
	s2 := engine.NewSession(&bytes.Buffer{})
	j2 := lastJob(t, run(t, s2, fmt.Sprintf(aggJob, job, dir, 0, rows, dsn, table, 2)))
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	if st, ok := j2.CheckpointStats(); !ok || st.RestoredFrom == "" {
		t.Fatal("the second run did not restore a checkpoint")
	}
	equal(t, "final table", mysql.RowsForTest(t, db, "SELECT g, n, s FROM "+table), reference(rows))
	if p := mysql.PreparedForTest(t, db, "streamsql:"+job); len(p) != 0 {
		t.Fatalf("XA transactions left prepared: %v", p)
	}
}

// The upsert sink is at-least-once and idempotent by key: a job stopped
// mid-run and restored from its checkpoint rewrites some keys, and ends
// with the reference table all the same.
func TestUpsertSinkRestoreAfterStop(t *testing.T) {
	dsn := mysql.DSNForTest(t)
	db := mysql.OpenForTest(t, dsn)
	table := mysql.TableForTest(t, db, "ups_rst", "g BIGINT PRIMARY KEY, n BIGINT NOT NULL, s BIGINT NOT NULL")
	job := mysql.UniqueForTest("upsrst")
	dir := t.TempDir()
	const rows = 30000
	script := func(rps int) string {
		return strings.Replace(fmt.Sprintf(aggJob, job, dir, rps, rows, dsn, table, 2),
			"'sink.semantic' = 'exactly-once'", "'sink.semantic' = 'upsert', 'sink.buffer-flush.interval' = '50 ms'", 1)
	}
	j1 := lastJob(t, run(t, engine.NewSession(&bytes.Buffer{}), script(15000)))
	time.Sleep(800 * time.Millisecond)
	j1.Cancel()
	_ = j1.Wait()
	var n sql.NullInt64
	if err := db.QueryRow("SELECT SUM(n) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n.Int64 <= 0 || n.Int64 >= rows {
		t.Fatalf("the first run wrote %d of %d rows; the test needs a partial run", n.Int64, rows)
	}
	j2 := lastJob(t, run(t, engine.NewSession(&bytes.Buffer{}), script(0)))
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	if st, ok := j2.CheckpointStats(); !ok || st.RestoredFrom == "" {
		t.Fatal("the second run did not restore a checkpoint")
	}
	equal(t, "final table", mysql.RowsForTest(t, db, "SELECT g, n, s FROM "+table), reference(rows))
}
