package datagen_test

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// query runs DDL then a SELECT and returns its materialized rows.
func query(t *testing.T, ddl, sel string, parallelism int) ([]string, error) {
	t.Helper()
	s := engine.NewSession(io.Discard)
	if err := s.Conf.Set("parallelism.default", fmt.Sprint(parallelism)); err != nil {
		t.Fatal(err)
	}
	stmts, err := parser.Parse(ddl + ";" + sel)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Execute(context.Background(), stmts[0]); err != nil {
		return nil, err
	}
	r, err := s.Execute(context.Background(), stmts[1])
	if err != nil {
		return nil, err
	}
	tbl := dyntable.NewTable(nil)
	err = r.Query.Run(context.Background(), func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			if err := tbl.Apply(ch); err != nil {
				return err
			}
		}
		return nil
	})
	var out []string
	for _, row := range tbl.Rows() {
		out = append(out, types.FormatRow(row, nil, " "))
	}
	sort.Strings(out)
	return out, err
}

func TestSequenceIsSplitAcrossSubtasksWithoutGapsOrRepeats(t *testing.T) {
	for _, p := range []int{1, 3} {
		rows, err := query(t, `CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '0',
			'fields.id.kind' = 'sequence', 'fields.id.start' = '5', 'fields.id.end' = '2504')`,
			"SELECT COUNT(*), COUNT(DISTINCT id), MIN(id), MAX(id), SUM(id) FROM g", p)
		if err != nil {
			t.Fatal(err)
		}
		// 5..2504 is 2500 distinct values summing to (5 + 2504) * 2500 / 2.
		if len(rows) != 1 || rows[0] != "2500 2500 5 2504 3136250" {
			t.Fatalf("p=%d: %v", p, rows)
		}
	}
}

func TestNumberOfRowsAndRandomBounds(t *testing.T) {
	ddl := `CREATE TABLE g (k INT, s STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '0', 'number-of-rows' = '777',
		'fields.k.min' = '3', 'fields.k.max' = '5', 'fields.s.length' = '4')`
	rows, err := query(t, ddl, "SELECT COUNT(*) FROM g WHERE k BETWEEN 3 AND 5 AND CHAR_LENGTH(s) = 4", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0] != "777" {
		t.Fatalf("rows = %v, want [777]", rows)
	}
	rows, err = query(t, ddl, "SELECT DISTINCT k FROM g", 1)
	if err != nil || strings.Join(rows, ",") != "3,4,5" {
		t.Fatalf("distinct k = %v %v", rows, err)
	}
}

func TestRowsPerSecondThrottles(t *testing.T) {
	start := time.Now()
	_, err := query(t, `CREATE TABLE g (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'number-of-rows' = '1000')`,
		"SELECT COUNT(*) FROM g", 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Fatalf("1000 rows at 2000 rows/s took %v; the rate is not enforced", d)
	}
}

func TestBadOptions(t *testing.T) {
	for _, c := range []struct{ opts, want string }{
		{"'fields.k.kind' = 'sequence'", "needs options 'fields.k.start' and 'fields.k.end'"},
		{"'fields.k.kind' = 'wild'", "must be 'random' or 'sequence'"},
		{"'fields.nope.min' = '1'", "names no column"},
		{"'number-of-rows' = '-1'", "non-negative integer"},
		{"'fields.k.min' = '9', 'fields.k.max' = '1'", "max 1 is below min 9"},
	} {
		_, err := query(t, "CREATE TABLE g (k INT) WITH ('connector' = 'datagen', "+c.opts+")", "SELECT k FROM g", 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.opts, err, c.want)
		}
	}
}
