// Package operators holds streamsql's stream operators, one file per
// operator. Each implements dataflow.Operator, keeps all per-key data
// behind the state package's keyed-state interfaces, and produces a
// correct changelog (+I, -U, +U, -D) for inputs that may themselves carry
// retractions.
//
// The package also holds the few runtime pieces a plan needs besides
// operators: Collect, which hands a query's result to the client, and
// two sources, ConstSource (constant rows) and ProjectingSource (a
// connector's source narrowed to the columns a scan reads).
//
// What lives where:
//   - calc.go, calc_watermark.go, expand.go, unnest.go, union.go,
//     watermark.go: stateless and per-row operators (WatermarkCalc is a
//     Calc whose expressions read CURRENT_WATERMARK);
//   - groupagg*.go, aggfuncs*.go, aggfunc_lag.go: group aggregation
//     (unbounded, two-phase local/global, mini-batch) and the aggregate
//     functions; aggmerge.go merges aggregate states, and aggregator.go
//     exports that code as Aggregator for the window operators;
//   - over.go: OVER aggregation; dedup.go, rank.go: deduplication and
//     Top-N; temporalsort.go: ORDER BY a time attribute without LIMIT
//     (Flink's temporal sort); normalize.go: ChangelogNormalize; setop.go: INTERSECT and
//     EXCEPT;
//   - join.go, semijoin.go, intervaljoin.go, temporaljoin.go,
//     lookupjoin.go: the joins;
//   - window/: the window operators (window TVFs, window aggregation,
//     SESSION, window Top-N, the window join), a package of their own;
//   - internal/kit/: what this package and window/ share (event-time
//     timers, the join key encoding and rows state, small codecs, the
//     output emitter).
//
// Operators know nothing of SQL text: the planner hands them column
// indexes and compiled scalar functions. That keeps this package free of
// the parser and the expression binder, and makes each operator testable
// by feeding it hand-built chunks.
package operators

import (
	"github.com/streamsql/streamsql/types"
)

// Scalar is a compiled scalar expression: it evaluates over one input row.
type Scalar func(row types.Row) (types.Value, error)

// Predicate is a compiled condition; only TRUE passes (NULL does not).
type Predicate func(row types.Row) (bool, error)
