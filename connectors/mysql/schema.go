package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/types"
)

// mysqlColumn is one column as information_schema describes it.
type mysqlColumn struct {
	name       string
	dataType   string // lower case: int, bigint, varchar, decimal, ...
	columnType string // full: int(11) unsigned, decimal(10,2), tinyint(1)
	precision  sql.NullInt64
	scale      sql.NullInt64
}

func (c mysqlColumn) colName() string { return c.name }

// describe reads the MySQL table's columns (in order) and primary key.
// A missing table is an error naming it.
func describe(ctx context.Context, db *sql.DB, schema, table string) ([]mysqlColumn, []string, error) {
	where := "TABLE_SCHEMA = DATABASE()"
	args := []any{table}
	if schema != "" {
		where = "TABLE_SCHEMA = ?"
		args = []any{schema, table}
	}
	rows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME, LOWER(DATA_TYPE), LOWER(COLUMN_TYPE), NUMERIC_PRECISION, NUMERIC_SCALE
		FROM information_schema.COLUMNS WHERE `+where+` AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, args...)
	if err != nil {
		return nil, nil, err
	}
	// rows is closed before the key query, so that it need not wait for
	// a second connection of the pool.
	cols, err := dbconn.ScanAll(rows, func(c *mysqlColumn) []any {
		return []any{&c.name, &c.dataType, &c.columnType, &c.precision, &c.scale}
	})
	rows.Close()
	if err != nil {
		return nil, nil, err
	}
	if len(cols) == 0 {
		return nil, nil, fmt.Errorf("the MySQL table '%s' does not exist (sink tables are created by the user)", table)
	}
	krows, err := db.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
		WHERE `+where+` AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION`, args...)
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
// to (and read from) a MySQL column without loss, and if not, why.
func compatible(t types.Type, c mysqlColumn) error {
	dt := c.dataType
	unsigned := strings.Contains(c.columnType, "unsigned")
	ok := false
	switch t.ID {
	case types.Boolean:
		ok = dt == "tinyint" || dt == "boolean" || dt == "bool" || (dt == "bit" && c.precision.Int64 == 1)
	case types.Int:
		ok = (dt == "int" || dt == "integer" || dt == "bigint") && !unsigned
	case types.BigInt:
		ok = dt == "bigint" && !unsigned
	case types.Double:
		ok = dt == "double" || dt == "real"
	case types.Decimal:
		if dt == "decimal" || dt == "numeric" {
			// Room for the integer digits and at least the scale.
			ok = c.scale.Int64 >= int64(t.Scale) && c.precision.Int64-c.scale.Int64 >= int64(t.Precision-t.Scale)
		}
	case types.String:
		switch dt {
		case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
			ok = true
		}
	case types.Date:
		ok = dt == "date" || dt == "datetime"
	case types.Timestamp:
		ok = dt == "datetime" || dt == "timestamp"
	case types.Time:
		ok = dt == "time"
	}
	if !ok {
		return fmt.Errorf("has MySQL type %s, which does not hold %s", c.columnType, t)
	}
	return nil
}

// checkSchema compares the streamsql table with the MySQL one: every
// column must exist with a compatible type, and the primary keys must be
// the same columns. Errors name the column.
func checkSchema(ctx context.Context, db *sql.DB, cfg *config, t *connectors.Table) error {
	cols, pk, err := describe(ctx, db, cfg.schema, cfg.table)
	if err != nil {
		return cfg.redact(err)
	}
	if _, err := dbconn.MatchColumns(t, cols, mysqlColumn.colName, compatible, fmt.Sprintf("the MySQL table '%s'", cfg.table)); err != nil {
		return err
	}
	if want, got, same := dbconn.SameKey(t, pk); !same {
		return fmt.Errorf("the primary key (%s) differs from the MySQL table '%s''s primary key (%s)",
			strings.Join(want, ", "), cfg.table, strings.Join(got, ", "))
	}
	return nil
}
