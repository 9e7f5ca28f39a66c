package mysql

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/streamsql/streamsql/connectors/internal/changebuf"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/dyntable"
)

// quoteIdent quotes a MySQL identifier with backquotes.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// dialect is how MySQL spells the sinks' statements: ? parameters, and
// INSERT ... ON DUPLICATE KEY UPDATE for the upsert.
var dialect = &dbconn.Dialect{
	Quote: quoteIdent,
	Params: func(sb *strings.Builder, _, k int) {
		sb.WriteString("(?")
		sb.WriteString(strings.Repeat(", ?", k-1))
		sb.WriteString(")")
	},
	Upsert: func(sb *strings.Builder, t *dbconn.Table) {
		sb.WriteString(" ON DUPLICATE KEY UPDATE ")
		first := true
		for j, c := range t.Cols {
			if t.IsKey(j) {
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
			k := quoteIdent(t.Cols[t.PK[0]])
			sb.WriteString(k + " = " + k)
		}
	},
}

// buffer is one batch of changes for the table (see changebuf), with
// the MySQL statements that write it.
type buffer struct {
	shape *dbconn.Table
	b     *changebuf.Buffer
}

func newBuffer(s *dbconn.Table) *buffer { return &buffer{shape: s, b: changebuf.New(s.PK)} }

func (b *buffer) add(c *dyntable.Chunk) error { return b.b.Add("mysql sink", c) }
func (b *buffer) len() int                    { return b.b.Len() }
func (b *buffer) reset()                      { b.b.Reset() }

// execer is a *sql.Conn, *sql.DB or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// flush writes the buffered changes with multi-row statements of at
// most maxRows rows (dbconn.Dialect.Flush): INSERT ... ON DUPLICATE KEY
// UPDATE for +I/+U and DELETE ... WHERE (pk) IN (...) for -D with a key,
// plain INSERT without.
func (b *buffer) flush(ctx context.Context, db execer, maxRows int) error {
	return dialect.Flush(b.shape, b.b, maxRows, func(q string, args []any) error {
		return execTimeout(ctx, db, q, args)
	})
}

// execTimeout runs one statement within opTimeout.
func execTimeout(ctx context.Context, db execer, q string, args []any) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	_, err := db.ExecContext(ctx, q, args...)
	return err
}

// retryWrite runs fn up to attempts times while it fails transiently
// (dbconn.Retry).
func retryWrite(ctx context.Context, attempts int, fn func() error) error {
	return dbconn.Retry(ctx, attempts, isTransient, fn)
}

// opTimeout bounds one statement round, so that a connection that hangs
// (a dead peer without a reset) turns into a retryable error.
const opTimeout = 30 * time.Second
