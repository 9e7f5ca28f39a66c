package dbconn

import (
	"strings"

	"github.com/streamsql/streamsql/connectors/internal/changebuf"
	"github.com/streamsql/streamsql/types"
)

// Table is a database sink's table as its statements need it.
type Table struct {
	Qualified string       // the table's name, quoted (and qualified) in the database's dialect
	Cols      []string     // the columns in the streamsql table's order, as the database spells them
	Types     []types.Type // the columns' types
	PK        []int        // the primary key's columns (indexes into Cols), nil for none
}

// IsKey reports whether column j is in the primary key.
func (t *Table) IsKey(j int) bool {
	for _, k := range t.PK {
		if k == j {
			return true
		}
	}
	return false
}

// WriteColumns appends the names of t's columns cols, quoted by quote
// and comma-separated.
func (t *Table) WriteColumns(sb *strings.Builder, quote func(string) string, cols []int) {
	for i, j := range cols {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(quote(t.Cols[j]))
	}
}

// Dialect is how one database spells the sinks' statements: the
// multi-row INSERT (an upsert with a key) and the DELETE by key, which
// are otherwise the same in both databases.
type Dialect struct {
	// Quote quotes an identifier.
	Quote func(string) string
	// Params appends the parameters of one row of k values, "(p, ...)",
	// the first of them the statement's argument number first (from 1).
	Params func(sb *strings.Builder, first, k int)
	// Upsert appends to an INSERT of every column of t, a table with a
	// key, the clause that updates the row whose key exists instead.
	Upsert func(sb *strings.Builder, t *Table)
}

// Flush writes b's changes to t with statements of at most maxRows rows,
// run by exec: Insert for +I/+U, then Delete for -D (which the buffer
// holds only with a key). The buffer holds one change per key, so no
// statement touches a row twice. The buffer is kept; the caller resets
// it once the rows are safe (committed or prepared), so that a failed
// flush can be retried.
func (d *Dialect) Flush(t *Table, b *changebuf.Buffer, maxRows int, exec func(q string, args []any) error) error {
	ups, dels := b.Split()
	for len(ups) > 0 {
		n := min(len(ups), maxRows)
		if err := exec(d.Insert(t, ups[:n])); err != nil {
			return err
		}
		ups = ups[n:]
	}
	for len(dels) > 0 {
		n := min(len(dels), maxRows)
		if err := exec(d.Delete(t, dels[:n])); err != nil {
			return err
		}
		dels = dels[n:]
	}
	return nil
}

// Insert is one multi-row INSERT of rows, upserting when t has a key.
func (d *Dialect) Insert(t *Table, rows []types.Row) (string, []any) {
	all := make([]int, len(t.Cols))
	for j := range all {
		all[j] = j
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO ")
	sb.WriteString(t.Qualified)
	sb.WriteString(" (")
	t.WriteColumns(&sb, d.Quote, all)
	sb.WriteString(") VALUES ")
	args := d.rows(&sb, t, rows, all)
	if len(t.PK) > 0 {
		d.Upsert(&sb, t)
	}
	return sb.String(), args
}

// Delete deletes rows by t's primary key: DELETE ... WHERE (key) IN
// ((...), ...).
func (d *Dialect) Delete(t *Table, rows []types.Row) (string, []any) {
	var sb strings.Builder
	sb.WriteString("DELETE FROM ")
	sb.WriteString(t.Qualified)
	sb.WriteString(" WHERE (")
	t.WriteColumns(&sb, d.Quote, t.PK)
	sb.WriteString(") IN (")
	args := d.rows(&sb, t, rows, t.PK)
	sb.WriteString(")")
	return sb.String(), args
}

// rows appends one parameter tuple per row, comma-separated, and
// returns the arguments: the values of the columns cols of each row.
func (d *Dialect) rows(sb *strings.Builder, t *Table, rows []types.Row, cols []int) []any {
	args := make([]any, 0, len(rows)*len(cols))
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		d.Params(sb, len(args)+1, len(cols))
		for _, j := range cols {
			args = append(args, Arg(r[j], t.Types[j]))
		}
	}
	return args
}
