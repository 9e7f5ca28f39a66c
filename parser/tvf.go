package parser

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Window table functions. TiDB accepts no table function in FROM, so
//
//	FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) AS w
//
// becomes FROM __tvf_1 AS w, and Statement.WindowTVFs["__tvf_1"] holds the
// call. Placeholders are numbered from 1 in each statement.

// tvfParams lists each function's parameters in positional order; these
// are also the names Flink uses for named arguments (SIZE => ...).
var tvfParams = map[string][]string{
	"TUMBLE":   {"DATA", "TIMECOL", "SIZE", "OFFSET"},
	"HOP":      {"DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"},
	"CUMULATE": {"DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"},
	"SESSION":  {"DATA", "TIMECOL", "GAP"},
}

// tvfDurationUnits are the interval units a window size may use.
var tvfDurationUnits = map[string]time.Duration{
	"MICROSECOND": time.Microsecond,
	"MILLISECOND": time.Millisecond,
	"SECOND":      time.Second,
	"MINUTE":      time.Minute,
	"HOUR":        time.Hour,
	"DAY":         24 * time.Hour,
	"WEEK":        7 * 24 * time.Hour,
}

// SessionGroupWindow is the name the group window SESSION(ts, gap) (in
// GROUP BY, the older form of session windows) is given, because TiDB
// does not accept SESSION as a function name.
const SessionGroupWindow = "__session"

func (c *stmtCtx) rewriteWindowTVFs() *posError {
	for i := range c.toks {
		fn := c.upper(i)
		params, ok := tvfParams[fn]
		if c.covered[i] || !ok || !c.isPunct(i+1, "(") {
			continue
		}
		// Only a call whose first argument is a table is a window TVF;
		// TUMBLE(ts, INTERVAL ...) in GROUP BY is an ordinary function.
		if !c.isKw(i+2, "TABLE") && !(c.isKw(i+2, "DATA") && c.isPunct(i+3, "=>")) {
			if fn == "SESSION" {
				// SESSION is a keyword to TiDB: the group window
				// SESSION(ts, gap) becomes __session(ts, gap).
				c.replace(i, i, SessionGroupWindow)
			}
			continue
		}
		open, close := i+1, c.match[i+1]
		first, last := i, close
		if c.isPunct(i-1, "(") && c.isKw(i-2, "TABLE") && c.match[i-1] == close+1 {
			first, last = i-2, close+1 // the TABLE(...) wrapper
		}
		if !(c.isKw(first-1, "FROM") || c.isKw(first-1, "JOIN") || c.isKw(first-1, "LATERAL") ||
			c.isPunct(first-1, ",") || c.isPunct(first-1, "(")) {
			return c.errAt(first, "window function %s is only allowed in FROM", fn)
		}
		tvf, err := c.parseTVF(fn, params, open, close)
		if err != nil {
			return err
		}
		tvf.Line, tvf.Col = c.st.pos.at(c.toks[first].start)
		if c.st.WindowTVFs == nil {
			c.st.WindowTVFs = map[string]*WindowTVF{}
		}
		name := fmt.Sprintf("%s%d", placeholderPrefix, len(c.st.WindowTVFs)+1)
		c.st.WindowTVFs[name] = tvf
		c.replace(first, last, name)
	}
	return nil
}

// parseTVF reads the arguments between the parentheses at open and close.
func (c *stmtCtx) parseTVF(fn string, params []string, open, close int) (*WindowTVF, *posError) {
	args := map[string][2]int{} // parameter -> token range [s, e) of its value
	named := false
	pos := 0
	s := open + 1
	for k := open + 1; k <= close; k++ {
		if k < close && !(c.isPunct(k, ",") && c.parent[k] == open) {
			continue
		}
		if s == k {
			return nil, c.errAt(k, "missing argument to %s", fn)
		}
		var p string
		if c.toks[s].kind == tkIdent && c.isPunct(s+1, "=>") {
			p = c.upper(s)
			if !slices.Contains(params, p) {
				return nil, c.errAt(s, "%s has no parameter %s; it takes %s", fn, c.text(s), strings.Join(params, ", "))
			}
			named = true
			s += 2
			if s == k {
				return nil, c.errAt(k, "missing value for %s", p)
			}
		} else {
			if named {
				return nil, c.errAt(s, "positional argument after named arguments in %s", fn)
			}
			if pos == len(params) {
				return nil, c.errAt(s, "too many arguments to %s", fn)
			}
			p = params[pos]
			pos++
		}
		if _, dup := args[p]; dup {
			return nil, c.errAt(s, "%s given twice in %s", p, fn)
		}
		args[p] = [2]int{s, k}
		s = k + 1
	}

	tvf := &WindowTVF{Func: fn}
	for _, p := range params {
		r, ok := args[p]
		if !ok {
			if p == "OFFSET" {
				continue
			}
			return nil, c.errAt(close, "%s needs a %s argument", fn, p)
		}
		var err *posError
		switch p {
		case "DATA":
			err = c.parseTVFTable(tvf, r[0], r[1])
		case "TIMECOL":
			if !(c.isKw(r[0], "DESCRIPTOR") && c.isPunct(r[0]+1, "(") && c.isName(r[0]+2) && c.isPunct(r[0]+3, ")") && r[0]+4 == r[1]) {
				return nil, c.errAt(r[0], "%s expects DESCRIPTOR(<time column>) as its time column argument", fn)
			}
			tvf.TimeCol = c.nameValue(r[0] + 2)
		case "OFFSET":
			tvf.Offset, err = c.parseOffset(r[0], r[1])
		default:
			var d time.Duration
			d, err = c.parseDuration(r[0], r[1])
			tvf.Intervals = append(tvf.Intervals, d)
		}
		if err != nil {
			return nil, err
		}
	}
	return tvf, nil
}

// parseTVFTable reads TABLE name [PARTITION BY key | PARTITION BY (k1, k2)]
// from tokens [s, e).
func (c *stmtCtx) parseTVFTable(tvf *WindowTVF, s, e int) *posError {
	if !c.isKw(s, "TABLE") || s+1 >= e || !c.isName(s+1) {
		return c.errAt(s, "%s expects TABLE <name> as its first argument", tvf.Func)
	}
	k := s + 1
	parts := []string{c.nameValue(k)}
	for k++; k+1 < e && c.isPunct(k, ".") && c.isName(k+1); k += 2 {
		parts = append(parts, c.nameValue(k+1))
	}
	tvf.Table = strings.Join(parts, ".")
	if k == e {
		return nil
	}
	if !c.isKw(k, "PARTITION") || !c.isKw(k+1, "BY") {
		return c.errAt(k, "unexpected %s after TABLE %s", c.describe(k), tvf.Table)
	}
	if tvf.Func != "SESSION" {
		return c.errAt(k, "PARTITION BY is only allowed in SESSION windows")
	}
	k += 2
	if c.isName(k) && k+1 == e {
		tvf.PartitionBy = []string{c.nameValue(k)}
		return nil
	}
	if !c.isPunct(k, "(") || c.match[k] != e-1 {
		return c.errAt(k, "PARTITION BY expects a column or a parenthesized list of columns")
	}
	for j := k + 1; j < e-1; j += 2 {
		if !c.isName(j) || !(c.isPunct(j+1, ",") && j+2 < e-1 || j+1 == e-1) {
			return c.errAt(j, "PARTITION BY expects a column or a parenthesized list of columns")
		}
		tvf.PartitionBy = append(tvf.PartitionBy, c.nameValue(j))
	}
	if len(tvf.PartitionBy) == 0 {
		return c.errAt(k, "PARTITION BY expects a column or a parenthesized list of columns")
	}
	return nil
}

// parseDuration reads INTERVAL '<n>' <unit> from tokens [s, e) as a
// positive fixed duration.
func (c *stmtCtx) parseDuration(s, e int) (time.Duration, *posError) {
	return c.parseInterval(s, e, false)
}

// parseOffset reads a window offset, INTERVAL '5' MINUTE, from tokens
// [s, e): any whole number of nanoseconds, negative and zero included.
func (c *stmtCtx) parseOffset(s, e int) (time.Duration, *posError) {
	return c.parseInterval(s, e, true)
}

func (c *stmtCtx) parseInterval(s, e int, offset bool) (time.Duration, *posError) {
	if !c.isKw(s, "INTERVAL") || e != s+3 || !(c.isStringLit(s+1) || c.toks[s+1].kind == tkNumber) || c.toks[s+2].kind != tkIdent {
		return 0, c.errAt(s, "expected a window size like INTERVAL '10' SECOND")
	}
	unitName, known := intervalUnits[c.upper(s+2)]
	if !known {
		return 0, c.errAt(s+2, "unknown interval unit %s", c.text(s+2))
	}
	unit, ok := tvfDurationUnits[unitName]
	if !ok {
		return 0, c.errAt(s+2, "a window size must have a fixed length; %s has none", c.text(s+2))
	}
	val := c.text(s + 1)
	if c.isStringLit(s + 1) {
		val = unquote(val)
	}
	val = strings.TrimSpace(val)
	if !decimalRE.MatchString(val) {
		return 0, c.errAt(s+1, "invalid interval value %s", c.text(s+1))
	}
	r, ok := new(big.Rat).SetString(val)
	if !ok {
		return 0, c.errAt(s+1, "invalid interval value %s", c.text(s+1))
	}
	r.Mul(r, new(big.Rat).SetInt64(int64(unit)))
	if r.Sign() <= 0 && !offset {
		return 0, c.errAt(s+1, "a window size must be positive")
	}
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, c.errAt(s+1, "invalid window size %s %s: not a whole number of nanoseconds or too large", c.text(s+1), c.text(s+2))
	}
	return time.Duration(r.Num().Int64()), nil
}
