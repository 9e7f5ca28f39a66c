package parser

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Flink's catalog, database, view, EXPLAIN and statement-set statements
// that TiDB does not parse. The catalog and database statements, SHOW and
// DESCRIBE are client commands (Command); CREATE/DROP TEMPORARY VIEW,
// EXPLAIN PLAN FOR, EXPLAIN <details> and three-part names are rewritten
// for TiDB; statement sets are grouped by Parse.
//
//	SHOW TABLES | VIEWS [{FROM | IN} [catalog.]database] [[NOT] {LIKE | ILIKE} 'p']
//	SHOW DATABASES [{FROM | IN} catalog] [[NOT] {LIKE | ILIKE} 'p']
//	SHOW CATALOGS [[NOT] {LIKE | ILIKE} 'p']
//	SHOW COLUMNS {FROM | IN} [[catalog.]database.]table [[NOT] {LIKE | ILIKE} 'p']
//	SHOW CURRENT CATALOG | DATABASE
//	SHOW CREATE TABLE | VIEW name, SHOW CREATE CATALOG name
//	DESCRIBE | DESC [EXTENDED] name
//	CREATE CATALOG [IF NOT EXISTS] c [COMMENT 'x'] WITH ('type' = 'generic_in_memory')
//	DROP CATALOG [IF EXISTS] c, USE CATALOG c
//	CREATE DATABASE [IF NOT EXISTS] [c.]db [COMMENT 'x'] [WITH (...)]
//	DROP DATABASE [IF EXISTS] [c.]db [RESTRICT | CASCADE], USE [c.]db
//	BEGIN STATEMENT SET, END

// The client commands of this file; see CommandKind.
const (
	CmdShow           CommandKind = iota + 100 // SHOW TABLES/VIEWS/DATABASES/CATALOGS/COLUMNS/CURRENT ...; Command.Object
	CmdShowCreate                              // SHOW CREATE TABLE/VIEW/CATALOG; Command.Object, Command.Path
	CmdCreateCatalog                           // CREATE CATALOG
	CmdDropCatalog                             // DROP CATALOG
	CmdUseCatalog                              // USE CATALOG
	CmdCreateDatabase                          // CREATE DATABASE
	CmdDropDatabase                            // DROP DATABASE
	CmdUseDatabase                             // USE [catalog.]database
	CmdBeginSet                                // BEGIN STATEMENT SET
	CmdEndSet                                  // END
	CmdAlterView                               // ALTER VIEW v RENAME TO w; Command.Alter.NewPath
	CmdAlterCatalog                            // ALTER CATALOG c SET (...) | RESET (...) | COMMENT 'x'; Command.Object, Keys, Statement.Options
)

var stmtCommandNames = map[CommandKind]string{
	CmdShow: "SHOW", CmdShowCreate: "SHOW CREATE", CmdCreateCatalog: "CREATE CATALOG", CmdDropCatalog: "DROP CATALOG",
	CmdUseCatalog: "USE CATALOG", CmdCreateDatabase: "CREATE DATABASE", CmdDropDatabase: "DROP DATABASE",
	CmdUseDatabase: "USE", CmdBeginSet: "BEGIN STATEMENT SET", CmdEndSet: "END", CmdAlterView: "ALTER VIEW",
	CmdAlterCatalog: "ALTER CATALOG",
}

// StatementSet is EXECUTE STATEMENT SET BEGIN ... END or EXPLAIN [details]
// STATEMENT SET BEGIN ... END: INSERTs run (or explained) as one job.
type StatementSet struct {
	Inserts []*Statement // each a parsed INSERT statement
	Explain bool
}

// unsupportedStatements are Flink statements streamsql refuses by name:
// each entry is the leading keywords, matched in order.
var unsupportedStatements = [][]string{
	{"CREATE", "TEMPORARY", "SYSTEM", "FUNCTION"}, {"CREATE", "TEMPORARY", "FUNCTION"}, {"CREATE", "FUNCTION"},
	{"CREATE", "OR", "REPLACE", "TEMPORARY", "FUNCTION"}, {"CREATE", "OR", "REPLACE", "FUNCTION"},
	{"DROP", "TEMPORARY", "SYSTEM", "FUNCTION"}, {"DROP", "TEMPORARY", "FUNCTION"}, {"DROP", "FUNCTION"},
	{"ALTER", "TEMPORARY", "SYSTEM", "FUNCTION"}, {"ALTER", "TEMPORARY", "FUNCTION"}, {"ALTER", "FUNCTION"},
	{"ALTER", "DATABASE"}, {"ALTER", "MATERIALIZED", "TABLE"},
	{"CREATE", "MATERIALIZED", "TABLE"}, {"DROP", "MATERIALIZED", "TABLE"}, {"SHOW", "MATERIALIZED", "TABLES"},
	{"LOAD", "MODULE"}, {"UNLOAD", "MODULE"}, {"INSERT", "OVERWRITE"},
	{"ADD", "JAR"}, {"REMOVE", "JAR"}, {"SHOW", "JARS"}, {"SHOW", "PARTITIONS"}, {"SHOW", "PROCEDURES"},
	{"SHOW", "CREATE", "MATERIALIZED", "TABLE"}, {"SHOW", "CREATE", "FUNCTION"},
	{"ANALYZE", "TABLE"}, {"TRUNCATE", "TABLE"}, {"DELETE"}, {"UPDATE"}, {"CALL"},
	{"COMPILE", "PLAN"}, {"COMPILE", "AND", "EXECUTE", "PLAN"}, {"EXECUTE", "PLAN"}, {"DESCRIBE", "JOB"},
	{"INSERT", "INTO", "*", "PARTITION"}, {"INSERT", "INTO", "*", ".", "*", "PARTITION"}, {"INSERT", "INTO", "*", ".", "*", ".", "*", "PARTITION"},
	{"CREATE", "MODEL"}, {"CREATE", "TEMPORARY", "MODEL"}, {"DROP", "MODEL"}, {"ALTER", "MODEL"}, {"SHOW", "MODELS"},
}

// mysqlIntervalFunctions are MySQL's date functions whose second
// argument must be INTERVAL n unit; Flink has none of them (Hive's
// DATE_ADD(date, days) is not a Flink built-in), and TiDB's grammar
// would only say "syntax error" for another second argument.
var mysqlIntervalFunctions = map[string]bool{"DATE_ADD": true, "DATE_SUB": true, "ADDDATE": true, "SUBDATE": true}

// unsupportedConstruct returns an error naming a construct anywhere in
// the statement that streamsql does not take and that TiDB's grammar
// would refuse with a bare syntax error: MATCH_RECOGNIZE, and
// DATE_ADD-style calls whose second argument is no INTERVAL.
func (c *stmtCtx) unsupportedConstruct() *posError {
	for i := range c.toks {
		if c.covered[i] {
			continue
		}
		if c.isKw(i, "MATCH_RECOGNIZE") && c.isPunct(i+1, "(") {
			return c.errAt(i, "MATCH_RECOGNIZE (pattern recognition, Flink's CEP) is not supported")
		}
		if mysqlIntervalFunctions[c.upper(i)] && c.isPunct(i+1, "(") && !c.isPunct(i-1, ".") {
			close := c.match[i+1]
			for j := i + 2; j < close; j++ {
				if c.parent[j] == i+1 && c.isPunct(j, ",") {
					if !c.isKw(j+1, "INTERVAL") {
						return c.errAt(j+1, "%s(timepoint, n) is not supported: Flink has no %s; write timepoint + INTERVAL 'n' DAY (or %s(timepoint, INTERVAL n DAY))", c.upper(i), c.upper(i), c.upper(i))
					}
					break
				}
			}
		}
	}
	return nil
}

// unsupportedStatement returns an error naming the statement when it is
// one of unsupportedStatements.
func (c *stmtCtx) unsupportedStatement() *posError {
	if err := c.unsupportedConstruct(); err != nil {
		return err
	}
	for _, kws := range unsupportedStatements {
		ok := true
		for k, kw := range kws {
			if !(kw == "*" && c.isName(k) || kw == "." && c.isPunct(k, ".") || c.isKw(k, kw)) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		name := strings.Join(kws, " ")
		if kws[0] == "INSERT" && kws[1] == "INTO" {
			return c.errAt(len(kws)-1, "INSERT INTO ... PARTITION (...) (a static partition) is not supported; select the partition columns in the query instead")
		}
		switch {
		case strings.HasSuffix(name, "FUNCTION"):
			// Name the function and its class (CREATE FUNCTION count_char
			// AS 'com.example.CountChar'), so that the refusal says which
			// of a script's functions is missing.
			what := name
			if k := len(kws); k < len(c.toks) {
				what += " " + strings.Join(strings.Fields(c.src[c.toks[k].start:c.toks[len(c.toks)-1].end]), " ")
			}
			return c.errAt(0, "%s is not supported: streamsql has no user-defined functions (it runs no Java, Scala or Python code); SHOW FUNCTIONS lists the built-in ones", what)
		case name == "DELETE" || name == "UPDATE" || name == "INSERT OVERWRITE":
			return c.errAt(0, "%s is not supported: tables are changed by INSERT jobs only (Flink runs %s in batch mode only)", name, name)
		}
		return c.errAt(0, "%s is not supported", name)
	}
	return nil
}

// parseStmtCommand parses the commands of this file; nil when the
// statement is none of them.
func (c *stmtCtx) parseStmtCommand() (*Command, *posError) {
	n := len(c.toks)
	if err := c.unsupportedStatement(); err != nil {
		return nil, err
	}
	switch c.upper(0) {
	case "SHOW":
		return c.parseShow()
	case "DESCRIBE", "DESC":
		if c.isKw(1, "CATALOG") && c.isName(2) {
			// DESCRIBE CATALOG [EXTENDED] c: the catalog's name, type and
			// comment; EXTENDED adds its options, as Flink's client.
			k, obj := 2, "CATALOG INFO"
			if c.isKw(2, "EXTENDED") && c.isName(3) {
				k, obj = 3, "CATALOG INFO EXTENDED"
			}
			path, e, err := c.path(k, 1)
			if err != nil {
				return nil, err
			}
			if e < n {
				return nil, c.errAt(e, "unexpected %s after %s CATALOG %s", c.describe(e), c.upper(0), path[0])
			}
			return c.cmdAt(&Command{Kind: CmdShow, Object: obj, Path: path}, k), nil
		}
		k := 1
		if c.isKw(1, "EXTENDED") && c.isName(2) {
			k = 2
		}
		if !c.isName(k) || c.isKw(k, "SELECT") || c.isKw(k, "INSERT") || c.isKw(k, "WITH") {
			return nil, nil // DESCRIBE SELECT ... is EXPLAIN, for TiDB
		}
		path, e, err := c.path(k, 3)
		if err != nil {
			return nil, err
		}
		if e < n {
			return nil, c.errAt(e, "unexpected %s after %s %s", c.describe(e), c.upper(0), strings.Join(path, "."))
		}
		return c.cmdAt(&Command{Kind: CmdShow, Object: "COLUMNS", Path: path}, k), nil
	case "USE":
		if c.isKw(1, "MODULES") {
			// streamsql has one module, Flink's core (its built-in functions).
			for k := 2; k < n; k += 2 {
				if !c.isKw(k, "core") || k+1 < n && !c.isPunct(k+1, ",") {
					return nil, c.errAt(k, "module %s is not loaded; streamsql has one module, core (LOAD MODULE is not supported)", c.describe(k))
				}
			}
			if n < 3 {
				return nil, c.errAt(2, "USE MODULES needs a module name")
			}
			return &Command{Kind: CmdShow, Object: "USE MODULES"}, nil
		}
		if c.isKw(1, "CATALOG") {
			if !c.isName(2) || n != 3 {
				return nil, c.errAt(min(n, 3), "USE CATALOG needs one catalog name, found %s", c.describe(min(n-1, 2)))
			}
			return c.cmdAt(&Command{Kind: CmdUseCatalog, Path: []string{c.nameValue(2)}}, 2), nil
		}
		path, e, err := c.path(1, 2)
		if err != nil {
			return nil, err
		}
		if e < n {
			return nil, c.errAt(e, "unexpected %s after USE %s", c.describe(e), strings.Join(path, "."))
		}
		return c.cmdAt(&Command{Kind: CmdUseDatabase, Path: path}, 1), nil
	case "CREATE":
		switch {
		case c.isKw(1, "CATALOG"):
			return c.parseCreateCatalogOrDatabase(CmdCreateCatalog, 1)
		case c.isKw(1, "DATABASE"), c.isKw(1, "SCHEMA"):
			return c.parseCreateCatalogOrDatabase(CmdCreateDatabase, 2)
		}
	case "ALTER":
		if c.isKw(1, "CATALOG") {
			return c.parseAlterCatalog()
		}
		if c.isKw(1, "TABLE") {
			return c.parseAlterTable() // ddl.go
		}
		if c.isKw(1, "VIEW") {
			// ALTER VIEW v RENAME TO w; ALTER VIEW v AS q is rewritten for
			// TiDB (rewriteAlterView).
			path, k, err := c.path(2, 3)
			if err != nil {
				return nil, err
			}
			if c.isKw(k, "AS") {
				return nil, nil
			}
			if !c.isKw(k, "RENAME") || !c.isKw(k+1, "TO") {
				return nil, c.errAt(k, "ALTER VIEW takes RENAME TO <name> or AS <query>, found %s", c.describe(k))
			}
			np, e, err := c.path(k+2, 3)
			if err != nil {
				return nil, err
			}
			if e < n {
				return nil, c.errAt(e, "unexpected %s in ALTER VIEW", c.describe(e))
			}
			return c.cmdAt(&Command{Kind: CmdAlterView, Path: path, Alter: &AlterTable{Op: "RENAME", NewPath: np}}, 2), nil
		}
	case "DROP":
		switch {
		case c.isKw(1, "CATALOG"):
			return c.parseDropCatalogOrDatabase(CmdDropCatalog, 1)
		case c.isKw(1, "DATABASE"), c.isKw(1, "SCHEMA"):
			return c.parseDropCatalogOrDatabase(CmdDropDatabase, 2)
		}
	case "BEGIN":
		if c.isKw(1, "STATEMENT") && c.isKw(2, "SET") {
			if n > 3 {
				return nil, c.errAt(3, "BEGIN STATEMENT SET ends with ';'; put each INSERT in a statement of its own, then END;")
			}
			return &Command{Kind: CmdBeginSet}, nil
		}
		return nil, c.errAt(0, "BEGIN is only supported as BEGIN STATEMENT SET; streamsql has no transactions")
	case "END":
		if n > 1 {
			return nil, c.errAt(1, "unexpected %s after END", c.describe(1))
		}
		return &Command{Kind: CmdEndSet}, nil
	case "EXECUTE":
		return nil, c.errAt(0, "EXECUTE is only supported as EXECUTE STATEMENT SET BEGIN ... END")
	}
	return nil, nil
}

// cmdAt sets the command's Line and Col to token i.
func (c *stmtCtx) cmdAt(cmd *Command, i int) *Command {
	cmd.Line, cmd.Col = c.st.pos.at(c.offAt(i))
	return cmd
}

// path reads a name of 1..max parts separated by '.', starting at token
// s, and returns its parts, unquoted, and the index after it.
func (c *stmtCtx) path(s, max int) ([]string, int, *posError) {
	if !c.isName(s) {
		return nil, s, c.errAt(s, "expected a name, found %s", c.describe(s))
	}
	parts := []string{c.nameValue(s)}
	k := s + 1
	for c.isPunct(k, ".") {
		if !c.isName(k + 1) {
			return nil, k, c.errAt(k+1, "expected a name after '.', found %s", c.describe(k+1))
		}
		parts = append(parts, c.nameValue(k+1))
		k += 2
	}
	if len(parts) > max {
		return nil, k, c.errAt(s, "%s has %d parts; at most %d are allowed here", c.src[c.toks[s].start:c.toks[k-1].end], len(parts), max)
	}
	return parts, k, nil
}

// like reads [NOT] {LIKE | ILIKE} 'pattern' at token k into cmd and
// returns the index after it.
func (c *stmtCtx) like(cmd *Command, k int) (int, *posError) {
	if c.isKw(k, "NOT") {
		cmd.NotLike, k = true, k+1
	}
	switch {
	case c.isKw(k, "LIKE"), c.isKw(k, "ILIKE"):
		cmd.HasLike, cmd.ILike = true, c.isKw(k, "ILIKE")
		if !c.isStringLit(k + 1) {
			return k, c.errAt(k+1, "%s needs a pattern string, found %s", c.upper(k), c.describe(k+1))
		}
		cmd.Like, k = unquote(c.text(k+1)), k+2
	case cmd.NotLike:
		return k, c.errAt(k, "expected LIKE or ILIKE after NOT, found %s", c.describe(k))
	}
	return k, nil
}

func (c *stmtCtx) parseShow() (*Command, *posError) {
	if err := c.unsupportedStatement(); err != nil {
		return nil, err
	}
	n := len(c.toks)
	what := c.upper(1)
	cmd := c.cmdAt(&Command{Kind: CmdShow, Object: what}, 1)
	k := 2
	switch what {
	case "TABLES", "VIEWS", "DATABASES", "SCHEMAS":
		if what == "SCHEMAS" {
			cmd.Object = "DATABASES"
		}
		if c.isKw(k, "FROM") || c.isKw(k, "IN") {
			max := 2
			if cmd.Object == "DATABASES" {
				max = 1
			}
			path, e, err := c.path(k+1, max)
			if err != nil {
				return nil, err
			}
			cmd.Path, k = path, e
		}
	case "CATALOGS", "MODULES":
	case "FULL":
		if !c.isKw(2, "MODULES") {
			return nil, c.errAt(2, "expected SHOW FULL MODULES, found %s", c.describe(2))
		}
		cmd.Object, k = "FULL MODULES", 3
	case "COLUMNS", "FIELDS":
		cmd.Object = "COLUMNS"
		if !c.isKw(k, "FROM") && !c.isKw(k, "IN") {
			return nil, c.errAt(k, "SHOW COLUMNS needs FROM <table>, found %s", c.describe(k))
		}
		path, e, err := c.path(k+1, 3)
		if err != nil {
			return nil, err
		}
		cmd.Path, k = path, e
	case "CURRENT":
		if !(c.isKw(2, "CATALOG") || c.isKw(2, "DATABASE")) || n > 3 {
			return nil, c.errAt(2, "expected SHOW CURRENT CATALOG or SHOW CURRENT DATABASE")
		}
		cmd.Object = "CURRENT " + c.upper(2)
		return cmd, nil
	case "CREATE":
		obj := c.upper(2)
		if obj != "TABLE" && obj != "VIEW" && obj != "CATALOG" {
			return nil, c.errAt(2, "expected SHOW CREATE TABLE, VIEW or CATALOG, found %s", c.describe(2))
		}
		max := 3
		if obj == "CATALOG" {
			max = 1
		}
		path, e, err := c.path(3, max)
		if err != nil {
			return nil, err
		}
		if e < n {
			return nil, c.errAt(e, "unexpected %s after SHOW CREATE %s %s", c.describe(e), obj, strings.Join(path, "."))
		}
		return c.cmdAt(&Command{Kind: CmdShowCreate, Object: obj, Path: path}, 3), nil
	default:
		return nil, c.errAt(1, "SHOW %s is not supported; SHOW takes TABLES, VIEWS, COLUMNS, DATABASES, CATALOGS, CURRENT CATALOG, CURRENT DATABASE, CREATE TABLE, CREATE VIEW, CREATE CATALOG, FUNCTIONS, MODULES or JOBS", c.describe(1))
	}
	k, err := c.like(cmd, k)
	if err != nil {
		return nil, err
	}
	if k < n {
		return nil, c.errAt(k, "unexpected %s in SHOW %s", c.describe(k), cmd.Object)
	}
	return cmd, nil
}

// parseCreateCatalogOrDatabase reads CREATE CATALOG|DATABASE [IF NOT
// EXISTS] name [COMMENT 'x'] [WITH (...)]; a database name may have
// maxParts parts.
func (c *stmtCtx) parseCreateCatalogOrDatabase(kind CommandKind, maxParts int) (*Command, *posError) {
	cmd := &Command{Kind: kind}
	k := 2
	if c.isKw(k, "IF") && c.isKw(k+1, "NOT") && c.isKw(k+2, "EXISTS") {
		cmd.IfNotExists, k = true, k+3
	}
	c.cmdAt(cmd, k)
	path, k, err := c.path(k, maxParts)
	if err != nil {
		return nil, err
	}
	cmd.Path = path
	if c.isKw(k, "COMMENT") {
		if !c.isStringLit(k + 1) {
			return nil, c.errAt(k+1, "COMMENT needs a string, found %s", c.describe(k+1))
		}
		cmd.Comment, k = unquote(c.text(k+1)), k+2
	}
	if c.isKw(k, "WITH") && c.isPunct(k+1, "(") {
		if err := c.rewriteOptions(k); err != nil {
			return nil, err
		}
		k = c.match[k+1] + 1
	} else if kind == CmdCreateCatalog {
		return nil, c.errAt(k, "CREATE CATALOG needs WITH ('type' = 'generic_in_memory'), found %s", c.describe(k))
	}
	if k < len(c.toks) {
		return nil, c.errAt(k, "unexpected %s in %s", c.describe(k), stmtCommandNames[kind])
	}
	return cmd, nil
}

// parseAlterCatalog reads ALTER CATALOG c SET ('k' = 'v', ...), ALTER
// CATALOG c RESET ('k', ...) and ALTER CATALOG c COMMENT 'x'.
func (c *stmtCtx) parseAlterCatalog() (*Command, *posError) {
	n := len(c.toks)
	path, k, err := c.path(2, 1)
	if err != nil {
		return nil, err
	}
	cmd := c.cmdAt(&Command{Kind: CmdAlterCatalog, Path: path}, 2)
	switch {
	case c.isKw(k, "SET") && c.isPunct(k+1, "("):
		cmd.Object = "SET"
		end := c.match[k+1] + 1
		if err := c.rewriteOptions(k); err != nil {
			return nil, err
		}
		k = end
	case c.isKw(k, "RESET") && c.isPunct(k+1, "("):
		cmd.Object = "RESET"
		close := c.match[k+1]
		cmd.Keys = []string{}
		for j := k + 2; j < close; j++ {
			if !c.isStringLit(j) {
				return nil, c.errAt(j, "ALTER CATALOG RESET takes option keys as strings such as 'default-database', found %s", c.describe(j))
			}
			cmd.Keys = append(cmd.Keys, unquote(c.text(j)))
			if j+1 < close && !c.isPunct(j+1, ",") {
				return nil, c.errAt(j+1, "expected ',' or ')' in ALTER CATALOG RESET, found %s", c.describe(j+1))
			}
			j++
		}
		k = close + 1
	case c.isKw(k, "COMMENT") && c.isStringLit(k+1):
		cmd.Object, cmd.Comment = "COMMENT", unquote(c.text(k+1))
		k += 2
	default:
		return nil, c.errAt(k, "ALTER CATALOG takes SET ('key' = 'value', ...), RESET ('key', ...) or COMMENT 'text', found %s", c.describe(k))
	}
	if k < n {
		return nil, c.errAt(k, "unexpected %s in ALTER CATALOG", c.describe(k))
	}
	return cmd, nil
}

// parseDropCatalogOrDatabase reads DROP CATALOG|DATABASE [IF EXISTS]
// name [RESTRICT | CASCADE].
func (c *stmtCtx) parseDropCatalogOrDatabase(kind CommandKind, maxParts int) (*Command, *posError) {
	cmd := &Command{Kind: kind}
	k := 2
	if c.isKw(k, "IF") && c.isKw(k+1, "EXISTS") {
		cmd.IfExists, k = true, k+2
	}
	c.cmdAt(cmd, k)
	path, k, err := c.path(k, maxParts)
	if err != nil {
		return nil, err
	}
	cmd.Path = path
	if kind == CmdDropDatabase && (c.isKw(k, "RESTRICT") || c.isKw(k, "CASCADE")) {
		cmd.Cascade, k = c.isKw(k, "CASCADE"), k+1
	}
	if k < len(c.toks) {
		return nil, c.errAt(k, "unexpected %s in %s", c.describe(k), stmtCommandNames[kind])
	}
	return cmd, nil
}

// ---- rewrites for TiDB ----

// rewriteAlterView turns ALTER VIEW v AS q into CREATE OR REPLACE VIEW v
// AS q, with Statement.AlterView set: the view must exist.
func (c *stmtCtx) rewriteAlterView() *posError {
	if c.isKw(0, "ALTER") && c.isKw(1, "VIEW") {
		c.replace(0, 1, "CREATE OR REPLACE VIEW")
		c.st.AlterView = true
	}
	return nil
}

// rewriteTemporary removes TEMPORARY from CREATE/DROP TEMPORARY
// TABLE/VIEW and sets Statement.Temporary (TiDB has no temporary views).
// It also removes a view's COMMENT 'x' before AS, which TiDB does not
// parse, and turns CREATE [TEMPORARY] VIEW IF NOT EXISTS v into CREATE
// VIEW v with Statement.IfNotExists.
func (c *stmtCtx) rewriteTemporary() *posError {
	if !c.isKw(0, "CREATE") && !c.isKw(0, "DROP") {
		return nil
	}
	k := 1
	if c.isKw(1, "TEMPORARY") && (c.isKw(2, "VIEW") || c.isKw(2, "TABLE")) {
		c.replaceSpan(1, 1, c.toks[1].start, c.toks[2].start, "", c.toks[1].start)
		c.st.Temporary = true
		k = 2
	}
	if !c.isKw(0, "CREATE") || !c.isKw(k, "VIEW") {
		return nil
	}
	if c.isKw(k+1, "IF") && c.isKw(k+2, "NOT") && c.isKw(k+3, "EXISTS") {
		c.replaceSpan(k+1, k+3, c.toks[k+1].start, c.toks[k+3].end, "", c.toks[k+1].start)
		c.st.IfNotExists = true
	}
	// COMMENT 'x' of the view and of its columns: TiDB takes neither.
	list := k + 1 // the '(' of the view's column list, if any
	if c.isKw(list, "IF") {
		list += 3
	}
	for c.isName(list) && c.isPunct(list+1, ".") {
		list += 2
	}
	list++
	for i := k + 1; i < len(c.toks) && !(c.parent[i] == -1 && c.isKw(i, "AS")); i++ {
		if (c.parent[i] == -1 || c.parent[i] == list && c.isPunct(list, "(")) && c.isKw(i, "COMMENT") && c.isStringLit(i+1) && !c.covered[i] {
			c.replaceSpan(i, i+1, c.toks[i].start, c.toks[i+1].end, "", c.toks[i].start)
		}
	}
	return nil
}

// Explain details Flink takes after EXPLAIN; the supported ones are
// recorded in Statement.ExplainDetails.
var explainDetails = map[string]bool{"CHANGELOG_MODE": true, "JSON_EXECUTION_PLAN": true, "ESTIMATED_COST": false, "PLAN_ADVICE": false}

// explainPrefix reads EXPLAIN [PLAN FOR | detail [, detail]*] at the
// start of the statement and returns the details and the index of the
// first token after them; k is 0 when the statement is no EXPLAIN.
func (c *stmtCtx) explainPrefix() (details []string, k int, err *posError) {
	if !c.isKw(0, "EXPLAIN") {
		return nil, 0, nil
	}
	if c.isKw(1, "PLAN") && c.isKw(2, "FOR") {
		return nil, 3, nil
	}
	k = 1
	for {
		d := c.upper(k)
		ok, known := explainDetails[d]
		if !known {
			break
		}
		if !ok {
			return nil, k, c.errAt(k, "EXPLAIN %s is not supported; EXPLAIN takes CHANGELOG_MODE and JSON_EXECUTION_PLAN", d)
		}
		details = append(details, d)
		k++
		if !c.isPunct(k, ",") {
			break
		}
		k++
	}
	return details, k, nil
}

// rewriteExplain turns EXPLAIN PLAN FOR q and EXPLAIN detail, ... q into
// EXPLAIN q, with the details in Statement.ExplainDetails.
func (c *stmtCtx) rewriteExplain() *posError {
	details, k, err := c.explainPrefix()
	if err != nil || k <= 1 {
		return err
	}
	if k >= len(c.toks) {
		return c.errAt(k, "EXPLAIN needs a statement to explain")
	}
	c.st.ExplainDetails = details
	c.replaceSpan(1, k-1, c.toks[1].start, c.toks[k].start, "", c.toks[1].start)
	return nil
}

// qualifiedPrefix names the schema that stands for catalog.database in a
// three-part name catalog.database.table, which TiDB cannot parse: it is
// rewritten to `__qn_<n>`.table and Statement.TablePath gives the parts back.
const qualifiedPrefix = "__qn_"

// tableKeywords are the words a table name follows.
var tableKeywords = map[string]bool{"FROM": true, "JOIN": true, "INTO": true, "TABLE": true, "VIEW": true, "EXISTS": true, "LIKE": true, "DESCRIBE": true, "DESC": true}

// clauseKeywords end a FROM list at their depth.
var clauseKeywords = map[string]bool{"SELECT": true, "WHERE": true, "GROUP": true, "HAVING": true, "ORDER": true, "LIMIT": true,
	"UNION": true, "EXCEPT": true, "INTERSECT": true, "WINDOW": true, "VALUES": true, "SET": true}

// rewriteQualifiedNames rewrites each three-part table name a.b.c in a
// table position (after FROM, JOIN, INTO, TABLE, VIEW, IF [NOT] EXISTS,
// LIKE, or a comma of a FROM list) to `__qn_<n>`.c.
func (c *stmtCtx) rewriteQualifiedNames() *posError {
	inFrom := map[int]bool{} // by the '(' enclosing the tokens, -1 at the top
	for i := range c.toks {
		if c.toks[i].kind == tkIdent {
			switch u := c.upper(i); {
			case u == "FROM":
				inFrom[c.parent[i]] = true
			case clauseKeywords[u]:
				inFrom[c.parent[i]] = false
			}
		}
		if c.covered[i] || !c.isName(i) || !c.isPunct(i+1, ".") || !c.isName(i+2) || !c.isPunct(i+3, ".") || !c.isName(i+4) || c.isPunct(i+5, ".") {
			continue
		}
		prev := c.upper(i - 1)
		if !(tableKeywords[prev] || c.isPunct(i-1, ",") && inFrom[c.parent[i]]) || c.isPunct(i-2, ".") {
			continue
		}
		if c.covered[i+2] || c.covered[i+4] {
			continue
		}
		if c.st.qualified == nil {
			c.st.qualified = map[string][2]string{}
		}
		ph := fmt.Sprintf("%s%d", qualifiedPrefix, len(c.st.qualified)+1)
		c.st.qualified[ph] = [2]string{c.nameValue(i), c.nameValue(i + 2)}
		c.replace(i, i+2, "`"+ph+"`")
	}
	return nil
}

// TablePath returns the parts of a table name of this statement as
// written, unquoted: [name], [database, name] or [catalog, database,
// name].
func (s *Statement) TablePath(tn *ast.TableName) []string {
	if tn.Schema.O == "" {
		return []string{tn.Name.O}
	}
	if q, ok := s.qualified[tn.Schema.O]; ok {
		return []string{q[0], q[1], tn.Name.O}
	}
	if h, ok := s.hinted[tn.Schema.O]; ok {
		return append(append([]string(nil), h.prefix...), tn.Name.O)
	}
	return []string{tn.Schema.O, tn.Name.O}
}

// ---- statement sets ----

// setOpener reports whether toks open a statement set: EXECUTE
// STATEMENT SET BEGIN or EXPLAIN [details] STATEMENT SET BEGIN. It
// returns the index of the first token after BEGIN.
func setOpener(src string, toks []token) (int, bool) {
	word := func(i int, w string) bool {
		return i < len(toks) && toks[i].kind == tkIdent && strings.EqualFold(src[toks[i].start:toks[i].end], w)
	}
	k := 1
	switch {
	case word(0, "EXECUTE"):
	case word(0, "EXPLAIN"):
		for k < len(toks) && !word(k, "STATEMENT") && k < 12 {
			k++
		}
	default:
		return 0, false
	}
	if word(k, "STATEMENT") && word(k+1, "SET") && word(k+2, "BEGIN") {
		return k + 3, true
	}
	return 0, false
}

// isEnd reports whether toks are the single word END.
func isEnd(src string, toks []token) bool {
	return len(toks) == 1 && toks[0].kind == tkIdent && strings.EqualFold(src[toks[0].start:toks[0].end], "END")
}

// NeedsEnd reports whether sql, a whole input, opens a statement set
// (EXECUTE STATEMENT SET BEGIN, EXPLAIN STATEMENT SET BEGIN) that no END
// closes yet: a client reading statements line by line reads on.
func NeedsEnd(sql string) bool {
	lr, err := lex(sql)
	if err != nil {
		return false
	}
	open := false
	begin := 0
	for i := 0; i <= len(lr.toks); i++ {
		if i < len(lr.toks) && !(lr.toks[i].kind == tkPunct && sql[lr.toks[i].start] == ';') {
			continue
		}
		seg := lr.toks[begin:i]
		begin = i + 1
		if len(seg) == 0 {
			continue
		}
		if _, ok := setOpener(sql, seg); ok {
			open = true
		} else if isEnd(sql, seg) {
			open = false
		}
	}
	return open
}

// setBuilder collects the statements of a statement set during Parse.
type setBuilder struct {
	st *Statement
}

// openSet starts the statement set that toks open (setOpener); after is
// the index of their first token after BEGIN.
func openSet(pos *positioner, src string, toks []token, after int) (*setBuilder, *Error) {
	st := &Statement{src: src, start: toks[0].start, end: toks[len(toks)-1].end, toks: toks[:after], pos: pos}
	st.Line, st.Col = pos.at(st.start)
	st.Set = &StatementSet{Explain: strings.EqualFold(src[toks[0].start:toks[0].end], "EXPLAIN")}
	c, perr := newStmtCtx(st)
	if perr == nil && st.Set.Explain {
		st.ExplainDetails, _, perr = c.explainPrefix()
	}
	if perr != nil {
		return nil, errorAt(src, perr.off, perr.msg)
	}
	return &setBuilder{st: st}, nil
}

// add adds a parsed statement, which must be an INSERT.
func (b *setBuilder) add(st *Statement) *Error {
	if _, ok := st.Node.(*ast.InsertStmt); !ok {
		return st.errorAtOrig(st.start, "only INSERT statements can be part of a STATEMENT SET")
	}
	b.st.Set.Inserts = append(b.st.Set.Inserts, st)
	return nil
}

// close ends the set at the END token end.
func (b *setBuilder) close(end token) (*Statement, *Error) {
	st := b.st
	st.end = end.end
	st.Text = st.src[st.start:st.end]
	// No text of its own goes to TiDB: positions map to the statement start.
	st.offsets = &offsetMap{segs: []segment{{rw: 0, orig: st.start}, {rw: 1, orig: st.end}}}
	if len(st.Set.Inserts) == 0 {
		return nil, st.errorAtOrig(end.start, "a STATEMENT SET needs at least one INSERT before END")
	}
	return st, nil
}
