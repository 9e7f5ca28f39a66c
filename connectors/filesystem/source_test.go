package filesystem_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	_ "github.com/streamsql/streamsql/connectors/filesystem"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// positioned is the optional interface the checkpoint coordinator finds.
type positioned interface {
	dataflow.Source
	SnapshotPosition(int64) ([]byte, error)
	RestorePosition(pos []byte) error
	SkippedRecords() int64
}

func newScan(t testing.TB, cols []connectors.Column, opts map[string]string) connectors.ScanSource {
	t.Helper()
	c, err := connectors.Lookup("filesystem")
	if err != nil {
		t.Fatal(err)
	}
	opts["connector"] = "filesystem"
	sc, err := c.(connectors.SourceConnector).NewScan(&connectors.Table{Name: "t", Columns: cols, Options: opts}, &connectors.Env{})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func open(t testing.TB, sc connectors.ScanSource, subtask, parallelism int) positioned {
	t.Helper()
	src, err := sc.Create(subtask, parallelism)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := src.(positioned)
	if !ok {
		t.Fatalf("%T does not implement SnapshotPosition / RestorePosition", src)
	}
	if err := p.Open(&dataflow.OpContext{Subtask: subtask, Parallelism: parallelism, Shared: dataflow.NewShared()}); err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder is a SourceOutput that keeps the rows and, like the checkpoint
// coordinator, takes the source's position inside Emit after each chunk.
type recorder struct {
	dataflow.NoControl
	src       positioned
	ts        []types.Type
	rows      []string
	positions [][]byte // after each chunk
	ends      []int    // len(rows) after each chunk
	sizes     []int
}

func (r *recorder) Emit(c *dyntable.Chunk) error {
	for _, ch := range c.Changes {
		if ch.Kind != dyntable.Insert {
			return fmt.Errorf("kind %v", ch.Kind)
		}
		r.rows = append(r.rows, types.FormatRow(ch.Row, r.ts, "|"))
	}
	pos, err := r.src.SnapshotPosition(0)
	if err != nil {
		return err
	}
	r.positions = append(r.positions, pos)
	r.ends = append(r.ends, len(r.rows))
	r.sizes = append(r.sizes, len(c.Changes))
	return nil
}

func (r *recorder) EmitWatermark(int64) error { return nil }

func run(t testing.TB, src positioned, ts []types.Type) *recorder {
	t.Helper()
	rec := &recorder{src: src, ts: ts}
	if err := src.Run(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	return rec
}

// positionFixture writes three JSON files and one CSV directory whose
// chunk boundaries fall inside files, between files and at the end.
func positionFixture(t *testing.T) (dir string, rows int) {
	var files = map[string]string{}
	id := 0
	for f, n := range []int{1500, 3, 0, 1600} {
		var b strings.Builder
		for k := range n {
			id++
			switch k % 5 {
			case 0:
				fmt.Fprintf(&b, "{\"id\":%d,\"s\":\"f%d \\\"r%d\\\"\"}\n", id, f, k)
			case 1:
				fmt.Fprintf(&b, "\n  {\"s\":\"x\",\"id\":%d}\r\n", id) // a blank line first
			case 2:
				fmt.Fprintf(&b, "{\"id\":%d,\"bad\":1,}\n{\"id\":%d}\n", -id, id) // a malformed record first
			default:
				fmt.Fprintf(&b, "{\"id\":%d}\n", id)
			}
		}
		files[fmt.Sprintf("f%d.json", f)] = strings.TrimSuffix(b.String(), "\n") // the last line lacks its '\n'
	}
	return writeFiles(t, files), id
}

func TestRestoreAtEveryChunkBoundaryContinuesExactly(t *testing.T) {
	dir, n := positionFixture(t)
	cols := []connectors.Column{{Name: "id", Type: types.TypeBigInt}, {Name: "s", Type: types.TypeString}}
	ts := []types.Type{types.TypeBigInt, types.TypeString}
	opts := func() map[string]string {
		return map[string]string{"path": dir, "format": "json", "json.ignore-parse-errors": "true"}
	}
	for _, par := range []int{1, 2} {
		sc := newScan(t, cols, opts())
		for sub := range par {
			first := open(t, sc, sub, par)
			initial, err := first.SnapshotPosition(0)
			if err != nil {
				t.Fatal(err)
			}
			whole := run(t, first, ts)
			if par == 1 {
				if len(whole.rows) != n {
					t.Fatalf("read %d rows, want %d", len(whole.rows), n)
				}
				// 3103 rows: chunks of 1024, 1024, 1024 and 31.
				if fmt.Sprint(whole.sizes) != "[1024 1024 1024 31]" {
					t.Fatalf("chunk sizes %v", whole.sizes)
				}
			}
			skippedAll := first.SkippedRecords()
			if skippedAll == 0 {
				t.Fatal("fixture has malformed records, none skipped")
			}
			positions := append([][]byte{initial}, whole.positions...)
			ends := append([]int{0}, whole.ends...)
			for k, pos := range positions {
				src := open(t, newScan(t, cols, opts()), sub, par)
				if err := src.RestorePosition(pos); err != nil {
					t.Fatalf("p=%d subtask %d restore %s: %v", par, sub, pos, err)
				}
				rest := run(t, src, ts)
				got := append(append([]string{}, whole.rows[:ends[k]]...), rest.rows...)
				if strings.Join(got, "\n") != strings.Join(whole.rows, "\n") {
					t.Fatalf("p=%d subtask %d: restoring %s after %d rows gives %d rows before + %d after, not the %d of one read",
						par, sub, pos, ends[k], ends[k], len(rest.rows), len(whole.rows))
				}
				if src.SkippedRecords() != skippedAll {
					t.Errorf("restored at %s: skipped %d in all, want %d", pos, src.SkippedRecords(), skippedAll)
				}
			}
		}
	}
}

func TestRestoreCSVRecordsSpanningLines(t *testing.T) {
	var b strings.Builder
	for i := range 2500 {
		if i%7 == 0 {
			fmt.Fprintf(&b, "%d,\"two\nlines, \"\"%d\"\"\"\n", i, i)
		} else {
			fmt.Fprintf(&b, "%d,plain %d\n", i, i)
		}
	}
	dir := writeFiles(t, map[string]string{"a.csv": b.String()})
	cols := []connectors.Column{{Name: "id", Type: types.TypeInt}, {Name: "s", Type: types.TypeString}}
	ts := []types.Type{types.TypeInt, types.TypeString}
	opts := map[string]string{"path": filepath.Join(dir, "a.csv"), "format": "csv"}
	sc := newScan(t, cols, opts)
	whole := run(t, open(t, sc, 0, 1), ts)
	if len(whole.rows) != 2500 || whole.rows[7] != "7|two\nlines, \"7\"" || whole.rows[8] != "8|plain 8" {
		t.Fatalf("%d rows; row 7 %q, row 8 %q", len(whole.rows), whole.rows[7], whole.rows[8])
	}
	for k, pos := range whole.positions {
		src := open(t, sc, 0, 1)
		if err := src.RestorePosition(pos); err != nil {
			t.Fatal(err)
		}
		rest := run(t, src, ts)
		if got := append(append([]string{}, whole.rows[:whole.ends[k]]...), rest.rows...); strings.Join(got, "\n") != strings.Join(whole.rows, "\n") {
			t.Fatalf("restoring %s: %d + %d rows", pos, whole.ends[k], len(rest.rows))
		}
	}
	// A second subtask reads nothing: the only file is subtask 0's.
	if r := run(t, open(t, sc, 1, 2), ts); len(r.rows) != 0 {
		t.Fatalf("subtask 1 of 2 read %d rows of a single file", len(r.rows))
	}
}

// Errors after a restored position name the same line and offset as
// errors of an uninterrupted read.
func TestRestoredPositionKeepsLineNumbers(t *testing.T) {
	var b strings.Builder
	for i := range 1100 {
		fmt.Fprintf(&b, "{\"i\":%d}\n", i)
	}
	b.WriteString("oops\n")
	dir := writeFiles(t, map[string]string{"a.json": b.String()})
	sc := newScan(t, []connectors.Column{{Name: "i", Type: types.TypeInt}}, map[string]string{"path": dir, "format": "json"})
	src := open(t, sc, 0, 1)
	rec := &recorder{src: src}
	err := src.Run(context.Background(), rec)
	if err == nil || !strings.Contains(err.Error(), "a.json:1101 (byte offset "+fmt.Sprint(b.Len()-5)+"): invalid JSON at column 1") {
		t.Fatalf("err = %v", err)
	}
	if len(rec.positions) != 1 {
		t.Fatalf("%d chunks before the error, want 1", len(rec.positions))
	}
	src = open(t, sc, 0, 1)
	if err := src.RestorePosition(rec.positions[0]); err != nil {
		t.Fatal(err)
	}
	rest := &recorder{src: src}
	if err2 := src.Run(context.Background(), rest); err2 == nil || err2.Error() != err.Error() || len(rest.rows) != 0 {
		t.Fatalf("after restoring %s: %d rows, err = %v, want %v", rec.positions[0], len(rest.rows), err2, err)
	}
}

func TestBadPositionsAreErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.json": "{\"i\":1}\n{\"i\":2}\n", "b.json": "{\"i\":3}\n", "c.json": "{\"i\":4}\n"})
	cols := []connectors.Column{{Name: "i", Type: types.TypeInt}}
	sc := newScan(t, cols, map[string]string{"path": dir, "format": "json"})
	pos := func(idx int, file string, off, line int64) string {
		return fmt.Sprintf(`{"v":1,"file_index":%d,"file":%q,"offset":%d,"line":%d,"skipped":0}`, idx, file, off, line)
	}
	// Good ones first: the checks must not reject what the source writes.
	for _, p := range []string{pos(0, "a.json", 8, 2), pos(0, "a.json", 16, 3), pos(2, "c.json", 0, 1)} {
		if err := open(t, sc, 0, 1).RestorePosition([]byte(p)); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	for _, c := range []struct {
		pos, want string
		sub, par  int
	}{
		{"garbage", "malformed position", 0, 1},
		{`{"v":2,"file_index":0,"file":"a.json","offset":0,"line":1}`, "version 2", 0, 1},
		{`{"v":1,"file_index":0,"file":"a.json","offset":0,"line":1,"extra":1}`, "malformed position", 0, 1},
		{pos(0, "a.json", 4, 1), "offset 4 of '" + filepath.Join(dir, "a.json") + "' is not at the start of a line", 0, 1},
		{pos(0, "a.json", 17, 3), "offset 17 is beyond the end of '" + filepath.Join(dir, "a.json") + "' (16 bytes)", 0, 1},
		{pos(1, "gone.json", 0, 1), "position names file 'gone.json' (index 1)", 0, 1},
		{pos(7, "z.json", 0, 1), "position names file 'z.json' (index 7), but '" + dir + "' now holds 3 file(s)", 0, 1},
		{pos(1, "b.json", 0, 1), "position names file 'b.json' (index 1), which subtask 0 of 2 does not read", 0, 2},
		{pos(0, "a.json", 0, 5), "inconsistent position", 0, 1},
	} {
		err := open(t, sc, c.sub, c.par).RestorePosition([]byte(c.pos))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.pos, err, c.want)
		}
	}
	// A file that disappears after the snapshot.
	snap := run(t, open(t, sc, 0, 1), []types.Type{types.TypeInt}).positions[0]
	if err := os.Remove(filepath.Join(dir, "b.json")); err != nil {
		t.Fatal(err)
	}
	err := open(t, sc, 0, 1).RestorePosition(snap)
	if err == nil || !strings.Contains(err.Error(), "position names file 'c.json' (index 2), but '"+dir+"' now holds 2 file(s)") {
		t.Errorf("after removing b.json, restoring %s: err = %v", snap, err)
	}
	// A file that shrank below the position.
	snap = run(t, open(t, sc, 0, 1), []types.Type{types.TypeInt}).positions[0] // now (1, c.json, 8)
	if err := os.WriteFile(filepath.Join(dir, "c.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = open(t, sc, 0, 1).RestorePosition(snap)
	if err == nil || !strings.Contains(err.Error(), "c.json' (0 bytes)") {
		t.Errorf("after truncating c.json, restoring %s: err = %v", snap, err)
	}
}

func TestCancelStopsRun(t *testing.T) {
	dir, _ := positionFixture(t)
	sc := newScan(t, []connectors.Column{{Name: "id", Type: types.TypeBigInt}}, map[string]string{"path": dir, "format": "json", "json.ignore-parse-errors": "true"})
	src := open(t, sc, 0, 1)
	ctx, cancel := context.WithCancel(context.Background())
	out := &cancelling{cancel: cancel}
	if err := src.Run(ctx, out); err != context.Canceled {
		t.Fatalf("Run = %v after cancel, want context.Canceled", err)
	}
	if out.chunks != 1 {
		t.Fatalf("%d chunks emitted after cancel", out.chunks)
	}
}

type cancelling struct {
	dataflow.NoControl
	cancel func()
	chunks int
}

func (c *cancelling) Emit(*dyntable.Chunk) error { c.chunks++; c.cancel(); return nil }
func (c *cancelling) EmitWatermark(int64) error  { return nil }
