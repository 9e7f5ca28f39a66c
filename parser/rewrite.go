package parser

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/types"
)

// stmtCtx holds one statement's tokens while the rewrite passes collect
// edits. Token indexes are into toks; an index past the end is allowed in
// the helpers and means "end of statement".
type stmtCtx struct {
	st      *Statement
	src     string
	toks    []token
	match   []int  // index of the partner of each '(' and ')'; -1 for other tokens
	parent  []int  // index of the innermost '(' enclosing each token; -1 at depth 0
	covered []bool // tokens already replaced by a rewrite; later passes skip them
	edits   []edit
	// hints are the statement's /*+ ... */ comments (hints.go).
	hints []span
	// colOrdinal counts the columns of a CREATE TABLE column list met so
	// far (ComputedColumn.Ordinal).
	colOrdinal int
}

func newStmtCtx(st *Statement) (*stmtCtx, *posError) {
	c := &stmtCtx{
		st:      st,
		src:     st.src,
		toks:    st.toks,
		match:   make([]int, len(st.toks)),
		parent:  make([]int, len(st.toks)),
		covered: make([]bool, len(st.toks)),
	}
	var stack []int
	for i := range c.toks {
		c.match[i] = -1
		c.parent[i] = -1
		if len(stack) > 0 {
			c.parent[i] = stack[len(stack)-1]
		}
		switch {
		case c.isPunct(i, "("):
			stack = append(stack, i)
		case c.isPunct(i, ")"):
			if len(stack) == 0 {
				return nil, c.errAt(i, "unbalanced parentheses: ')' without a matching '('")
			}
			open := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c.match[open], c.match[i] = i, open
			c.parent[i] = c.parent[open]
		}
	}
	if len(stack) > 0 {
		return nil, c.errAt(stack[len(stack)-1], "unbalanced parentheses: '(' is never closed")
	}
	return c, nil
}

func (c *stmtCtx) text(i int) string {
	if i < 0 || i >= len(c.toks) {
		return ""
	}
	return c.src[c.toks[i].start:c.toks[i].end]
}

// upper is the upper-cased text of a bare word, "" for other tokens.
func (c *stmtCtx) upper(i int) string {
	if i < 0 || i >= len(c.toks) || c.toks[i].kind != tkIdent {
		return ""
	}
	return strings.ToUpper(c.text(i))
}

func (c *stmtCtx) isKw(i int, kw string) bool {
	return i >= 0 && i < len(c.toks) && c.toks[i].kind == tkIdent && strings.EqualFold(c.text(i), kw)
}

func (c *stmtCtx) isPunct(i int, p string) bool {
	return i >= 0 && i < len(c.toks) && c.toks[i].kind == tkPunct && c.text(i) == p
}

func (c *stmtCtx) isName(i int) bool {
	return i >= 0 && i < len(c.toks) && (c.toks[i].kind == tkIdent || c.toks[i].kind == tkQuotedIdent)
}

func (c *stmtCtx) isStringLit(i int) bool {
	return i >= 0 && i < len(c.toks) && (c.toks[i].kind == tkString || c.toks[i].kind == tkDString)
}

// nameValue is an identifier's name: unquoted for `quoted` ones.
func (c *stmtCtx) nameValue(i int) string {
	if c.toks[i].kind == tkQuotedIdent {
		return unquote(c.text(i))
	}
	return c.text(i)
}

// offAt is the original offset of token i, or the statement end past the last token.
func (c *stmtCtx) offAt(i int) int {
	if i < 0 {
		return c.st.start
	}
	if i >= len(c.toks) {
		return c.st.end
	}
	return c.toks[i].start
}

func (c *stmtCtx) errAt(i int, format string, args ...any) *posError {
	return &posError{c.offAt(i), fmt.Sprintf(format, args...)}
}

// describe names token i for an error message.
func (c *stmtCtx) describe(i int) string {
	if i >= len(c.toks) {
		return "end of statement"
	}
	return strconv.Quote(c.text(i))
}

// replace replaces tokens first..last (inclusive) with text and marks them
// covered. Offsets inside text map to the first token.
func (c *stmtCtx) replace(first, last int, text string) {
	c.replaceSpan(first, last, c.toks[first].start, c.toks[last].end, text, c.toks[first].start)
}

// replaceSpan replaces the original bytes [start, end), which hold tokens
// first..last and maybe the space around them, with text mapped to orig.
func (c *stmtCtx) replaceSpan(first, last, start, end int, text string, orig int) {
	c.edits = append(c.edits, edit{start, end, text, orig})
	for i := first; i <= last; i++ {
		c.covered[i] = true
	}
}

// insertAfter inserts text right after token i.
func (c *stmtCtx) insertAfter(i int, text string) {
	end := c.toks[i].end
	c.edits = append(c.edits, edit{end, end, text, end})
}

// rewrite runs all passes over the statement. Order matters: passes that
// replace whole constructs (commands, WITH options, window functions) run
// first and mark their tokens covered so later passes leave them alone.
func (c *stmtCtx) rewrite() *posError {
	if cmd, err := c.parseCommand(); err != nil || cmd != nil {
		c.st.Command = cmd
		return err
	}
	if err := c.checkReservedNames(); err != nil {
		return err
	}
	if err := c.checkNumbers(); err != nil {
		return err
	}
	for _, pass := range []func() *posError{
		c.rewriteHints,     // hints.go
		c.rewriteExplain,   // statements.go
		c.rewriteAlterView, // statements.go
		c.rewriteTemporary, // statements.go
		c.rewriteCreateTable,
		c.rewriteWindowTVFs,
		c.rewriteUnnest,         // types.go
		c.rewriteQualifiedNames, // statements.go
		c.rewriteCasts,
		c.rewriteFunctionSyntax, // funcsyntax.go
		c.rewriteQueries,        // queries.go
		c.rewriteFloorTo,
		c.rewriteIntervals,
		c.rewriteFullJoins,
		c.rewriteTemporalJoins, // temporal.go
		c.rewriteKeywordNames,  // types.go
		c.rewriteCollections,   // types.go
		c.rewriteValueSyntax,   // values.go
	} {
		if err := pass(); err != nil {
			return err
		}
	}
	return nil
}

// checkReservedNames rejects user identifiers that could be mistaken for
// what the rewrites synthesize, and STRAIGHT_JOIN, which stands for FULL
// JOIN after the rewrite (see FullJoinMarker).
func (c *stmtCtx) checkReservedNames() *posError {
	for i, t := range c.toks {
		if t.kind == tkIdent && strings.EqualFold(c.text(i), "STRAIGHT_JOIN") {
			return c.errAt(i, "STRAIGHT_JOIN is not supported")
		}
		if !c.isName(i) {
			continue
		}
		n := strings.ToLower(c.nameValue(i))
		if strings.HasPrefix(n, placeholderPrefix) || strings.HasPrefix(n, watermarkPrefix) || strings.HasPrefix(n, qualifiedPrefix) || strings.HasPrefix(n, hintPrefix) || strings.HasPrefix(n, computedPrefix) || n == likePlaceholder ||
			n == CastFunc || n == TryCastFunc || n == IntervalFunc || n == FloorToFunc || n == CeilToFunc ||
			n == rowFunc || n == unnestFunc || strings.HasPrefix(n, unnestPrefix) || n == arrayFunc || n == mapFunc || n == itemFunc || n == fieldFunc || n == anyFunc ||
			strings.HasPrefix(n, "__") && c.isPunct(i+1, "(") { // the internal functions of funcsyntax.go
			return c.errAt(i, "%s is a reserved name", c.text(i))
		}
	}
	return nil
}

// maxLiteralDigits bounds the digits of a decimal literal handed to TiDB:
// its decimal holds 9 words of 9 digits, split between the integer and
// the fraction, and a literal that overflows them panics inside TiDB. Up
// to 63 digits always fit.
const maxLiteralDigits = 63

// checkNumbers refuses decimal literals TiDB cannot hold, with the error
// the planner gives every literal past DECIMAL's precision (which such a
// literal always is: its digits, less the integer part's leading zeros,
// are its precision or more).
func (c *stmtCtx) checkNumbers() *posError {
	for i, t := range c.toks {
		if t.kind != tkNumber {
			continue
		}
		text := c.text(i)
		if strings.ContainsAny(text, "eE") {
			continue // a float: TiDB parses it as a double
		}
		intPart, frac, _ := strings.Cut(text, ".")
		if len(strings.TrimLeft(intPart, "0"))+len(frac) > maxLiteralDigits {
			return c.errAt(i, "%s", types.LiteralPrecisionMessage(text))
		}
	}
	return nil
}

// ---- CREATE TABLE ----

// columnTypes maps the Flink column types TiDB does not know to the TiDB
// types that stand in for them in a CREATE TABLE column list. In the
// parsed ast.ColumnDef the FieldType then reads:
//
//	STRING           TEXT:         Tp mysql.TypeBlob, charset ""
//	BYTES            BLOB:         Tp mysql.TypeBlob, charset "binary", flag BinaryFlag
//
// so a planner maps TypeBlob back to BYTES when the charset is binary and
// to STRING otherwise. (TIMESTAMP_LTZ goes to the planner as text, see
// types.go.) Types TiDB parses natively (BIGINT, INT, BOOLEAN -> tinyint(1),
// DOUBLE, DECIMAL(p,s), VARCHAR(n), DATE, TIMESTAMP(p), ...) are untouched.
var columnTypes = map[string]string{
	"STRING": "TEXT",
	"BYTES":  "BLOB",
}

// tableElementKeywords start a table element that is not a column.
var tableElementKeywords = map[string]bool{
	"CONSTRAINT": true, "PRIMARY": true, "UNIQUE": true, "KEY": true, "INDEX": true,
	"FOREIGN": true, "CHECK": true, "FULLTEXT": true, "SPATIAL": true,
}

// rewriteCreateTable handles CREATE [TEMPORARY] TABLE and CREATE
// MATERIALIZED VIEW (which becomes CREATE TABLE ... AS).
func (c *stmtCtx) rewriteCreateTable() *posError {
	if !c.isKw(0, "CREATE") {
		return nil
	}
	i := 1
	switch {
	case c.isKw(1, "MATERIALIZED") && c.isKw(2, "VIEW"):
		c.replace(1, 2, "TABLE")
		c.st.MaterializedView = true
		i = 3
	case c.isKw(1, "TEMPORARY") && c.isKw(2, "TABLE"):
		i = 3
	case c.isKw(1, "TABLE"):
		i = 2
	default:
		return nil
	}
	if c.isKw(i, "IF") && c.isKw(i+1, "NOT") && c.isKw(i+2, "EXISTS") {
		i += 3
	}
	// The table name: name [. name ...].
	if !c.isName(i) {
		return nil // TiDB will say what is wrong
	}
	i++
	for c.isPunct(i, ".") && c.isName(i+1) {
		i += 2
	}
	hasColumns := false
	if c.isPunct(i, "(") && !c.isKw(i+1, "SELECT") && !c.isKw(i+1, "WITH") && !c.isKw(i+1, "VALUES") && !c.isKw(i+1, "TABLE") {
		if err := c.rewriteTableElements(i, c.match[i]); err != nil {
			return err
		}
		i = c.match[i] + 1
		hasColumns = true
	}
	if err := c.rewriteTableClauses(i, hasColumns); err != nil { // ddl.go
		return err
	}
	// WITH ( at depth 0 before the query of a CREATE TABLE ... AS. A CTE is
	// WITH name, never WITH (.
	for ; i < len(c.toks); i++ {
		if c.parent[i] != -1 {
			continue
		}
		if c.isKw(i, "AS") || c.isKw(i, "SELECT") || c.isKw(i, "LIKE") {
			break
		}
		if c.isKw(i, "WITH") && c.isPunct(i+1, "(") {
			return c.rewriteOptions(i)
		}
	}
	return nil
}

// rewriteTableElements rewrites the column list between the parentheses
// at open and close.
func (c *stmtCtx) rewriteTableElements(open, close int) *posError {
	s := open + 1
	for k := open + 1; k <= close; k++ {
		if k < close && compositeTypeWords[c.upper(k)] && c.isPunct(k+1, "<") {
			end, _ := c.typeEnd(k, close) // types.go: ROW<a INT, b INT> holds commas
			k = end - 1
			continue
		}
		if k < close && !(c.isPunct(k, ",") && c.parent[k] == open) {
			continue
		}
		if err := c.rewriteTableElement(open, s, k); err != nil {
			return err
		}
		if s < k {
			kind, name := c.elementKind(s, k)
			c.st.Elements = append(c.st.Elements, TableElement{Kind: kind, Name: name, Text: c.src[c.toks[s].start:c.toks[k-1].end]})
		}
		if c.isName(s) && !c.isKw(s, "WATERMARK") && !(tableElementKeywords[c.upper(s)] && !c.isKw(s, "KEY")) {
			c.colOrdinal++
		}
		s = k + 1
	}
	return nil
}

// rewriteTableElement rewrites one element: tokens [s, e) of the column
// list opened at open.
func (c *stmtCtx) rewriteTableElement(open, s, e int) *posError {
	if s >= e {
		return nil // empty element: TiDB reports it
	}
	if c.isKw(s, "WATERMARK") && c.isKw(s+1, "FOR") {
		return c.rewriteWatermark(s, e)
	}
	if done, err := c.rewriteComputedOrMetadata(s, e); done || err != nil { // ddl.go
		return err
	}
	// A column's type directly follows its name. KEY followed by a type
	// is a column named key, as Flink allows (there are no KEY indexes).
	if c.isName(s) && (!tableElementKeywords[c.upper(s)] || c.isKw(s, "KEY") && c.toks[s+1].kind == tkIdent) && s+1 < e {
		if !c.rewriteColumnType(s, e) { // types.go
			if t, ok := columnTypes[c.upper(s+1)]; ok {
				c.replace(s+1, s+1, t)
			}
		}
	}
	// PRIMARY KEY [(cols)] NOT ENFORCED, at table or column level.
	for k := s; k+1 < e; k++ {
		if c.parent[k] != open || !c.isKw(k, "PRIMARY") || !c.isKw(k+1, "KEY") {
			continue
		}
		m := k + 2
		if c.isPunct(m, "(") {
			m = c.match[m] + 1
		}
		if m+1 < e && c.isKw(m, "NOT") && c.isKw(m+1, "ENFORCED") {
			c.replace(m, m+1, "")
		}
	}
	return nil
}

// rewriteWatermark turns WATERMARK FOR col AS expr (tokens [s, e)) into a
// CHECK constraint TiDB parses, CONSTRAINT __wm_<n> CHECK (expr) NOT
// ENFORCED; takeWatermarks takes it out of the AST again.
func (c *stmtCtx) rewriteWatermark(s, e int) *posError {
	col := s + 2
	if col >= e || !c.isName(col) || c.isKw(col, "AS") {
		return c.errAt(col, "WATERMARK FOR needs a column name, found %s", c.describe(col))
	}
	if col+1 >= e || !c.isKw(col+1, "AS") {
		return c.errAt(col+1, "WATERMARK FOR %s needs AS <expression>, found %s", c.text(col), c.describe(col+1))
	}
	if col+2 >= e {
		return c.errAt(col+2, "WATERMARK FOR %s AS needs an expression", c.text(col))
	}
	line, lcol := c.st.pos.at(c.toks[s].start)
	c.st.Watermarks = append(c.st.Watermarks, Watermark{Column: c.nameValue(col), Line: line, Col: lcol})
	c.replaceSpan(s, col+1, c.toks[s].start, c.toks[col+2].start,
		fmt.Sprintf("CONSTRAINT %s%d CHECK (", watermarkPrefix, len(c.st.Watermarks)), c.toks[s].start)
	c.insertAfter(e-1, ") NOT ENFORCED")
	return nil
}

// rewriteOptions removes WITH ('k' = 'v', ...) starting at token w and
// records the options.
func (c *stmtCtx) rewriteOptions(w int) *posError {
	open := w + 1
	close := c.match[open]
	opts := []Option{}
	seen := map[string]bool{}
	for k := open + 1; k < close; {
		if !c.isStringLit(k) {
			return c.errAt(k, "WITH option key must be a string literal such as 'connector', found %s", c.describe(k))
		}
		if !c.isPunct(k+1, "=") {
			return c.errAt(k+1, "expected '=' after WITH option key %s, found %s", c.text(k), c.describe(k+1))
		}
		if !c.isStringLit(k + 2) {
			return c.errAt(k+2, "WITH option value must be a string literal, found %s", c.describe(k+2))
		}
		key := unquote(c.text(k))
		if seen[key] {
			return c.errAt(k, "duplicate WITH option %s", c.text(k))
		}
		seen[key] = true
		line, col := c.st.pos.at(c.toks[k].start)
		opts = append(opts, Option{Key: key, Value: unquote(c.text(k + 2)), Line: line, Col: col})
		k += 3
		switch {
		case k == close:
		case c.isPunct(k, ",") && k+1 == close:
			return c.errAt(close, "expected another option after ','")
		case c.isPunct(k, ","):
			k++
		default:
			return c.errAt(k, "expected ',' or ')' in WITH options, found %s", c.describe(k))
		}
	}
	c.st.Options = opts
	c.replace(w, close, "")
	return nil
}

// ---- CAST ----

// rewriteCasts turns CAST(x AS type) into __cast(x, 'TYPE') (and TRY_CAST
// into __try_cast), so the planner sees the Flink type exactly as written
// instead of whatever TiDB would make of it (TiDB rejects most Flink type
// names in CAST anyway).
func (c *stmtCtx) rewriteCasts() *posError {
	for i := range c.toks {
		if c.covered[i] || !(c.isKw(i, "CAST") || c.isKw(i, "TRY_CAST")) || !c.isPunct(i+1, "(") || c.isPunct(i-1, ".") {
			continue
		}
		open, close := i+1, c.match[i+1]
		as := -1
		for k := open + 1; k < close; k++ {
			if c.parent[k] == open && c.isKw(k, "AS") {
				as = k
				break
			}
		}
		switch {
		case as < 0:
			return c.errAt(i, "%s needs AS <type>", c.upper(i))
		case as == open+1:
			return c.errAt(as, "%s needs an expression before AS", c.upper(i))
		case as+1 == close:
			return c.errAt(close, "%s needs a type after AS", c.upper(i))
		}
		fn := CastFunc
		if c.isKw(i, "TRY_CAST") {
			fn = TryCastFunc
		}
		c.replace(i, i, fn)
		// From the end of the expression, so no space is left before the comma.
		c.replaceSpan(as, close-1, c.toks[as-1].end, c.toks[close-1].end, ", "+quoteString(c.typeText(as+1, close)), c.toks[as].start)
	}
	return nil
}

// rewriteFloorTo turns Flink's FLOOR(ts TO unit) and CEIL(ts TO unit)
// into __floor_to(ts, 'UNIT') and __ceil_to(ts, 'UNIT'); TiDB has no TO
// form. FLOOR(x) of a number is left alone.
func (c *stmtCtx) rewriteFloorTo() *posError {
	for i := range c.toks {
		if c.covered[i] || !(c.isKw(i, "FLOOR") || c.isKw(i, "CEIL") || c.isKw(i, "CEILING")) || !c.isPunct(i+1, "(") || c.isPunct(i-1, ".") {
			continue
		}
		open, close := i+1, c.match[i+1]
		to := -1
		for k := open + 1; k < close; k++ {
			if c.parent[k] == open && c.isKw(k, "TO") {
				to = k
			}
		}
		if to < 0 {
			continue
		}
		if to == open+1 {
			return c.errAt(to, "%s needs an expression before TO", c.upper(i))
		}
		if to+2 != close || c.toks[to+1].kind != tkIdent {
			return c.errAt(to, "%s(... TO unit) needs one time unit after TO, e.g. HOUR", c.upper(i))
		}
		fn := FloorToFunc
		if !c.isKw(i, "FLOOR") {
			fn = CeilToFunc
		}
		c.replace(i, i, fn)
		c.replaceSpan(to, to+1, c.toks[to-1].end, c.toks[to+1].end, ", "+quoteString(c.upper(to+1)), c.toks[to].start)
	}
	return nil
}

// gluedToPrev are the type tokens written without a space before them.
var gluedToPrev = map[string]bool{"(": true, ")": true, ",": true, "<": true, ">": true, ">>": true}

// typeText normalizes the type written in tokens [s, e): words in upper
// case separated by one space, no spaces inside parentheses or around
// commas and angle brackets: "decimal( 10, 2 )" -> "DECIMAL(10,2)". ROW
// field names (a word after '<', '(' or ',' that a type follows) keep
// their case: "row<a int>" -> "ROW<a INT>".
func (c *stmtCtx) typeText(s, e int) string {
	var sb strings.Builder
	prev := ""
	for k := s; k < e; k++ {
		t := c.text(k)
		fieldName := (prev == "<" || prev == "(" || prev == ",") && k+1 < e && c.isName(k+1)
		if c.toks[k].kind == tkIdent && !fieldName {
			t = strings.ToUpper(t)
		}
		if k > s && !(prev == "(" || prev == "," || prev == "<" || gluedToPrev[t]) {
			sb.WriteByte(' ')
		}
		sb.WriteString(t)
		prev = t
	}
	return sb.String()
}

// ---- INTERVAL ----

// intervalUnits maps the units we accept, in upper case, to their canonical
// singular spelling. TiDB knows the singular ones except MILLISECOND.
var intervalUnits = map[string]string{
	"MICROSECOND": "MICROSECOND", "MICROSECONDS": "MICROSECOND",
	"MILLISECOND": "MILLISECOND", "MILLISECONDS": "MILLISECOND",
	"SECOND": "SECOND", "SECONDS": "SECOND",
	"MINUTE": "MINUTE", "MINUTES": "MINUTE",
	"HOUR": "HOUR", "HOURS": "HOUR",
	"DAY": "DAY", "DAYS": "DAY",
	"WEEK": "WEEK", "WEEKS": "WEEK",
	"MONTH": "MONTH", "MONTHS": "MONTH",
	"QUARTER": "QUARTER", "QUARTERS": "QUARTER",
	"YEAR": "YEAR", "YEARS": "YEAR",
	"SECOND_MICROSECOND": "SECOND_MICROSECOND", "MINUTE_MICROSECOND": "MINUTE_MICROSECOND",
	"MINUTE_SECOND": "MINUTE_SECOND", "HOUR_MICROSECOND": "HOUR_MICROSECOND",
	"HOUR_SECOND": "HOUR_SECOND", "HOUR_MINUTE": "HOUR_MINUTE",
	"DAY_MICROSECOND": "DAY_MICROSECOND", "DAY_SECOND": "DAY_SECOND",
	"DAY_MINUTE": "DAY_MINUTE", "DAY_HOUR": "DAY_HOUR", "YEAR_MONTH": "YEAR_MONTH",
}

// dateArithFuncs take INTERVAL natively as their second argument.
var dateArithFuncs = map[string]bool{"DATE_ADD": true, "DATE_SUB": true, "ADDDATE": true, "SUBDATE": true}

// rewriteIntervals handles INTERVAL <value> <unit>. TiDB accepts INTERVAL
// only in ts +/- INTERVAL ..., INTERVAL ... + ts, DATE_ADD-like calls and
// window frames. Where it is a whole argument or list element, as in
// TUMBLE(ts, INTERVAL '10' SECOND), it becomes __interval('10', 'SECOND').
// Elsewhere it stays native, with plural units made singular and
// MILLISECOND (unknown to TiDB) turned into MICROSECOND.
func (c *stmtCtx) rewriteIntervals() *posError {
	for i := range c.toks {
		if c.covered[i] || !c.isKw(i, "INTERVAL") {
			continue
		}
		v := i + 1 // first token of the value proper, after a sign
		if c.isPunct(v, "+") || c.isPunct(v, "-") {
			v++
		}
		if v >= len(c.toks) {
			continue
		}
		vEnd := v
		switch c.toks[v].kind {
		case tkPunct:
			if !c.isPunct(v, "(") {
				continue
			}
			vEnd = c.match[v] // INTERVAL (expr) unit, or MySQL's INTERVAL(n, n1, ...) function
		case tkString, tkDString, tkNumber, tkIdent, tkQuotedIdent:
		}
		u := vEnd + 1
		if u >= len(c.toks) || c.toks[u].kind != tkIdent {
			continue
		}
		// Flink's 'unit TO unit' (YEAR TO MONTH, DAY TO SECOND) is the
		// compound unit TiDB names with an underscore (YEAR_MONTH).
		uEnd, uword := u, c.upper(u)
		if c.isKw(u+1, "TO") && u+2 < len(c.toks) && c.toks[u+2].kind == tkIdent {
			uEnd, uword = u+2, c.upper(u)+"_"+c.upper(u+2)
		}
		literal := v == vEnd && (c.toks[v].kind == tkString || c.toks[v].kind == tkDString || c.toks[v].kind == tkNumber)
		argPos := (c.isPunct(i-1, "(") || c.isPunct(i-1, ",")) && (c.isPunct(uEnd+1, ",") || c.isPunct(uEnd+1, ")")) &&
			!(c.isPunct(i-1, ",") && c.parent[i] >= 0 && dateArithFuncs[c.upper(c.parent[i]-1)])
		argPos = argPos || c.intervalValuePos(i, uEnd) // types.go: SELECT INTERVAL '1' DAY
		unit, known := intervalUnits[uword]
		if !known {
			if uEnd > u {
				return c.errAt(u, "unsupported interval unit %s TO %s", c.text(u), c.text(uEnd))
			}
			if argPos && literal {
				return c.errAt(u, "unknown interval unit %s", c.text(u))
			}
			continue
		}
		if argPos {
			c.replaceSpan(i, i, c.toks[i].start, c.toks[i+1].start, IntervalFunc+"(", c.toks[i].start)
			c.replaceSpan(u, uEnd, c.toks[vEnd].end, c.toks[uEnd].end, ", '"+unit+"')", c.toks[u].start)
			continue
		}
		if unit == "MILLISECOND" {
			if !literal {
				return c.errAt(v, "a MILLISECOND interval needs a literal value here")
			}
			val := c.text(v)
			if c.toks[v].kind != tkNumber {
				val = unquote(val)
			}
			micros, ok := scaleDecimal(val, 1000)
			if !ok {
				return c.errAt(v, "invalid MILLISECOND interval value %s", c.text(v))
			}
			if c.toks[v].kind != tkNumber {
				micros = quoteString(micros)
			}
			c.replace(v, v, micros)
			c.replace(u, u, "MICROSECOND")
		} else if unit != c.upper(u) || uEnd > u {
			c.replace(u, uEnd, unit)
		}
	}
	return nil
}

var decimalRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$`)

// scaleDecimal multiplies the decimal number s by factor and returns it as
// an integer; ok is false if s is not a decimal or the result not whole.
func scaleDecimal(s string, factor int64) (string, bool) {
	s = strings.TrimSpace(s)
	if !decimalRE.MatchString(s) {
		return "", false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "", false
	}
	r.Mul(r, new(big.Rat).SetInt64(factor))
	if !r.IsInt() {
		return "", false
	}
	return r.Num().String(), true
}

// ---- FULL JOIN ----

// rewriteFullJoins turns FULL [OUTER] JOIN into STRAIGHT_JOIN (see FullJoinMarker).
func (c *stmtCtx) rewriteFullJoins() *posError {
	for i := range c.toks {
		if c.covered[i] || !c.isKw(i, "FULL") {
			continue
		}
		j := i + 1
		if c.isKw(j, "OUTER") {
			j++
		}
		if c.isKw(j, "JOIN") {
			c.replace(i, j, FullJoinMarker)
		}
	}
	return nil
}
