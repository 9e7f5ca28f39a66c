package parser

// ---- Flink value syntax TiDB does not parse ----
//
//	x IS NOT DISTINCT FROM y          x <=> y
//	x IS DISTINCT FROM y              x <=> y IS FALSE  (<=> and IS bind alike, from the left)
//	OVERLAY(s PLACING r FROM p)       overlay(s, r, p)
//	OVERLAY(s PLACING r FROM p FOR n) overlay(s, r, p, n)
//	TRIM(BOTH s), TRIM(LEADING s)     TRIM(BOTH ' ' FROM s), ...: trims spaces
//	CASE x WHEN 1, 2 THEN r           CASE x WHEN __any(1, 2) THEN r
//
// The results are bound by package expr (overlay, and __any inside a
// simple CASE).

// anyFunc carries the values of a WHEN with several values.
const anyFunc = "__any"

// rewriteValueSyntax runs the rewrites listed above.
func (c *stmtCtx) rewriteValueSyntax() *posError {
	for i := range c.toks {
		if c.covered[i] {
			continue
		}
		switch {
		case c.isKw(i, "IS") && c.isKw(i+1, "NOT") && c.isKw(i+2, "DISTINCT") && c.isKw(i+3, "FROM"):
			c.replace(i, i+3, "<=>")
		case c.isKw(i, "IS") && c.isKw(i+1, "DISTINCT") && c.isKw(i+2, "FROM"):
			if err := c.rewriteIsDistinct(i); err != nil {
				return err
			}
		case c.isCall(i, "OVERLAY"):
			if err := c.rewriteOverlay(i); err != nil {
				return err
			}
		case c.isCall(i, "TRIM"):
			open := i + 1
			if w := c.upper(open + 1); (w == "BOTH" || w == "LEADING" || w == "TRAILING") && !c.hasTopLevelKw(open, "FROM") && open+2 < c.match[open] {
				c.insertAfter(open+1, " ' ' FROM")
			}
		case c.isKw(i, "WHEN"):
			c.rewriteWhenList(i)
		}
	}
	return nil
}

// hasTopLevelKw reports whether the parentheses opened at open hold kw at
// their own depth.
func (c *stmtCtx) hasTopLevelKw(open int, kw string) bool {
	for k := open + 1; k < c.match[open]; k++ {
		if c.parent[k] == open && c.isKw(k, kw) {
			return true
		}
	}
	return false
}

// rewriteIsDistinct turns IS DISTINCT FROM y at token i into <=> y IS
// FALSE: the right operand ends where a comparison's would.
func (c *stmtCtx) rewriteIsDistinct(i int) *posError {
	c.replace(i, i+2, "<=>")
	k := i + 3
	depth := c.parent[i]
	for ; k < len(c.toks); k++ {
		if c.parent[k] != depth {
			continue
		}
		if c.isPunct(k, ")") || c.isPunct(k, ",") || c.isPunct(k, ";") || c.isPunct(k, "=") || c.isPunct(k, "<") ||
			c.isPunct(k, ">") || c.isPunct(k, "<=") || c.isPunct(k, ">=") || c.isPunct(k, "<>") || c.isPunct(k, "!=") {
			break
		}
		switch c.upper(k) {
		case "AND", "OR", "XOR", "THEN", "ELSE", "END", "WHEN", "FROM", "WHERE", "GROUP", "HAVING", "ORDER",
			"LIMIT", "UNION", "AS", "IS", "ON", "JOIN", "INNER", "LEFT", "RIGHT", "CROSS", "FULL", "WINDOW",
			"BETWEEN", "LIKE", "IN", "NOT", "DESC", "ASC":
		default:
			continue
		}
		break
	}
	if k == i+3 {
		return c.errAt(i, "IS DISTINCT FROM needs a value after FROM")
	}
	c.insertAfter(k-1, " IS FALSE")
	return nil
}

// rewriteOverlay turns OVERLAY(s PLACING r FROM p [FOR n]) into
// overlay(s, r, p[, n]).
func (c *stmtCtx) rewriteOverlay(i int) *posError {
	open := i + 1
	close := c.match[open]
	placing, from, forKw := -1, -1, -1
	for k := open + 1; k < close; k++ {
		if c.parent[k] != open {
			continue
		}
		switch {
		case c.isKw(k, "PLACING") && placing < 0:
			placing = k
		case c.isKw(k, "FROM") && placing >= 0 && from < 0:
			from = k
		case c.isKw(k, "FOR") && from >= 0 && forKw < 0:
			forKw = k
		}
	}
	if placing < 0 && c.hasTopLevelComma(open) {
		return nil // overlay(s, r, p[, n]) as a plain call
	}
	if placing <= open+1 || from < 0 || from == placing+1 || from+1 == close || forKw == from+1 || forKw+1 == close {
		return c.errAt(i, "OVERLAY expects OVERLAY(string PLACING string FROM position [FOR length])")
	}
	c.replace(i, i, "overlay")
	c.replace(placing, placing, ",")
	c.replace(from, from, ",")
	if forKw >= 0 {
		c.replace(forKw, forKw, ",")
	}
	return nil
}

func (c *stmtCtx) hasTopLevelComma(open int) bool {
	for k := open + 1; k < c.match[open]; k++ {
		if c.parent[k] == open && c.isPunct(k, ",") {
			return true
		}
	}
	return false
}

// rewriteWhenList wraps the values of WHEN a, b THEN (a simple CASE with
// several values) in __any(a, b). Commas at the WHEN's depth before its
// THEN, outside nested CASE ... END, separate the values.
func (c *stmtCtx) rewriteWhenList(w int) {
	depth := c.parent[w]
	nested := 0
	comma := false
	k := w + 1
	for ; k < len(c.toks); k++ {
		if c.parent[k] != depth {
			continue
		}
		switch {
		case c.isKw(k, "CASE"):
			nested++
		case c.isKw(k, "END"):
			nested--
		case nested == 0 && c.isPunct(k, ","):
			comma = true
		}
		if nested == 0 && (c.isKw(k, "THEN") || c.isPunct(k, ")")) {
			break
		}
	}
	if !comma || !c.isKw(k, "THEN") {
		return
	}
	c.insertAfter(w, " "+anyFunc+"(")
	c.insertAt(c.toks[k-1].end, ")")
}
