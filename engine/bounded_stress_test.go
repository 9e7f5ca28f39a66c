package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/parser"
)

// lockedBuffer collects a session's log lines from the job goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestBoundedQueriesEndUnderCheckpoints runs many short bounded queries
// with a checkpoint every millisecond, so that barriers, declined and
// aborted checkpoints and the final checkpoint race with the end of the
// input. Every query must end, with its rows, well within its deadline:
// a job ends when its sources end, whatever checkpoints are in flight.
// The FROM-less queries' constant source saves its position, so they
// decline no checkpoint and log no warning.
func TestBoundedQueriesEndUnderCheckpoints(t *testing.T) {
	rounds, burst := 15, 400
	if testing.Short() {
		rounds, burst = 5, 100
	}
	type q struct {
		sql  string
		rows int // result rows expected once materialized
		// quiet queries must log no warning at all.
		quiet bool
	}
	queries := []q{
		{"SELECT INITCAP('hello WORLD'), REPEAT('ab', 3)", 1, true},
		{"SELECT UPPER('x')", 1, true},
		{"SELECT 1", 1, true},
		{"SELECT k, v FROM t", 3, true},
		{"SELECT k, SUM(v) FROM t GROUP BY k", 2, true},
		{"SELECT k FROM seq", 20, true},
		{"SELECT k % 3, COUNT(*) FROM seq GROUP BY k % 3", 3, true},
		{"SELECT a.k, b.v FROM t AS a JOIN t AS b ON a.k = b.k", 5, true},
	}
	for _, par := range []int{1, 4} {
		t.Run(fmt.Sprintf("parallelism=%d", par), func(t *testing.T) {
			var out bytes.Buffer
			var logs lockedBuffer
			dir := t.TempDir()
			s := NewSession(&out)
			s.SetLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
			setup := fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '1 ms';
SET 'state.checkpoints.dir' = '%s';
SET 'parallelism.default' = '%d';
CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'values');
INSERT INTO t VALUES ('a', 1), ('a', 2), ('b', 3);
CREATE TABLE seq (k BIGINT) WITH ('connector' = 'datagen', 'fields.k.kind' = 'sequence',
  'fields.k.start' = '1', 'fields.k.end' = '20');
`, dir, par)
			stmts, err := parser.Parse(setup)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range stmts {
				if _, err := s.Execute(context.Background(), st); err != nil {
					t.Fatalf("%s: %v", st.Text, err)
				}
			}
			for r := 0; r < rounds; r++ {
				for _, qq := range queries {
					before := len(logs.String())
					got, err := runBounded(s, qq.sql, 10*time.Second)
					if err != nil {
						t.Fatalf("round %d: %s: %v\nlog:\n%s", r, qq.sql, err, logs.String())
					}
					if got != qq.rows {
						t.Fatalf("round %d: %s: %d rows, want %d", r, qq.sql, got, qq.rows)
					}
					if qq.quiet {
						if l := logs.String()[before:]; strings.Contains(l, "level=WARN") {
							t.Fatalf("round %d: %s logged warnings:\n%s", r, qq.sql, l)
						}
					}
				}
			}
			// Sessions side by side, each running FROM-less queries as fast
			// as it can: the goroutines of many jobs interleave, which is
			// what exposed the final checkpoint's race with a declining
			// source.
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := NewSession(io.Discard)
					s.SetLogger(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError})))
					for _, kv := range [][2]string{{"execution.checkpointing.interval", "1 ms"},
						{"state.checkpoints.dir", dir}, {"parallelism.default", fmt.Sprint(par)}} {
						if err := s.Conf.Set(kv[0], kv[1]); err != nil {
							errs <- err
							return
						}
					}
					for i := 0; i < burst; i++ {
						if n, err := runBounded(s, "SELECT 1", 10*time.Second); err != nil || n != 1 {
							errs <- fmt.Errorf("query %d of a burst: %d rows, %v", i, n, err)
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

// runBounded runs a SELECT to its end and returns the number of rows of
// its materialized result; it fails if the query has not ended by the
// deadline.
func runBounded(s *Session, sql string, deadline time.Duration) (int, error) {
	stmts, err := parser.Parse(sql)
	if err != nil {
		return 0, err
	}
	r, err := s.Execute(context.Background(), stmts[0])
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	rows := 0
	err = r.Query.Run(ctx, func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			if ch.Kind.IsAccumulate() {
				rows++
			} else {
				rows--
			}
		}
		return nil
	})
	if ctx.Err() != nil {
		return rows, fmt.Errorf("the query did not end within %s", deadline)
	}
	return rows, err
}
