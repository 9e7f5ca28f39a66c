package parser

import (
	"fmt"
	"strings"
)

// ---- Flink types and the words TiDB reserves ----
//
// Column types TiDB cannot parse are replaced by TEXT in the text TiDB
// sees, and their Flink text goes to Statement.ColumnTypes for the planner
// (types.ParseType):
//
//	ROW<a INT, b STRING>, ROW(a INT, ...)   TEXT; ColumnTypes["col"] = "ROW<a INT,b STRING>"
//	ARRAY<T>, T ARRAY, MAP<K, V>            TEXT; likewise
//	VARCHAR, VARBINARY, BINARY, CHAR alone  TEXT; likewise (VARCHAR is STRING, as in Flink)
//	TIMESTAMP(p) WITH LOCAL TIME ZONE       TEXT; likewise
//	TIMESTAMP_LTZ(p)                        TEXT; likewise
//	TIME(p) [WITHOUT TIME ZONE]             TEXT; likewise
//
// Bare words that Flink lets name a column but TiDB reserves (KEY, as in
// Nexmark's `key` column) are quoted where they name one.

// compositeTypeWords start a type written with angle brackets.
var compositeTypeWords = map[string]bool{"ROW": true, "ARRAY": true, "MAP": true, "MULTISET": true}

// lengthTypeWords are the types TiDB wants a length for, or reads as
// something other than Flink does when it has none.
var lengthTypeWords = map[string]bool{"VARCHAR": true, "VARBINARY": true, "BINARY": true, "CHAR": true}

// typeEnd returns the index just past the type starting at token k, which
// ends before e, and whether the pre-lexer must hand it to the planner as
// text (see above).
func (c *stmtCtx) typeEnd(k, e int) (int, bool) {
	w := c.upper(k)
	j := k + 1
	flink := false
	switch {
	case compositeTypeWords[w] && c.isPunct(j, "<"):
		depth := 0
		for ; j < e; j++ {
			switch {
			case c.isPunct(j, "<"):
				depth++
			case c.isPunct(j, ">"):
				depth--
			case c.isPunct(j, ">>"):
				depth -= 2
			case c.isPunct(j, "<>"): // ROW<>
				continue
			}
			if depth <= 0 {
				break
			}
		}
		return min(j+1, e), true
	case w == "ROW" && c.isPunct(j, "("):
		return c.match[j] + 1, true
	case w == "INTERVAL" || w == "RAW":
		// Types streamsql refuses by name (types.ParseType): take the
		// words up to the column's options.
		for j < e && !c.isPunct(j, ",") {
			switch c.upper(j) {
			case "NOT", "NULL", "PRIMARY", "COMMENT", "METADATA", "CONSTRAINT":
				return j, true
			}
			if c.isPunct(j, "(") {
				j = c.match[j]
			}
			j++
		}
		return j, true
	case w == "DOUBLE" && c.isKw(j, "PRECISION"), w == "CHARACTER" && c.isKw(j, "VARYING"):
		j++
	}
	if c.isPunct(j, "(") {
		j = c.match[j] + 1
	} else if lengthTypeWords[w] {
		flink = true
	}
	if w == "TIMESTAMP_LTZ" || w == "TIME" {
		flink = true // TIME(p): TiDB's TIME keeps at most 6 digits
	}
	if w == "TIME" && (c.isKw(j, "WITHOUT") || c.isKw(j, "WITH")) && c.isKw(j+1, "TIME") && c.isKw(j+2, "ZONE") {
		j += 3 // WITH TIME ZONE: for types.ParseType to refuse by name
	}
	if w == "TIMESTAMP" && c.isKw(j, "WITH") && c.isKw(j+1, "LOCAL") && c.isKw(j+2, "TIME") && c.isKw(j+3, "ZONE") {
		j += 4
		flink = true
	}
	for j < e && (c.isKw(j, "ARRAY") || c.isKw(j, "MULTISET")) {
		j++
		flink = true
	}
	return j, flink
}

// rewriteColumnType replaces the type of the column defined by tokens
// [s, e) (name first) with TEXT and records it, when TiDB cannot read it;
// it reports whether it did.
func (c *stmtCtx) rewriteColumnType(s, e int) bool {
	k := s + 1
	if k >= e || c.toks[k].kind != tkIdent || c.covered[k] {
		return false
	}
	end, flink := c.typeEnd(k, e)
	if !flink || end > e {
		return false
	}
	if c.st.ColumnTypes == nil {
		c.st.ColumnTypes = map[string]string{}
	}
	c.st.ColumnTypes[c.nameValue(s)] = c.typeText(k, end)
	c.replaceSpan(k, end-1, c.toks[k].start, c.toks[end-1].end, "TEXT", c.toks[k].start)
	return true
}

// identifierKeywords are words TiDB reserves that Flink does not, so that
// Flink scripts use them as column names unquoted.
var identifierKeywords = map[string]bool{
	"KEY": true, "KEYS": true, "CHANGE": true, "OPTION": true, "READ": true, "WRITE": true,
	"USAGE": true, "LINES": true, "LONG": true, "STORED": true, "LINEAR": true, "MAXVALUE": true,
}

// keyKeywordBefore are the words after which KEY is the keyword.
var keyKeywordBefore = map[string]bool{"PRIMARY": true, "UNIQUE": true, "FOREIGN": true}

// rewriteKeywordNames quotes the identifierKeywords where they name
// something: everywhere except in PRIMARY KEY and the like, as a
// function name, and in the constructs earlier passes rewrote.
func (c *stmtCtx) rewriteKeywordNames() *posError {
	for i := range c.toks {
		w := c.upper(i)
		if !identifierKeywords[w] || c.covered[i] || c.isPunct(i+1, "(") {
			continue
		}
		if w == "KEY" && keyKeywordBefore[c.upper(i-1)] {
			continue
		}
		c.replace(i, i, "`"+strings.ToLower(c.text(i))+"`")
	}
	return nil
}

// Internal functions the constructor and index syntax becomes (package
// expr binds them).
const (
	rowFunc   = "__row"
	arrayFunc = "__array"
	mapFunc   = "__map"
	itemFunc  = "__item"
	fieldFunc = "__field"
)

// rewriteCollections turns Flink's constructors and indexing into calls:
//
//	ROW(a, b)        __row(a, b)     (TiDB's own ROW(...) needs two values)
//	ARRAY[a, b]      __array(a, b)
//	MAP[k, v]        __map(k, v)
//	x[i]             __item(x, i)    x a name (r, t.r), a call, a parenthesized
//	                                 expression, a constructor or another x[i]
//	(x).f, x[i].f    __field(x, 'f') field access on what is not a column name
func (c *stmtCtx) rewriteCollections() *posError {
	// Match the brackets first.
	bmatch := map[int]int{}
	var stack []int
	for i := range c.toks {
		switch {
		case c.isPunct(i, "["):
			stack = append(stack, i)
		case c.isPunct(i, "]"):
			if len(stack) == 0 {
				return c.errAt(i, "unbalanced brackets: ']' without a matching '['")
			}
			bmatch[stack[len(stack)-1]] = i
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return c.errAt(stack[len(stack)-1], "unbalanced brackets: '[' is never closed")
	}
	// start[i] is the first token of the expression ending at token i, for
	// the tokens an index may follow. wraps[s] are the calls opened before
	// token s, innermost first.
	start := map[int]int{}
	wraps := map[int][]string{}
	for i := range c.toks {
		switch {
		case c.isCall(i, "ROW"):
			c.replace(i, i, rowFunc)
			start[c.match[i+1]] = i
		case c.isPunct(i, ")"):
			o := c.match[i]
			if o > 0 && c.isName(o-1) && !c.isPunct(o-2, ".") {
				start[i] = o - 1 // a call
			} else {
				start[i] = o
			}
		case c.isName(i) && !c.covered[i] && c.isPunct(i-1, ".") && (c.isPunct(i-2, ")") || c.isPunct(i-2, "]")):
			s, ok := start[i-2]
			if !ok {
				return c.errAt(i, "field access needs a ROW value before '.'")
			}
			wraps[s] = append(wraps[s], fieldFunc+"(")
			c.replaceSpan(i-1, i, c.toks[i-1].start, c.toks[i].end, ", "+quoteString(c.nameValue(i))+")", c.toks[i-1].start)
			start[i] = s
		case c.isName(i) && !c.covered[i]:
			if j, ok := start[i-2]; ok && c.isPunct(i-1, ".") && c.isName(i-2) {
				start[i] = j // t.r
			} else {
				start[i] = i
			}
		case c.isPunct(i, "["):
			close := bmatch[i]
			word := c.upper(i - 1)
			if word == "MULTISET" && !c.covered[i-1] {
				return c.errAt(i-1, "MULTISET values are not supported")
			}
			if (word == "ARRAY" || word == "MAP") && !c.covered[i-1] && !c.isPunct(i-2, ".") {
				fn := arrayFunc
				if word == "MAP" {
					fn = mapFunc
				}
				if close == i+1 {
					return c.errAt(i-1, "%s[] needs at least one element", word)
				}
				c.replaceSpan(i-1, i, c.toks[i-1].start, c.toks[i].end, fn+"(", c.toks[i-1].start)
				c.replace(close, close, ")")
				start[close] = i - 1
				continue
			}
			s, ok := start[i-1]
			if !ok || c.covered[i-1] && !c.isPunct(i-1, ")") && !c.isPunct(i-1, "]") {
				return c.errAt(i, "'[' must follow an ARRAY or MAP value, as in arr[1] or m['k']")
			}
			if close == i+1 {
				return c.errAt(i, "an index needs a value between '[' and ']'")
			}
			wraps[s] = append(wraps[s], itemFunc+"(")
			c.replace(i, i, ", ")
			c.replace(close, close, ")")
			start[close] = s
		}
	}
	for s, ws := range wraps {
		var sb strings.Builder
		for k := len(ws) - 1; k >= 0; k-- {
			sb.WriteString(ws[k]) // outermost first
		}
		c.insertAt(c.toks[s].start, sb.String())
	}
	return nil
}

// intervalValuePos reports whether the INTERVAL at token i, whose unit is
// token u, stands alone as a value: a select item, a CASE branch, a
// comparison operand, an ARRAY element, where TiDB takes INTERVAL only
// next to + or -. It
// then becomes __interval(...) like a function argument.
func (c *stmtCtx) intervalValuePos(i, u int) bool {
	p := i - 1
	opens := func(p int) bool {
		return c.isKw(p, "SELECT") || c.isPunct(p, ",") || c.isPunct(p, "(") || c.isPunct(p, "[") || c.isKw(p, "THEN") || c.isKw(p, "ELSE") ||
			c.isPunct(p, "=") || c.isPunct(p, "<>") || c.isPunct(p, "<") || c.isPunct(p, ">") ||
			c.isPunct(p, "<=") || c.isPunct(p, ">=")
	}
	if (c.isPunct(p, "-") || c.isPunct(p, "+")) && opens(p-1) {
		p-- // a sign: -INTERVAL '2' HOUR
	}
	before := opens(p) && !(c.isPunct(p, "(") && p == i-1 && !c.isKw(p-1, "CAST") && !c.isKw(p-1, "TRY_CAST"))
	if !before || c.parent[i] >= 0 && dateArithFuncs[c.upper(c.parent[i]-1)] {
		return false
	}
	n := u + 1
	if n >= len(c.toks) || c.isPunct(n, ",") || c.isPunct(n, ")") || c.isPunct(n, "]") {
		return true
	}
	for _, cmp := range []string{"=", "<>", "<", ">", "<=", ">="} {
		if c.isPunct(n, cmp) { // INTERVAL '1' YEAR > INTERVAL '11' MONTH
			return true
		}
	}
	if (c.isPunct(n, "+") || c.isPunct(n, "-")) && c.isKw(n+1, "INTERVAL") {
		return true // INTERVAL '1' MONTH + INTERVAL '2' MONTH
	}
	switch c.upper(n) {
	case "FROM", "AS", "THEN", "ELSE", "END", "WHEN", "AND", "OR", "WHERE", "GROUP", "ORDER", "UNION", "LIMIT":
		return true
	}
	return false
}

// unnestPrefix names the placeholder table of UNNEST(...) in FROM; the
// expression rides in the join condition as __unnest(expr) (see
// Statement.Unnests).
const (
	unnestPrefix = "__unnest_"
	unnestFunc   = "__unnest"
)

// Unnest is UNNEST(expr) [AS] alias[(c1, ...)] joined to the FROM items
// before it: CROSS JOIN UNNEST(...) or , UNNEST(...).
type Unnest struct {
	Alias     string
	Columns   []string // the column aliases; nil if none were written
	Line, Col int      // of the UNNEST keyword
	// Left is LEFT [OUTER] JOIN UNNEST(...) ... ON TRUE: a row whose
	// collection is NULL or empty is kept, padded with NULLs.
	Left bool
	// Ordinality is WITH ORDINALITY: a last column numbering the elements
	// from 1.
	Ordinality bool
}

// IsUnnestPlaceholder reports whether a table name in the AST stands for
// an UNNEST (see Statement.Unnests).
func IsUnnestPlaceholder(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), unnestPrefix)
}

// UnnestFunc is the call carrying an UNNEST's expression in the ON
// condition of its join.
const UnnestFunc = unnestFunc

// rewriteUnnest turns [CROSS] JOIN UNNEST(e) [AS] t(c1, ...) and
// , UNNEST(e) [AS] t(c1, ...) into CROSS JOIN __unnest_<n> AS t ON
// __unnest(e): TiDB has no UNNEST, and a join condition is where an
// expression over the left side can ride along.
func (c *stmtCtx) rewriteUnnest() *posError {
	for i := range c.toks {
		if !c.isCall(i, "UNNEST") {
			continue
		}
		join := i - 1
		left := false
		switch {
		case c.isPunct(join, ","):
		case c.isKw(join, "JOIN") && c.isKw(join-1, "CROSS"):
			join--
		case c.isKw(join, "JOIN") && c.isKw(join-1, "LEFT"):
			join, left = join-1, true
		case c.isKw(join, "JOIN") && c.isKw(join-1, "OUTER") && c.isKw(join-2, "LEFT"):
			join, left = join-2, true
		case c.isKw(join, "JOIN") && !c.isKw(join-1, "RIGHT") && !c.isKw(join-1, "FULL") && !c.isKw(join-1, "OUTER"):
			if c.isKw(join-1, "INNER") {
				join--
			}
		default:
			return c.errAt(i, "UNNEST is supported as CROSS JOIN UNNEST(...) AS t(x), , UNNEST(...) AS t(x) or LEFT JOIN UNNEST(...) AS t(x) ON TRUE")
		}
		open, close := i+1, c.match[i+1]
		k := close + 1
		ordinality := false
		if c.isKw(k, "WITH") && c.isKw(k+1, "ORDINALITY") {
			ordinality = true
			k += 2
		}
		if c.isKw(k, "AS") {
			k++
		}
		if !c.isName(k) {
			return c.errAt(k, "UNNEST(...) needs an alias: UNNEST(...) AS t(x)")
		}
		u := &Unnest{Alias: c.nameValue(k), Left: left, Ordinality: ordinality}
		u.Line, u.Col = c.st.pos.at(c.toks[i].start)
		end := k
		if c.isPunct(k+1, "(") {
			for _, a := range c.args(k + 1) {
				if a[0] != a[1] || !c.isName(a[0]) {
					return c.errAt(a[0], "UNNEST column aliases must be names")
				}
				u.Columns = append(u.Columns, c.nameValue(a[0]))
			}
			end = c.match[k+1]
		}
		if c.isKw(end+1, "WITH") {
			return c.errAt(end+1, "WITH ORDINALITY goes before the alias: UNNEST(...) WITH ORDINALITY AS t(x, n)")
		}
		onTrue := left && c.isKw(end+1, "ON") && c.isKw(end+2, "TRUE")
		if left && !onTrue {
			return c.errAt(end+1, "LEFT JOIN UNNEST(...) AS t(x) takes ON TRUE, as in Flink")
		}
		if !left && c.isKw(end+1, "ON") {
			return c.errAt(end+1, "CROSS JOIN UNNEST(...) takes no ON; write LEFT JOIN UNNEST(...) AS t(x) ON TRUE to keep rows without elements")
		}
		if c.st.Unnests == nil {
			c.st.Unnests = map[string]*Unnest{}
		}
		name := fmt.Sprintf("%s%d", unnestPrefix, len(c.st.Unnests)+1)
		c.st.Unnests[name] = u
		// [CROSS] JOIN UNNEST( -> CROSS JOIN __unnest_n AS `t` ON __unnest(
		c.replaceSpan(join, open, c.toks[join].start, c.toks[open].end,
			fmt.Sprintf(" CROSS JOIN %s AS `%s` ON %s(", name, strings.ReplaceAll(u.Alias, "`", "``"), unnestFunc), c.toks[i].start)
		// ) [WITH ORDINALITY] AS t(c1, ...) [ON TRUE] -> )
		if onTrue {
			end += 2
		}
		c.replaceSpan(close+1, end, c.toks[close].end, c.toks[end].end, "", c.toks[close].end)
	}
	return nil
}
