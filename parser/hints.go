package parser

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// SQL hints, /*+ ... */, as Flink reads them (its "Hints" page):
//
//	t /*+ OPTIONS('k' = 'v', ...) */       dynamic table options after a table
//	                                       name in FROM, JOIN or INSERT INTO:
//	                                       the name becomes `__qh_<n>`.name and
//	                                       Statement.TableHints gives them back
//	SELECT /*+ BROADCAST(t), ... */ ...    query hints: the batch join
//	                                       strategies (BROADCAST, SHUFFLE_HASH,
//	                                       SHUFFLE_MERGE, NEST_LOOP) and LOOKUP
//	                                       without retries are accepted and
//	                                       change nothing (Statement.QueryHints);
//	                                       the others are refused by name
//
// A hint anywhere else is refused: it is not a comment to Flink either.

// hintPrefix names the schema that marks a table name carrying an
// OPTIONS hint: t /*+ OPTIONS(...) */ -> `__qh_<n>`.t.
const hintPrefix = "__qh_"

// hintedTable is a table name that carries an OPTIONS hint: the parts of
// the name before the table's own (nil, [db] or [catalog, db]) and the
// options.
type hintedTable struct {
	prefix  []string
	options []Option
}

// Hint is one hint of a /*+ ... */ block: its name, upper case, and its
// options as written: Keys[i] = Values[i] for key=value options, else
// bare Values (BROADCAST(t1, t2)) with empty Keys.
type Hint struct {
	Name         string
	Keys, Values []string
	Line, Col    int
	off          int   // in the script
	keyOffs      []int // of each option, in the script
}

// joinStrategyHints are Flink's batch join strategy hints: streaming
// joins have one strategy, and Flink's streaming mode ignores them too.
var joinStrategyHints = map[string]bool{"BROADCAST": true, "SHUFFLE_HASH": true, "SHUFFLE_MERGE": true, "NEST_LOOP": true}

// lookupHintOptions are the LOOKUP hint's options streamsql accepts:
// they choose synchronous or asynchronous lookups and their buffers,
// which change no result (streamsql's lookups are synchronous). The
// retry options change results and are refused by name.
var lookupHintOptions = map[string]bool{"table": true, "async": true, "output-mode": true, "capacity": true, "timeout": true}

// TableHints returns the OPTIONS hint of a table name of this statement,
// nil if it has none.
func (s *Statement) TableHints(tn *ast.TableName) []Option {
	if h, ok := s.hinted[tn.Schema.O]; ok {
		return h.options
	}
	return nil
}

// rewriteHints reads each /*+ ... */ of the statement (see the top of
// this file).
func (c *stmtCtx) rewriteHints() *posError {
	for _, h := range c.hints {
		next := len(c.toks) // the first token after the hint
		for i, t := range c.toks {
			if t.start >= h.end {
				next = i
				break
			}
		}
		hints, err := c.parseHintBlock(h)
		if err != nil {
			return err
		}
		prev := next - 1
		if c.isKw(prev, "SELECT") {
			if err := c.queryHints(h, hints); err != nil {
				return err
			}
			continue
		}
		first, ok := c.hintedTableName(prev)
		if !ok {
			return &posError{h.start, "a hint /*+ ... */ goes after SELECT (query hints) or after a table name in FROM, JOIN or INSERT INTO (OPTIONS)"}
		}
		var opts []Option
		for _, x := range hints {
			if x.Name != "OPTIONS" {
				return c.hintErr(x, "%s is not a table hint: the one table hint is OPTIONS('key' = 'value', ...)", x.Name)
			}
			if len(x.Keys) == 0 || slicesHasEmpty(x.Keys) {
				return c.hintErr(x, "OPTIONS takes 'key' = 'value' pairs")
			}
			for i, k := range x.Keys {
				line, col := c.st.pos.at(x.keyOffs[i])
				opts = append(opts, Option{Key: k, Value: x.Values[i], Line: line, Col: col})
			}
		}
		var prefix []string
		for i := first; i < prev; i += 2 {
			prefix = append(prefix, c.nameValue(i))
		}
		if c.st.hinted == nil {
			c.st.hinted = map[string]hintedTable{}
		}
		ph := fmt.Sprintf("%s%d", hintPrefix, len(c.st.hinted)+1)
		c.st.hinted[ph] = hintedTable{prefix: prefix, options: opts}
		c.replace(first, prev, "`"+ph+"`.`"+strings.ReplaceAll(c.nameValue(prev), "`", "``")+"`")
	}
	return nil
}

func slicesHasEmpty(ss []string) bool {
	for _, s := range ss {
		if s == "" {
			return true
		}
	}
	return false
}

// hintedTableName reports whether token last ends a table name in a
// position that takes an OPTIONS hint (after FROM, JOIN, INTO or a comma
// of a FROM list), and returns the name's first token.
func (c *stmtCtx) hintedTableName(last int) (int, bool) {
	if !c.isName(last) || c.covered[last] {
		return 0, false
	}
	first := last
	for c.isPunct(first-1, ".") && c.isName(first-2) && last-first < 4 {
		first -= 2
	}
	switch u := c.upper(first - 1); {
	case u == "FROM" || u == "JOIN" || u == "INTO":
		return first, true
	case c.isPunct(first-1, ","):
		// A comma of a FROM list: FROM goes before it at the same depth.
		for i := first - 2; i >= 0 && c.parent[i] == c.parent[first]; i-- {
			if c.isPunct(i, ")") && c.match[i] >= 0 {
				i = c.match[i] // skip a parenthesized group
				continue
			}
			if c.isKw(i, "FROM") {
				return first, true
			}
			if clauseKeywords[c.upper(i)] {
				return 0, false
			}
		}
	}
	return 0, false
}

// queryHints checks the hints after SELECT.
func (c *stmtCtx) queryHints(h span, hints []Hint) *posError {
	for _, x := range hints {
		switch {
		case joinStrategyHints[x.Name]:
			if len(x.Values) == 0 || len(x.Keys) > 0 && x.Keys[0] != "" {
				return c.hintErr(x, "%s takes table names: %s(t1[, t2 ...])", x.Name, x.Name)
			}
		case x.Name == "LOOKUP":
			table := false
			for i, k := range x.Keys {
				if k == "" {
					return c.hintErr(x, "LOOKUP takes 'key' = 'value' options")
				}
				if !lookupHintOptions[k] {
					if strings.HasPrefix(k, "retry") || k == "fixed-delay" || k == "max-attempts" {
						return &posError{x.keyOffs[i], fmt.Sprintf("LOOKUP option '%s' is not supported: streamsql does not retry lookups", k)}
					}
					return c.hintErr(x, "LOOKUP has no option '%s'", k)
				}
				table = table || k == "table" && x.Values[i] != ""
			}
			if !table {
				return c.hintErr(x, "LOOKUP needs its 'table' option")
			}
		case x.Name == "OPTIONS":
			return c.hintErr(x, "OPTIONS is a table hint: write it after the table name, t /*+ OPTIONS(...) */")
		case x.Name == "STATE_TTL":
			return c.hintErr(x, "the STATE_TTL hint is not supported; set 'table.exec.state.ttl' for the job")
		default:
			return c.hintErr(x, "the %s hint is not supported", x.Name)
		}
		c.st.QueryHints = append(c.st.QueryHints, x)
	}
	return nil
}

func (c *stmtCtx) hintErr(x Hint, format string, args ...any) *posError {
	return &posError{x.off, fmt.Sprintf(format, args...)}
}

// parseHintBlock reads the hints of /*+ hint [, hint ...] */: a hint is
// name, name(option, ...) or name(key = value, ...), a key an identifier
// or string, a value or option an identifier, number or string.
func (c *stmtCtx) parseHintBlock(h span) ([]Hint, *posError) {
	base := h.start + 3
	body := c.src[base : h.end-2]
	lr, perr := lex(body)
	if perr != nil {
		return nil, &posError{base + perr.off, perr.msg}
	}
	toks := lr.toks
	off := func(i int) int {
		if i < len(toks) {
			return base + toks[i].start
		}
		return h.end - 2
	}
	text := func(i int) string { return body[toks[i].start:toks[i].end] }
	isP := func(i int, p string) bool { return i < len(toks) && toks[i].kind == tkPunct && text(i) == p }
	value := func(i int) (string, bool) {
		if i >= len(toks) {
			return "", false
		}
		switch toks[i].kind {
		case tkString, tkDString, tkQuotedIdent:
			return unquote(text(i)), true
		case tkIdent, tkNumber:
			return text(i), true
		}
		return "", false
	}
	var hints []Hint
	i := 0
	for {
		if i >= len(toks) || toks[i].kind != tkIdent {
			return nil, &posError{off(i), "a hint needs a name: /*+ NAME(...) */"}
		}
		x := Hint{Name: strings.ToUpper(text(i)), off: off(i)}
		x.Line, x.Col = c.st.pos.at(off(i))
		i++
		if isP(i, "(") {
			i++
			for !isP(i, ")") {
				v, ok := value(i)
				if !ok {
					return nil, &posError{off(i), fmt.Sprintf("hint %s: expected an option, a 'key' = 'value' pair or ')'", x.Name)}
				}
				i++
				k := ""
				if isP(i, "=") {
					k = v
					if v, ok = value(i + 1); !ok {
						return nil, &posError{off(i + 1), fmt.Sprintf("hint %s: expected a value after '%s' =", x.Name, k)}
					}
					i += 2
				}
				first := i - 1 // the option's first token
				if k != "" {
					first = i - 3
				}
				x.Keys, x.Values = append(x.Keys, k), append(x.Values, v)
				x.keyOffs = append(x.keyOffs, off(first))
				if isP(i, ",") {
					i++
				} else if !isP(i, ")") {
					return nil, &posError{off(i), fmt.Sprintf("hint %s: expected ',' or ')'", x.Name)}
				}
			}
			i++
		}
		hints = append(hints, x)
		if i >= len(toks) {
			return hints, nil
		}
		if !isP(i, ",") {
			return nil, &posError{off(i), "hints are separated by ','"}
		}
		i++
	}
}
