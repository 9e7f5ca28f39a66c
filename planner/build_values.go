package planner

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// buildValuesQuery plans VALUES (1, 'a'), (2, 'b') used as a query: a
// constant, insert-only relation whose columns are named EXPR$0,
// EXPR$1, ... as in Flink, each of the common type of its values.
func (b *builder) buildValuesQuery(sel *ast.SelectStmt) (rel, error) {
	if len(sel.Lists) == 0 {
		return rel{}, b.errf(sel, "VALUES needs at least one row")
	}
	width := len(sel.Lists[0].Values)
	if width == 0 {
		return rel{}, b.errf(sel, "a VALUES row needs at least one value")
	}
	bound := make([][]expr.Expr, len(sel.Lists))
	colTypes := make([]types.Type, width)
	for r, row := range sel.Lists {
		if len(row.Values) != width {
			return rel{}, b.errf(row, "VALUES rows have %d and %d values; every row needs the same number", width, len(row.Values))
		}
		for i, v := range row.Values {
			e, err := expr.Bind(v, &expr.Scope{Zone: b.p.zone()}, b.stmt.ErrorAtNode)
			if err != nil {
				return rel{}, err
			}
			bound[r] = append(bound[r], e)
			if r == 0 {
				colTypes[i] = e.Type()
				continue
			}
			ct, ok := expr.CommonType(colTypes[i], e.Type())
			if !ok {
				return rel{}, b.errf(v, "VALUES column %d has types %s and %s, which have no common type", i+1, colTypes[i], e.Type())
			}
			colTypes[i] = ct
		}
	}
	rows := make([]types.Row, len(bound))
	for r, row := range bound {
		rows[r] = make(types.Row, width)
		for i, e := range row {
			ce, err := expr.ImplicitCast(e, colTypes[i])
			if err != nil {
				return rel{}, b.errf(sel.Lists[r].Values[i], "%v", err)
			}
			v, err := ce.Eval(nil)
			if err != nil {
				return rel{}, b.errf(sel.Lists[r].Values[i], "%v", err)
			}
			rows[r][i] = v
		}
	}
	cols := make([]expr.Column, width)
	for i, t := range colTypes {
		cols[i] = expr.Column{Name: fmt.Sprintf("EXPR$%d", i), Type: t}
	}
	if err := b.orderLimitUnsupported(sel); err != nil {
		return rel{}, err
	}
	return rel{node: &ValuesNode{nodeBase: nodeBase{cols: cols}, Rows: rows}, scope: cols}, nil
}

func (b *builder) orderLimitUnsupported(sel *ast.SelectStmt) error {
	if sel.OrderBy != nil || sel.Limit != nil {
		return b.errf(sel, "ORDER BY and LIMIT directly on VALUES are not supported; select from the VALUES")
	}
	return nil
}

// columnAlias applies `AS T(a, b)` (parser.ColumnAlias) to a FROM item:
// the table alias and the names of its columns.
func (b *builder) columnAlias(ts *ast.TableSource) (*parser.ColumnAlias, string) {
	alias := ts.AsName.O
	if !parser.IsColumnAliasPlaceholder(alias) {
		return nil, alias
	}
	ca := b.stmt.ColumnAliases[alias]
	if ca == nil {
		return nil, alias
	}
	return ca, ca.Name
}

// renameColumns names the columns of r as a column alias lists them.
func (b *builder) renameColumns(r rel, ca *parser.ColumnAlias) (rel, error) {
	if len(ca.Columns) != len(r.scope) {
		return rel{}, b.stmt.ErrorAt(ca.Line, ca.Col, "%s names %d columns but its table has %d", ca.Name, len(ca.Columns), len(r.scope))
	}
	scope := make([]expr.Column, len(r.scope))
	proj := make([]expr.Expr, len(r.scope))
	for i, c := range r.scope {
		scope[i] = expr.Column{Name: ca.Columns[i], Table: ca.Name, Type: c.Type}
		proj[i] = expr.NewColumnRef(i, c.Name, c.Type)
	}
	if v, ok := r.node.(*ValuesNode); ok {
		return rel{node: &ValuesNode{nodeBase: nodeBase{cols: unqualified(scope)}, Rows: v.Rows}, scope: scope}, nil
	}
	return rel{node: newCalc(r.node, nil, proj, unqualified(scope)), scope: scope}, nil
}
