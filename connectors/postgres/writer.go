package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/connectors/internal/changebuf"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
)

// quoteIdent quotes a PostgreSQL identifier with double quotes.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteLiteral quotes a string literal (standard_conforming_strings on,
// the default since PostgreSQL 9.1).
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// dialect is how PostgreSQL spells the sinks' statements: $n
// parameters, and INSERT ... ON CONFLICT (key) DO UPDATE for the upsert.
var dialect = &dbconn.Dialect{
	Quote:  quoteIdent,
	Params: placeholders,
	Upsert: func(sb *strings.Builder, t *dbconn.Table) {
		sb.WriteString(" ON CONFLICT (")
		t.WriteColumns(sb, quoteIdent, t.PK)
		sb.WriteString(") DO ")
		first := true
		for j, c := range t.Cols {
			if t.IsKey(j) {
				continue
			}
			if first {
				sb.WriteString("UPDATE SET ")
			} else {
				sb.WriteString(", ")
			}
			first = false
			sb.WriteString(quoteIdent(c) + " = EXCLUDED." + quoteIdent(c))
		}
		if first { // every column is in the key
			sb.WriteString("NOTHING")
		}
	},
}

// execer is a *pgxpool.Pool, *pgxpool.Conn or pgx.Tx.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// flush writes b's changes to s with multi-row statements of at most
// maxRows rows (dbconn.Dialect.Flush): INSERT ... ON CONFLICT (key) DO
// UPDATE for +I/+U and DELETE ... WHERE (key) IN (...) for -D with a
// key, plain INSERT without. The buffer holds one change per key, so no
// statement touches a row twice (which ON CONFLICT DO UPDATE refuses).
func flush(ctx context.Context, db execer, s *dbconn.Table, b *changebuf.Buffer, maxRows int) error {
	return dialect.Flush(s, b, maxRows, func(q string, args []any) error {
		return execTimeout(ctx, db, q, args)
	})
}

// execTimeout runs one statement within opTimeout. Statements go by the
// simple protocol, the values rendered as literals by pgx: one round
// trip, and no server-side statement per batch size.
func execTimeout(ctx context.Context, db execer, q string, args []any) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	_, err := db.Exec(ctx, q, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	return err
}

// placeholders appends "($n, $n+1, ...)" for k values from $first.
func placeholders(sb *strings.Builder, first, k int) {
	sb.WriteByte('(')
	for i := 0; i < k; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('$')
		sb.WriteString(strconv.Itoa(first + i))
	}
	sb.WriteByte(')')
}
