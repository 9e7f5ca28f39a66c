package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/types"
)

// pgColumn is one column as information_schema describes it.
type pgColumn struct {
	name      string
	dataType  string // information_schema's: bigint, integer, numeric, character varying, ...
	precision *int32
	scale     *int32
}

func (c pgColumn) colName() string { return c.name }

// qualifiedName is "schema"."table", or "table" on the search path.
func qualifiedName(schema, table string) string {
	if schema == "" {
		return quoteIdent(table)
	}
	return quoteIdent(schema) + "." + quoteIdent(table)
}

// describe reads the table's columns (in order) and primary key. A
// missing table is an error naming it.
func describe(ctx context.Context, db *pgxpool.Pool, schema, table string) ([]pgColumn, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var rel string // the table's schema, as found on the search path
	err := db.QueryRow(ctx, `SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass($1)`, qualifiedName(schema, table)).Scan(&rel)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil, fmt.Errorf("the PostgreSQL table '%s' does not exist (sink tables are created by the user)", qualifiedName(schema, table))
		}
		return nil, nil, err
	}
	rows, err := db.Query(ctx, `SELECT column_name, data_type, numeric_precision, numeric_scale
		FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`, rel, table)
	if err != nil {
		return nil, nil, err
	}
	// rows is closed before the key query: a pgx connection runs one
	// query at a time.
	cols, err := dbconn.ScanAll(rows, func(c *pgColumn) []any {
		return []any{&c.name, &c.dataType, &c.precision, &c.scale}
	})
	rows.Close()
	if err != nil {
		return nil, nil, err
	}
	krows, err := db.Query(ctx, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		WHERE i.indrelid = to_regclass($1) AND i.indisprimary`, qualifiedName(rel, table))
	if err != nil {
		return nil, nil, err
	}
	defer krows.Close()
	pk, err := dbconn.ScanAll(krows, dbconn.Names)
	if err != nil {
		return nil, nil, err
	}
	return cols, pk, nil
}

// compatible reports whether values of streamsql type t can be written
// to (and read from) a PostgreSQL column without loss, and if not, why.
func compatible(t types.Type, c pgColumn) error {
	dt := c.dataType
	ok := false
	switch t.ID {
	case types.Boolean:
		ok = dt == "boolean"
	case types.Int:
		ok = dt == "integer" || dt == "bigint"
	case types.BigInt:
		ok = dt == "bigint"
	case types.Double:
		ok = dt == "double precision"
	case types.Decimal:
		if dt == "numeric" {
			// Unconstrained numeric holds anything; otherwise room for the
			// integer digits and at least the scale.
			ok = c.precision == nil || (c.scale != nil && *c.scale >= int32(t.Scale) && *c.precision-*c.scale >= int32(t.Precision-t.Scale))
		}
	case types.String:
		ok = dt == "character varying" || dt == "text" || dt == "character"
	case types.Date:
		ok = dt == "date"
	case types.Timestamp:
		ok = dt == "timestamp without time zone" || dt == "timestamp with time zone"
	case types.Time:
		ok = dt == "time without time zone"
	}
	if !ok {
		return fmt.Errorf("has PostgreSQL type %s, which does not hold %s", dt, t)
	}
	return nil
}

// checkSchema compares the streamsql table with the PostgreSQL one:
// every column must exist with a compatible type, and the primary keys
// must be the same columns. Errors name the column. It returns the
// columns' names as PostgreSQL spells them, in the streamsql table's
// order (names match case-insensitively, as unquoted SQL names do).
func checkSchema(ctx context.Context, db *pgxpool.Pool, schema, table string, t *connectors.Table) ([]string, error) {
	cols, pk, err := describe(ctx, db, schema, table)
	if err != nil {
		return nil, err
	}
	idx, err := dbconn.MatchColumns(t, cols, pgColumn.colName, compatible, fmt.Sprintf("the PostgreSQL table '%s'", table))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(idx))
	for i, j := range idx {
		names[i] = cols[j].name
	}
	if want, got, same := dbconn.SameKey(t, pk); !same {
		return nil, fmt.Errorf("the primary key (%s) differs from the PostgreSQL table '%s''s primary key (%s)",
			strings.Join(want, ", "), table, strings.Join(got, ", "))
	}
	return names, nil
}
