// Package planner turns parsed statements into stream plans and stream
// plans into dataflow graphs:
//
//	TiDB AST ──build──▶ plan tree ──optimize──▶ Plan ──translate──▶ dataflow.Graph
//	(build*.go)                     (rewrite.go)        (graph.go, Node.translate)
//
// The three steps:
//
//  1. build binds the names and types of the AST against the catalog and
//     makes plan nodes, one small buildX per construct. The rewrites that
//     need the user's names and scopes happen here: a WHERE or ON
//     conjunct on one side of a join goes below it (build.go's
//     pushIntoJoin, build_from.go's buildJoin); a Calc over a filter-only
//     Calc merges with it (newCalc); a join over rowtime bounds, AS OF or
//     windows becomes an interval, temporal, lookup or window join
//     (build_timejoin.go, build_lookupjoin.go); a window function is fused
//     into the window aggregation over it (build_window_agg.go); a
//     filter on a rank number closes the rank's range (rankBound, buildWhere);
//     a WHERE conjunct over both sides of a join without ON becomes its
//     condition (build_commajoin.go); [NOT] IN and [NOT] EXISTS become
//     semi and anti joins (build_subquery.go); GROUPING SETS, ROLLUP
//     and CUBE become an Expand under the aggregation
//     (build_grouping_sets.go); ORDER BY without LIMIT over a time
//     attribute becomes a temporal sort (build_temporalsort.go).
//  2. optimize (rewrite.go) applies, once, the rewrites that need the
//     complete tree: projection push-down into scans, which drops a Calc
//     it leaves doing nothing, and into the inputs of regular joins and
//     of non-window ranks, whose state then keeps only the columns read
//     above them; Calc merging. Then source reuse (reuse.go): a table
//     read in several places, or by several INSERTs of a statement set,
//     is read by one scan of the union of what they read, with its
//     computed columns, ChangelogNormalize and watermark assigner shared
//     where every reader has the same ones; EXPLAIN marks the shared node
//     (reuse_id=[n]). It makes new nodes; nothing changes a node
//     once the Plan is made, so EXPLAIN shows the plan that runs, and
//     the hash of that text, which checkpoints keep, is the same for the
//     same query.
//  3. translate: graph.go walks the plan bottom-up, once per node, and
//     each node makes its own dataflow node with its operator,
//     parallelism and partitioning. The one exception to "a node, a
//     dataflow node" is the watermark push-down hook: a watermark
//     assigner right on a source that generates watermarks itself
//     (connectors.WatermarkPushDown) is handed to it and left out.
//
// Each kind of node has a file, node_*.go, and owns everything about
// itself through the Node interface (node.go): its columns, its
// changelog mode (which of +I, -U, +U, -D it emits) and upsert key,
// both inferred from its inputs, its time attributes, its EXPLAIN line
// and its translation. Keyed nodes name their partition keys once, and
// both the Exchange of EXPLAIN and the hash edges of the graph come
// from them. The planner rejects a query that a sink cannot take, and
// EXPLAIN shows modes and keys:
//
//	Sink(table=[out], fields=[auction, c], encoding=[upsert]) changelogMode=[I,UB,UA] upsertKey=[auction]
//	+- GroupAggregate(groupBy=[auction], select=[auction, COUNT(*)]) changelogMode=[I,UB,UA] upsertKey=[auction]
//	   +- Exchange(distribution=[hash[auction]])
//	      +- TableSourceScan(table=[bids], fields=[auction]) changelogMode=[I]
//
// planner/testdata holds an EXPLAIN case for every kind of node and
// every rewrite.
//
// User errors name the construct and its position in the user's text
// (through parser.Statement.ErrorAtNode); an unsupported construct is an
// error that names it, never a silently different query.
package planner
