package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// Expr is a bound, typed scalar expression.
type Expr interface {
	Type() types.Type
	// Eval evaluates over one input row. Errors are runtime errors that
	// must fail the job (see the package doc's overflow rule); they name
	// the expression (they are *EvalError).
	Eval(row types.Row) (types.Value, error)
	// String renders the expression SQL-like for EXPLAIN, column
	// references by name: "(price * 2)", "UPPER(name)".
	String() string
}

// Column is one input column visible to the binder.
type Column struct {
	Name  string
	Table string // qualifier or alias; may be empty
	Type  types.Type
}

// Scope is what Bind resolves names against.
type Scope struct {
	Columns []Column
	// Replace, if set, is consulted first for every AST expression node;
	// if it returns ok, the node becomes a reference to input column idx
	// (used by the planner for aggregate results and group-by expressions).
	Replace func(n ast.ExprNode) (idx int, ok bool)
	// Zone is the session time zone (table.local-time-zone) in which
	// TIMESTAMP_LTZ values are cast, formatted and taken apart; nil is UTC.
	// The expressions bound keep it: a job runs in the zone it was
	// planned in.
	Zone *time.Location
}

// ErrorFunc makes a user-facing error positioned at an AST node.
type ErrorFunc func(n ast.Node, format string, args ...any) error

// EvalError is a run-time evaluation error. It names the expression that
// failed.
type EvalError struct {
	Expr string // the failing expression, rendered by String
	Msg  string // what went wrong, e.g. "INT overflow (2147483647 + 1)"
}

func (e *EvalError) Error() string { return e.Msg + " in " + e.Expr }

func evalErr(e Expr, format string, args ...any) error {
	return &EvalError{Expr: e.String(), Msg: fmt.Sprintf(format, args...)}
}

// wrapErr turns a plain error from a function body into an EvalError
// naming e. EvalErrors from sub-expressions pass through unchanged.
func wrapErr(e Expr, err error) error {
	if _, ok := err.(*EvalError); ok {
		return err
	}
	return &EvalError{Expr: e.String(), Msg: err.Error()}
}

// node is implemented by every Expr of this package.
type node interface {
	Expr
	children() []Expr
	// withChildren returns a copy with the children replaced; it re-runs
	// any specialization that depended on them.
	withChildren(kids []Expr) Expr
}

// nondeterministic is implemented by nodes whose value may change between
// two evaluations over the same row.
type nondeterministic interface{ nondeterministic() bool }

// ---------------------------------------------------------------------------
// Column references

type colRef struct {
	idx  int
	name string
	typ  types.Type
}

// NewColumnRef returns a reference to input column idx.
func NewColumnRef(idx int, name string, t types.Type) Expr {
	return &colRef{idx: idx, name: name, typ: t}
}

func (c *colRef) Type() types.Type { return c.typ }
func (c *colRef) Eval(row types.Row) (types.Value, error) {
	return row[c.idx], nil
}
func (c *colRef) String() string {
	if c.name == "" {
		return fmt.Sprintf("$%d", c.idx)
	}
	return c.name
}
func (c *colRef) children() []Expr              { return nil }
func (c *colRef) withChildren(kids []Expr) Expr { return c }

// ColumnIndex reports the input column of a plain column reference.
func ColumnIndex(e Expr) (int, bool) {
	if c, ok := e.(*colRef); ok {
		return c.idx, true
	}
	return 0, false
}

// ---------------------------------------------------------------------------
// Literals

type literal struct {
	v   types.Value
	typ types.Type
}

// NewLiteral returns a constant. A non-NULL literal's type is NOT NULL.
func NewLiteral(v types.Value, t types.Type) Expr {
	if !v.IsNull() {
		t.NotNull = true
	} else {
		t.NotNull = false
	}
	return &literal{v: v, typ: t}
}

func (l *literal) Type() types.Type                        { return l.typ }
func (l *literal) Eval(row types.Row) (types.Value, error) { return l.v, nil }
func (l *literal) children() []Expr                        { return nil }
func (l *literal) withChildren(kids []Expr) Expr           { return l }
func (l *literal) String() string                          { return renderValue(l.v, l.typ) }

func renderValue(v types.Value, t types.Type) string {
	switch v.Kind() {
	case types.KindNull:
		return "NULL"
	case types.KindBool:
		if v.Bool() {
			return "TRUE"
		}
		return "FALSE"
	case types.KindString:
		return "'" + strings.ReplaceAll(v.Str(), "'", "''") + "'"
	case types.KindDate:
		return "DATE '" + types.Format(v, t) + "'"
	case types.KindTimestamp:
		return "TIMESTAMP '" + types.Format(v, t) + "'"
	case types.KindInterval:
		return "INTERVAL '" + v.Interval().String() + "'"
	case types.KindTime:
		return "TIME '" + types.Format(v, t) + "'"
	case types.KindIntervalYM:
		return "INTERVAL '" + strconv.FormatInt(v.Months(), 10) + "' MONTH"
	case types.KindFloat:
		s := types.Format(v, t)
		if !strings.ContainsAny(s, ".eEnN") {
			s += "E0"
		}
		return s
	}
	return types.Format(v, t)
}

// IsLiteral reports whether e is a constant, and its value.
func IsLiteral(e Expr) (types.Value, bool) {
	if l, ok := e.(*literal); ok {
		return l.v, true
	}
	return types.NullValue, false
}

// ---------------------------------------------------------------------------
// Tree utilities

// Walk visits e and its sub-expressions in pre-order. If fn returns false
// the children of that expression are skipped.
func Walk(e Expr, fn func(Expr) bool) {
	if !fn(e) {
		return
	}
	if n, ok := e.(node); ok {
		for _, k := range n.children() {
			Walk(k, fn)
		}
	}
}

// RemapColumns returns a copy of e with every column index rewritten
// through m (m[old] = new). Indexes missing from m are kept.
func RemapColumns(e Expr, m map[int]int) Expr {
	return transform(e, func(x Expr) (Expr, bool) {
		c, ok := x.(*colRef)
		if !ok {
			return nil, false
		}
		if n, ok := m[c.idx]; ok {
			return &colRef{idx: n, name: c.name, typ: c.typ}, true
		}
		return c, true
	})
}

// transform returns e rebuilt bottom-up: where f returns (y, true) the
// node becomes y (and its children are not visited); elsewhere the node
// is rebuilt over its transformed children, or kept when it has none.
// e itself is not changed.
func transform(e Expr, f func(Expr) (Expr, bool)) Expr {
	if e == nil {
		return nil
	}
	if y, ok := f(e); ok {
		return y
	}
	n, ok := e.(node)
	if !ok {
		return e
	}
	kids := n.children()
	if len(kids) == 0 {
		return e
	}
	nk := make([]Expr, len(kids))
	for i, k := range kids {
		nk[i] = transform(k, f)
	}
	return n.withChildren(nk)
}

// IsDeterministic reports whether e always yields the same value for the
// same input row (false if it calls NOW(), RAND(), ...).
func IsDeterministic(e Expr) bool {
	det := true
	Walk(e, func(x Expr) bool {
		if nd, ok := x.(nondeterministic); ok && nd.nondeterministic() {
			det = false
		}
		return det
	})
	return det
}

// EvalBool evaluates a predicate; NULL and false are both "not true".
func EvalBool(e Expr, row types.Row) (bool, error) {
	if te, ok := e.(truthExpr); ok {
		t, err := te.evalTruth(row)
		return t == 1, err
	}
	v, err := e.Eval(row)
	if err != nil {
		return false, err
	}
	return v.Kind() == types.KindBool && v.Raw() != 0, nil
}

// isConst reports whether every child of e is a literal (and e is a
// deterministic node of this package), so e can be folded.
func isConst(e Expr) bool {
	n, ok := e.(node)
	if !ok {
		return false
	}
	if _, ok := e.(*literal); ok {
		return false
	}
	if _, ok := e.(*colRef); ok {
		return false
	}
	if nd, ok := e.(nondeterministic); ok && nd.nondeterministic() {
		return false
	}
	for _, k := range n.children() {
		if _, ok := k.(*literal); !ok {
			return false
		}
	}
	return true
}

// fold evaluates a constant expression at bind time. If evaluation fails
// the expression is kept, so that the error happens at run time.
func fold(e Expr) Expr {
	if !isConst(e) {
		return e
	}
	v, err := e.Eval(nil)
	if err != nil {
		return e
	}
	return NewLiteral(v, e.Type())
}

func typeName(t types.Type) string { return t.Nullable().String() }
