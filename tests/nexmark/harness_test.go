// Package nexmark_test runs the Nexmark queries of examples/nexmark on a
// small generated input and compares each result with an independent,
// straightforward Go computation over the same events (expected_test.go).
//
// The engine runs the query file as written, with two substitutions: the
// tables read 10,000 events spread over 50 s of event time across a
// midnight (so windows, sessions and days have something to do), and the
// blackhole (or file) sink becomes a values sink, whose materialized content —
// every retraction applied — is the result compared, as a multiset of
// rows.
package nexmark_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/nexmark"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	nexmarkq "github.com/streamsql/streamsql/examples/nexmark"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

const (
	numEvents  = 10000
	eventRate  = 200 // events per second of event time: 10,000 events span 50 s
	firstEvent = "2024-01-01 23:59:40"
	// testSeed is a seed whose 10,000 events have no ties that would
	// make a Top-N's expected result ambiguous (the expected-result code
	// checks this and fails loudly otherwise).
	testSeed = 1
)

var exampleDir = filepath.Join("..", "..", "examples", "nexmark")

// testConfig is the generator configuration the substituted DDL asks for.
func testConfig(t *testing.T) nexmark.Config {
	base, err := time.Parse(time.DateTime, firstEvent)
	if err != nil {
		t.Fatal(err)
	}
	return nexmark.Config{Seed: testSeed, BaseTime: base.UnixMilli(), Rate: eventRate}
}

// events generates the input every query reads.
func events(t *testing.T) []nexmark.Event { return eventsN(t, numEvents) }

// eventsN generates the first n events of the test configuration.
func eventsN(t *testing.T, n int) []nexmark.Event {
	g := nexmark.NewGenerator(testConfig(t))
	var a nexmark.Arena
	evs := make([]nexmark.Event, n)
	for i := range evs {
		g.Event(int64(i), &evs[i], &a)
	}
	return evs
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(exampleDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// substitute rewrites the example DDL and query for the test input.
func substitute(t *testing.T, query string) string {
	t.Helper()
	must := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("the example text no longer contains %q", old)
		}
		return strings.ReplaceAll(s, old, new)
	}
	ddl, err := nexmarkq.Configure(numEvents, strconv.Itoa(eventRate),
		fmt.Sprintf("'first-event.time' = '%s'", firstEvent), fmt.Sprintf("'seed' = '%d'", testSeed))
	if err != nil {
		t.Fatal(err)
	}
	// q10 logs to partitioned CSV files (a values sink takes no
	// PARTITIONED BY); every other query writes to a blackhole.
	const fileSink = "'connector' = 'filesystem',\n  'path' = 'nexmark-q10',\n  'format' = 'csv'"
	if strings.Contains(query, fileSink) {
		query = must(query, fileSink, "'connector' = 'values'")
		query = must(query, ") PARTITIONED BY (dt, hm) WITH (", ") WITH (")
	} else {
		query = must(query, "'connector' = 'blackhole'", "'connector' = 'values'")
	}
	return ddl + "\n" + query
}

// runQuery runs examples/nexmark/<q>.sql and returns the sink table's
// final rows, each rendered as its values joined by '|'.
func runQuery(t *testing.T, q string) []string { return runQueryPar(t, q, 1) }

// runQueryPar is runQuery at parallelism.default = par: the sources then
// split the event numbers among par subtasks.
func runQueryPar(t *testing.T, q string, par int) []string { return runQueryWith(t, q, par) }

// runQueryWith is runQueryPar with session options, each "key=value".
func runQueryWith(t *testing.T, q string, par int, sets ...string) []string {
	t.Helper()
	sql := substitute(t, readExample(t, q+".sql"))
	if strings.Contains(sql, nexmarkq.SideInputPath) { // q13's side-input file
		p, err := nexmarkq.WriteSideInput(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		sql = nexmarkq.WithSideInput(sql, p)
	}
	s := engine.NewSession(io.Discard)
	if err := s.Conf.Set("parallelism.default", strconv.Itoa(par)); err != nil {
		t.Fatal(err)
	}
	for _, kv := range sets {
		k, v, _ := strings.Cut(kv, "=")
		if err := s.Conf.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exec := func(sql string) []*engine.Result {
		stmts, err := parser.Parse(sql)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var rs []*engine.Result
		for _, st := range stmts {
			r, err := s.Execute(ctx, st)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if r.Job != nil {
				if err := r.Job.Wait(); err != nil {
					t.Fatalf("%s: job: %v", q, err)
				}
			}
			rs = append(rs, r)
		}
		return rs
	}
	exec(sql)
	r := exec("SELECT * FROM nexmark_" + q)[0]
	if r.Query == nil {
		t.Fatalf("%s: SELECT returned no query", q)
	}
	ts := make([]types.Type, len(r.Query.Columns))
	for i, c := range r.Query.Columns {
		ts[i] = c.Type
	}
	var rows []string
	err := r.Query.Run(ctx, func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			if ch.Kind != dyntable.Insert {
				return fmt.Errorf("replaying a values table gave %s", ch.Kind)
			}
			rows = append(rows, types.FormatRow(ch.Row, ts, "|"))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: reading the result: %v", q, err)
	}
	return rows
}

// compare checks got and want as multisets and reports a few
// differences of each direction.
func compare(t *testing.T, q string, got, want []string) {
	t.Helper()
	count := map[string]int{}
	for _, r := range got {
		count[r]++
	}
	for _, r := range want {
		count[r]--
	}
	var extra, missing []string
	for r, c := range count {
		for ; c > 0; c-- {
			extra = append(extra, r)
		}
		for ; c < 0; c++ {
			missing = append(missing, r)
		}
	}
	if len(extra) == 0 && len(missing) == 0 {
		if len(want) == 0 {
			t.Fatalf("%s: the expected result is empty; the test input exercises nothing", q)
		}
		t.Logf("%s: %d rows match", q, len(want))
		return
	}
	slices.Sort(extra)
	slices.Sort(missing)
	t.Errorf("%s: %d rows from the engine, %d expected; %d unexpected, %d missing", q, len(got), len(want), len(extra), len(missing))
	for i := 0; i < len(extra) && i < 5; i++ {
		t.Errorf("  unexpected: %s", extra[i])
	}
	for i := 0; i < len(missing) && i < 5; i++ {
		t.Errorf("  missing:    %s", missing[i])
	}
}

// ---------------------------------------------------------------------------
// Rendering expected rows the way types.Format renders the engine's.

// ts is a TIMESTAMP(3) in ms since the epoch.
type ts int64

// dec3 is a DECIMAL(p, 3) in thousandths.
type dec3 int64

func row(vals ...any) string {
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteByte('|')
		}
		switch x := v.(type) {
		case nil:
			b.WriteString("NULL")
		case int64:
			b.WriteString(strconv.FormatInt(x, 10))
		case int:
			b.WriteString(strconv.Itoa(x))
		case string:
			b.WriteString(x)
		case ts:
			b.WriteString(time.UnixMilli(int64(x)).UTC().Format("2006-01-02 15:04:05.000"))
		case dec3:
			sign := ""
			if x < 0 {
				sign, x = "-", -x
			}
			fmt.Fprintf(&b, "%s%d.%03d", sign, x/1000, x%1000)
		default:
			panic(fmt.Sprintf("row: unsupported %T", v))
		}
	}
	return b.String()
}
