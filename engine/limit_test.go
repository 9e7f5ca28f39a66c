package engine

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dyntable"
)

// LIMIT n over an unbounded insert-only input ends once n rows have
// arrived, as in Flink; over an updating input the query goes on.
func TestLimitEndsAnUnboundedInsertOnlyQuery(t *testing.T) {
	s := NewSession(io.Discard)
	jobsExec(t, s, "CREATE TABLE g (k INT, v INT) WITH ('connector' = 'datagen', 'rows-per-second' = '200');")
	for _, c := range []struct {
		sql  string
		rows int
	}{
		{"SELECT * FROM g LIMIT 3", 3},
		{"SELECT k FROM g WHERE v > 0 LIMIT 2 OFFSET 4", 2},
		{"SELECT k FROM g LIMIT 0", 0},
	} {
		q := jobsExec(t, s, c.sql+";").Query
		// The deadline only bounds a failing run; the query must end by itself.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		n := 0
		err := q.Run(ctx, func(ch *dyntable.Chunk) error {
			for _, x := range ch.Changes {
				if x.Kind != dyntable.Insert {
					t.Errorf("%s: %s", c.sql, x.Kind)
				}
				n++
			}
			return nil
		})
		cancel()
		if err != nil || n != c.rows {
			t.Fatalf("%s: %d rows, %v", c.sql, n, err)
		}
	}

	// The first 3 rows of an updating result may still change.
	for _, sql := range []string{"SELECT k % 2 AS m, COUNT(*) AS c FROM g GROUP BY k % 2 LIMIT 3", "SELECT k FROM g ORDER BY k LIMIT 3"} {
		q := jobsExec(t, s, sql+";").Query
		if n, ok := q.plan.RowLimit(); ok {
			t.Fatalf("%s: RowLimit %d", sql, n)
		}
	}
	q := jobsExec(t, s, "SELECT k % 2 AS m, COUNT(*) AS c FROM g GROUP BY k % 2 LIMIT 3;").Query
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes := 0
	err := q.Run(ctx, func(ch *dyntable.Chunk) error {
		if changes += len(ch.Changes); changes >= 20 {
			cancel() // well past three rows, and still running
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || changes < 20 {
		t.Fatalf("the updating query ended by itself after %d changes: %v", changes, err)
	}
}
