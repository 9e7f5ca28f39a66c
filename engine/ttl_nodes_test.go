package engine

import (
	"context"
	"io"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/parser"
)

// table.exec.state.ttl applies where Flink applies it — regular
// aggregations, joins, ranks and deduplication, ChangelogNormalize — and
// not to operators that clean their state by time or to state that must
// never vanish (sink transactions, watermarks).
func TestStateTTLOnlyWhereFlinkAppliesIt(t *testing.T) {
	s := NewSession(io.Discard)
	stmts, err := parser.Parse(`
CREATE TABLE bids (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'values');
CREATE TABLE out_t (k BIGINT, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '` + t.TempDir() + `', 'format' = 'debezium-json');
INSERT INTO out_t
SELECT a.k, COUNT(*) FROM
  (SELECT k, window_start FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end) a
  JOIN (SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM bids) WHERE rn = 1) b ON a.k = b.k
GROUP BY a.k`)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stmts[:2] {
		if _, err := s.Execute(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	plan, err := s.planner.PlanInsert(stmts[2], stmts[2].Node.(*ast.InsertStmt))
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.planner.BuildGraph("ttl", plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"WindowAggregate": false, "Join": true, "Deduplicate": true, "GroupAggregate": true,
		"WatermarkAssigner": false, "Sink(out_t)": false}
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if w, ok := want[n.Name]; ok {
			seen[n.Name] = true
			if n.StateTTL != w {
				t.Errorf("%s: StateTTL %v, want %v", n.Name, n.StateTTL, w)
			}
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("the plan has no %s node; the test does not cover it", name)
		}
	}
}
