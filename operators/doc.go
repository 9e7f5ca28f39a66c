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
// Operators know nothing of SQL text: the planner hands them column
// indexes and compiled scalar functions. That keeps this package free of
// the parser and the expression binder, and makes each operator testable
// by feeding it hand-built chunks.
package operators

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Scalar is a compiled scalar expression: it evaluates over one input row.
type Scalar func(row types.Row) (types.Value, error)

// Predicate is a compiled condition; only TRUE passes (NULL does not).
type Predicate func(row types.Row) (bool, error)

// emitter accumulates output changes and emits them as one chunk.
type emitter struct{ c *dyntable.Chunk }

func (e *emitter) add(k dyntable.RowKind, r types.Row) {
	if e.c == nil {
		e.c = &dyntable.Chunk{}
	}
	e.c.Changes = append(e.c.Changes, dyntable.Change{Kind: k, Row: r})
}

func (e *emitter) flush(out dataflow.Collector) {
	if e.c != nil && len(e.c.Changes) > 0 {
		out.Emit(e.c)
	}
	e.c = nil
}
