package dbconn

import (
	"fmt"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

// MatchColumns maps the columns of t onto a database table's columns
// cols, by name as unquoted SQL names match (case-insensitively; name
// gives a column's name as the database spells it): it returns, for each
// column of t, the index of its match in cols. fits says whether the
// database column holds values of the streamsql type, and if not, why.
// An error names the column: "column 'c' does not exist in " + where,
// or "column 'c' " followed by fits's error.
func MatchColumns[C any](t *connectors.Table, cols []C, name func(C) string, fits func(types.Type, C) error, where string) ([]int, error) {
	byName := map[string]int{}
	for i, c := range cols {
		byName[strings.ToLower(name(c))] = i
	}
	idx := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		j, ok := byName[strings.ToLower(c.Name)]
		if !ok {
			return nil, fmt.Errorf("column '%s' does not exist in %s", c.Name, where)
		}
		if err := fits(c.Type, cols[j]); err != nil {
			return nil, fmt.Errorf("column '%s' %v", c.Name, err)
		}
		idx[i] = j
	}
	return idx, nil
}

// SameKey compares the primary key declared on t with a database
// table's primary key columns pk, as unquoted SQL names match
// (case-insensitively), in any order. It returns both as sorted
// lower-case names, for an error message, and whether they are the
// same columns.
func SameKey(t *connectors.Table, pk []string) (declared, actual []string, same bool) {
	for _, k := range t.PrimaryKey {
		declared = append(declared, strings.ToLower(t.Columns[k].Name))
	}
	for _, k := range pk {
		actual = append(actual, strings.ToLower(k))
	}
	sort.Strings(declared)
	sort.Strings(actual)
	return declared, actual, strings.Join(declared, ",") == strings.Join(actual, ",")
}

// CheckColumnTypes refuses, by column and type, the columns of t whose
// type the database connector of system ("MySQL", "PostgreSQL") does
// not map: the INTERVAL types, which Flink's JDBC dialects do not
// support either. It runs when the table is used, before any connection.
func CheckColumnTypes(t *connectors.Table, system string) error {
	for _, c := range t.Columns {
		if c.Type.ID == types.Interval || c.Type.ID == types.IntervalYM {
			return fmt.Errorf("column '%s': type %s is not supported by the %s connector (Flink's JDBC dialects map no INTERVAL type); store a BIGINT of milliseconds or an INT of months instead", c.Name, c.Type, system)
		}
	}
	return nil
}

// Rows is what ScanAll needs of a result set: database/sql's *sql.Rows
// and pgx's Rows both are one.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// ScanAll reads every row of rows into a T, fields naming where each
// column of the row goes. The caller still owns rows and closes it.
func ScanAll[T any](rows Rows, fields func(*T) []any) ([]T, error) {
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(fields(&v)...); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Names is ScanAll's fields for a one-column result of names, as the
// primary-key queries of describe return.
func Names(n *string) []any { return []any{n} }
