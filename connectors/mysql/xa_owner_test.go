package mysql

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dyntable"
)

// TestXATwoOwnersOfOneTask replays a cluster task with two owners: the
// group gave the task to a new worker (epoch 2) while the former one
// (epoch 1), stalled, still runs it. Both restored the same checkpoint,
// so both number their next transaction 3. The former owner has
// prepared its transaction 3 and holds it; the new owner prepares its
// own 3 and commits it; then the former owner learns it is fenced and
// goes away without committing, and the new owner's next transaction
// rolls back what it left. The table ends with the new owner's rows
// only, and nothing stays prepared.
//
// Without owner epochs in the names (both 0), the new owner's XA START
// of the same xid fails with XAER_DUPID: the test runs that too, and
// checks that it goes wrong, so that it can tell the two apart.
func TestXATwoOwnersOfOneTask(t *testing.T) {
	for _, epochs := range []bool{true, false} {
		t.Run(fmt.Sprintf("epochs=%v", epochs), func(t *testing.T) {
			problems := twoOwners(t, epochs)
			if epochs && len(problems) > 0 {
				t.Fatalf("with owner epochs:\n%s", strings.Join(problems, "\n"))
			}
			if !epochs && len(problems) == 0 {
				t.Fatal("without owner epochs the two owners did not collide: the test cannot tell them apart")
			}
			t.Logf("problems: %q", problems)
		})
	}
}

func twoOwners(t *testing.T, epochs bool) []string {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "xa_own", "k BIGINT PRIMARY KEY, v BIGINT")
	tbl, cfg := kvTable(t, dsn, name, map[string]string{"sink.semantic": "exactly-once"})
	job := UniqueForTest("owners")
	ctx := context.Background()
	t.Cleanup(func() { CleanupPreparedForTest(t, db, "streamsql:"+job) })
	info := func(e int64) twophase.SubtaskInfo {
		if !epochs {
			e = 0
		}
		return twophase.SubtaskInfo{JobName: job, SinkName: name, Subtask: 1, Parallelism: 4, Epoch: e}
	}
	var problems []string
	// The restored checkpoint: nothing pending, the next transaction is 3.
	restored := twophase.Recovered{Subtask: 1, Parallelism: 4, NextSeq: 3}

	old := newXAHandler(cfg, tbl, shapeOf(cfg, tbl))
	if err := old.Open(ctx, info(1)); err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := old.RecoverAndAbort(ctx, restored); err != nil {
		t.Fatal(err)
	}
	txn, _ := old.BeginTransaction(ctx, 3)
	if err := old.Write(ctx, txn, chunk(kv(dyntable.Insert, 1, 10), kv(dyntable.Insert, 2, 20))); err != nil {
		t.Fatal(err)
	}
	if _, err := old.PreCommit(ctx, txn); err != nil {
		t.Fatal(err)
	}

	// The new owner starts meanwhile from the same checkpoint.
	cur := newXAHandler(cfg, tbl, shapeOf(cfg, tbl))
	if err := cur.Open(ctx, info(2)); err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	if err := cur.RecoverAndAbort(ctx, restored); err != nil {
		t.Fatal(err)
	}
	txn, _ = cur.BeginTransaction(ctx, 3)
	if err := cur.Write(ctx, txn, chunk(kv(dyntable.Insert, 3, 30))); err != nil {
		t.Fatal(err)
	}
	h3, err := cur.PreCommit(ctx, txn)
	if err != nil {
		// XAER_DUPID, without epochs: nothing further is meaningful (the
		// next write would wait out its retries on the stale row locks).
		return append(problems, "the new owner's transaction 3: "+err.Error())
	}
	if err := cur.Commit(ctx, h3); err != nil {
		problems = append(problems, "committing the new owner's transaction 3: "+err.Error())
	}

	// The former owner is fenced (its checkpoint store says so) and stops
	// without committing: its prepared transaction stays, detached.
	old.Close()

	// The new owner's next transaction writes a key the stale one
	// locked: its leftover must be rolled back first, or the write waits.
	txn, _ = cur.BeginTransaction(ctx, 4)
	if err := cur.Write(ctx, txn, chunk(kv(dyntable.Insert, 1, 11))); err != nil {
		t.Fatal(err)
	}
	if h4, err := cur.PreCommit(ctx, txn); err != nil {
		problems = append(problems, "the new owner's transaction 4: "+err.Error())
	} else if err := cur.Commit(ctx, h4); err != nil {
		problems = append(problems, "committing the new owner's transaction 4: "+err.Error())
	}
	got := RowsForTest(t, db, "SELECT k, v FROM "+name)
	if want := []string{"1|11", "3|30"}; strings.Join(got, ",") != strings.Join(want, ",") {
		problems = append(problems, fmt.Sprintf("rows %v, want %v (the new owner's only)", got, want))
	}
	if p := PreparedForTest(t, db, "streamsql:"+job); len(p) > 0 {
		problems = append(problems, fmt.Sprintf("left prepared: %v", p))
	}
	return problems
}

// TestXARecoveryAcrossEpochs: a task's new owner (epoch 3) restores a
// checkpoint whose pending transaction was prepared by epoch 2. It
// commits that one, rolls back every other transaction of the task's
// former owners (epochs 1 and 2, whatever their numbers), and leaves a
// newer owner's (epoch 4: this run is then the stale one) and another
// task's alone.
func TestXARecoveryAcrossEpochs(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "xa_epochs", "k BIGINT PRIMARY KEY, v BIGINT")
	tbl, cfg := kvTable(t, dsn, name, map[string]string{"sink.semantic": "exactly-once"})
	job := UniqueForTest("epochs")
	ctx := context.Background()
	t.Cleanup(func() { CleanupPreparedForTest(t, db, "streamsql:"+job) })
	g := gtridFor(job, name)
	info := func(e int64) twophase.SubtaskInfo {
		return twophase.SubtaskInfo{JobName: job, SinkName: name, Subtask: 0, Parallelism: 2, Epoch: e}
	}
	// What former runs left prepared, as crashed processes leave them.
	pending := xid{Gtrid: g, Bqual: bqualFor(info(2), 5, 0)}
	for i, x := range []xid{
		pending,
		{Gtrid: g, Bqual: bqualFor(info(2), 6, 0)},        // after epoch 2's checkpoint
		{Gtrid: g, Bqual: bqualFor(info(1), 7, 1)},        // a stale owner's late one
		{Gtrid: g, Bqual: bqualFor(info(4), 6, 0)},        // a newer owner's
		{Gtrid: g, Bqual: subtaskPrefix(1, 2) + "e2:5.0"}, // another task's
	} {
		prepareXA(t, db, x.sql(), name, int64(i+1), int64(i+1))
	}
	handle, err := marshalXID(pending)
	if err != nil {
		t.Fatal(err)
	}
	h := newXAHandler(cfg, tbl, shapeOf(cfg, tbl))
	if err := h.Open(ctx, info(3)); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.RecoverAndCommit(ctx, handle); err != nil {
		t.Fatal(err)
	}
	if err := h.RecoverAndAbort(ctx, twophase.Recovered{Subtask: 0, Parallelism: 2, Handles: [][]byte{handle}, NextSeq: 6}); err != nil {
		t.Fatal(err)
	}
	eqRows(t, "rows", RowsForTest(t, db, "SELECT k, v FROM "+name), "1|1")
	eqRows(t, "left prepared", PreparedForTest(t, db, "streamsql:"+job), g+"/0.2:e4:6.0", g+"/1.2:e2:5.0")
}
