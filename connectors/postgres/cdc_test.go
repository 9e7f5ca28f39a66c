package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/postgres/pgtest"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// cdcRecorder is a SourceOutput that keeps the changes and delivers the
// control elements a test sends on ctl, as the runtime does: Handle on
// the source's goroutine, a barrier saving the position.
type cdcRecorder struct {
	src   *cdcSource
	types []types.Type
	ctl   chan dataflow.Element
	mu    sync.Mutex
	rows  []string
	pos   map[int64][]byte // checkpoint id -> position
	done  chan int64       // checkpoint ids handled
}

func (r *cdcRecorder) Emit(c *dyntable.Chunk) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range c.Changes {
		r.rows = append(r.rows, dyntable.FormatChange(ch, r.types))
	}
	return nil
}

func (r *cdcRecorder) EmitWatermark(int64) error        { return nil }
func (r *cdcRecorder) Control() <-chan dataflow.Element { return r.ctl }

func (r *cdcRecorder) Handle(e dataflow.Element) error {
	switch e.Kind {
	case dataflow.KindBarrier:
		p, err := r.src.SnapshotPosition(e.Barrier.CheckpointID)
		r.mu.Lock()
		if err == nil {
			r.pos[e.Barrier.CheckpointID] = p
		}
		r.mu.Unlock()
	case dataflow.KindCheckpointComplete:
		if err := r.src.NotifyCheckpointComplete(e.Barrier.CheckpointID); err != nil {
			return err
		}
	}
	r.done <- e.Barrier.CheckpointID
	return nil
}

func (r *cdcRecorder) Idle() error { return nil }

func (r *cdcRecorder) Sleep(ctx context.Context, d time.Duration) error {
	return dataflow.NoControl{}.Sleep(ctx, d)
}

func (r *cdcRecorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.rows...)
}

// checkpoint takes checkpoint id through the source and, if complete,
// notifies its completion; it returns the saved position.
func (r *cdcRecorder) checkpoint(t *testing.T, id int64, complete bool) []byte {
	t.Helper()
	r.ctl <- dataflow.Element{Kind: dataflow.KindBarrier, Barrier: dataflow.Barrier{CheckpointID: id}}
	<-r.done
	if complete {
		r.ctl <- dataflow.Element{Kind: dataflow.KindCheckpointComplete, Barrier: dataflow.Barrier{CheckpointID: id}}
		<-r.done
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pos[id]
}

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

func cdcTable(s *pgtest.Server, table, slot string, opts map[string]string) *connectors.Table {
	tbl := &connectors.Table{Name: "orders_cdc", Columns: []connectors.Column{
		{Name: "id", Type: types.TypeBigInt.WithNotNull(true)}, {Name: "name", Type: types.TypeString},
		{Name: "amount", Type: types.DecimalType(10, 2)}, {Name: "ts", Type: types.TimestampType(3)}},
		PrimaryKey: []int{0},
		Options: map[string]string{"connector": "postgres-cdc", "hostname": s.Host, "port": fmt.Sprint(s.Port),
			"username": s.User, "database-name": s.Database, "schema-name": "public", "table-name": table,
			"slot.name": slot, "debezium.publication.name": "pub_" + table, "heartbeat.interval": "200 ms"}}
	for k, v := range opts {
		tbl.Options[k] = v
	}
	return tbl
}

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
	r := &cdcRecorder{src: s, types: tbl.Types(), ctl: make(chan dataflow.Element), pos: map[int64][]byte{}, done: make(chan int64, 1)}
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

// cdcFixture creates a table with REPLICA IDENTITY FULL on the private
// server; the test's slot and publication are dropped when it ends.
func cdcFixture(t *testing.T) (*pgtest.Server, *pgx.Conn, string, string) {
	t.Helper()
	s := pgtest.Shared(t)
	c := s.Conn(t)
	name := unique("orders")
	slot := unique("slot")
	s.Exec(t, c, "CREATE TABLE "+name+" (id BIGINT PRIMARY KEY, name TEXT, amount NUMERIC(10,2), ts TIMESTAMP(3))",
		"ALTER TABLE "+name+" REPLICA IDENTITY FULL")
	t.Cleanup(func() {
		ctx := context.Background()
		for i := 0; i < 50; i++ { // the slot is released when its connection ends
			if _, err := c.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", slot); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		_, _ = c.Exec(ctx, "DROP PUBLICATION IF EXISTS pub_"+name)
		_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+name)
	})
	return s, c, name, slot
}

// The snapshot's rows arrive as +I; then each change: an UPDATE as -U
// (the old row, from REPLICA IDENTITY FULL) and +U, a DELETE as -D with
// the whole row. The changelog is written out by hand.
func TestCDCSnapshotThenStream(t *testing.T) {
	s, c, name, slot := cdcFixture(t)
	s.Exec(t, c, "INSERT INTO "+name+" VALUES (1, 'ann', 10.50, '2024-01-01 10:00:00.123'), (2, 'bob', 20, NULL)")
	r, errc, _ := startCDC(t, cdcTable(s, name, slot, nil), nil)
	got := r.waitRows(t, 2, errc)
	sort.Strings(got)
	want := []string{"+I[1, ann, 10.50, 2024-01-01 10:00:00.123]", "+I[2, bob, 20.00, NULL]"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot: got %v, want %v", got, want)
	}
	s.Exec(t, c, "UPDATE "+name+" SET amount = 11 WHERE id = 1", "DELETE FROM "+name+" WHERE id = 2",
		"BEGIN", "INSERT INTO "+name+" (id, name) VALUES (3, 'cy')", "UPDATE "+name+" SET name = 'cyd' WHERE id = 3", "COMMIT")
	got = r.waitRows(t, 8, errc)[2:]
	want = []string{
		"-U[1, ann, 10.50, 2024-01-01 10:00:00.123]", "+U[1, ann, 11.00, 2024-01-01 10:00:00.123]",
		"-D[2, bob, 20.00, NULL]",
		"+I[3, cy, NULL, NULL]", "-U[3, cy, NULL, NULL]", "+U[3, cyd, NULL, NULL]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("stream: got %v, want %v", got, want)
	}
}

// The slot is confirmed only up to a completed checkpoint's position: a
// checkpoint taken but not completed leaves the slot where it was. A
// source restored from the completed checkpoint's position gets exactly
// the changes after it, though the server kept more.
func TestCDCConfirmsOnCompletionAndRestores(t *testing.T) {
	s, c, name, slot := cdcFixture(t)
	tbl := cdcTable(s, name, slot, map[string]string{"scan.startup.mode": "latest-offset"})
	r, errc, stop := startCDC(t, tbl, nil)
	confirmed := func() string {
		return pgtest.Rows(t, c, "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '"+slot+"'")[0]
	}
	waitConfirmed := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for confirmed() != want {
			if time.Now().After(deadline) {
				t.Fatalf("the slot is confirmed at %s, want %s", confirmed(), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// latest-offset: the slot is created when the source runs; wait for it.
	// The slot's row appears while it is still being built; changes are
	// decoded only from its consistent point, when confirmed_flush_lsn
	// gets a value.
	for i := 0; len(pgtest.Rows(t, c, "SELECT 1 FROM pg_replication_slots WHERE slot_name = '"+slot+"' AND confirmed_flush_lsn IS NOT NULL")) == 0; i++ {
		if i == 600 {
			t.Fatal("no slot at its consistent point after 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	initial := confirmed()
	s.Exec(t, c, "INSERT INTO "+name+" (id, name) VALUES (1, 'a')")
	r.waitRows(t, 1, errc)
	p1 := r.checkpoint(t, 1, true)
	var lsn1 struct{ LSN string }
	if err := jsonUnmarshal(p1, &lsn1); err != nil || lsn1.LSN == "" || lsn1.LSN == initial {
		t.Fatalf("position %s (slot created at %s)", p1, initial)
	}
	waitConfirmed(lsn1.LSN)
	s.Exec(t, c, "INSERT INTO "+name+" (id, name) VALUES (2, 'b')")
	r.waitRows(t, 2, errc)
	r.checkpoint(t, 2, false)          // taken, never completed
	time.Sleep(600 * time.Millisecond) // three heartbeats
	if got := confirmed(); got != lsn1.LSN {
		t.Fatalf("an incomplete checkpoint moved the slot to %s (want %s)", got, lsn1.LSN)
	}
	stop()
	s.Exec(t, c, "UPDATE "+name+" SET name = 'bb' WHERE id = 2")
	r2, errc2, _ := startCDC(t, tbl, p1)
	got := r2.waitRows(t, 3, errc2)
	time.Sleep(300 * time.Millisecond)
	want := []string{"+I[2, b, NULL, NULL]", "-U[2, b, NULL, NULL]", "+U[2, bb, NULL, NULL]"}
	if got = r2.got(); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored: got %v, want %v", got, want)
	}
}

// Bad setups fail with errors that say what to change.
func TestCDCErrors(t *testing.T) {
	s, c, name, slot := cdcFixture(t)
	noident := unique("noident")
	nokey := unique("nokey")
	s.Exec(t, c, "CREATE TABLE "+noident+" (id BIGINT PRIMARY KEY, name TEXT, amount NUMERIC(10,2), ts TIMESTAMP(3))",
		"CREATE TABLE "+nokey+" (id BIGINT, name TEXT, amount NUMERIC(10,2), ts TIMESTAMP(3))")
	defer s.Exec(t, c, "DROP TABLE "+noident, "DROP TABLE "+nokey)
	open := func(tbl *connectors.Table) error {
		sc, err := cdcConnector{}.NewScan(tbl, nil)
		if err != nil {
			return err
		}
		src, _ := sc.Create(0, 1)
		defer src.Close()
		if err := src.Open(&dataflow.OpContext{Ctx: context.Background()}); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		return src.Run(ctx, &cdcRecorder{src: src.(*cdcSource), types: tbl.Types(), pos: map[int64][]byte{}})
	}
	machine := pgtest.Machine(t)
	for _, tc := range []struct {
		name string
		tbl  *connectors.Table
		want string
	}{
		{"wal_level", cdcTable(machine, name, slot, map[string]string{"table-name": "x"}), "wal_level is replica; logical replication needs wal_level = logical"},
		{"replica identity", cdcTable(s, noident, slot, nil), "has REPLICA IDENTITY DEFAULT, so its updates and deletes do not carry the old row; postgres-cdc needs ALTER TABLE \"public\".\"" + noident + "\" REPLICA IDENTITY FULL"},
		{"no primary key", cdcTable(s, nokey, slot, nil), "has no primary key"},
		{"plugin", cdcTable(s, name, slot, map[string]string{"decoding.plugin.name": "decoderbufs"}), "only 'pgoutput' is supported"},
		{"bad slot name", cdcTable(s, name, "My-Slot", nil), "option 'slot.name' must be lower-case"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := open(tc.tbl)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	t.Run("slot of another job", func(t *testing.T) {
		_, errc, stop := startCDC(t, cdcTable(s, name, slot, nil), nil)
		// While the first source streams, the slot is in use.
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := open(cdcTable(s, name, slot, nil))
			if err != nil && strings.Contains(err.Error(), "is in use by another connection") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("got %v", err)
			}
			select {
			case err := <-errc:
				t.Fatal(err)
			case <-time.After(100 * time.Millisecond):
			}
		}
		stop()
		// Stopped, without a checkpoint to restore: the slot is not ours.
		deadline = time.Now().Add(10 * time.Second)
		for {
			err := open(cdcTable(s, name, slot, nil))
			if err != nil && strings.Contains(err.Error(), "already exists (another job's") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("got %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// Killing the server mid-stream: the source reconnects from its last
// transaction and goes on, nothing lost or repeated.
func TestCDCReconnectsAfterServerRestart(t *testing.T) {
	s, c, name, slot := cdcFixture(t)
	r, errc, _ := startCDC(t, cdcTable(s, name, slot, nil), nil)
	s.Exec(t, c, "INSERT INTO "+name+" (id, name) VALUES (1, 'a')")
	r.waitRows(t, 1, errc)
	r.checkpoint(t, 1, true)
	s.Restart(t)
	c2 := s.Conn(t)
	s.Exec(t, c2, "UPDATE "+name+" SET name = 'aa' WHERE id = 1", "INSERT INTO "+name+" (id, name) VALUES (2, 'b')")
	r.waitRows(t, 4, errc)
	time.Sleep(300 * time.Millisecond)
	want := []string{"+I[1, a, NULL, NULL]", "-U[1, a, NULL, NULL]", "+U[1, aa, NULL, NULL]", "+I[2, b, NULL, NULL]"}
	if got := r.got(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Flink CDC's other postgres-cdc startup modes. committed-offset takes
// an existing slot from its confirmed position, with no snapshot: after
// a completed checkpoint confirmed the first insert, a new source (no
// checkpoint to restore) gets exactly the later change. snapshot reads
// the table once and ends, with no slot, and a position saved after it
// restores to nothing more. specific-offset and timestamp are refused,
// saying why.
func TestCDCStartupModes(t *testing.T) {
	s, c, name, slot := cdcFixture(t)
	r, errc, stop := startCDC(t, cdcTable(s, name, slot, map[string]string{"scan.startup.mode": "latest-offset"}), nil)
	// The slot's row appears while it is still being built; changes are
	// decoded only from its consistent point, when confirmed_flush_lsn
	// gets a value.
	for i := 0; len(pgtest.Rows(t, c, "SELECT 1 FROM pg_replication_slots WHERE slot_name = '"+slot+"' AND confirmed_flush_lsn IS NOT NULL")) == 0; i++ {
		if i == 600 {
			t.Fatal("no slot at its consistent point after 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Exec(t, c, "INSERT INTO "+name+" (id, name) VALUES (1, 'a')")
	r.waitRows(t, 1, errc)
	var p1 struct{ LSN string }
	if err := jsonUnmarshal(r.checkpoint(t, 1, true), &p1); err != nil {
		t.Fatal(err)
	}
	for i := 0; pgtest.Rows(t, c, "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '"+slot+"'")[0] != p1.LSN; i++ {
		if i == 200 {
			t.Fatalf("the slot was never confirmed at %s", p1.LSN)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Exec(t, c, "INSERT INTO "+name+" (id, name) VALUES (2, 'b')")
	r.waitRows(t, 2, errc)
	stop()
	r2, errc2, stop2 := startCDC(t, cdcTable(s, name, slot, map[string]string{"scan.startup.mode": "committed-offset"}), nil)
	s.Exec(t, c, "DELETE FROM "+name+" WHERE id = 1")
	r2.waitRows(t, 2, errc2)
	time.Sleep(300 * time.Millisecond)
	if got, want := r2.got(), []string{"+I[2, b, NULL, NULL]", "-D[1, a, NULL, NULL]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("committed-offset: got %v, want %v", got, want)
	}
	stop2()

	snapSlot := unique("snapslot")
	tbl := cdcTable(s, name, snapSlot, map[string]string{"scan.startup.mode": "snapshot"})
	sc, err := cdcConnector{}.NewScan(tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Bounded() {
		t.Fatal("snapshot mode is not bounded")
	}
	r3, errc3, _ := startCDC(t, tbl, nil)
	select {
	case err := <-errc3:
		if err != nil {
			t.Fatalf("the snapshot source failed: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the snapshot source did not end")
	}
	if got, want := r3.got(), []string{"+I[2, b, NULL, NULL]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot: got %v, want %v", got, want)
	}
	if n := pgtest.Rows(t, c, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '"+snapSlot+"'")[0]; n != "0" {
		t.Fatalf("snapshot mode created a slot (%s)", n)
	}
	done, err := r3.src.SnapshotPosition(7)
	if err != nil {
		t.Fatal(err)
	}
	r4, errc4, _ := startCDC(t, tbl, done)
	if err := <-errc4; err != nil || len(r4.got()) != 0 {
		t.Fatalf("restored after the snapshot: %v, %v", err, r4.got())
	}

	for _, m := range []string{"specific-offset", "timestamp"} {
		_, err := cdcConnector{}.NewScan(cdcTable(s, name, slot, map[string]string{"scan.startup.mode": m}), nil)
		if err == nil || !strings.Contains(err.Error(), "'"+m+"' is not supported by postgres-cdc") || !strings.Contains(err.Error(), "pgoutput has no seek") {
			t.Fatalf("%s: got %v", m, err)
		}
	}
}

// debezium.publication.autocreate.mode: filtered (the default) creates
// the publication for the captured tables, all_tables for every table,
// disabled creates none and says which statement would.
func TestCDCPublicationAutocreate(t *testing.T) {
	s, c, name, slot := cdcFixture(t)
	pub := "pub_" + name
	open := func(mode string) error {
		opts := map[string]string{}
		if mode != "" {
			opts["debezium.publication.autocreate.mode"] = mode
		}
		sc, err := cdcConnector{}.NewScan(cdcTable(s, name, slot, opts), nil)
		if err != nil {
			return err
		}
		src, _ := sc.Create(0, 1)
		defer src.Close()
		return src.Open(&dataflow.OpContext{Ctx: context.Background()})
	}
	all := func() string {
		return strings.Join(pgtest.Rows(t, c, "SELECT puballtables::text FROM pg_publication WHERE pubname = '"+pub+"'"), ",")
	}
	if err := open("disabled"); err == nil || !strings.Contains(err.Error(), "does not exist, and debezium.publication.autocreate.mode is disabled: CREATE PUBLICATION "+pub+" FOR TABLE") {
		t.Fatalf("disabled: %v", err)
	}
	if got := all(); got != "" {
		t.Fatalf("disabled created a publication (%s)", got)
	}
	if err := open(""); err != nil {
		t.Fatal(err)
	}
	got, tables := all(), pgtest.Rows(t, c, "SELECT tablename FROM pg_publication_tables WHERE pubname = '"+pub+"'")
	if got != "false" || !reflect.DeepEqual(tables, []string{name}) {
		t.Fatalf("filtered: puballtables %q, tables %v", got, tables)
	}
	if err := open("disabled"); err != nil { // it exists now
		t.Fatalf("disabled with the publication there: %v", err)
	}
	s.Exec(t, c, "DROP PUBLICATION "+pub)
	if err := open("all_tables"); err != nil {
		t.Fatal(err)
	}
	if got = all(); got != "true" {
		t.Fatalf("all_tables: puballtables %q", got)
	}
	bad := cdcTable(s, name, slot, map[string]string{"debezium.publication.autocreate.mode": "no_tables"})
	if _, err := (cdcConnector{}).NewScan(bad, nil); err == nil {
		t.Fatal("no_tables accepted")
	}
}
