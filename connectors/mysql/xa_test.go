package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// kvTable is the streamsql side of a MySQL table (k BIGINT PRIMARY KEY,
// v BIGINT).
func kvTable(t *testing.T, dsn, name string, opts map[string]string) (*connectors.Table, *config) {
	t.Helper()
	tbl := &connectors.Table{Name: name,
		Columns:    []connectors.Column{{Name: "k", Type: types.TypeBigInt.WithNotNull(true)}, {Name: "v", Type: types.TypeBigInt}},
		PrimaryKey: []int{0},
		Options:    map[string]string{"connector": "mysql", "url": dsn, "table-name": name}}
	for k, v := range opts {
		tbl.Options[k] = v
	}
	cfg, err := parseConfig(tbl)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, cfg
}

func kv(kind dyntable.RowKind, k, v int64) dyntable.Change {
	return dyntable.Change{Kind: kind, Row: types.Row{types.NewInt(k), types.NewInt(v)}}
}

func chunk(chs ...dyntable.Change) *dyntable.Chunk { return &dyntable.Chunk{Changes: chs} }

func eqRows(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func fastRetries() twophase.Options {
	return twophase.Options{RetryTimeout: 20 * time.Second, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}
}

// Rows written through the exactly-once sink are invisible to a READ
// COMMITTED reader until the checkpoint that covers them completes;
// updates and deletes of a later checkpoint likewise.
func TestXARowsInvisibleUntilCheckpointCompletes(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "xa_vis", "k BIGINT PRIMARY KEY, v BIGINT")
	tbl, cfg := kvTable(t, dsn, name, map[string]string{"sink.semantic": "exactly-once", "sink.buffer-flush.max-rows": "2"})
	job := UniqueForTest("vis")
	op := twophase.NewOperator(name, newXAHandler(cfg, tbl, shapeOf(cfg, tbl)), fastRetries())
	if err := op.Open(&dataflow.OpContext{Ctx: context.Background(), JobName: job, Subtask: 0, Parallelism: 1, State: state.NewMemoryStore("sink")}); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	q := "SELECT k, v FROM " + name
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Five rows with max-rows 2: three INSERT statements in one transaction.
	must(op.ProcessChunk(0, chunk(kv(dyntable.Insert, 1, 10), kv(dyntable.Insert, 2, 20), kv(dyntable.Insert, 3, 30),
		kv(dyntable.Insert, 4, 40), kv(dyntable.Insert, 5, 50)), nil))
	eqRows(t, "before the barrier", RowsForTest(t, db, q))
	must(op.SnapshotState(dataflow.Barrier{CheckpointID: 1}))
	eqRows(t, "prepared, checkpoint not complete", RowsForTest(t, db, q))
	if p := PreparedForTest(t, db, "streamsql:"+job); len(p) != 1 {
		t.Fatalf("prepared xids of the job: %v, want one", p)
	}
	must(op.NotifyCheckpointComplete(1))
	eqRows(t, "after checkpoint 1", RowsForTest(t, db, q), "1|10", "2|20", "3|30", "4|40", "5|50")

	// -U is ignored (upsert encoding), +U replaces, -D deletes.
	must(op.ProcessChunk(0, chunk(kv(dyntable.UpdateBefore, 1, 10), kv(dyntable.UpdateAfter, 1, 11),
		kv(dyntable.Delete, 2, 20), kv(dyntable.Insert, 6, 60), kv(dyntable.UpdateAfter, 6, 61)), nil))
	must(op.SnapshotState(dataflow.Barrier{CheckpointID: 2}))
	eqRows(t, "checkpoint 2 prepared", RowsForTest(t, db, q), "1|10", "2|20", "3|30", "4|40", "5|50")
	must(op.NotifyCheckpointComplete(2))
	eqRows(t, "after checkpoint 2", RowsForTest(t, db, q), "1|11", "3|30", "4|40", "5|50", "6|61")
	if p := PreparedForTest(t, db, "streamsql:"+job); len(p) != 0 {
		t.Fatalf("prepared xids left: %v", p)
	}
}

// prepareXA prepares an XA transaction on its own connection, inserting
// (k, v), then drops the connection as a crashed process would.
func prepareXA(t *testing.T, db *sql.DB, xidSQL, table string, k, v int64) {
	t.Helper()
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"XA START " + xidSQL, "INSERT INTO " + table + " VALUES (?, ?)", "XA END " + xidSQL, "XA PREPARE " + xidSQL} {
		var args []any
		if strings.HasPrefix(q, "INSERT") {
			args = []any{k, v}
		}
		if _, err := c.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	c.Close()
}

// Recovery: the xids of the restored checkpoint are committed (twice:
// commits are idempotent), the job's other xids of that subtask rolled
// back; another subtask's xid, another sink's and another application's
// are left prepared.
func TestXARecovery(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "xa_rec", "k BIGINT PRIMARY KEY, v BIGINT")
	tbl, cfg := kvTable(t, dsn, name, map[string]string{"sink.semantic": "exactly-once"})
	job := UniqueForTest("rec")
	ctx := context.Background()
	info := twophase.SubtaskInfo{JobName: job, SinkName: name, Subtask: 0, Parallelism: 1}

	// A first run prepares three transactions (seq 0, 1, 2) and crashes;
	// its checkpoint holds 0 and 1 (NextSeq 2).
	h1 := newXAHandler(cfg, tbl, shapeOf(cfg, tbl))
	if err := h1.Open(ctx, info); err != nil {
		t.Fatal(err)
	}
	var handles [][]byte
	for seq := int64(0); seq < 3; seq++ {
		txn, _ := h1.BeginTransaction(ctx, seq)
		if err := h1.Write(ctx, txn, chunk(kv(dyntable.Insert, seq, seq*10))); err != nil {
			t.Fatal(err)
		}
		hd, err := h1.PreCommit(ctx, txn)
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, hd)
	}
	h1.Close() // the crash: connections gone, transactions stay prepared

	// Bystanders: another application's xid on the same table, the same
	// job's other subtask (at parallelism 2) and another sink of the job.
	other := UniqueForTest("otherapp")
	prepareXA(t, db, "'"+other+"'", name, 100, 1)
	sibling := xid{Gtrid: gtridFor(job, name), Bqual: subtaskPrefix(1, 2) + "0.0"}
	prepareXA(t, db, sibling.sql(), name, 101, 1)
	otherSink := xid{Gtrid: gtridFor(job, name+"_b"), Bqual: subtaskPrefix(0, 1) + "0.0"}
	prepareXA(t, db, otherSink.sql(), name, 102, 1)
	defer func() {
		for _, x := range []string{"'" + other + "'", sibling.sql(), otherSink.sql()} {
			_, _ = db.Exec("XA ROLLBACK " + x)
		}
	}()
	if p := PreparedForTest(t, db, "streamsql:"+job); len(p) != 5 {
		t.Fatalf("prepared before recovery: %v, want 5", p)
	}

	h2 := newXAHandler(cfg, tbl, shapeOf(cfg, tbl))
	if err := h2.Open(ctx, info); err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	for _, hd := range handles[:2] {
		if err := h2.RecoverAndCommit(ctx, hd); err != nil {
			t.Fatal(err)
		}
		if err := h2.RecoverAndCommit(ctx, hd); err != nil { // already committed: success
			t.Fatalf("second commit: %v", err)
		}
	}
	if err := h2.RecoverAndAbort(ctx, twophase.Recovered{Subtask: 0, Parallelism: 1, Handles: handles[:2], NextSeq: 2}); err != nil {
		t.Fatal(err)
	}
	eqRows(t, "after recovery", RowsForTest(t, db, "SELECT k, v FROM "+name), "0|0", "1|10")
	got := PreparedForTest(t, db, "streamsql:"+job)
	want := []string{otherSink.String(), sibling.String()}
	sort.Strings(want)
	eqRows(t, "job xids left prepared", got, want...)
	if p := PreparedForTest(t, db, other); len(p) != 1 {
		t.Fatalf("the other application's xid was touched: %v", p)
	}
}

// A handle whose transaction is still attached to a live connection is
// not mistaken for a committed one: "Unknown XID" from another
// connection is checked against XA RECOVER, the owner is killed, and the
// commit goes through.
func TestXACommitWhileAttachedElsewhere(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "xa_att", "k BIGINT PRIMARY KEY, v BIGINT")
	tbl, cfg := kvTable(t, dsn, name, map[string]string{"sink.semantic": "exactly-once"})
	ctx := context.Background()
	info := twophase.SubtaskInfo{JobName: UniqueForTest("att"), SinkName: name, Subtask: 0, Parallelism: 1}
	h1 := newXAHandler(cfg, tbl, shapeOf(cfg, tbl))
	if err := h1.Open(ctx, info); err != nil {
		t.Fatal(err)
	}
	defer h1.Close()
	txn, _ := h1.BeginTransaction(ctx, 0)
	_ = h1.Write(ctx, txn, chunk(kv(dyntable.Insert, 7, 70)))
	hd, err := h1.PreCommit(ctx, txn)
	if err != nil {
		t.Fatal(err)
	}
	// h1 keeps its connection (alive, holding the prepared transaction);
	// a second handler, as after a restart, must not treat Unknown XID as
	// committed.
	h2 := newXAHandler(cfg, tbl, shapeOf(cfg, tbl))
	if err := h2.Open(ctx, info); err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	err = h2.Commit(ctx, hd)
	if err == nil {
		t.Fatal("commit reported success while the transaction was attached to another connection")
	}
	eqRows(t, "not yet committed", RowsForTest(t, db, "SELECT k, v FROM "+name))
	// The first attempt killed the owner; a retry commits.
	deadline := time.Now().Add(5 * time.Second)
	for err != nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		err = h2.Commit(ctx, hd)
	}
	if err != nil {
		t.Fatal(err)
	}
	eqRows(t, "committed", RowsForTest(t, db, "SELECT k, v FROM "+name), "7|70")
}

func TestGtridFitsAndHandleRoundTrips(t *testing.T) {
	long := strings.Repeat("j", 80)
	g := gtridFor(long, "sink")
	if len(g) != 64 || !strings.HasPrefix(g, "streamsql:jjj") {
		t.Fatalf("gtrid %q (%d bytes)", g, len(g))
	}
	if gtridFor(long, "sink") == gtridFor(long, "sinc") {
		t.Fatal("hashed gtrids of different sinks collide")
	}
	if g := gtridFor("job", "t"); g != "streamsql:job:t" {
		t.Fatalf("short gtrid %q", g)
	}
	x := xid{Gtrid: "streamsql:a'b", Bqual: "0.1:2.0", ConnID: 9}
	b, _ := json.Marshal(x)
	var y xid
	if err := json.Unmarshal(b, &y); err != nil || y != x {
		t.Fatalf("round trip: %v %+v", err, y)
	}
	// Hex literals: a quote in a name cannot break the statement.
	if s := x.sql(); s != "X'73747265616d73716c3a612762',X'302e313a322e30',1397969228" {
		t.Fatalf("xid SQL %s", s)
	}
}

// A transaction that writes a key its subtask's previous, still
// uncommitted transaction holds cannot wait for that commit (it comes on
// the same goroutine): the prepare fails quickly and says why, and the
// earlier transaction stays prepared for recovery to resolve.
func TestXAPreCommitFailsFastOnOwnPreparedLock(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "xa_lock", "k BIGINT PRIMARY KEY, v BIGINT")
	tbl, cfg := kvTable(t, dsn, name, map[string]string{"sink.semantic": "exactly-once"})
	defer func(w int) { ownLockWait = w }(ownLockWait)
	ownLockWait = 1
	ctx := context.Background()
	job := UniqueForTest("lock")
	h := newXAHandler(cfg, tbl, shapeOf(cfg, tbl))
	if err := h.Open(ctx, twophase.SubtaskInfo{JobName: job, SinkName: name, Subtask: 0, Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	t0, _ := h.BeginTransaction(ctx, 0)
	_ = h.Write(ctx, t0, chunk(kv(dyntable.Insert, 1, 10)))
	h0, err := h.PreCommit(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	t1, _ := h.BeginTransaction(ctx, 1)
	_ = h.Write(ctx, t1, chunk(kv(dyntable.UpdateAfter, 1, 11)))
	start := time.Now()
	_, err = h.PreCommit(ctx, t1)
	if err == nil || !strings.Contains(err.Error(), "own prepared transaction") {
		t.Fatalf("got %v, want the own-lock error", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("failing took %s", d)
	}
	if p := PreparedForTest(t, db, "streamsql:"+job); len(p) != 1 {
		t.Fatalf("prepared: %v, want only the first transaction", p)
	}
	if err := h.Commit(ctx, h0); err != nil {
		t.Fatal(err)
	}
	eqRows(t, "after committing the first", RowsForTest(t, db, "SELECT k, v FROM "+name), "1|10")
}

// Recovery never rolls back a prepared transaction that a live
// connection holds (a running job under the same name): only detached
// ones, left by dead processes.
func TestXARecoveryLeavesAttachedTransactions(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "xa_live", "k BIGINT PRIMARY KEY, v BIGINT")
	tbl, cfg := kvTable(t, dsn, name, map[string]string{"sink.semantic": "exactly-once"})
	ctx := context.Background()
	info := twophase.SubtaskInfo{JobName: UniqueForTest("live"), SinkName: name, Subtask: 0, Parallelism: 1}
	live := newXAHandler(cfg, tbl, shapeOf(cfg, tbl))
	if err := live.Open(ctx, info); err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	txn, _ := live.BeginTransaction(ctx, 5)
	_ = live.Write(ctx, txn, chunk(kv(dyntable.Insert, 1, 1)))
	hd, err := live.PreCommit(ctx, txn)
	if err != nil {
		t.Fatal(err)
	}
	other := newXAHandler(cfg, tbl, shapeOf(cfg, tbl))
	if err := other.Open(ctx, info); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.RecoverAndAbort(ctx, twophase.Recovered{Subtask: 0, Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	if err := live.Commit(ctx, hd); err != nil {
		t.Fatalf("the live job's transaction was rolled back under it: %v", err)
	}
	eqRows(t, "committed", RowsForTest(t, db, "SELECT k, v FROM "+name), "1|1")
}
