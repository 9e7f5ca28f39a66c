package repl

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/jedib0t/go-pretty/v6/text"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/types"
)

// tableau prints a query's changes as they arrive, as rows of a bordered
// table with an op column: Flink's tableau result mode. Widths are fixed
// from the column types before the first row; longer values are cut
// with "...".
type tableau struct {
	w    *bufio.Writer
	g    grid
	rows int64
}

func newTableau(w io.Writer, q *engine.Query, maxWidth int) *tableau {
	t := &tableau{w: bufio.NewWriter(w)}
	t.g.widths = append(t.g.widths, 2)
	t.g.right = append(t.g.right, false)
	for _, c := range q.Columns {
		wd := max(typeWidth(c.Type, maxWidth), text.StringWidthWithoutEscSequences(c.Name), 4)
		t.g.widths = append(t.g.widths, min(wd, max(maxWidth, 4)))
		t.g.right = append(t.g.right, isNumeric(c.Type))
	}
	return t
}

func (t *tableau) header(q *engine.Query) {
	fmt.Fprintln(t.w, t.g.border())
	fmt.Fprintln(t.w, t.g.line(append([]string{"op"}, columnNames(q.Columns)...)))
	fmt.Fprintln(t.w, t.g.border())
	_ = t.w.Flush()
}

func (t *tableau) chunk(q *engine.Query, c *dyntable.Chunk) error {
	cells := make([]string, 0, len(q.Columns)+1)
	for _, ch := range c.Changes {
		cells = append(cells[:0], ch.Kind.String())
		cells = append(cells, formatCells(ch.Row, q.Columns, q.Zone)...)
		t.w.WriteString(t.g.line(cells))
		t.w.WriteByte('\n')
		t.rows++
	}
	return t.w.Flush()
}

func (t *tableau) footer() {
	fmt.Fprintln(t.w, t.g.border())
	_ = t.w.Flush()
}

// runTableau runs q, printing its changes in tableau form, and returns
// how many rows it printed.
func runTableau(ctx context.Context, q *engine.Query, w io.Writer, maxWidth int) (int64, error) {
	t := newTableau(w, q, maxWidth)
	t.header(q)
	err := q.Run(ctx, func(c *dyntable.Chunk) error { return t.chunk(q, c) })
	t.footer()
	return t.rows, err
}

// runChangelog runs q, printing each change as +I[...], -U[...], +U[...]
// or -D[...], and returns how many it printed.
func runChangelog(ctx context.Context, q *engine.Query, w io.Writer) (int64, error) {
	ts := make([]types.Type, len(q.Columns))
	for i, c := range q.Columns {
		ts[i] = c.Type
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "-- columns: %s\n", strings.Join(columnNames(q.Columns), ", "))
	_ = bw.Flush()
	var n int64
	err := q.Run(ctx, func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			bw.WriteString(sanitize(dyntable.FormatChangeIn(ch, ts, q.Zone)))
			bw.WriteByte('\n')
			n++
		}
		return bw.Flush()
	})
	return n, err
}
