package parser

import "strings"

// Client commands, which never reach TiDB:
//
//	SET 'key' = 'value'   SET `key` = 'value'   SET key.with-dots = value   SET
//	RESET 'key'           RESET key.with-dots                               RESET
//	SHOW JOBS             STOP JOB 'id' [WITH SAVEPOINT]                    HELP
//	SHOW [USER] FUNCTIONS [{FROM | IN} [default_catalog.]default_database] [[NOT] {LIKE | ILIKE} 'pattern']

// parseCommand returns the command the statement is, or nil if it is not
// one (then it goes to TiDB).
func (c *stmtCtx) parseCommand() (*Command, *posError) {
	n := len(c.toks)
	switch c.upper(0) {
	case "SET":
		return c.parseSet()
	case "RESET":
		if n == 1 {
			return &Command{Kind: CmdReset}, nil
		}
		key, err := c.commandKey(1, n)
		if err != nil {
			return nil, err
		}
		return &Command{Kind: CmdReset, Key: key}, nil
	case "SHOW":
		if c.isKw(1, "FUNCTIONS") || c.isKw(1, "USER") && c.isKw(2, "FUNCTIONS") {
			return c.parseShowFunctions()
		}
		if !c.isKw(1, "JOBS") {
			return c.parseShow() // statements.go
		}
		if n > 2 {
			return nil, c.errAt(2, "unexpected %s after SHOW JOBS", c.describe(2))
		}
		return &Command{Kind: CmdShowJobs}, nil
	case "STOP":
		if !c.isKw(1, "JOB") {
			return nil, nil
		}
		if !c.isStringLit(2) {
			return nil, c.errAt(2, "STOP JOB needs a job id string such as 'abc123', found %s", c.describe(2))
		}
		cmd := &Command{Kind: CmdStopJob, JobID: unquote(c.text(2))}
		switch {
		case n == 3:
		case n == 5 && c.isKw(3, "WITH") && c.isKw(4, "SAVEPOINT"):
			cmd.WithSavepoint = true
		case c.isKw(3, "WITH") && n == 5:
			return nil, c.errAt(4, "STOP JOB ... WITH %s is not supported; only WITH SAVEPOINT is", c.text(4))
		default:
			return nil, c.errAt(3, "unexpected %s in STOP JOB; expected STOP JOB 'id' [WITH SAVEPOINT]", c.describe(3))
		}
		return cmd, nil
	case "HELP":
		if n > 1 {
			return nil, c.errAt(1, "HELP takes no arguments")
		}
		return &Command{Kind: CmdHelp}, nil
	}
	return c.parseStmtCommand() // statements.go
}

func (c *stmtCtx) parseSet() (*Command, *posError) {
	n := len(c.toks)
	if n == 1 {
		return &Command{Kind: CmdSet}, nil
	}
	if c.isPunct(1, "@") {
		return nil, c.errAt(1, "MySQL variables are not supported; use SET 'key' = 'value'")
	}
	eq := -1
	for k := 1; k < n; k++ {
		if c.isPunct(k, "=") {
			eq = k
			break
		}
	}
	if eq < 0 {
		return nil, c.errAt(n, "SET needs 'key' = 'value'")
	}
	if eq == 1 {
		return nil, c.errAt(1, "SET needs a key before '='")
	}
	key, err := c.commandKey(1, eq)
	if err != nil {
		return nil, err
	}
	if eq+1 == n {
		return nil, c.errAt(n, "SET %s = needs a value", c.text(1))
	}
	var value string
	if eq+2 == n && c.isStringLit(eq+1) {
		value = unquote(c.text(eq + 1))
	} else {
		// An unquoted value is taken as written, e.g. SET k = 10s.
		value = c.src[c.toks[eq+1].start:c.toks[n-1].end]
	}
	return &Command{Kind: CmdSet, Key: key, Value: value}, nil
}

// commandKey reads the key of SET or RESET from tokens [s, e): a string,
// a `quoted` name, or a dotted/dashed word written without spaces such as
// table.exec.mini-batch.enabled.
func (c *stmtCtx) commandKey(s, e int) (string, *posError) {
	if c.isStringLit(s) || c.toks[s].kind == tkQuotedIdent {
		if e > s+1 {
			return "", c.errAt(s+1, "unexpected %s after the key", c.describe(s+1))
		}
		return unquote(c.text(s)), nil
	}
	for k := s; k < e; k++ {
		ok := c.toks[k].kind == tkIdent || c.toks[k].kind == tkNumber || c.isPunct(k, ".") || c.isPunct(k, "-")
		if !ok || k > s && c.toks[k].start != c.toks[k-1].end {
			return "", c.errAt(k, "invalid key at %s; write the key as a string literal such as 'pipeline.name'", c.describe(k))
		}
	}
	return c.src[c.toks[s].start:c.toks[e-1].end], nil
}

// parseShowFunctions reads Flink's SHOW [USER] FUNCTIONS [{FROM | IN}
// database] [[NOT] {LIKE | ILIKE} 'pattern']. streamsql has one catalog
// and one database, so FROM and IN accept only their names.
func (c *stmtCtx) parseShowFunctions() (*Command, *posError) {
	cmd := &Command{Kind: CmdShowFunctions}
	k := 2
	if c.isKw(1, "USER") {
		cmd.User, k = true, 3
	}
	if c.isKw(k, "FROM") || c.isKw(k, "IN") {
		s := k + 1
		e := s
		for e < len(c.toks) && (c.isName(e) || c.isPunct(e, ".")) && !c.isKw(e, "NOT") && !c.isKw(e, "LIKE") && !c.isKw(e, "ILIKE") {
			e++
		}
		db := strings.ToLower(strings.ReplaceAll(c.src[c.toks[min(s, len(c.toks)-1)].start:c.offAt(e)], "`", ""))
		db = strings.TrimSpace(db)
		if db != "default_database" && db != "default_catalog.default_database" {
			return nil, c.errAt(s, "database %s does not exist; streamsql has one database, default_catalog.default_database", c.describe(s))
		}
		k = e
	}
	k, err := c.like(cmd, k)
	if err != nil {
		return nil, err
	}
	if k < len(c.toks) {
		return nil, c.errAt(k, "unexpected %s in SHOW FUNCTIONS", c.describe(k))
	}
	return cmd, nil
}
