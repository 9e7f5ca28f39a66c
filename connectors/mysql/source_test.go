package mysql

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// collect is a SourceOutput that keeps rows and can stop the source
// after a number of chunks, snapshotting its position as the runtime
// would (inside Emit, after the chunk).
type collect struct {
	dataflow.NoControl
	src       dataflow.Source
	rows      []string
	chunks    int
	stopAfter int
	pos       []byte
}

var errStop = errors.New("stop")

func (c *collect) Emit(ch *dyntable.Chunk) error {
	for _, x := range ch.Changes {
		c.rows = append(c.rows, types.FormatRow(x.Row, nil, "|"))
	}
	c.chunks++
	if c.stopAfter > 0 && c.chunks == c.stopAfter {
		p, err := c.src.SnapshotPosition(0)
		if err != nil {
			return err
		}
		c.pos = p
		return errStop
	}
	return nil
}

func (c *collect) EmitWatermark(int64) error { return nil }

// A keyed scan split over 3 subtasks reads every row once; a subtask
// stopped after its first chunk and restored from the position it saved
// goes on after the last key it emitted.
func TestKeyedScanSplitsAndResumes(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "scan", "id BIGINT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3), d DATE, ok TINYINT(1)")
	const n = 5000
	var want []string
	var vals []string
	for i := 1; i <= n; i++ {
		id := i * 3 // gaps in the key range
		vals = append(vals, fmt.Sprintf("(%d, 'n%d', %d.%02d, '2024-01-02 03:04:05.%03d', '2024-02-%02d', %d)", id, i, i, i%100, i%1000, i%28+1, i%2))
		want = append(want, fmt.Sprintf("%d|n%d|%d.%02d|2024-01-02 03:04:05.%03d|2024-02-%02d|%v", id, i, i, i%100, i%1000, i%28+1, i%2 == 1))
	}
	if _, err := db.Exec("INSERT INTO " + name + " VALUES " + strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	tbl := &connectors.Table{Name: "dim", Columns: []connectors.Column{
		{Name: "id", Type: types.TypeBigInt.WithNotNull(true)}, {Name: "name", Type: types.TypeString},
		{Name: "amount", Type: types.DecimalType(10, 2)}, {Name: "ts", Type: types.TimestampType(3)},
		{Name: "d", Type: types.TypeDate}, {Name: "ok", Type: types.TypeBoolean}},
		PrimaryKey: []int{0},
		Options:    map[string]string{"connector": "mysql", "url": dsn, "table-name": name, "scan.parallelism": "3"}}
	sc, err := connector{}.NewScan(tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Parallelism() != 3 || !sc.Bounded() {
		t.Fatalf("parallelism %d bounded %v", sc.Parallelism(), sc.Bounded())
	}
	ctx := context.Background()
	var got []string
	for s := 0; s < 3; s++ {
		src, err := sc.Create(s, 3)
		if err != nil {
			t.Fatal(err)
		}
		cs := src.(dataflow.Source)
		if err := src.Open(&dataflow.OpContext{Ctx: ctx}); err != nil {
			t.Fatal(err)
		}
		out := &collect{src: cs, stopAfter: 1}
		if err := src.Run(ctx, out); !errors.Is(err, errStop) {
			t.Fatalf("subtask %d: run: %v", s, err)
		}
		src.Close()
		// "Restart" from the saved position.
		src2, _ := sc.Create(s, 3)
		if err := src2.Open(&dataflow.OpContext{Ctx: ctx}); err != nil {
			t.Fatal(err)
		}
		if err := src2.(dataflow.Source).RestorePosition(out.pos); err != nil {
			t.Fatal(err)
		}
		out2 := &collect{src: src2.(dataflow.Source)}
		if err := src2.Run(ctx, out2); err != nil {
			t.Fatal(err)
		}
		src2.Close()
		if len(out.rows) != chunkRows {
			t.Fatalf("subtask %d: first run emitted %d rows", s, len(out.rows))
		}
		got = append(got, out.rows...)
		got = append(got, out2.rows...)
	}
	sort.Strings(got)
	if len(got) != len(want) {
		t.Fatalf("read %d rows, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("row %d: got %s, want %s", i, got[i], want[i])
		}
	}
}

// Without an integer key: one subtask, one SELECT, and checkpoints are
// declined with a reason while it runs; the position after it says the
// table was read, and a restore from it reads nothing again.
func TestPlainScanDeclinesCheckpoints(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "plain", "code VARCHAR(10), v DOUBLE")
	vals := []string{"('a', 1.5)", "('b', NULL)", "('c', -2)"}
	for i := 0; i < 1500; i++ { // more than one chunk
		vals = append(vals, fmt.Sprintf("('z%d', %d)", i, i))
	}
	if _, err := db.Exec("INSERT INTO " + name + " VALUES " + strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
	tbl := &connectors.Table{Name: "codes", Columns: []connectors.Column{{Name: "code", Type: types.TypeString}, {Name: "v", Type: types.TypeDouble}},
		Options: map[string]string{"connector": "mysql", "url": dsn, "table-name": name}}
	sc, err := connector{}.NewScan(tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Parallelism() != 1 {
		t.Fatalf("parallelism %d", sc.Parallelism())
	}
	runOnce := func(pos []byte, stopAfter int) (*collect, error) {
		src, _ := sc.Create(0, 1)
		if err := src.Open(&dataflow.OpContext{Ctx: context.Background()}); err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		if pos != nil {
			if err := src.RestorePosition(pos); err != nil {
				t.Fatal(err)
			}
		}
		out := &collect{src: src, stopAfter: stopAfter}
		return out, src.Run(context.Background(), out)
	}
	if _, err := runOnce(nil, 1); err == nil || !strings.Contains(err.Error(), "cannot save a read position") {
		t.Fatalf("a position inside the SELECT: %v", err)
	}
	out, err := runOnce(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out.rows)
	eqRows(t, "rows", out.rows[:3], "a|1.5", "b|NULL", "c|-2")
	if len(out.rows) != 1503 {
		t.Fatalf("%d rows", len(out.rows))
	}
	pos, err := out.src.SnapshotPosition(0)
	if err != nil {
		t.Fatalf("the position after the SELECT: %v", err)
	}
	if again, err := runOnce(pos, 0); err != nil || len(again.rows) != 0 {
		t.Fatalf("restored after the end: %v, %d rows", err, len(again.rows))
	}
	tbl.Options["scan.parallelism"] = "2"
	if _, err := (connector{}).NewScan(tbl, nil); err == nil {
		t.Fatal("scan.parallelism 2 accepted without an integer key")
	}
}
