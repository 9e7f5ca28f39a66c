package mysql

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/streamsql/streamsql/connectors/internal/changebuf"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// quoteIdent quotes a MySQL identifier with backquotes.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// tableShape is what the writers need of the table: its columns and its
// primary key (column indexes, nil for none).
type tableShape struct {
	qualified string // `db`.`table` or `table`
	cols      []string
	types     []types.Type
	pk        []int
}

// buffer is one batch of changes for the table (see changebuf), with
// the MySQL statements that write it.
type buffer struct {
	shape *tableShape
	b     *changebuf.Buffer
}

func newBuffer(s *tableShape) *buffer { return &buffer{shape: s, b: changebuf.New(s.pk)} }

func (b *buffer) add(c *dyntable.Chunk) error { return b.b.Add("mysql sink", c) }
func (b *buffer) len() int                    { return b.b.Len() }
func (b *buffer) reset()                      { b.b.Reset() }

// execer is a *sql.Conn, *sql.DB or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// flush writes the buffered changes with multi-row statements of at
// most maxRows rows: INSERT ... ON DUPLICATE KEY UPDATE for +I/+U and
// DELETE ... WHERE (pk) IN (...) for -D with a key, plain INSERT
// without. The buffer is kept; the caller resets it once the rows are
// safe (committed or prepared), so that a failed flush can be retried.
func (b *buffer) flush(ctx context.Context, db execer, maxRows int) error {
	ups, dels := b.b.Split()
	for len(ups) > 0 {
		n := min(len(ups), maxRows)
		q, args := b.shape.insertSQL(ups[:n])
		if err := execTimeout(ctx, db, q, args); err != nil {
			return err
		}
		ups = ups[n:]
	}
	for len(dels) > 0 {
		n := min(len(dels), maxRows)
		q, args := b.shape.deleteSQL(dels[:n])
		if err := execTimeout(ctx, db, q, args); err != nil {
			return err
		}
		dels = dels[n:]
	}
	return nil
}

// execTimeout runs one statement within opTimeout.
func execTimeout(ctx context.Context, db execer, q string, args []any) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	_, err := db.ExecContext(ctx, q, args...)
	return err
}

// insertSQL is one multi-row INSERT, upserting when the table has a key.
func (s *tableShape) insertSQL(rows []types.Row) (string, []any) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO ")
	sb.WriteString(s.qualified)
	sb.WriteString(" (")
	for i, c := range s.cols {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(quoteIdent(c))
	}
	sb.WriteString(") VALUES ")
	tuple := "(" + strings.Repeat("?, ", len(s.cols)-1) + "?)"
	args := make([]any, 0, len(rows)*len(s.cols))
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(tuple)
		for j, v := range r {
			args = append(args, dbconn.Arg(v, s.types[j]))
		}
	}
	if len(s.pk) > 0 {
		sb.WriteString(" ON DUPLICATE KEY UPDATE ")
		first := true
		for j, c := range s.cols {
			if isKey(s.pk, j) {
				continue
			}
			if !first {
				sb.WriteString(", ")
			}
			first = false
			// VALUES(col) is understood by MySQL 5.7/8 and MariaDB alike.
			sb.WriteString(quoteIdent(c) + " = VALUES(" + quoteIdent(c) + ")")
		}
		if first { // every column is in the key
			k := quoteIdent(s.cols[s.pk[0]])
			sb.WriteString(k + " = " + k)
		}
	}
	return sb.String(), args
}

// deleteSQL deletes rows by primary key.
func (s *tableShape) deleteSQL(rows []types.Row) (string, []any) {
	var sb strings.Builder
	sb.WriteString("DELETE FROM ")
	sb.WriteString(s.qualified)
	sb.WriteString(" WHERE (")
	for i, k := range s.pk {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(quoteIdent(s.cols[k]))
	}
	sb.WriteString(") IN (")
	tuple := "(" + strings.Repeat("?, ", len(s.pk)-1) + "?)"
	args := make([]any, 0, len(rows)*len(s.pk))
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(tuple)
		for _, k := range s.pk {
			args = append(args, dbconn.Arg(r[k], s.types[k]))
		}
	}
	sb.WriteString(")")
	return sb.String(), args
}

func isKey(pk []int, j int) bool {
	for _, k := range pk {
		if k == j {
			return true
		}
	}
	return false
}

// retryWrite runs fn up to attempts times while it fails transiently
// (dbconn.Retry).
func retryWrite(ctx context.Context, attempts int, fn func() error) error {
	return dbconn.Retry(ctx, attempts, isTransient, fn)
}

// opTimeout bounds one statement round, so that a connection that hangs
// (a dead peer without a reset) turns into a retryable error.
const opTimeout = 30 * time.Second
