package repl

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/types"
)

// tableView is the table result mode: a live materialized view of the
// query's result on the terminal's alternate screen, redrawn in place at
// most ten times a second, scrollable, with a status line. It stays open
// after the query ends, until q (or Ctrl-C); then the final rows are
// printed on the normal screen so they stay in the scrollback.
type tableView struct {
	out      io.Writer
	fd       int // the terminal, for its size
	q        *engine.Query
	maxWidth int

	mu      sync.Mutex
	rs      *resultSet
	status  string
	off     int  // first row shown
	follow  bool // keep the last rows in view as rows are added
	g       grid // widths only grow, so columns do not jump
	samples []sample
	body    int // rows the last frame had room for
}

type sample struct {
	at      time.Time
	changes int64
}

// redrawEvery bounds the frame rate.
const redrawEvery = 100 * time.Millisecond

// maxPrinted bounds the rows printed to the normal screen on leaving.
const maxPrinted = 100

func newTableView(out io.Writer, fd int, q *engine.Query, maxWidth, maxRows int) *tableView {
	v := &tableView{out: out, fd: fd, q: q, maxWidth: max(maxWidth, 4), rs: newResultSet(q.UpsertKey, maxRows), status: "RUNNING"}
	for _, c := range q.Columns {
		v.g.widths = append(v.g.widths, min(max(text.StringWidthWithoutEscSequences(c.Name), 4), v.maxWidth))
		v.g.right = append(v.g.right, isNumeric(c.Type))
	}
	return v
}

// viewSummary is what is left of a closed view.
type viewSummary struct {
	rows             int   // in the result at the end
	changes, dropped int64 // applied; rows dropped past the limit
	status           string
}

// run shows the view until the user leaves it or ctx is cancelled
// (Ctrl-C), and returns the query's error, if it failed. The rows are
// released when it returns, so a large result does not outlive its view.
func (v *tableView) run(ctx context.Context, keys <-chan []byte) (sum viewSummary, err error) {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- v.q.Run(qctx, func(c *dyntable.Chunk) error {
			v.mu.Lock()
			for _, ch := range c.Changes {
				v.rs.apply(ch)
			}
			v.mu.Unlock()
			return nil
		})
	}()
	io.WriteString(v.out, "\x1b[?1049h\x1b[?25l") // alternate screen, hide cursor
	tick := time.NewTicker(redrawEvery)
	defer tick.Stop()
	running := true
	v.draw()
loop:
	for {
		select {
		case <-tick.C:
			v.draw()
		case b := <-keys:
			if v.key(b) {
				break loop
			}
			v.draw()
		case e := <-done:
			running = false
			err = e
			v.mu.Lock()
			switch {
			case ctx.Err() != nil:
				v.status = "CANCELLED"
			case e != nil:
				v.status = "FAILED: " + firstLine(e.Error())
			default:
				v.status = "FINISHED"
			}
			v.mu.Unlock()
			v.draw()
			if ctx.Err() != nil {
				break loop
			}
		case <-ctx.Done():
			break loop
		}
	}
	cancel()
	if running {
		err = <-done
		if ctx.Err() != nil || err == nil {
			v.status = "CANCELLED"
		}
		if qctx.Err() != nil {
			err = nil // stopped by the user, not failed
		}
	}
	io.WriteString(v.out, "\x1b[?25h\x1b[?1049l") // show cursor, normal screen
	v.printFinal()
	v.mu.Lock()
	defer v.mu.Unlock()
	sum = viewSummary{rows: v.rs.len(), changes: v.rs.changes, dropped: v.rs.dropped, status: v.status}
	v.rs = nil
	return sum, err
}

// key handles keys; it returns true to leave the view.
func (v *tableView) key(b []byte) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	page := max(v.body-1, 1)
	for len(b) > 0 {
		seq, n := nextKey(b)
		b = b[n:]
		switch seq {
		case "q", "Q", "\x1b":
			return true
		case "up", "k":
			v.scroll(-1)
		case "down", "j", "\r", "\n":
			v.scroll(1)
		case "pgup", "b":
			v.scroll(-page)
		case "pgdn", " ", "f":
			v.scroll(page)
		case "home", "g":
			v.follow = false
			v.off = 0
		case "end", "G":
			v.follow = true
		}
	}
	return false
}

func (v *tableView) scroll(n int) {
	v.follow = false
	v.off = max(v.off+n, 0)
}

// nextKey reads one key from b: a named key for the escape sequences of
// arrows, pages, home and end, else one byte.
func nextKey(b []byte) (string, int) {
	if b[0] != 0x1b || len(b) == 1 {
		return string(b[:1]), 1
	}
	seqs := []struct{ s, name string }{
		{"\x1b[A", "up"}, {"\x1bOA", "up"}, {"\x1b[B", "down"}, {"\x1bOB", "down"},
		{"\x1b[5~", "pgup"}, {"\x1b[6~", "pgdn"},
		{"\x1b[H", "home"}, {"\x1bOH", "home"}, {"\x1b[1~", "home"}, {"\x1b[7~", "home"},
		{"\x1b[F", "end"}, {"\x1bOF", "end"}, {"\x1b[4~", "end"}, {"\x1b[8~", "end"},
	}
	for _, s := range seqs {
		if strings.HasPrefix(string(b), s.s) {
			return s.name, len(s.s)
		}
	}
	// An unknown sequence: skip it whole.
	n := 2
	for n < len(b) && !(b[n] >= 0x40 && b[n] <= 0x7e) {
		n++
	}
	return "", min(n+1, len(b))
}

// draw renders one frame.
func (v *tableView) draw() {
	w, h, ok := termSize(v.fd)
	if !ok {
		w, h = 80, 24
	}
	v.mu.Lock()
	frame := v.frame(w, h, time.Now())
	v.mu.Unlock()
	io.WriteString(v.out, frame)
}

// frame builds the screen: the table at the top, the status line at the
// bottom; every line is cut to the width so nothing wraps or scrolls.
func (v *tableView) frame(w, h int, now time.Time) string {
	body := max(h-5, 1) // borders, header and status take five lines
	v.body = body
	total := v.rs.len()
	if v.follow {
		v.off = total - body
	}
	v.off = max(min(v.off, total-body), 0)
	rows := v.rs.window(v.off, body)
	cells := v.cells(rows)
	var lines []string
	lines = append(lines, v.g.border(), v.g.line(columnNames(v.q.Columns)), v.g.border())
	for _, c := range cells {
		lines = append(lines, v.g.line(c))
	}
	lines = append(lines, v.g.border())
	var b strings.Builder
	b.WriteString("\x1b[H")
	for i := 0; i < h-1; i++ {
		if i < len(lines) {
			b.WriteString(cutLine(lines[i], w))
		}
		b.WriteString("\x1b[K\r\n")
	}
	status := v.statusLine(total, len(rows), now)
	b.WriteString("\x1b[7m")
	b.WriteString(text.Pad(cutLine(status, w), w, ' '))
	b.WriteString("\x1b[0m\x1b[J")
	return b.String()
}

func (v *tableView) statusLine(total, shown int, now time.Time) string {
	v.samples = append(v.samples, sample{now, v.rs.changes})
	for len(v.samples) > 2 && now.Sub(v.samples[0].at) > 2*time.Second {
		v.samples = v.samples[1:]
	}
	rate := "-"
	if first := v.samples[0]; now.Sub(first.at) >= 200*time.Millisecond {
		rate = fmt.Sprintf("%.0f", float64(v.rs.changes-first.changes)/now.Sub(first.at).Seconds())
	}
	rows := "rows: 0"
	if shown > 0 {
		rows = fmt.Sprintf("rows %d-%d of %d", v.off+1, v.off+shown, total)
	}
	if v.rs.dropped > 0 {
		// Early in the line, which the terminal's width may cut.
		rows += fmt.Sprintf(" · %d oldest dropped (max %d rows)", v.rs.dropped, v.rs.max)
	}
	s := fmt.Sprintf(" %s · %s · changes/s: %s · last checkpoint: %s · Up/Down PgUp/PgDn Home/End scroll · q quit",
		v.status, rows, rate, engine.NotAvailable)
	if v.rs.anomalies > 0 {
		s += fmt.Sprintf(" · %d retraction(s) of rows not in the result", v.rs.anomalies)
	}
	return s
}

// cells formats rows for display and widens the columns to fit them,
// each to at most maxWidth. The caller holds mu.
func (v *tableView) cells(rows []types.Row) [][]string {
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = formatCells(r, v.q.Columns, v.q.Zone)
		for c, s := range cells[i] {
			if c < len(v.g.widths) {
				v.g.widths[c] = min(max(v.g.widths[c], text.StringWidthWithoutEscSequences(s)), v.maxWidth)
			}
		}
	}
	return cells
}

// printFinal prints the final rows on the normal screen.
func (v *tableView) printFinal() {
	v.mu.Lock()
	defer v.mu.Unlock()
	total := v.rs.len()
	rows := v.rs.window(0, maxPrinted)
	cells := v.cells(rows)
	var b strings.Builder
	b.WriteString(v.g.border() + "\n" + v.g.line(columnNames(v.q.Columns)) + "\n" + v.g.border() + "\n")
	for _, c := range cells {
		b.WriteString(v.g.line(c) + "\n")
	}
	b.WriteString(v.g.border() + "\n")
	if total > len(rows) {
		fmt.Fprintf(&b, "(the first %d of %d rows)\n", len(rows), total)
	}
	io.WriteString(v.out, b.String())
}
