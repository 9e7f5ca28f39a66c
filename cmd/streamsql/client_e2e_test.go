package main

import (
	"strings"
	"testing"
)

// Table mode keeps at most sql-client.display.max-table-result-rows rows:
// past it the oldest are dropped, and the client says so.
func TestREPLTableModeRowLimit(t *testing.T) {
	tm := startTerm(t)
	tm.prompt()
	tm.run("CREATE TABLE g (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '40', 'fields.k.kind' = 'sequence', 'fields.k.start' = '1', 'fields.k.end' = '40');", "created")
	tm.run("SET 'sql-client.execution.result-mode' = 'table';", "[INFO] OK")
	tm.run("SET 'sql-client.display.max-table-result-rows' = '5';", "[INFO] OK")
	tm.prompt()
	tm.line("SELECT k FROM g;")
	screen := tm.waitScreen("the finished view", func(s string) bool { return strings.Contains(s, "FINISHED") })
	// 40 rows in, 5 kept: 36..40 remain.
	if !strings.Contains(screen, "rows 1-5 of 5") || !strings.Contains(screen, "rows 1-5 of 5 · 35 oldest dropped (max 5 rows)") ||
		!strings.Contains(screen, "|   36 |") || strings.Contains(screen, "|   35 |") {
		t.Fatalf("the view shows:\n%s", screen)
	}
	tm.send("q")
	tm.expect("[INFO] Query finished: 5 row(s) in the result, from 40 change(s)")
	tm.expect("[INFO] The 35 oldest row(s) were dropped to keep 5: SET 'sql-client.display.max-table-result-rows' keeps more.")
	tm.prompt()
	tm.exitWithCtrlD()
}

// SELECT ... LIMIT 3 over an unbounded insert-only source prints its three
// rows and ends, as in Flink.
func TestREPLLimitEndsUnboundedQuery(t *testing.T) {
	tm := startTerm(t)
	tm.prompt()
	tm.run("CREATE TABLE gen (k INT, v INT) WITH ('connector' = 'datagen', 'rows-per-second' = '50');", "created")
	tm.prompt()
	out := tm.run("SELECT * FROM gen LIMIT 3;", "Received a total of 3 rows")
	if strings.Count(out, "| +I |") != 3 {
		t.Fatalf("output:\n%s", out)
	}
	tm.prompt()
	tm.exitWithCtrlD()
}

// Text typed while a query prints its rows is kept for the next prompt,
// as a shell keeps type-ahead, not lost.
func TestREPLTypeAheadWhileAQueryRuns(t *testing.T) {
	tm := startTerm(t)
	tm.prompt()
	tm.run("CREATE TABLE slow (k INT) WITH ('connector' = 'datagen', 'number-of-rows' = '20', 'rows-per-second' = '10');", "created")
	tm.prompt()
	tm.line("SELECT * FROM slow;")
	tm.expect("| op |")
	tm.send("SELECT 'typed ahead' AS t;\r") // while the rows come, about two seconds
	tm.expect("Received a total of 20 rows")
	tm.expect("typed ahead")
	tm.expect("Received a total of 1 rows")
	tm.prompt()
	tm.exitWithCtrlD()
}

// A 100 KB paste takes time and output linear in its size. readline
// redraws the whole line for each character it inserts, so a long line
// typed into it costs the square of its length: a paste (bracketed by the
// terminal) bypasses it. The output the client writes counts the work:
// quadratic redrawing would write gigabytes.
func TestREPLPasteIsLinear(t *testing.T) {
	const size = 100 << 10
	var oneLine strings.Builder
	oneLine.WriteString("SELECT '")
	for oneLine.Len() < size {
		oneLine.WriteString("0123456789abcdef")
	}
	oneLine.WriteString("' AS s, 42 AS answer;")
	var lines strings.Builder
	for lines.Len() < size {
		lines.WriteString("-- a comment line, as scripts have them, of about sixty bytes\r")
	}
	lines.WriteString("SELECT\r  42 AS answer;\r")
	for _, c := range []struct{ name, paste string }{{"one line", oneLine.String()}, {"many lines", lines.String()}} {
		tm := startTerm(t)
		tm.prompt()
		before := len(tm.rawText())
		tm.send("\x1b[200~" + c.paste + "\x1b[201~")
		if c.name == "one line" {
			tm.send("\r") // the paste's last line waits at the prompt, as typed
		}
		tm.expect("Received a total of 1 rows")
		tm.prompt()
		if written := len(tm.rawText()) - before; written > 8*len(c.paste) {
			t.Errorf("%s: a paste of %d bytes made the client write %d", c.name, len(c.paste), written)
		} else {
			t.Logf("%s: a paste of %d bytes, %d written", c.name, len(c.paste), written)
		}
		out := tm.text()
		if !strings.Contains(out, "|          42 |") {
			t.Errorf("%s: no answer:\n%s", c.name, out[max(0, len(out)-2000):])
		}
		tm.exitWithCtrlD()
	}
}
