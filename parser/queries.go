package parser

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Query forms of Flink SQL that TiDB does not parse:
//
//	(VALUES (1, 'a'), (2, 'b'))              (VALUES ROW(1, 'a'), ROW(2, 'b'))
//	... AS T(a, b) after a FROM item          ... AS __cols_<n>; Statement.ColumnAliases
//	AGG(x) FILTER (WHERE c)                  __agg_filter(AGG(x), c), which
//	                                          fixAggFilters turns back into AGG
//	                                          with the filter (see AggFilter)
//	LATERAL TABLE(f(...))                    refused by name: there are no table functions

// Names the query rewrites synthesize.
const (
	columnAliasPrefix = "__cols_"
	// AggFilterFunc marks an aggregate's FILTER (WHERE c). In the AST the
	// aggregate's first argument is __agg_filter(c, x) for AGG(x) FILTER
	// (WHERE c), and __agg_filter(c) for COUNT(*) FILTER (WHERE c); use
	// AggFilter to take it apart.
	AggFilterFunc = "__agg_filter"
	// GroupingSetsFunc, GroupingSetFunc, RollupFunc and CubeFunc are what
	// GROUP BY GROUPING SETS ((a, b), (a), ()), ROLLUP (a, b) and CUBE
	// (a, b) become: __gsets(__gset(a, b), __gset(a), __gset()),
	// __rollup(a, b) and __cube(a, b), GROUP BY items the planner expands.
	// A GROUPING SETS element written without parentheses stays as it is
	// (a one-column set); ROLLUP's and CUBE's parenthesized elements are
	// row expressions.
	GroupingSetsFunc = "__gsets"
	GroupingSetFunc  = "__gset"
	RollupFunc       = "__rollup"
	CubeFunc         = "__cube"
)

// ColumnAlias is `AS T(a, b)` after a FROM item: the table alias T with
// the names of its columns.
type ColumnAlias struct {
	Name      string
	Columns   []string
	Line, Col int // of the alias
}

// IsColumnAliasPlaceholder reports whether a table alias in the AST stands
// for an alias with a column list (see Statement.ColumnAliases).
func IsColumnAliasPlaceholder(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), columnAliasPrefix)
}

// rewriteQueries runs the rewrites of this file.
func (c *stmtCtx) rewriteQueries() *posError {
	for i := range c.toks {
		if c.isName(i) && IsColumnAliasPlaceholder(c.nameValue(i)) || c.isKw(i, AggFilterFunc) {
			return c.errAt(i, "%s is a reserved name", c.text(i))
		}
	}
	for _, pass := range []func() *posError{c.rewriteLateralTable, c.rewriteValuesRows, c.rewriteColumnAliases, c.rewriteAggFilters, c.rewriteGroupingSets} {
		if err := pass(); err != nil {
			return err
		}
	}
	return nil
}

// rewriteLateralTable refuses LATERAL TABLE(f(...)) by name: streamsql
// has no user-defined table functions (window TVFs are rewritten before
// this pass and do not reach it).
func (c *stmtCtx) rewriteLateralTable() *posError {
	for i := range c.toks {
		if !c.covered[i] && c.isKw(i, "LATERAL") && c.isKw(i+1, "TABLE") && c.isPunct(i+2, "(") {
			return c.errAt(i, "LATERAL TABLE is not supported: streamsql has no table functions (user-defined functions are not supported)")
		}
	}
	return nil
}

// valuesQueryPrev are the words after which VALUES starts a query rather
// than the rows of an INSERT.
var valuesQueryPrev = map[string]bool{"AS": true, "UNION": true, "ALL": true, "EXCEPT": true, "INTERSECT": true, "DISTINCT": true}

// rewriteValuesRows turns the tuples of VALUES used as a query (in FROM,
// as a view's body, as a statement) into TiDB's VALUES ROW(...) form. The
// VALUES of INSERT INTO t [(cols)] VALUES follows a name or ')' and is
// left to TiDB.
func (c *stmtCtx) rewriteValuesRows() *posError {
	for i := range c.toks {
		if c.covered[i] || !c.isKw(i, "VALUES") || !c.isPunct(i+1, "(") {
			continue
		}
		if !(i == 0 || c.isPunct(i-1, "(") || valuesQueryPrev[c.upper(i-1)]) {
			continue
		}
		for k := i + 1; k < len(c.toks); {
			if !c.isPunct(k, "(") {
				return c.errAt(k, "VALUES expects a parenthesized row such as (1, 'a'), found %s", c.describe(k))
			}
			c.insertAt(c.toks[k].start, " ROW")
			k = c.match[k] + 1
			if !c.isPunct(k, ",") {
				break
			}
			k++
		}
	}
	return nil
}

// aliasNotNames are words that can follow ')' with a parenthesized list
// and are not a table alias.
var aliasNotNames = map[string]bool{"FILTER": true, "OVER": true, "WITHIN": true, "USING": true, "ON": true,
	"AS": true, "JOIN": true, "VALUES": true, "SELECT": true, "WHERE": true, "IN": true, "EXISTS": true,
	"ROW": true, "AND": true, "OR": true, "NOT": true, "MATCH_RECOGNIZE": true, "PARTITION": true}

// rewriteColumnAliases turns `AS T(a, b)` after a FROM item (a derived
// table, VALUES or a table) into AS __cols_<n> and records the names in
// Statement.ColumnAliases.
func (c *stmtCtx) rewriteColumnAliases() *posError {
	for i := range c.toks {
		if c.covered[i] || !c.isName(i) || aliasNotNames[c.upper(i)] || !c.isPunct(i+1, "(") {
			continue
		}
		derived := c.isPunct(i-1, ")") && (c.isKw(c.match[i-1]+1, "SELECT") || c.isKw(c.match[i-1]+1, "VALUES") || c.isKw(c.match[i-1]+1, "WITH"))
		if !(c.isKw(i-1, "AS") && (c.isPunct(i-2, ")") || c.isName(i-2)) || derived) {
			continue
		}
		if c.isKw(i-1, "AS") && c.covered[i-1] {
			continue // a computed column `ts AS f(x)`, rewritten by ddl.go
		}
		if c.isKw(i-1, "AS") && (c.isKw(i-3, "VIEW") || c.isKw(i-3, "TABLE")) {
			continue // CREATE VIEW v AS ...
		}
		open, close := i+1, c.match[i+1]
		var cols []string
		ok := close > open+1
		for k := open + 1; k < close && ok; k += 2 {
			ok = c.isName(k) && (c.isPunct(k+1, ",") && k+2 < close || k+1 == close)
			if ok {
				cols = append(cols, c.nameValue(k))
			}
		}
		if !ok || aliasNotNames[strings.ToUpper(cols[0])] {
			continue
		}
		line, col := c.st.pos.at(c.toks[i].start)
		if c.st.ColumnAliases == nil {
			c.st.ColumnAliases = map[string]*ColumnAlias{}
		}
		name := fmt.Sprintf("%s%d", columnAliasPrefix, len(c.st.ColumnAliases)+1)
		c.st.ColumnAliases[name] = &ColumnAlias{Name: c.nameValue(i), Columns: cols, Line: line, Col: col}
		c.replace(i, close, name)
	}
	return nil
}

// rewriteAggFilters turns AGG(x) FILTER (WHERE c) into __agg_filter(AGG(x), c);
// fixAggFilters moves the condition into the aggregate once TiDB parsed it.
func (c *stmtCtx) rewriteAggFilters() *posError {
	for i := range c.toks {
		if c.covered[i] || !c.isKw(i, "FILTER") || !c.isPunct(i+1, "(") || !c.isKw(i+2, "WHERE") {
			continue
		}
		if !c.isPunct(i-1, ")") {
			return c.errAt(i, "FILTER (WHERE ...) must follow an aggregate function call")
		}
		if c.isKw(c.match[i-1]-1, "FILTER") {
			return c.errAt(i, "an aggregate takes one FILTER clause; combine the conditions with AND")
		}
		open, close := i+1, c.match[i+1]
		if !c.isKw(open+1, "WHERE") {
			return c.errAt(open+1, "FILTER expects (WHERE <condition>), found %s", c.describe(open+1))
		}
		if open+2 == close {
			return c.errAt(close, "FILTER (WHERE needs a condition")
		}
		if c.isKw(close+1, "OVER") {
			return c.errAt(i, "FILTER is not supported on an aggregate OVER a window")
		}
		call := c.match[i-1] - 1 // the aggregate's name
		if call < 0 || c.toks[call].kind != tkIdent {
			return c.errAt(i, "FILTER (WHERE ...) must follow an aggregate function call")
		}
		c.insertAt(c.toks[call].start, AggFilterFunc+"(")
		c.replaceSpan(i, open+1, c.toks[i-1].end, c.toks[open+1].end, ",", c.toks[i].start)
	}
	return nil
}

// fixAggFilters moves the condition of each __agg_filter(AGG(x), c) into
// the aggregate (see AggFilterFunc). A FILTER after something that is not
// an aggregate is left as the call, which the planner reports.
func fixAggFilters(n ast.Node) {
	if n != nil {
		n.Accept(aggFilterFixer{})
	}
}

type aggFilterFixer struct{}

func (aggFilterFixer) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (aggFilterFixer) Leave(n ast.Node) (ast.Node, bool) {
	fc, ok := n.(*ast.FuncCallExpr)
	if !ok || fc.FnName.L != AggFilterFunc || len(fc.Args) != 2 {
		return n, true
	}
	agg, ok := fc.Args[0].(*ast.AggregateFuncExpr)
	if !ok || len(agg.Args) == 0 {
		return n, true
	}
	cond := fc.Args[1]
	args := []ast.ExprNode{cond}
	if !isCountStar(agg) {
		args = append(args, agg.Args[0])
	}
	mark := &ast.FuncCallExpr{FnName: ast.NewCIStr(AggFilterFunc), Args: args}
	mark.SetOriginTextPosition(cond.OriginTextPosition())
	agg.Args = append([]ast.ExprNode{mark}, agg.Args[1:]...)
	agg.SetOriginTextPosition(fc.OriginTextPosition())
	return agg, true
}

// isCountStar reports whether agg is COUNT(*) as TiDB parses it: COUNT
// of a constant.
func isCountStar(agg *ast.AggregateFuncExpr) bool {
	if !strings.EqualFold(agg.F, "count") || agg.Distinct || len(agg.Args) != 1 {
		return false
	}
	_, ok := agg.Args[0].(ast.ValueExpr)
	return ok
}

// AggFilter takes apart an aggregate with FILTER (WHERE cond): it returns
// the condition and the argument (nil for COUNT(*)), ok false when agg
// has no filter.
func AggFilter(agg *ast.AggregateFuncExpr) (cond, arg ast.ExprNode, ok bool) {
	if len(agg.Args) == 0 {
		return nil, nil, false
	}
	fc, isCall := agg.Args[0].(*ast.FuncCallExpr)
	if !isCall || fc.FnName.L != AggFilterFunc || len(fc.Args) == 0 {
		return nil, nil, false
	}
	if len(fc.Args) > 1 {
		arg = fc.Args[1]
	}
	return fc.Args[0], arg, true
}

// groupByEnd are the words that end a GROUP BY clause.
var groupByEnd = map[string]bool{"HAVING": true, "WINDOW": true, "ORDER": true, "LIMIT": true, "UNION": true,
	"INTERSECT": true, "EXCEPT": true, "MINUS": true, "QUALIFY": true}

// rewriteGroupingSets rewrites GROUPING SETS, ROLLUP and CUBE in GROUP BY
// clauses (see GroupingSetsFunc).
func (c *stmtCtx) rewriteGroupingSets() *posError {
	for i := range c.toks {
		if !c.isKw(i, "GROUP") || !c.isKw(i+1, "BY") {
			continue
		}
		depth := c.parent[i]
		for k := i + 2; k < len(c.toks) && c.parent[k] == depth && !groupByEnd[c.upper(k)]; k++ {
			if c.covered[k] || !c.isPunct(k-1, ",") && k != i+2 {
				if c.isPunct(k, "(") {
					k = c.match[k]
				}
				continue
			}
			switch {
			case c.isKw(k, "GROUPING") && c.isKw(k+1, "SETS") && c.isPunct(k+2, "("):
				c.replace(k, k+1, GroupingSetsFunc)
				open := k + 2
				for _, a := range c.args(open) {
					switch {
					case c.isPunct(a[0], "(") && c.match[a[0]] == a[1]:
						c.insertAt(c.toks[a[0]].start, GroupingSetFunc)
					case c.isKw(a[0], "ROLLUP") && c.isPunct(a[0]+1, "("):
						c.replace(a[0], a[0], RollupFunc) // the planner refuses it by name
					case c.isKw(a[0], "CUBE") && c.isPunct(a[0]+1, "("):
						c.replace(a[0], a[0], CubeFunc)
					}
				}
				if c.match[open] == open+1 {
					return c.errAt(open, "GROUPING SETS needs at least one grouping set")
				}
				k = c.match[open]
			case c.isKw(k, "ROLLUP") && c.isPunct(k+1, "("):
				c.replace(k, k, RollupFunc)
				k = c.match[k+1]
			case c.isKw(k, "CUBE") && c.isPunct(k+1, "("):
				c.replace(k, k, CubeFunc)
				k = c.match[k+1]
			case c.isPunct(k, "("):
				k = c.match[k]
			}
		}
	}
	return nil
}
