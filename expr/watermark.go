package expr

import (
	"math"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// CURRENT_WATERMARK(ts): the current watermark of the operator that
// evaluates the expression, as a TIMESTAMP of ts's precision, or NULL
// before the first watermark (Flink's function). The argument must be a
// TIMESTAMP (the time attribute whose watermark is meant); its value is
// not used.
//
// The watermark is per operator subtask, so a bound expression reads it
// from a cell that each subtask provides: WithWatermarkCell copies the
// expression for one subtask, and the subtask's operator stores each
// watermark into the cell before evaluating rows that follow it. Without
// a cell the function is NULL.

// FuncCurrentWatermark is the function's name.
const FuncCurrentWatermark = "current_watermark"

func init() { registry[FuncCurrentWatermark] = funcDef{1, 1, buildCurrentWatermark} }

type currentWatermark struct {
	arg  Expr
	typ  types.Type
	cell *int64 // math.MinInt64 until the first watermark
}

func buildCurrentWatermark(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	arg, err := b.bind(x.Args[0])
	if err != nil {
		return nil, err
	}
	if !arg.Type().IsTimestamp() {
		return nil, b.errf(x, "CURRENT_WATERMARK expects a TIMESTAMP or TIMESTAMP_LTZ time attribute, not %s", arg.Type())
	}
	return &currentWatermark{arg: arg, typ: types.Type{ID: arg.Type().ID, Precision: arg.Type().Precision}}, nil
}

func (c *currentWatermark) Type() types.Type { return c.typ }
func (c *currentWatermark) String() string   { return "CURRENT_WATERMARK(" + c.arg.String() + ")" }
func (c *currentWatermark) Eval(types.Row) (types.Value, error) {
	if c.cell == nil || *c.cell == math.MinInt64 {
		return types.NullValue, nil
	}
	return types.NewTimestamp(*c.cell), nil
}
func (c *currentWatermark) children() []Expr { return []Expr{c.arg} }
func (c *currentWatermark) withChildren(k []Expr) Expr {
	n := *c
	n.arg = k[0]
	return &n
}

// The value changes as the watermark advances.
func (c *currentWatermark) nondeterministic() bool { return true }

// UsesCurrentWatermark reports whether e calls CURRENT_WATERMARK.
func UsesCurrentWatermark(e Expr) bool {
	found := false
	if e != nil {
		Walk(e, func(x Expr) bool {
			if _, ok := x.(*currentWatermark); ok {
				found = true
			}
			return !found
		})
	}
	return found
}

// WithWatermarkCell returns a copy of e whose CURRENT_WATERMARK calls
// read *cell; e itself is not changed.
func WithWatermarkCell(e Expr, cell *int64) Expr {
	return transform(e, func(x Expr) (Expr, bool) {
		w, ok := x.(*currentWatermark)
		if !ok {
			return nil, false
		}
		c := *w
		c.arg = WithWatermarkCell(w.arg, cell)
		c.cell = cell
		return &c, true
	})
}
