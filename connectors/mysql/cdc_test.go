package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"reflect"
	"sort"
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
func startCDC(t *testing.T, tbl *connectors.Table, pos []byte) (*cdcRecorder, <-chan error) {
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
	t.Cleanup(func() {
		cancel()
		<-done
		s.Close()
	})
	return r, errc
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
func TestCDCSnapshotThenBinlog(t *testing.T) {
	_, db := binlogDB(t)
	name := TableForTest(t, db, "orders", "id BIGINT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3), extra INT")
	other := TableForTest(t, db, "other", "id BIGINT PRIMARY KEY")
	mustExec(t, db, "INSERT INTO "+name+" VALUES (1, 'ann', 10.50, '2024-01-01 10:00:00.123', 7), (2, 'bob', 20.00, NULL, 8)")
	r, errc := startCDC(t, cdcTable(mysqltest.SharedBinlog(t).Port, name, nil), nil)
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
	if r.pos[0] != nil || r.pos[len(r.pos)-1] == nil {
		t.Fatalf("positions: %q", r.pos)
	}
	if n := len(r.ends); r.ends[n-1]-r.ends[n-2] != 3 {
		t.Fatalf("the last transaction came in pieces: %v", r.ends)
	}
}
