package repl

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/types"
)

// printTable prints a finished result (SHOW JOBS, DESCRIBE, SET, ...) as
// a bordered table followed by its row count.
func printTable(w io.Writer, header []string, rows [][]string) {
	t := table.NewWriter()
	t.SetOutputMirror(w)
	style := table.StyleDefault
	style.Format.Header = text.FormatDefault
	t.SetStyle(style)
	h := make(table.Row, len(header))
	for i, c := range header {
		h[i] = c
	}
	t.AppendHeader(h)
	var cfgs []table.ColumnConfig
	for c := range header {
		if numericColumn(rows, c) {
			cfgs = append(cfgs, table.ColumnConfig{Number: c + 1, Align: text.AlignRight})
		}
	}
	t.SetColumnConfigs(cfgs)
	for _, r := range rows {
		tr := make(table.Row, len(r))
		for i, c := range r {
			tr[i] = sanitize(c)
		}
		t.AppendRow(tr)
	}
	t.Render()
	fmt.Fprintf(w, "%d row(s)\n", len(rows))
}

// numericColumn reports whether every cell of column c is a number.
func numericColumn(rows [][]string, c int) bool {
	for _, r := range rows {
		if c >= len(r) {
			return false
		}
		if _, err := strconv.ParseFloat(r[c], 64); err != nil {
			return false
		}
	}
	return len(rows) > 0
}

// sanitize makes a value safe to print in a cell: control characters
// (escape sequences above all) never reach the terminal.
func sanitize(s string) string {
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsControl(r):
			b.WriteRune('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// grid draws rows of fixed-width cells between | borders, the way Flink's
// tableau result looks, one line at a time: results are printed as they
// stream in, so the widths are fixed up front (from the column types) or
// only grow (table mode).
type grid struct {
	widths []int
	right  []bool // right-aligned (numeric) columns
}

func (g *grid) border() string {
	var b strings.Builder
	b.WriteByte('+')
	for _, w := range g.widths {
		b.WriteString(strings.Repeat("-", w+2))
		b.WriteByte('+')
	}
	return b.String()
}

func (g *grid) line(cells []string) string {
	var b strings.Builder
	b.WriteByte('|')
	for i, w := range g.widths {
		c := ""
		if i < len(cells) {
			c = fit(cells[i], w)
		}
		pad := strings.Repeat(" ", w-text.StringWidthWithoutEscSequences(c))
		b.WriteByte(' ')
		if g.right[i] {
			b.WriteString(pad)
			b.WriteString(c)
		} else {
			b.WriteString(c)
			b.WriteString(pad)
		}
		b.WriteString(" |")
	}
	return b.String()
}

// fit cuts s to at most w display columns, marking the cut with "...".
func fit(s string, w int) string {
	if text.StringWidthWithoutEscSequences(s) <= w {
		return s
	}
	if w <= 3 {
		return text.Trim(s, w)
	}
	return text.Snip(s, w, "...")
}

// cutLine cuts a rendered line to the terminal width.
func cutLine(s string, w int) string {
	if w <= 0 || text.StringWidthWithoutEscSequences(s) <= w {
		return s
	}
	return text.Trim(s, w)
}

func isNumeric(t types.Type) bool {
	switch t.ID {
	case types.Int, types.BigInt, types.Double, types.Decimal:
		return true
	}
	return false
}

// typeWidth is how wide a column of type t needs to be, as Flink's
// tableau result computes it before any row is seen.
func typeWidth(t types.Type, maxWidth int) int {
	switch t.ID {
	case types.Null:
		return 4
	case types.Boolean:
		return 5
	case types.Int:
		return 11
	case types.BigInt:
		return 20
	case types.Double:
		return 22
	case types.Decimal:
		return t.Precision + 2
	case types.Date:
		return 10
	case types.Time:
		if t.Precision > 0 {
			return 9 + t.Precision
		}
		return 8
	case types.Timestamp, types.TimestampLTZ:
		if t.Precision > 0 {
			return 20 + t.Precision
		}
		return 19
	case types.String:
		if t.Precision > 0 && t.Precision < maxWidth {
			return t.Precision
		}
	}
	return maxWidth
}

// formatCells renders a row's values as cell text.
func formatCells(row types.Row, cols []expr.Column, zone *time.Location) []string {
	out := make([]string, len(row))
	var buf []byte
	for i, v := range row {
		var t types.Type
		if i < len(cols) {
			t = cols[i].Type
		}
		buf = types.AppendFormatIn(buf[:0], v, t, zone)
		out[i] = sanitize(string(buf))
	}
	return out
}

func columnNames(cols []expr.Column) []string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = sanitize(c.Name)
	}
	return names
}
