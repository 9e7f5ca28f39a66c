package parser

import (
	"strings"
)

// ---- Flink function syntax ----
//
// Flink's functions and predicates whose syntax TiDB cannot parse are
// rewritten into calls of internal functions (package expr binds them);
// the arguments keep their tokens, so errors inside them point at the
// user's text:
//
//	EXTRACT(DOW FROM ts)                        __extract('DOW', ts)
//	TIMESTAMPADD(MILLISECOND, n, ts)            __timestampadd('MILLISECOND', n, ts)   (and TIMESTAMPDIFF)
//	JSON_VALUE(j, p RETURNING INT               __json_value(j, p, 'INT', 'DEFAULT', 0, 'NULL', NULL)
//	    DEFAULT 0 ON EMPTY)
//	JSON_QUERY(j, p WITH ARRAY WRAPPER)         __json_query(j, p, '', 'UNCONDITIONAL', 'NULL', 'NULL')
//	JSON_EXISTS(j, p TRUE ON ERROR)             __json_exists(j, p, 'TRUE')
//	JSON_OBJECT(KEY k VALUE v ABSENT ON NULL)   __json_object('ABSENT', k, v)
//	JSON_ARRAY(a, b NULL ON NULL)               __json_array('NULL', a, b)
//	JSON_OBJECTAGG(KEY k VALUE v)               __json_objectagg(k, v, 'NULL')         (an aggregate, see fixAggregates)
//	JSON_ARRAYAGG(v)                            __json_arrayagg(v, 'ABSENT')
//	JSON(text)                                  __json(text)
//	x IS [NOT] JSON [OBJECT]                    x [NOT] REGEXP __is_json('OBJECT')
//	x [NOT] SIMILAR TO p [ESCAPE e]             x [NOT] REGEXP __similar_to(p[, e])
//	x BETWEEN SYMMETRIC a AND b                 x BETWEEN __symmetric(a) AND b         (ASYMMETRIC is dropped)
//	(a, b) OVERLAPS (c, d)                      __overlaps(a, b, c, d)
//	FIRST_VALUE(x), LAST_VALUE(x) without OVER  __first_value(x), __last_value(x)       (aggregates)
//	STDDEV(x), VARIANCE(x)                      STDDEV_SAMP(x), VAR_SAMP(x)            (TiDB reads them as the _POP forms)
//	ARRAY_AGG(DISTINCT x)                       __array_agg_distinct(x)                (back to ARRAY_AGG by fixAggregates)
//	ARRAY_AGG(x IGNORE NULLS)                   ARRAY_AGG(x, __ignore_nulls())         (ALL and RESPECT NULLS, the defaults, are dropped)
//	LISTAGG(x) OVER w (and kin)                 MAX(__over_listagg(x)) OVER w          (back to LISTAGG by fixAggregates)
//	REGEXP(s, p), SPLIT(s, d), CARDINALITY(a)   __fn_regexp(s, p), __fn_split(s, d), ... (TiDB keywords)
//
// REGEXP binds like IS, so `x REGEXP __is_json()` keeps the precedence of
// `x IS JSON`.

// Prefixes and names of the internal functions written here.
const (
	// BuiltinPrefix marks a call of a Flink function whose name TiDB
	// reserves: __fn_regexp(...) is REGEXP(...).
	BuiltinPrefix = "__fn_"
	// Aggregate calls TiDB would not parse as aggregates; fixAggregates
	// turns them into ast.AggregateFuncExpr.
	firstValueFunc = "__first_value"
	lastValueFunc  = "__last_value"
	jsonArrayAgg   = "__json_arrayagg"
	jsonObjectAgg  = "__json_objectagg"
	// arrayAggDistinct is ARRAY_AGG(DISTINCT x), as __array_agg_distinct(x).
	arrayAggDistinct = "__array_agg_distinct"
	// collectDistinct is COLLECT(DISTINCT x), as __collect_distinct(x).
	collectDistinct = "__collect_distinct"
	// IgnoreNullsFunc marks ARRAY_AGG(x IGNORE NULLS): the call's last
	// argument is __ignore_nulls(); use AggIgnoreNulls to take it off.
	IgnoreNullsFunc = "__ignore_nulls"
	// overPrefix marks an aggregate of flinkAggregates called OVER a
	// window: MAX(__over_listagg(x)) OVER w is LISTAGG(x) OVER w.
	overPrefix = "__over_"
)

// rewriteFunctionSyntax runs the rewrites listed above.
func (c *stmtCtx) rewriteFunctionSyntax() *posError {
	for _, pass := range []func() *posError{
		c.rewriteExtract,
		c.rewriteTimestampUnits,
		c.rewriteJSONCalls,
		c.rewriteIsJSON,
		c.rewriteSimilarTo,
		c.rewriteBetweenSymmetric,
		c.rewriteOverlaps,
		c.rewriteFunctionNames,
	} {
		if err := pass(); err != nil {
			return err
		}
	}
	return nil
}

// isCall reports whether token i is an uncovered bare word naming a call
// of kw: kw followed by '(' and not a qualified name's part.
func (c *stmtCtx) isCall(i int, kw string) bool {
	return !c.covered[i] && c.isKw(i, kw) && c.isPunct(i+1, "(") && !c.isPunct(i-1, ".")
}

// args splits the tokens between the parentheses at open and its match at
// top-level commas into [first, last] token ranges; an empty list gives
// none.
func (c *stmtCtx) args(open int) [][2]int {
	close := c.match[open]
	if close == open+1 {
		return nil
	}
	var out [][2]int
	s := open + 1
	for k := open + 1; k <= close; k++ {
		if k == close || c.isPunct(k, ",") && c.parent[k] == open {
			out = append(out, [2]int{s, k - 1})
			s = k + 1
		}
	}
	return out
}

func (c *stmtCtx) rewriteExtract() *posError {
	for i := range c.toks {
		if !c.isCall(i, "EXTRACT") {
			continue
		}
		open := i + 1
		if c.toks[open+1].kind != tkIdent || !c.isKw(open+2, "FROM") || open+3 >= c.match[open] {
			return c.errAt(i, "EXTRACT expects EXTRACT(unit FROM value)")
		}
		c.replace(i, i, "__extract")
		c.replaceSpan(open+1, open+2, c.toks[open+1].start, c.toks[open+2].end, quoteString(c.upper(open+1))+",", c.toks[open+1].start)
	}
	return nil
}

func (c *stmtCtx) rewriteTimestampUnits() *posError {
	for i := range c.toks {
		fn := ""
		switch {
		case c.isCall(i, "TIMESTAMPADD"):
			fn = "__timestampadd"
		case c.isCall(i, "TIMESTAMPDIFF"):
			fn = "__timestampdiff"
		default:
			continue
		}
		if c.toks[i+2].kind != tkIdent || !c.isPunct(i+3, ",") {
			return c.errAt(i+2, "%s expects a time unit such as SECOND or DAY first, found %s", c.upper(i), c.describe(i+2))
		}
		c.replace(i, i, fn)
		c.replace(i+2, i+2, quoteString(c.upper(i+2)))
	}
	return nil
}

// ---- JSON ----

func (c *stmtCtx) rewriteJSONCalls() *posError {
	for i := range c.toks {
		var err *posError
		switch {
		case c.isCall(i, "JSON_VALUE"):
			err = c.rewriteJSONValue(i)
		case c.isCall(i, "JSON_QUERY"):
			err = c.rewriteJSONQuery(i)
		case c.isCall(i, "JSON_EXISTS"):
			err = c.rewriteJSONExists(i)
		case c.isCall(i, "JSON_OBJECT"):
			err = c.rewriteJSONObject(i, false)
		case c.isCall(i, "JSON_OBJECTAGG"):
			err = c.rewriteJSONObject(i, true)
		case c.isCall(i, "JSON_ARRAY"):
			err = c.rewriteJSONArray(i, false)
		case c.isCall(i, "JSON_ARRAYAGG"):
			err = c.rewriteJSONArray(i, true)
		case c.isCall(i, "JSON"):
			c.replace(i, i, "__json")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// jsonPathArgs checks JSON_VALUE(j, path ...)-like calls: two arguments,
// the second starting with the path. It returns the index of the path's
// last token and of the closing parenthesis.
func (c *stmtCtx) jsonPathArgs(i int) (pathEnd, close int, err *posError) {
	open := i + 1
	close = c.match[open]
	args := c.args(open)
	name := c.upper(i)
	if len(args) != 2 {
		return 0, 0, c.errAt(i, "%s expects (json, path [clauses]), found %d arguments", name, len(args))
	}
	p := args[1][0]
	if p > args[1][1] {
		return 0, 0, c.errAt(p, "%s needs a path", name)
	}
	pathEnd = p
	if c.isPunct(p, "(") {
		pathEnd = c.match[p]
	}
	for pathEnd+1 < close && c.isPunct(pathEnd+1, ".") { // a qualified column
		pathEnd += 2
	}
	return pathEnd, close, nil
}

// onClause matches `<words> ON <target>` at token k, where words are the
// behaviour (one or two words); it returns the behaviour and the index of
// the target token, or -1.
func (c *stmtCtx) onClause(k, close int, behaviours []string) (string, int) {
	for _, b := range behaviours {
		words := strings.Fields(b)
		ok := true
		for w, word := range words {
			if !c.isKw(k+w, word) {
				ok = false
				break
			}
		}
		if ok && c.isKw(k+len(words), "ON") && k+len(words)+1 < close {
			return b, k + len(words) + 1
		}
	}
	return "", -1
}

// topLevelOn finds the next `ON EMPTY` or `ON ERROR` directly inside the
// call whose ')' is close, from token k; it returns the index of ON or -1.
func (c *stmtCtx) topLevelOn(k, close int) int {
	open := c.match[close]
	for ; k < close; k++ {
		if c.parent[k] == open && c.isKw(k, "ON") && (c.isKw(k+1, "EMPTY") || c.isKw(k+1, "ERROR")) {
			return k
		}
	}
	return -1
}

func (c *stmtCtx) rewriteJSONValue(i int) *posError {
	pathEnd, close, err := c.jsonPathArgs(i)
	if err != nil {
		return err
	}
	c.replace(i, i, "__json_value")
	prevEnd := c.toks[pathEnd].end
	k := pathEnd + 1
	// RETURNING type
	if c.isKw(k, "RETURNING") {
		e := k + 1
		for e < close && !c.isKw(e, "NULL") && !c.isKw(e, "ERROR") && !c.isKw(e, "DEFAULT") {
			if c.isPunct(e, "(") {
				e = c.match[e]
			}
			e++
		}
		if e == k+1 {
			return c.errAt(k, "RETURNING needs a type")
		}
		c.replaceSpan(k, e-1, prevEnd, c.toks[e-1].end, ", "+quoteString(c.typeText(k+1, e)), c.toks[k].start)
		prevEnd, k = c.toks[e-1].end, e
	} else {
		c.insertAt(prevEnd, ", ''")
	}
	for _, target := range []string{"EMPTY", "ERROR"} {
		var b string
		var t int
		if c.isKw(k, "DEFAULT") {
			on := c.topLevelOn(k+1, close)
			if on < 0 || on == k+1 {
				return c.errAt(k, "JSON_VALUE ... DEFAULT needs an expression and ON EMPTY or ON ERROR")
			}
			b, t = "DEFAULT", on+1
		} else {
			b, t = c.onClause(k, close, []string{"NULL", "ERROR"})
		}
		if t < 0 || !c.isKw(t, target) {
			c.insertAt(prevEnd, ", 'NULL', NULL")
			continue
		}
		if b == "DEFAULT" {
			c.replaceSpan(k, k, prevEnd, c.toks[k].end, ", 'DEFAULT', ", c.toks[k].start)
			c.replaceSpan(t-1, t, c.toks[t-2].end, c.toks[t].end, "", c.toks[t-1].start)
		} else {
			c.replaceSpan(k, t, prevEnd, c.toks[t].end, ", "+quoteString(b)+", NULL", c.toks[k].start)
		}
		prevEnd, k = c.toks[t].end, t+1
	}
	if k != close {
		return c.errAt(k, "unexpected %s in JSON_VALUE; expected [RETURNING type] [{NULL | ERROR | DEFAULT expr} ON EMPTY] [{NULL | ERROR | DEFAULT expr} ON ERROR]", c.describe(k))
	}
	return nil
}

// insertAt inserts text at byte offset off of the original script.
func (c *stmtCtx) insertAt(off int, text string) {
	c.edits = append(c.edits, edit{off, off, text, off})
}

func (c *stmtCtx) rewriteJSONQuery(i int) *posError {
	pathEnd, close, err := c.jsonPathArgs(i)
	if err != nil {
		return err
	}
	k := pathEnd + 1
	typ := ""
	if c.isKw(k, "RETURNING") {
		e := k + 1
		for e < close && !c.isKw(e, "WITH") && !c.isKw(e, "WITHOUT") && !c.isKw(e, "NULL") && !c.isKw(e, "EMPTY") && !c.isKw(e, "ERROR") {
			if c.isPunct(e, "(") {
				e = c.match[e]
			}
			e++
		}
		typ, k = c.typeText(k+1, e), e
	}
	wrapper := "WITHOUT"
	switch {
	case c.isKw(k, "WITHOUT"):
		k++
		if c.isKw(k, "ARRAY") {
			k++
		}
		if !c.isKw(k, "WRAPPER") {
			return c.errAt(k, "expected WRAPPER, found %s", c.describe(k))
		}
		k++
	case c.isKw(k, "WITH"):
		k++
		wrapper = "UNCONDITIONAL"
		if c.isKw(k, "CONDITIONAL") || c.isKw(k, "UNCONDITIONAL") {
			wrapper = c.upper(k)
			k++
		}
		if c.isKw(k, "ARRAY") {
			k++
		}
		if !c.isKw(k, "WRAPPER") {
			return c.errAt(k, "expected WRAPPER, found %s", c.describe(k))
		}
		k++
	}
	modes := map[string]string{"EMPTY": "NULL", "ERROR": "NULL"}
	for _, target := range []string{"EMPTY", "ERROR"} {
		b, t := c.onClause(k, close, []string{"EMPTY ARRAY", "EMPTY OBJECT", "NULL", "ERROR"})
		if t >= 0 && c.isKw(t, target) {
			modes[target], k = b, t+1
		}
	}
	if k != close {
		return c.errAt(k, "unexpected %s in JSON_QUERY; expected [RETURNING type] [WITH [CONDITIONAL | UNCONDITIONAL] [ARRAY] WRAPPER | WITHOUT [ARRAY] WRAPPER] [... ON EMPTY] [... ON ERROR]", c.describe(k))
	}
	c.replace(i, i, "__json_query")
	text := ", " + quoteString(typ) + ", " + quoteString(wrapper) + ", " + quoteString(modes["EMPTY"]) + ", " + quoteString(modes["ERROR"])
	if k > pathEnd+1 {
		c.replaceSpan(pathEnd+1, k-1, c.toks[pathEnd].end, c.toks[k-1].end, text, c.toks[pathEnd+1].start)
	} else {
		c.insertAt(c.toks[pathEnd].end, text)
	}
	return nil
}

func (c *stmtCtx) rewriteJSONExists(i int) *posError {
	pathEnd, close, err := c.jsonPathArgs(i)
	if err != nil {
		return err
	}
	k := pathEnd + 1
	mode := "FALSE"
	if b, t := c.onClause(k, close, []string{"TRUE", "FALSE", "UNKNOWN", "ERROR"}); t >= 0 && c.isKw(t, "ERROR") {
		mode, k = b, t+1
	}
	if k != close {
		return c.errAt(k, "unexpected %s in JSON_EXISTS; expected [{TRUE | FALSE | UNKNOWN | ERROR} ON ERROR]", c.describe(k))
	}
	c.replace(i, i, "__json_exists")
	if k > pathEnd+1 {
		c.replaceSpan(pathEnd+1, k-1, c.toks[pathEnd].end, c.toks[k-1].end, ", "+quoteString(mode), c.toks[pathEnd+1].start)
	} else {
		c.insertAt(c.toks[pathEnd].end, ", "+quoteString(mode))
	}
	return nil
}

// onNullSuffix finds a trailing `NULL ON NULL` or `ABSENT ON NULL` in
// argument range a; it returns the behaviour and the index of its first
// token, or "" and -1.
func (c *stmtCtx) onNullSuffix(a [2]int) (string, int) {
	s := a[1] - 2
	if s >= a[0] && (c.isKw(s, "NULL") || c.isKw(s, "ABSENT")) && c.isKw(s+1, "ON") && c.isKw(s+2, "NULL") {
		return c.upper(s), s
	}
	return "", -1
}

// rewriteJSONObject rewrites JSON_OBJECT and JSON_OBJECTAGG.
func (c *stmtCtx) rewriteJSONObject(i int, agg bool) *posError {
	open := i + 1
	name := c.upper(i)
	args := c.args(open)
	mode := "NULL"
	if n := len(args); n > 0 {
		if m, s := c.onNullSuffix(args[n-1]); s >= 0 {
			mode = m
			if s == args[n-1][0] { // JSON_OBJECT(ABSENT ON NULL): no pairs
				if n > 1 {
					return c.errAt(s, "%s: ON NULL must follow the last pair", name)
				}
				c.replaceSpan(s, s+2, c.toks[s].start, c.toks[s+2].end, "", c.toks[s].start)
				args = nil
			} else {
				c.replaceSpan(s, s+2, c.toks[s-1].end, c.toks[s+2].end, "", c.toks[s].start)
				args[n-1][1] = s - 1
			}
		}
	}
	if agg && len(args) != 1 {
		return c.errAt(i, "JSON_OBJECTAGG expects one KEY k VALUE v pair")
	}
	if agg && c.isKw(c.match[open]+1, "OVER") {
		return c.errAt(i, "JSON_OBJECTAGG is not supported in OVER windows (nor in Flink)")
	}
	for _, a := range args {
		k := a[0]
		if c.isKw(k, "KEY") && k < a[1] {
			c.replaceSpan(k, k, c.toks[k].start, c.toks[k+1].start, "", c.toks[k].start)
			k++
		}
		sep := -1
		for t := k; t <= a[1]; t++ {
			if c.parent[t] == open && (c.isKw(t, "VALUE") || c.isPunct(t, ":")) {
				sep = t
				break
			}
		}
		if sep <= k || sep == a[1] {
			return c.errAt(a[0], "%s expects [KEY] key VALUE value pairs", name)
		}
		c.replace(sep, sep, ",")
	}
	if agg {
		c.replace(i, i, jsonObjectAgg)
		c.insertAt(c.toks[args[0][1]].end, ", "+quoteString(mode))
		return nil
	}
	c.replace(i, i, "__json_object")
	text := quoteString(mode)
	if len(args) > 0 {
		text += ", "
	}
	c.insertAt(c.toks[open].end, text)
	return nil
}

// rewriteJSONArray rewrites JSON_ARRAY and JSON_ARRAYAGG.
func (c *stmtCtx) rewriteJSONArray(i int, agg bool) *posError {
	open := i + 1
	args := c.args(open)
	mode := "ABSENT"
	if n := len(args); n > 0 {
		if m, s := c.onNullSuffix(args[n-1]); s >= 0 {
			mode = m
			if s == args[n-1][0] {
				if n > 1 {
					return c.errAt(s, "%s: ON NULL must follow the last value", c.upper(i))
				}
				c.replaceSpan(s, s+2, c.toks[s].start, c.toks[s+2].end, "", c.toks[s].start)
				args = nil
			} else {
				c.replaceSpan(s, s+2, c.toks[s-1].end, c.toks[s+2].end, "", c.toks[s].start)
				args[n-1][1] = s - 1
			}
		}
	}
	if agg {
		if len(args) != 1 {
			return c.errAt(i, "JSON_ARRAYAGG expects one value")
		}
		if c.isKw(c.match[open]+1, "OVER") {
			return c.errAt(i, "JSON_ARRAYAGG is not supported in OVER windows (nor in Flink)")
		}
		c.replace(i, i, jsonArrayAgg)
		c.insertAt(c.toks[args[0][1]].end, ", "+quoteString(mode))
		return nil
	}
	c.replace(i, i, "__json_array")
	text := quoteString(mode)
	if len(args) > 0 {
		text += ", "
	}
	c.insertAt(c.toks[open].end, text)
	return nil
}

// rewriteIsJSON turns x IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT]
// into x [NOT] REGEXP __is_json('TYPE').
func (c *stmtCtx) rewriteIsJSON() *posError {
	for i := range c.toks {
		if c.covered[i] || !c.isKw(i, "IS") {
			continue
		}
		j := i + 1
		neg := c.isKw(j, "NOT")
		if neg {
			j++
		}
		if !c.isKw(j, "JSON") || c.isPunct(j+1, "(") {
			continue
		}
		last, what := j, ""
		switch c.upper(j + 1) {
		case "VALUE", "SCALAR", "ARRAY", "OBJECT":
			last, what = j+1, quoteString(c.upper(j+1))
		}
		text := "REGEXP __is_json(" + what + ")"
		if neg {
			text = "NOT " + text
		}
		c.replace(i, last, text)
	}
	return nil
}

// patternEnd returns the last token of the SIMILAR TO pattern starting at
// token k: a literal or name, a qualified name, a call, or a parenthesized
// expression; -1 when there is none.
func (c *stmtCtx) patternEnd(k int) int {
	if k >= len(c.toks) {
		return -1
	}
	switch {
	case c.isPunct(k, "("):
		return c.match[k]
	case c.isStringLit(k) || c.toks[k].kind == tkNumber:
		return k
	case c.isName(k):
		e := k
		for c.isPunct(e+1, ".") && c.isName(e+2) {
			e += 2
		}
		if c.isPunct(e+1, "(") {
			e = c.match[e+1]
		}
		return e
	}
	return -1
}

// similarStops are the tokens that may follow a SIMILAR TO pattern: the
// pattern ends there, so wrapping it in a call keeps the expression.
var similarStops = map[string]bool{
	")": true, ",": true, ";": true, "AND": true, "OR": true, "XOR": true, "THEN": true, "WHEN": true,
	"ELSE": true, "END": true, "FROM": true, "WHERE": true, "GROUP": true, "HAVING": true, "ORDER": true,
	"LIMIT": true, "UNION": true, "EXCEPT": true, "INTERSECT": true, "AS": true, "ON": true, "IS": true,
}

func (c *stmtCtx) rewriteSimilarTo() *posError {
	for i := range c.toks {
		if c.covered[i] || !c.isKw(i, "SIMILAR") || !c.isKw(i+1, "TO") {
			continue
		}
		e := c.patternEnd(i + 2)
		if e < 0 {
			return c.errAt(i+2, "SIMILAR TO needs a pattern, found %s", c.describe(i+2))
		}
		last, esc := e, ""
		if c.isKw(e+1, "ESCAPE") {
			if !c.isStringLit(e + 2) {
				return c.errAt(e+2, "SIMILAR TO ... ESCAPE needs a string literal, found %s", c.describe(e+2))
			}
			last, esc = e+2, ", "+c.text(e+2)
			c.replaceSpan(e+1, e+2, c.toks[e].end, c.toks[e+2].end, "", c.toks[e+1].start)
		}
		if next := last + 1; next < len(c.toks) && !similarStops[c.upper(next)] && !similarStops[c.text(next)] {
			return c.errAt(next, "SIMILAR TO: put a computed pattern in parentheses (found %s after the pattern)", c.describe(next))
		}
		c.replace(i, i+1, "REGEXP __similar_to(")
		c.insertAt(c.toks[e].end, esc+")")
	}
	return nil
}

func (c *stmtCtx) rewriteBetweenSymmetric() *posError {
	for i := range c.toks {
		if c.covered[i] || !c.isKw(i, "BETWEEN") {
			continue
		}
		switch {
		case c.isKw(i+1, "ASYMMETRIC"):
			c.replaceSpan(i+1, i+1, c.toks[i].end, c.toks[i+1].end, "", c.toks[i+1].start)
		case c.isKw(i+1, "SYMMETRIC"):
			and := -1
			for k := i + 2; k < len(c.toks); k++ {
				if c.parent[k] == c.parent[i] && c.isKw(k, "AND") {
					and = k
					break
				}
			}
			if and < 0 || and == i+2 {
				return c.errAt(i, "BETWEEN SYMMETRIC expects a AND b")
			}
			c.replace(i+1, i+1, "__symmetric(")
			c.insertAt(c.toks[and-1].end, ")")
		}
	}
	return nil
}

func (c *stmtCtx) rewriteOverlaps() *posError {
	for i := range c.toks {
		if c.covered[i] || !c.isKw(i, "OVERLAPS") {
			continue
		}
		if !c.isPunct(i-1, ")") || !c.isPunct(i+1, "(") {
			return c.errAt(i, "OVERLAPS expects (start, end) OVERLAPS (start, end)")
		}
		lo, ro := c.match[i-1], i+1
		if len(c.args(lo)) != 2 || len(c.args(ro)) != 2 || !c.functionPosition(lo) {
			return c.errAt(i, "OVERLAPS expects (start, end) OVERLAPS (start, end)")
		}
		c.replace(lo, lo, "__overlaps(")
		c.replace(i-1, i+1, ",")
	}
	return nil
}

// functionPosition reports whether a word at token i stands where an
// expression starts (so REGEXP( is the function, not the operator).
func (c *stmtCtx) functionPosition(i int) bool {
	if i == 0 {
		return true
	}
	p := i - 1
	switch c.toks[p].kind {
	case tkPunct:
		return c.text(p) != ")"
	case tkIdent:
		switch c.upper(p) {
		case "SELECT", "WHERE", "AND", "OR", "NOT", "XOR", "WHEN", "THEN", "ELSE", "ON", "HAVING", "BY", "DISTINCT", "CASE", "IF", "RETURN", "SET":
			return true
		}
	}
	return false
}

func (c *stmtCtx) rewriteFunctionNames() *posError {
	for i := range c.toks {
		if c.isCall(i, "ARRAY_AGG") {
			over := c.isKw(c.match[i+1]+1, "OVER")
			distinct, err := c.rewriteArrayAggWords(i)
			if err != nil {
				return err
			}
			if distinct && !over {
				// TiDB takes DISTINCT only in its own aggregates' calls.
				c.replace(i, i, arrayAggDistinct)
				continue
			}
		}
		if c.isCall(i, "COLLECT") && !c.isKw(c.match[i+1]+1, "OVER") && (c.isKw(i+2, "DISTINCT") || c.isKw(i+2, "ALL")) {
			distinct := c.isKw(i+2, "DISTINCT")
			c.replace(i+2, i+2, "")
			if distinct {
				c.replace(i, i, collectDistinct)
				continue
			}
		}
		if name := strings.ToLower(c.text(i)); c.isCall(i, name) && flinkAggregates[name] != "" && c.isKw(c.match[i+1]+1, "OVER") {
			// LISTAGG(x) OVER w: TiDB takes OVER only after the window
			// functions it knows, so the call rides inside MAX(...) OVER
			// w until fixAggregates takes it out again.
			c.replace(i, i, "MAX("+overPrefix+name)
			c.insertAt(c.toks[c.match[i+1]].end, ")")
			continue
		}
		switch {
		case c.isCall(i, "FIRST_VALUE") && !c.isKw(c.match[i+1]+1, "OVER"):
			c.replace(i, i, firstValueFunc)
		case c.isCall(i, "LAST_VALUE") && !c.isKw(c.match[i+1]+1, "OVER"):
			c.replace(i, i, lastValueFunc)
		case c.isCall(i, "STDDEV"):
			c.replace(i, i, "STDDEV_SAMP")
		case c.isCall(i, "VARIANCE"):
			c.replace(i, i, "VAR_SAMP")
		case c.isCall(i, "SPLIT"):
			c.replace(i, i, BuiltinPrefix+"split")
		case c.isCall(i, "CARDINALITY"):
			c.replace(i, i, BuiltinPrefix+"cardinality")
		case c.isCall(i, "REGEXP") && c.functionPosition(i):
			c.replace(i, i, BuiltinPrefix+"regexp")
		}
	}
	return nil
}

// rewriteArrayAggWords takes the words TiDB cannot parse out of the call
// ARRAY_AGG([ALL | DISTINCT] x [RESPECT NULLS | IGNORE NULLS]) at token
// i: ALL and RESPECT NULLS are the defaults and go; IGNORE NULLS becomes
// the argument __ignore_nulls() after x. It reports whether DISTINCT was
// there, for the caller to rename the call.
func (c *stmtCtx) rewriteArrayAggWords(i int) (distinct bool, err *posError) {
	open := i + 1
	close := c.match[open]
	first := open + 1
	if c.isKw(first, "DISTINCT") || c.isKw(first, "ALL") {
		distinct = c.isKw(first, "DISTINCT")
		c.replace(first, first, "")
		first++
	}
	if k := close - 2; k >= first && c.isKw(close-1, "NULLS") && (c.isKw(k, "RESPECT") || c.isKw(k, "IGNORE")) &&
		c.parent[k] == open && !c.covered[k] {
		if k == first || c.isPunct(k-1, ",") {
			return false, c.errAt(k, "ARRAY_AGG expects a value before %s NULLS", c.upper(k))
		}
		text := ""
		if c.isKw(k, "IGNORE") {
			text = ", " + IgnoreNullsFunc + "()"
		}
		c.replace(k, close-1, text)
	}
	if first >= close {
		return false, c.errAt(i, "ARRAY_AGG expects a value")
	}
	return distinct, nil
}
