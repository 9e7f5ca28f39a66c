package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/mysql/mysqltest"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mysqltest.StopSharedBinlog()
	os.Exit(code)
}

// cdcRecorder is a SourceOutput that keeps the changes and, as the
// checkpoint coordinator does, takes the position inside Emit, after the
// chunk (nil while the snapshot declines).
type cdcRecorder struct {
	dataflow.NoControl
	src   *cdcSource
	types []types.Type
	mu    sync.Mutex
	rows  []string
	pos   [][]byte // after each chunk
	ends  []int    // len(rows) after each chunk
}

func (r *cdcRecorder) Emit(c *dyntable.Chunk) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range c.Changes {
		r.rows = append(r.rows, dyntable.FormatChange(ch, r.types))
	}
	p, _ := r.src.SnapshotPosition(0)
	r.pos = append(r.pos, p)
	r.ends = append(r.ends, len(r.rows))
	return nil
}

func (r *cdcRecorder) EmitWatermark(int64) error { return nil }

func (r *cdcRecorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.rows...)
}

// waitRows waits until n changes arrived.
func (r *cdcRecorder) waitRows(t *testing.T, n int, errc <-chan error) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if g := r.got(); len(g) >= n {
			return g
		}
		select {
		case err := <-errc:
			t.Fatalf("the source stopped: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("%d changes after 30 s, want %d: %v", len(r.got()), n, r.got())
	return nil
}

// binlogDB opens the private binlog server's database test.
func binlogDB(t *testing.T) (*mysqltest.BinlogServer, *sql.DB) {
	t.Helper()
	s := mysqltest.SharedBinlog(t)
	return s, OpenForTest(t, s.DSN())
}

func cdcTable(port int, table string, opts map[string]string) *connectors.Table {
	tbl := &connectors.Table{Name: "orders_cdc", Columns: []connectors.Column{
		{Name: "id", Type: types.TypeBigInt.WithNotNull(true)}, {Name: "name", Type: types.TypeString},
		{Name: "amount", Type: types.DecimalType(10, 2)}, {Name: "ts", Type: types.TimestampType(3)}},
		PrimaryKey: []int{0},
		Options: map[string]string{"connector": "mysql-cdc", "hostname": "127.0.0.1", "port": fmt.Sprint(port),
			"username": "root", "database-name": "test", "table-name": table, "server-id": "5401"}}
	for k, v := range opts {
		tbl.Options[k] = v
	}
	return tbl
}

// startCDC opens and runs a mysql-cdc source, restored from pos unless
// nil; the source stops when the test ends.
func startCDC(t *testing.T, tbl *connectors.Table, pos []byte) (*cdcRecorder, <-chan error, func()) {
	t.Helper()
	sc, err := cdcConnector{}.NewScan(tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := sc.Create(0, 1)
	s := src.(*cdcSource)
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Open(&dataflow.OpContext{Ctx: ctx}); err != nil {
		cancel()
		t.Fatal(err)
	}
	if pos != nil {
		if err := s.RestorePosition(pos); err != nil {
			t.Fatal(err)
		}
	}
	r := &cdcRecorder{src: s, types: tbl.Types()}
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() { errc <- s.Run(ctx, r); close(done) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
			s.Close()
		})
	}
	t.Cleanup(stop)
	return r, errc, stop
}

func mustExec(t *testing.T, db *sql.DB, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// The snapshot's rows arrive as +I; then each binlog change as MySQL made
// it: an UPDATE as -U (the row before) and +U (after), a DELETE as -D
// with the whole row, changes of one transaction together. Other tables
// are ignored. The expected changelog is written out by hand.
//
// Both snapshots: the chunked one (positions throughout) and the
// one-transaction one (positions declined until it is emitted).
func TestCDCSnapshotThenBinlog(t *testing.T) {
	for _, chunked := range []string{"true", "false"} {
		t.Run("chunked="+chunked, func(t *testing.T) { testSnapshotThenBinlog(t, chunked) })
	}
}

func testSnapshotThenBinlog(t *testing.T, chunked string) {
	_, db := binlogDB(t)
	name := TableForTest(t, db, "orders", "id BIGINT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3), extra INT")
	other := TableForTest(t, db, "other", "id BIGINT PRIMARY KEY")
	mustExec(t, db, "INSERT INTO "+name+" VALUES (1, 'ann', 10.50, '2024-01-01 10:00:00.123', 7), (2, 'bob', 20.00, NULL, 8)")
	r, errc, _ := startCDC(t, cdcTable(mysqltest.SharedBinlog(t).Port, name, map[string]string{"scan.incremental.snapshot.enabled": chunked}), nil)
	got := r.waitRows(t, 2, errc)
	sort.Strings(got)
	want := []string{"+I[1, ann, 10.50, 2024-01-01 10:00:00.123]", "+I[2, bob, 20.00, NULL]"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot: got %v, want %v", got, want)
	}
	mustExec(t, db,
		"INSERT INTO "+other+" VALUES (1)",
		"UPDATE "+name+" SET amount = 11.00 WHERE id = 1",
		"DELETE FROM "+name+" WHERE id = 2",
		"BEGIN", "INSERT INTO "+name+" (id, name) VALUES (3, 'cy')", "UPDATE "+name+" SET name = 'cyd' WHERE id = 3", "COMMIT")
	got = r.waitRows(t, 8, errc)[2:]
	want = []string{
		"-U[1, ann, 10.50, 2024-01-01 10:00:00.123]", "+U[1, ann, 11.00, 2024-01-01 10:00:00.123]",
		"-D[2, bob, 20.00, NULL]",
		"+I[3, cy, NULL, NULL]", "-U[3, cy, NULL, NULL]", "+U[3, cyd, NULL, NULL]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("binlog: got %v, want %v", got, want)
	}
	// The snapshot declined positions; every binlog chunk has one, and the
	// last transaction arrived as one chunk.
	r.mu.Lock()
	defer r.mu.Unlock()
	if (r.pos[0] == nil) != (chunked == "false") || r.pos[len(r.pos)-1] == nil {
		t.Fatalf("positions: %q", r.pos)
	}
	if n := len(r.ends); r.ends[n-1]-r.ends[n-2] != 3 {
		t.Fatalf("the last transaction came in pieces: %v", r.ends)
	}
}

// applyChangelog folds a changelog ("+I[id, ...]" strings) into the
// table it describes, keyed by the first field, failing on any change
// that does not fit the current state: an insert of a present key, or a
// -U/-D of an absent or different row. That catches duplicates and gaps.
func applyChangelog(t *testing.T, rows []string) map[string]string {
	t.Helper()
	state := map[string]string{}
	for i, r := range rows {
		kind, body := r[:2], r[3:len(r)-1]
		key, _, _ := strings.Cut(body, ",")
		switch kind {
		case "+I", "+U":
			if _, ok := state[key]; ok {
				t.Fatalf("change %d %s: key %s is already present (a duplicate)", i, r, key)
			}
			state[key] = body
		case "-U", "-D":
			if state[key] != body {
				t.Fatalf("change %d %s: the table holds %q (a gap or a duplicate)", i, r, state[key])
			}
			delete(state, key)
		}
	}
	return state
}

// tableState reads the MySQL table as the changelog formats it.
func tableState(t *testing.T, db *sql.DB, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range names {
		tableStateInto(t, db, name, out)
	}
	return out
}

func tableStateInto(t *testing.T, db *sql.DB, name string, out map[string]string) {
	t.Helper()
	rows, err := db.Query("SELECT id, name, amount, ts FROM " + name)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n, a, ts sql.NullString
		if err := rows.Scan(&id, &n, &a, &ts); err != nil {
			t.Fatal(err)
		}
		f := func(s sql.NullString) string {
			if !s.Valid {
				return "NULL"
			}
			return s.String
		}
		if ts.Valid {
			t.Fatalf("row %d has a ts; the writer never sets one", id)
		}
		out[fmt.Sprint(id)] = fmt.Sprintf("%d, %s, %s, NULL", id, f(n), f(a))
	}
}

// writer inserts, updates and deletes random rows of a table (ids 1..200)
// until stop is closed, in transactions of 1 to 3 statements.
func writer(t *testing.T, db *sql.DB, name string, seed int64, stop <-chan struct{}) (done <-chan struct{}) {
	return writerFrom(t, db, name, seed, 0, stop)
}

// writerFrom is writer over ids base+1..base+200.
func writerFrom(t *testing.T, db *sql.DB, name string, seed int64, base int, stop <-chan struct{}) (done <-chan struct{}) {
	d := make(chan struct{})
	go func() {
		defer close(d)
		rnd := rand.New(rand.NewSource(seed))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tx, err := db.Begin()
			if err != nil {
				t.Error(err)
				return
			}
			for j := 0; j <= rnd.Intn(3); j++ {
				id := base + rnd.Intn(200) + 1
				var q string
				switch rnd.Intn(3) {
				case 0:
					q = fmt.Sprintf("INSERT INTO %s (id, name, amount) VALUES (%d, 'w%d', %d.25) ON DUPLICATE KEY UPDATE amount = amount + 1", name, id, i, i)
				case 1:
					q = fmt.Sprintf("UPDATE %s SET name = 'u%d' WHERE id = %d", name, i, id)
				default:
					q = fmt.Sprintf("DELETE FROM %s WHERE id = %d", name, id)
				}
				if _, err := tx.Exec(q); err != nil {
					t.Error(err)
					tx.Rollback()
					return
				}
			}
			if err := tx.Commit(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	return d
}

// convergeCDC waits until the changelog, folded, equals the table.
func convergeCDC(t *testing.T, r *cdcRecorder, errc <-chan error, db *sql.DB, names ...string) []string {
	t.Helper()
	want := tableState(t, db, names...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := r.got()
		if reflect.DeepEqual(applyChangelog(t, got), want) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the changelog never matched the table: %d changes, %d rows folded, %d in MySQL", len(got), len(applyChangelog(t, got)), len(want))
		}
		select {
		case err := <-errc:
			t.Fatalf("the source stopped: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// A writer changes the table before, during and after the snapshot: the
// changelog, folded, equals the table in the end, and no change breaks
// the fold (no duplicate, no gap). Then a source restored from a
// position taken mid-stream, folded over the state up to that position,
// ends in the same table: it resumes exactly after the position.
//
// The chunked snapshot runs in chunks of 7 rows, so that the writer's
// changes fall into the chunks' windows, and its restore is from a
// position inside the snapshot; the one-transaction snapshot's from one
// in the binlog part.
func TestCDCNoGapNoDuplicateAndRestore(t *testing.T) {
	for i, opts := range []map[string]string{
		{"scan.incremental.snapshot.chunk.size": "7"},
		{"scan.incremental.snapshot.enabled": "false"},
	} {
		t.Run(fmt.Sprint(opts), func(t *testing.T) { testNoGapNoDuplicate(t, opts, int64(i+1)) })
	}
}

func testNoGapNoDuplicate(t *testing.T, opts map[string]string, seed int64) {
	_, db := binlogDB(t)
	name := TableForTest(t, db, "churn", "id BIGINT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3)")
	stop := make(chan struct{})
	done := writer(t, db, name, seed, stop)
	time.Sleep(300 * time.Millisecond) // some rows before the snapshot
	tbl := cdcTable(mysqltest.SharedBinlog(t).Port, name, opts)
	r, errc, _ := startCDC(t, tbl, nil)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	<-done
	all := convergeCDC(t, r, errc, db, name)
	r.mu.Lock()
	var pos []byte
	cut := 0
	if opts["scan.incremental.snapshot.enabled"] != "false" {
		// A position inside the snapshot, after its first chunk.
		for i := 1; i < len(r.pos); i++ {
			if strings.Contains(string(r.pos[i]), `","after":`) {
				pos, cut = r.pos[i], r.ends[i]
				break
			}
		}
	} else {
		// A position from the middle of the binlog part.
		for i := len(r.pos) / 2; i < len(r.pos); i++ {
			if r.pos[i] != nil {
				pos, cut = r.pos[i], r.ends[i]
				break
			}
		}
	}
	r.mu.Unlock()
	if pos == nil {
		t.Fatalf("no position was taken where the test restores from (%d positions)", len(r.pos))
	}
	var p binlogPos
	if err := json.Unmarshal(pos, &p); err != nil || p.File == "" || p.Pos < 4 {
		t.Fatalf("position %s", pos)
	}
	mustExec(t, db, "INSERT INTO "+name+" (id, name) VALUES (1000, 'after')")
	r2, errc2, _ := startCDC(t, tbl, pos)
	prefix := all[:cut]
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := append(append([]string(nil), prefix...), r2.got()...)
		if reflect.DeepEqual(applyChangelog(t, got), tableState(t, db, name)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restored source never matched the table")
		}
		select {
		case err := <-errc2:
			t.Fatalf("the restored source stopped: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Killing the server mid-stream: the source reconnects and goes on from
// its last transaction, with nothing lost or repeated.
func TestCDCReconnectsAfterServerRestart(t *testing.T) {
	s, db := binlogDB(t)
	name := TableForTest(t, db, "restart", "id BIGINT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3)")
	mustExec(t, db, "INSERT INTO "+name+" (id, name) VALUES (1, 'a')")
	r, errc, _ := startCDC(t, cdcTable(s.Port, name, map[string]string{"heartbeat.interval": "1 s"}), nil)
	r.waitRows(t, 1, errc)
	mustExec(t, db, "INSERT INTO "+name+" (id, name) VALUES (2, 'b')")
	r.waitRows(t, 2, errc)
	s.Restart(t)
	db2 := OpenForTest(t, s.DSN())
	mustExec(t, db2, "UPDATE "+name+" SET name = 'bb' WHERE id = 2", "INSERT INTO "+name+" (id, name) VALUES (3, 'c')")
	got := r.waitRows(t, 5, errc)
	want := []string{"+I[1, a, NULL, NULL]", "+I[2, b, NULL, NULL]", "-U[2, b, NULL, NULL]", "+U[2, bb, NULL, NULL]", "+I[3, c, NULL, NULL]"}
	time.Sleep(200 * time.Millisecond)
	if got = r.got(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Bad setups fail with errors that say what to change, and never show
// the password.
func TestCDCErrors(t *testing.T) {
	s, db := binlogDB(t)
	keyless := TableForTest(t, db, "nokey", "id BIGINT, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3)")
	enum := TableForTest(t, db, "enum", "id BIGINT PRIMARY KEY, name ENUM('a','b'), amount DECIMAL(10,2), ts DATETIME(3)")
	ok := TableForTest(t, db, "ok", "id BIGINT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3)")
	mustExec(t, db, "CREATE USER IF NOT EXISTS 'cdcuser'@'%' IDENTIFIED BY 'Right-Pass1'")
	open := func(tbl *connectors.Table) error {
		sc, err := cdcConnector{}.NewScan(tbl, nil)
		if err != nil {
			return err
		}
		src, _ := sc.Create(0, 1)
		defer src.Close()
		return src.Open(&dataflow.OpContext{Ctx: context.Background()})
	}
	machine := DSNForTest(t) // the machine's server logs no binlog
	mport := strings.TrimPrefix(AddrForTest(t, machine), "127.0.0.1:")
	for _, tc := range []struct {
		name string
		tbl  *connectors.Table
		want string
	}{
		{"binlog disabled", cdcTable(0, ok, map[string]string{"port": mport}), "the server writes no binlog (log_bin is OFF)"},
		{"no primary key", cdcTable(s.Port, keyless, nil), "has no primary key, which mysql-cdc needs"},
		{"unmappable type", cdcTable(s.Port, enum, nil), "column 'name' has MySQL type enum('a','b'), which mysql-cdc cannot map"},
		{"no table", cdcTable(s.Port, "nothing_.*", nil), "no table matches database-name 'test' and table-name 'nothing_.*'"},
		{"wrong password", cdcTable(s.Port, ok, map[string]string{"username": "cdcuser", "password": "Wrong-Pass2"}), "Access denied"},
		{"bad mode", cdcTable(s.Port, ok, map[string]string{"scan.startup.mode": "earliest"}), "must be 'initial', 'latest-offset', 'specific-offset' or 'timestamp', got 'earliest'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := open(tc.tbl)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "Wrong-Pass2") {
				t.Fatalf("the password leaked: %v", err)
			}
		})
	}
	t.Run("statement binlog", func(t *testing.T) {
		mustExec(t, db, "SET GLOBAL binlog_format = 'STATEMENT'")
		defer mustExec(t, db, "SET GLOBAL binlog_format = 'ROW'")
		err := open(cdcTable(s.Port, ok, nil))
		if err == nil || !strings.Contains(err.Error(), "binlog_format is STATEMENT") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a statement-logged change", func(t *testing.T) {
		r, errc, _ := startCDC(t, cdcTable(s.Port, ok, nil), nil)
		// Once row 98 has arrived, the snapshot's position is fixed: row
		// 99 comes through the binlog.
		mustExec(t, db, "INSERT INTO "+ok+" (id) VALUES (98)")
		r.waitRows(t, 1, errc)
		sdb := OpenForTest(t, s.DSN()) // its sessions stay STATEMENT: keep them apart
		c, err := sdb.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer sdb.Close()
		defer c.Close()
		for _, q := range []string{"SET SESSION binlog_format = 'STATEMENT'", "INSERT INTO " + ok + " (id) VALUES (99)"} {
			if _, err := c.ExecContext(context.Background(), q); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case err := <-errc:
			if err == nil || !strings.Contains(err.Error(), "was logged as a statement, not as rows") {
				t.Fatalf("got %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("the source did not fail; it emitted %v", r.got())
		}
		mustExec(t, db, "DELETE FROM "+ok)
	})
	t.Run("purged binlog", func(t *testing.T) {
		r, errc, stop := startCDC(t, cdcTable(s.Port, ok, map[string]string{"scan.startup.mode": "latest-offset"}), nil)
		// latest-offset starts where the binlog ends when the source runs:
		// insert until a row arrives.
		for id := 1; len(r.got()) == 0; id++ {
			mustExec(t, db, fmt.Sprintf("INSERT INTO %s (id) VALUES (%d)", ok, id))
			if id == 100 {
				t.Fatal("no insert arrived")
			}
			select {
			case err := <-errc:
				t.Fatal(err)
			case <-time.After(200 * time.Millisecond):
			}
		}
		r.mu.Lock()
		pos := r.pos[0]
		r.mu.Unlock()
		stop() // the server keeps a file a replica still reads
		var p binlogPos
		_ = json.Unmarshal(pos, &p)
		purgeBinlog(t, db, p.File)
		// By file and offset (no GTID): the file is gone.
		p.GTID = ""
		pos, _ = json.Marshal(p)
		_, errc2, _ := startCDC(t, cdcTable(s.Port, ok, nil), pos)
		select {
		case err := <-errc2:
			if err == nil || !strings.Contains(err.Error(), "is no longer on the server (its binlog was purged") {
				t.Fatalf("got %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the restored source did not fail")
		}
	})
}

// purgeBinlog purges the binlog up to and including file. The server
// keeps a file until its binlog checkpoint (InnoDB's flush) moves past
// it: flush and purge until the file is gone.
func purgeBinlog(t *testing.T, db *sql.DB, file string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mustExec(t, db, "FLUSH BINARY LOGS")
		files := binlogFiles(t, db)
		mustExec(t, db, "PURGE BINARY LOGS TO '"+files[len(files)-1]+"'")
		if files = binlogFiles(t, db); files[0] > file {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server would not purge %s: %v", file, files)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func binlogFiles(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("SHOW BINARY LOGS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		var size any
		if err := rows.Scan(&n, &size); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// scan.startup.mode = timestamp skips what was committed before the
// time; specific-offset starts exactly at a given position. No snapshot
// in either.
func TestCDCStartupModes(t *testing.T) {
	s, db := binlogDB(t)
	name := TableForTest(t, db, "modes", "id BIGINT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3)")
	mustExec(t, db, "INSERT INTO "+name+" (id, name) VALUES (1, 'before')")
	time.Sleep(1100 * time.Millisecond) // the binlog's timestamps are in seconds
	since := time.Now().UnixMilli()
	mustExec(t, db, "INSERT INTO "+name+" (id, name) VALUES (2, 'after')")
	r, errc, _ := startCDC(t, cdcTable(s.Port, name, map[string]string{"scan.startup.mode": "timestamp",
		"scan.startup.timestamp-millis": fmt.Sprint(since)}), nil)
	if got := r.waitRows(t, 1, errc); !reflect.DeepEqual(got, []string{"+I[2, after, NULL, NULL]"}) {
		t.Fatalf("timestamp mode: %v", got)
	}
	r.mu.Lock()
	var p binlogPos
	_ = json.Unmarshal(r.pos[0], &p)
	r.mu.Unlock()
	mustExec(t, db, "DELETE FROM "+name+" WHERE id = 1")
	r2, errc2, _ := startCDC(t, cdcTable(s.Port, name, map[string]string{"scan.startup.mode": "specific-offset",
		"scan.startup.specific-offset.file": p.File, "scan.startup.specific-offset.pos": fmt.Sprint(p.Pos)}), nil)
	if got := r2.waitRows(t, 1, errc2); !reflect.DeepEqual(got, []string{"-D[1, before, NULL, NULL]"}) {
		t.Fatalf("specific-offset mode: %v", got)
	}
}

// On MariaDB every transaction has a GTID. Positions carry the GTID
// position, checked against the server's own @@gtid_binlog_pos, and a
// restore resumes from it rather than from the file and offset: a
// position whose file this server never had (as after a failover to a
// replica, whose files are named and cut differently) resumes exactly
// after its GTID. specific-offset takes a GTID set the same way. A GTID
// position whose binlog was purged fails, saying so.
func TestCDCGTID(t *testing.T) {
	s, db := binlogDB(t)
	name := TableForTest(t, db, "gtid", "id BIGINT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3)")
	mustExec(t, db, "INSERT INTO "+name+" (id, name) VALUES (1, 'a')")
	tbl := cdcTable(s.Port, name, nil)
	r, errc, stop := startCDC(t, tbl, nil)
	r.waitRows(t, 1, errc) // the snapshot
	mustExec(t, db, "INSERT INTO "+name+" (id, name) VALUES (2, 'b')")
	var server string
	if err := db.QueryRow("SELECT @@GLOBAL.gtid_binlog_pos").Scan(&server); err != nil {
		t.Fatal(err)
	}
	r.waitRows(t, 2, errc)
	r.mu.Lock()
	var p binlogPos
	if err := json.Unmarshal(r.pos[len(r.pos)-1], &p); err != nil {
		t.Fatal(err)
	}
	r.mu.Unlock()
	stop()
	if p.GTID == "" || p.GTID != server {
		t.Fatalf("the position after the insert has GTID set %q; the server's gtid_binlog_pos is %q", p.GTID, server)
	}
	mustExec(t, db, "INSERT INTO "+name+" (id, name) VALUES (3, 'c')", "UPDATE "+name+" SET name = 'a2' WHERE id = 1")
	want := []string{"+I[3, c, NULL, NULL]", "-U[1, a, NULL, NULL]", "+U[1, a2, NULL, NULL]"}

	elsewhere, _ := json.Marshal(binlogPos{File: "replica-bin.000042", Pos: 4242, GTID: p.GTID})
	r2, errc2, stop2 := startCDC(t, tbl, elsewhere)
	if got := r2.waitRows(t, 3, errc2); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored by GTID: got %v, want %v", got, want)
	}
	stop2()

	r3, errc3, stop3 := startCDC(t, cdcTable(s.Port, name, map[string]string{"scan.startup.mode": "specific-offset",
		"scan.startup.specific-offset.gtid-set": p.GTID}), nil)
	if got := r3.waitRows(t, 3, errc3); !reflect.DeepEqual(got, want) {
		t.Fatalf("specific-offset by GTID: got %v, want %v", got, want)
	}
	stop3()

	purgeBinlog(t, db, p.File)
	_, errc4, _ := startCDC(t, tbl, elsewhere)
	select {
	case err := <-errc4:
		if err == nil || !strings.Contains(err.Error(), "is no longer on the server (its binlog was purged") || !strings.Contains(err.Error(), p.GTID) {
			t.Fatalf("got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the source restored from a purged GTID position did not fail")
	}
}

// Sharded tables: two tables matched by table-name, read by the chunked
// snapshot one after the other in chunks of 5 while a writer churns each
// (disjoint ids), fold into the union of the two tables; a restore from
// a position inside the second table's snapshot does too.
func TestCDCChunkedShards(t *testing.T) {
	s, db := binlogDB(t)
	p := UniqueForTest("shard")
	cols := "id BIGINT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3)"
	a, b := TableForTest(t, db, p+"_a", cols), TableForTest(t, db, p+"_b", cols)
	stop := make(chan struct{})
	da, db2 := writerFrom(t, db, a, 5, 0, stop), writerFrom(t, db, b, 6, 1000, stop)
	time.Sleep(300 * time.Millisecond)
	tbl := cdcTable(s.Port, p+"_[ab]_.*", map[string]string{"scan.incremental.snapshot.chunk.size": "5"})
	r, errc, _ := startCDC(t, tbl, nil)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	<-da
	<-db2
	all := convergeCDC(t, r, errc, db, a, b)
	r.mu.Lock()
	var pos []byte
	cut := 0
	for i := range r.pos {
		if strings.Contains(string(r.pos[i]), `"table":"test.`+b+`","after"`) {
			pos, cut = r.pos[i], r.ends[i]
			break
		}
	}
	r.mu.Unlock()
	if pos == nil {
		t.Fatalf("no position inside the second table's snapshot (%d positions)", len(r.pos))
	}
	mustExec(t, db, "INSERT INTO "+a+" (id, name) VALUES (500, 'after')", "INSERT INTO "+b+" (id, name) VALUES (1500, 'after')")
	r2, errc2, _ := startCDC(t, tbl, pos)
	prefix := all[:cut]
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := append(append([]string(nil), prefix...), r2.got()...)
		if reflect.DeepEqual(applyChangelog(t, got), tableState(t, db, a, b)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restored source never matched the tables")
		}
		select {
		case err := <-errc2:
			t.Fatalf("the restored source stopped: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
