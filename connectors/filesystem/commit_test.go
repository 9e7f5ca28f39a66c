package filesystem

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// q10Sink is the reference's q10 sink: PARTITIONED BY (dt, hm), the
// partition-time trigger with a one-minute delay, success files.
func q10Sink(t *testing.T, dir string, extra map[string]string) *fileHandler {
	t.Helper()
	opts := map[string]string{
		"connector": "filesystem", "path": dir, "format": "csv",
		"sink.partition-commit.trigger":              "partition-time",
		"sink.partition-commit.delay":                "1 min",
		"sink.partition-commit.policy.kind":          "success-file",
		"partition.time-extractor.timestamp-pattern": "$dt $hm:00",
		"sink.rolling-policy.rollover-interval":      "1min",
		"sink.rolling-policy.check-interval":         "1min",
	}
	for k, v := range extra {
		opts[k] = v
	}
	tab := &connectors.Table{Name: "q10", Options: opts, PartitionKeys: []int{1, 2}, Columns: []connectors.Column{
		{Name: "price", Type: types.TypeBigInt}, {Name: "dt", Type: types.TypeString}, {Name: "hm", Type: types.TypeString}}}
	ts, err := connector{}.NewSink(tab, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := ts.(*fileSink)
	h := newFileHandler(s)
	if err := h.Open(context.Background(), twophase.SubtaskInfo{JobName: "j", SinkName: "q10", Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	return h
}

// checkpoint writes rows (dt, hm) in one transaction, then pre-commits it
// after watermark wm and commits it, as a completed checkpoint does.
func checkpoint(t *testing.T, h *fileHandler, seq int64, wm int64, parts ...[2]string) {
	t.Helper()
	ctx := context.Background()
	txn, err := h.BeginTransaction(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	var c dyntable.Chunk
	for _, p := range parts {
		c.Changes = append(c.Changes, dyntable.Change{Kind: dyntable.Insert, Row: types.Row{types.NewInt(1), types.NewString(p[0]), types.NewString(p[1])}})
	}
	if err := h.Write(ctx, txn, &c); err != nil {
		t.Fatal(err)
	}
	h.Watermark(wm)
	handle, err := h.PreCommit(ctx, txn)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(ctx, handle); err != nil {
		t.Fatal(err)
	}
}

func ms(s string) int64 {
	ts, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		panic(err)
	}
	return ts.UnixMilli()
}

func success(dir, part string) bool {
	_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(part), "_SUCCESS"))
	return err == nil
}

// TestPartitionTimeCommit: a partition hm=10:05 covers 10:05:00 to
// 10:06:00 in the pattern's reading as its start; with the one-minute
// delay it is committed once the watermark at a checkpoint's pre-commit
// is past 10:06:00, not before, and the end of input commits the rest.
func TestPartitionTimeCommit(t *testing.T) {
	dir := t.TempDir()
	h := q10Sink(t, dir, nil)
	a, b := "dt=2024-01-01/hm=10%3A05", "dt=2024-01-01/hm=10%3A06"
	checkpoint(t, h, 0, ms("2024-01-01 10:05:30"), [2]string{"2024-01-01", "10:05"})
	if success(dir, a) {
		t.Fatal("committed at watermark 10:05:30, before its time 10:05 plus 1 min")
	}
	checkpoint(t, h, 1, ms("2024-01-01 10:06:00"), [2]string{"2024-01-01", "10:06"})
	if success(dir, a) {
		t.Fatal("committed at watermark 10:06:00: the trigger needs time + delay below the watermark")
	}
	checkpoint(t, h, 2, ms("2024-01-01 10:06:01"))
	if !success(dir, a) || success(dir, b) {
		t.Fatalf("at watermark 10:06:01: 10:05 committed %v (want true), 10:06 %v (want false)", success(dir, a), success(dir, b))
	}
	if err := h.EndOfInput(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !success(dir, b) {
		t.Fatal("the end of input commits every partition")
	}
}

// TestProcessTimeCommit: with the default trigger and no delay, a
// partition is committed with its first checkpoint.
func TestProcessTimeCommit(t *testing.T) {
	dir := t.TempDir()
	h := q10Sink(t, dir, map[string]string{"sink.partition-commit.trigger": "process-time", "sink.partition-commit.delay": "0 s"})
	checkpoint(t, h, 0, -1<<63, [2]string{"2024-01-01", "10:05"})
	if !success(dir, "dt=2024-01-01/hm=10%3A05") {
		t.Fatal("process-time, no delay: not committed at its checkpoint")
	}
	h = q10Sink(t, t.TempDir(), map[string]string{"sink.partition-commit.trigger": "process-time", "sink.partition-commit.delay": "1 h"})
	checkpoint(t, h, 0, -1<<63, [2]string{"2024-01-01", "10:05"})
	if success(h.s.dir, "dt=2024-01-01/hm=10%3A05") {
		t.Fatal("process-time, one hour delay: committed at once")
	}
}

func TestCommitOptionErrors(t *testing.T) {
	for k, want := range map[string][2]string{
		"metastore": {"sink.partition-commit.policy.kind", "no metastore"},
		"custom":    {"sink.partition-commit.policy.kind", "Java class"},
		"1 parsec":  {"sink.rolling-policy.file-size", "memory size"},
		"weekly":    {"sink.partition-commit.trigger", "must be"},
	} {
		opts := map[string]string{"connector": "filesystem", "path": t.TempDir(), "format": "csv", want[0]: k}
		tab := &connectors.Table{Name: "x", Options: opts, PartitionKeys: []int{0}, Columns: []connectors.Column{{Name: "dt", Type: types.TypeString}}}
		if _, err := (connector{}).NewSink(tab, nil); err == nil || !strings.Contains(err.Error(), want[1]) {
			t.Errorf("%s = '%s': error %v, want one containing %q", want[0], k, err, want[1])
		}
	}
}

// TestPendingPartitionsSurviveRestart: partitions waiting for their
// trigger are in the checkpoint (Extra). A partition whose rows were
// committed before the failure, and one whose transaction was only
// pre-committed, both commit after the restart once the watermark passes
// their time plus the delay, although no row reaches them again.
func TestPendingPartitionsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h := q10Sink(t, dir, nil)
	a, b := "dt=2024-01-01/hm=10%3A05", "dt=2024-01-01/hm=10%3A06"
	checkpoint(t, h, 0, ms("2024-01-01 10:05:30"), [2]string{"2024-01-01", "10:05"}) // a: committed, waiting
	firstWrite := h.pending[a].created
	txn, err := h.BeginTransaction(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	c := dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: types.Row{types.NewInt(2), types.NewString("2024-01-01"), types.NewString("10:06")}}}}
	if err := h.Write(ctx, txn, &c); err != nil {
		t.Fatal(err)
	}
	handle, err := h.PreCommit(ctx, txn) // b: pre-committed; then the process dies
	if err != nil {
		t.Fatal(err)
	}
	extra := h.Extra()

	h2 := q10Sink(t, dir, nil)
	if err := h2.RecoverAndCommit(ctx, handle); err != nil {
		t.Fatal(err)
	}
	if err := h2.RecoverAndAbort(ctx, twophase.Recovered{Parallelism: 1, NextSeq: 2, Extra: extra}); err != nil {
		t.Fatal(err)
	}
	if got := h2.pending[a].created; !got.Equal(firstWrite.Truncate(time.Millisecond)) {
		t.Fatalf("restored first write of %s: %v, want %v", a, got, firstWrite)
	}
	if success(dir, a) || success(dir, b) {
		t.Fatal("committed on restore, before any watermark")
	}
	checkpoint(t, h2, 2, ms("2024-01-01 10:06:01"))
	if !success(dir, a) || success(dir, b) {
		t.Fatalf("after the restart, at watermark 10:06:01: 10:05 committed %v (want true), 10:06 %v (want false)", success(dir, a), success(dir, b))
	}
	checkpoint(t, h2, 3, ms("2024-01-01 10:07:01"))
	if !success(dir, b) {
		t.Fatal("after the restart, at watermark 10:07:01: the pre-committed partition 10:06 is not committed")
	}
	if h2.Extra() != nil {
		t.Fatalf("nothing waits, yet the record is %s", h2.Extra())
	}

	for _, bad := range []string{`{"pending":`, `{"pending":{"../x":1}}`} {
		if err := q10Sink(t, t.TempDir(), nil).RecoverAndAbort(ctx, twophase.Recovered{Parallelism: 1, Extra: []byte(bad)}); err == nil {
			t.Errorf("partition record %s accepted", bad)
		}
	}
}
