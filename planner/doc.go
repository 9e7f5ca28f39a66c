// Package planner turns parsed statements into stream plans and stream
// plans into dataflow graphs, in three steps, go-mysql-server style:
//
//  1. build (build*.go): bind names and types of a TiDB AST against the
//     catalog and construct plan nodes — one small buildX per construct;
//  2. rewrite (rewrite.go): push filters into join inputs and projections
//     into scans;
//  3. translate (graph.go): map each plan node to a dataflow node with its
//     operator, parallelism and partitioning.
//
// Every plan node infers its changelog mode (which of +I, -U, +U, -D it
// emits) and its upsert key from its inputs, so the planner can reject a
// query that a sink cannot take, and EXPLAIN shows both:
//
//	Sink(table=[out], fields=[auction, c], encoding=[upsert]) changelogMode=[I,UB,UA]
//	+- GroupAggregate(groupBy=[auction], select=[auction, COUNT(*) AS c]) changelogMode=[I,UB,UA] upsertKey=[auction]
//	   +- Exchange(distribution=[hash[auction]])
//	      +- TableSourceScan(table=[bids], fields=[auction]) changelogMode=[I]
//
// User errors name the construct and its position in the user's text
// (through parser.Statement.ErrorAtNode); an unsupported construct is an
// error that names it, never a silently different query.
package planner
