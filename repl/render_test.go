package repl

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

const valuesDDL = `CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'values');
INSERT INTO t VALUES ('a', 1), ('a', 2), ('b', 5);`

func planQuery(t *testing.T, s *engine.Session, sql string) *engine.Query {
	t.Helper()
	stmts, err := parser.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Execute(context.Background(), stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	if r.Query == nil {
		t.Fatalf("%s is not a query", sql)
	}
	return r.Query
}

func TestTableau(t *testing.T) {
	s := newSession(t, valuesDDL)
	q := planQuery(t, s, "SELECT k, SUM(v) AS total FROM t GROUP BY k")
	var out bytes.Buffer
	n, err := runTableau(context.Background(), q, &out, 30)
	if err != nil {
		t.Fatal(err)
	}
	want := `+----+--------------------------------+-------------+
| op | k                              |       total |
+----+--------------------------------+-------------+
| +I | a                              |           1 |
| -U | a                              |           1 |
| +U | a                              |           3 |
| +I | b                              |           5 |
+----+--------------------------------+-------------+
`
	if n != 4 || out.String() != want {
		t.Fatalf("%d rows:\n%s\nwant:\n%s", n, out.String(), want)
	}
}

func TestTableauCutsLongValues(t *testing.T) {
	s := newSession(t, `CREATE TABLE w (s STRING) WITH ('connector' = 'values');
INSERT INTO w VALUES ('0123456789abcdefghij'), ('line1
line2'), ('esc`+"\x1b"+`[2J');`)
	q := planQuery(t, s, "SELECT s FROM w")
	var out bytes.Buffer
	if _, err := runTableau(context.Background(), q, &out, 10); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"| +I | 0123456... |", `| +I | line1\n... |`, "| +I | esc?[2J    |"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Errorf("an escape character reached the output:\n%q", got)
	}
}

func TestChangelog(t *testing.T) {
	s := newSession(t, valuesDDL)
	q := planQuery(t, s, "SELECT k, SUM(v) AS total FROM t GROUP BY k")
	var out bytes.Buffer
	n, err := runChangelog(context.Background(), q, &out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "-- columns: k, total\n+I[a, 1]\n-U[a, 1]\n+U[a, 3]\n+I[b, 5]\n"; n != 4 || out.String() != want {
		t.Fatalf("%d changes:\n%s", n, out.String())
	}
}

func TestPrintTable(t *testing.T) {
	var out bytes.Buffer
	printTable(&out, []string{"name", "count"}, [][]string{{"a", "5"}, {"bb", "120"}})
	want := `+------+-------+
| name | count |
+------+-------+
| a    |     5 |
| bb   |   120 |
+------+-------+
2 row(s)
`
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

// The table view's frame: the table at the top, updated rows in place,
// the status line on the last line, nothing wider than the screen.
func TestTableViewFrame(t *testing.T) {
	s := newSession(t, valuesDDL)
	q := planQuery(t, s, "SELECT k, SUM(v) AS total FROM t GROUP BY k")
	if q.UpsertKey == nil {
		t.Fatal("a GROUP BY result should have an upsert key")
	}
	v := newTableView(&bytes.Buffer{}, -1, q, 30, 0)
	apply := func(chs ...dyntable.Change) {
		for _, ch := range chs {
			v.rs.apply(ch)
		}
	}
	apply(dyntable.Change{Kind: dyntable.Insert, Row: row("a", 1)}, dyntable.Change{Kind: dyntable.Insert, Row: row("b", 5)})
	now := time.Now()
	f1 := screen(v.frame(80, 10, now))
	apply(dyntable.Change{Kind: dyntable.UpdateBefore, Row: row("a", 1)}, dyntable.Change{Kind: dyntable.UpdateAfter, Row: row("a", 3)})
	f2 := screen(v.frame(80, 10, now.Add(time.Second)))
	if len(f1) != 10 || len(f2) != 10 {
		t.Fatalf("frames of %d and %d lines, want 10", len(f1), len(f2))
	}
	if f1[3] != "| a    |     1 |" || f2[3] != "| a    |     3 |" || f2[4] != "| b    |     5 |" {
		t.Fatalf("rows not updated in place:\n%s\n---\n%s", strings.Join(f1, "\n"), strings.Join(f2, "\n"))
	}
	status := f2[9]
	for _, want := range []string{"RUNNING", "rows 1-2 of 2", "changes/s: 2", "last checkpoint: n/a"} {
		if !strings.Contains(status, want) {
			t.Errorf("status line %q lacks %q", status, want)
		}
	}
	// Scrolling: 20 rows on a screen with room for 5.
	for i := 0; i < 20; i++ {
		apply(dyntable.Change{Kind: dyntable.Insert, Row: row(string(rune('c'+i)), int64(i))})
	}
	v.frame(80, 10, now)
	v.key([]byte("\x1b[6~")) // PgDn
	f3 := screen(v.frame(80, 10, now))
	if !strings.Contains(f3[9], "rows 5-9 of 22") || !strings.HasPrefix(f3[3], "| e ") {
		t.Fatalf("after PgDn:\n%s", strings.Join(f3, "\n"))
	}
	v.key([]byte("G"))
	f4 := screen(v.frame(80, 10, now))
	if !strings.Contains(f4[9], "rows 18-22 of 22") {
		t.Fatalf("after End:\n%s", strings.Join(f4, "\n"))
	}
	for _, l := range f4 {
		if len([]rune(l)) > 80 {
			t.Fatalf("line wider than the screen: %q", l)
		}
	}
	if !v.key([]byte("q")) {
		t.Fatal("q must leave the view")
	}
}

// screen turns a frame into its lines as a terminal would show them.
func screen(frame string) []string {
	frame = strings.TrimPrefix(frame, "\x1b[H")
	frame = strings.TrimSuffix(frame, "\x1b[0m\x1b[J")
	frame = strings.ReplaceAll(frame, "\x1b[K", "")
	frame = strings.ReplaceAll(frame, "\x1b[7m", "")
	return strings.Split(frame, "\r\n")
}

func TestNextKey(t *testing.T) {
	in := []byte("q\x1b[A\x1bOB\x1b[5~\x1b[6~\x1b[H\x1b[F\x1b[1;5Cj")
	var got []string
	for len(in) > 0 {
		k, n := nextKey(in)
		got = append(got, k)
		in = in[n:]
	}
	if want := "q up down pgup pgdn home end  j"; strings.Join(got, " ") != want {
		t.Fatalf("keys %q, want %q", strings.Join(got, " "), want)
	}
}

// No limit on the number of changes a result shows (Flink's client kept
// only the last 1,000).
func TestNoChangeLimit(t *testing.T) {
	s := newSession(t, `CREATE TABLE g (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5000', 'rows-per-second' = '0',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '5000');`)
	var out bytes.Buffer
	n, err := runChangelog(context.Background(), planQuery(t, s, "SELECT k FROM g"), &out)
	if err != nil || n != 5000 || strings.Count(out.String(), "+I[") != 5000 || !strings.Contains(out.String(), "+I[1]\n") || !strings.Contains(out.String(), "+I[5000]\n") {
		t.Fatalf("%d changes, %v", n, err)
	}
	out.Reset()
	n, err = runTableau(context.Background(), planQuery(t, s, "SELECT k FROM g"), &out, 30)
	if err != nil || n != 5000 || strings.Count(out.String(), "| +I |") != 5000 {
		t.Fatalf("%d rows, %v", n, err)
	}
}

// The table view over a bounded aggregation: it stays until q, then
// prints the final rows.
func TestTableViewRun(t *testing.T) {
	s := newSession(t, `CREATE TABLE g (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '7000', 'rows-per-second' = '0',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '7000');`)
	var out bytes.Buffer
	v := newTableView(&out, -1, planQuery(t, s, "SELECT k % 7 AS m, COUNT(*) AS c FROM g GROUP BY k % 7"), 30, 0)
	keys := make(chan []byte)
	type result struct {
		viewSummary
		err error
	}
	done := make(chan result)
	go func() {
		sum, err := v.run(context.Background(), keys)
		done <- result{sum, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v.mu.Lock()
		st := v.status
		v.mu.Unlock()
		if st == "FINISHED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the query did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	keys <- []byte("q")
	r := <-done
	if r.err != nil || r.rows != 7 || r.status != "FINISHED" || r.changes < 7 {
		t.Fatalf("%+v", r)
	}
	got := out.String()
	final := got[strings.LastIndex(got, "\x1b[?1049l")+len("\x1b[?1049l"):]
	if strings.Count(final, "| 1000 |") != 7 || !strings.HasPrefix(final, "+---") {
		t.Fatalf("final rows:\n%s", final)
	}
	if !strings.HasPrefix(got, "\x1b[?1049h") {
		t.Fatalf("the view did not use the alternate screen: %q", got[:min(len(got), 40)])
	}
}

// Past sql-client.display.max-table-result-rows the view keeps the newest
// rows, says how many it dropped, and releases every row when it closes.
func TestTableViewKeepsAtMostMaxRows(t *testing.T) {
	s := newSession(t, `CREATE TABLE g (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '500', 'rows-per-second' = '0',
  'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '500');`)
	var out bytes.Buffer
	v := newTableView(&out, -1, planQuery(t, s, "SELECT k FROM g"), 30, 10)
	rows := weak.Make(v.rs)
	keys := make(chan []byte)
	type result struct {
		viewSummary
		err error
	}
	done := make(chan result)
	go func() {
		sum, err := v.run(context.Background(), keys)
		done <- result{sum, err}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		v.mu.Lock()
		st, frame := v.status, v.frame(200, 24, time.Now())
		v.mu.Unlock()
		if st == "FINISHED" {
			// 500 rows in, 10 kept: the 490 oldest dropped, 491..500 shown.
			if !strings.Contains(frame, "rows 1-10 of 10 · 490 oldest dropped (max 10 rows)") ||
				!strings.Contains(frame, "rows 1-10 of 10") || !strings.Contains(frame, "|  491 |") || strings.Contains(frame, "|  490 |") {
				t.Fatalf("frame:\n%s", frame)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the query did not finish")
		}
		time.Sleep(10 * time.Millisecond)
	}
	keys <- []byte("q")
	r := <-done
	if r.err != nil || r.rows != 10 || r.dropped != 490 || r.changes != 500 {
		t.Fatalf("%+v", r)
	}
	runtime.GC()
	if rows.Value() != nil {
		t.Fatal("the closed view still holds its rows")
	}
}
