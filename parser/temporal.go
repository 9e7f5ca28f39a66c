package parser

// ---- FOR SYSTEM_TIME AS OF ----

// temporalAliasStops are the words after `FOR SYSTEM_TIME AS OF expr`
// that end the table reference instead of naming an alias.
var temporalAliasStops = map[string]bool{
	"ON": true, "USING": true, "JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true,
	"FULL": true, "CROSS": true, "NATURAL": true, "STRAIGHT_JOIN": true, "WHERE": true,
	"GROUP": true, "HAVING": true, "WINDOW": true, "ORDER": true, "LIMIT": true,
	"UNION": true, "EXCEPT": true, "INTERSECT": true,
}

// rewriteTemporalJoins turns Flink's temporal-join table reference
//
//	r FOR SYSTEM_TIME AS OF o.ts [[AS] alias]
//
// into TiDB's spelling with the alias first,
//
//	r [AS alias] AS OF TIMESTAMP o.ts
//
// which TiDB parses into TableName.AsOf; the planner reads both
// spellings alike. The time must be a column reference (name or
// qualified name), as Flink requires; the column tokens keep their
// offsets, so errors about them point at the user's text.
func (c *stmtCtx) rewriteTemporalJoins() *posError {
	for i := range c.toks {
		if c.covered[i] || !c.isKw(i, "FOR") || !c.isKw(i+1, "SYSTEM_TIME") {
			continue
		}
		if !c.isKw(i+2, "AS") || !c.isKw(i+3, "OF") {
			return c.errAt(i+2, "expected AS OF after FOR SYSTEM_TIME, found %s", c.describe(i+2))
		}
		// The time: name [. name ...].
		e := i + 4
		if !c.isName(e) {
			return c.errAt(e, "FOR SYSTEM_TIME AS OF takes a time attribute column (like o.ts), found %s", c.describe(e))
		}
		if c.isKw(e, "PROCTIME") && c.isPunct(e+1, "(") && c.isPunct(e+2, ")") {
			// AS OF PROCTIME(): the processing time itself (a lookup join;
			// see planner/build_lookupjoin.go).
			e += 2
		}
		for c.isPunct(e+1, ".") && c.isName(e+2) {
			e += 2
		}
		// The alias, if any.
		alias, first, last := "", -1, -1
		switch {
		case c.isKw(e+1, "AS") && c.isName(e+2):
			alias, first, last = c.text(e+2), e+1, e+2
		case c.isName(e+1) && !temporalAliasStops[c.upper(e+1)]:
			alias, first, last = c.text(e+1), e+1, e+1
		}
		head := "AS OF TIMESTAMP"
		if alias != "" {
			head = "AS " + alias + " " + head
			c.replace(first, last, "")
		}
		c.replace(i, i+3, head)
	}
	return nil
}
