package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/streamsql/streamsql/connectors/internal/changebuf"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/types"
)

// quoteIdent quotes a PostgreSQL identifier with double quotes.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// quoteLiteral quotes a string literal (standard_conforming_strings on,
// the default since PostgreSQL 9.1).
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// tableShape is what the writers need of the table: its qualified name,
// its columns as PostgreSQL spells them (found when the sink opens), and
// its primary key (column indexes, nil for none).
type tableShape struct {
	qualified string
	cols      []string
	types     []types.Type
	pk        []int
}

// execer is a *pgxpool.Pool, *pgxpool.Conn or pgx.Tx.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// flush writes b's changes with multi-row statements of at most maxRows
// rows: INSERT ... ON CONFLICT (key) DO UPDATE for +I/+U and DELETE ...
// WHERE (key) IN (...) for -D with a key, plain INSERT without. The
// buffer holds one change per key, so no statement touches a row twice
// (which ON CONFLICT DO UPDATE refuses).
func (s *tableShape) flush(ctx context.Context, db execer, b *changebuf.Buffer, maxRows int) error {
	ups, dels := b.Split()
	for len(ups) > 0 {
		n := min(len(ups), maxRows)
		q, args := s.insertSQL(ups[:n])
		if err := execTimeout(ctx, db, q, args); err != nil {
			return err
		}
		ups = ups[n:]
	}
	for len(dels) > 0 {
		n := min(len(dels), maxRows)
		q, args := s.deleteSQL(dels[:n])
		if err := execTimeout(ctx, db, q, args); err != nil {
			return err
		}
		dels = dels[n:]
	}
	return nil
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
	args := make([]any, 0, len(rows)*len(s.cols))
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		placeholders(&sb, len(args)+1, len(s.cols))
		for j, v := range r {
			args = append(args, dbconn.Arg(v, s.types[j]))
		}
	}
	if len(s.pk) > 0 {
		sb.WriteString(" ON CONFLICT (")
		for i, k := range s.pk {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(quoteIdent(s.cols[k]))
		}
		sb.WriteString(") DO ")
		first := true
		for j, c := range s.cols {
			if isKey(s.pk, j) {
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
	args := make([]any, 0, len(rows)*len(s.pk))
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		placeholders(&sb, len(args)+1, len(s.pk))
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
