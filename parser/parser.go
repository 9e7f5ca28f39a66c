// Package parser owns turning SQL text into statements: the pre-lexer, the
// Flink SQL rewrites, the TiDB parse, and positions.
//
// The dialect is MySQL as the TiDB parser (github.com/pingcap/tidb/pkg/parser)
// reads it, plus Flink SQL's streaming forms. TiDB rejects several of those
// forms, so a small pre-lexer of our own tokenizes the script, splits it into
// statements at ';', handles client commands (SET, RESET, SHOW JOBS, STOP JOB,
// SHOW FUNCTIONS, HELP) itself, and rewrites each Flink form into text TiDB accepts:
//
//	WITH ('k'='v', ...) after CREATE TABLE   removed; Statement.Options
//	WATERMARK FOR ts AS expr                 CONSTRAINT __wm_<n> CHECK (expr) NOT ENFORCED,
//	                                         taken out of the AST again; Statement.Watermarks
//	PRIMARY KEY (k) NOT ENFORCED             PRIMARY KEY (k)
//	column types STRING, BYTES, TIMESTAMP_LTZ TEXT, BLOB, TIMESTAMP (see columnTypes)
//	CAST(x AS type), TRY_CAST(x AS type)     __cast(x, 'TYPE'), __try_cast(x, 'TYPE')
//	INTERVAL '5' SECOND as an argument       __interval('5', 'SECOND')
//	INTERVAL '5' MILLISECOND(S), SECONDS ... INTERVAL '5000' MICROSECOND, SECOND ... where TiDB takes INTERVAL natively
//	TABLE(TUMBLE(TABLE t, ...)) and kin      __tvf_<n>; Statement.WindowTVFs
//	FULL [OUTER] JOIN                        STRAIGHT_JOIN (see FullJoinMarker)
//	CREATE MATERIALIZED VIEW v AS ...        CREATE TABLE v AS ...; Statement.MaterializedView
//	CREATE VIEW IF NOT EXISTS v              CREATE VIEW v; Statement.IfNotExists
//	EXTRACT(DOW FROM ts), JSON_VALUE(...     internal calls such as __extract('DOW', ts),
//	  RETURNING ...), IS JSON, SIMILAR TO,   __json_value(...), x REGEXP __is_json();
//	  BETWEEN SYMMETRIC, OVERLAPS, ...       the full list is in funcsyntax.go
//	LISTAGG(x), FIRST_VALUE(x), ...          aggregate nodes (aggregates.go)
//	(VALUES (1, 'a')) AS T(a, b)             (VALUES ROW(1, 'a')) AS __cols_<n>;
//	                                          Statement.ColumnAliases (queries.go)
//	AGG(x) FILTER (WHERE c)                  the aggregate with __agg_filter(c, x)
//	                                          as its argument (queries.go)
//	GROUPING SETS (...), ROLLUP, CUBE         __gsets(__gset(...), ...), __rollup,
//	                                          __cube GROUP BY items (queries.go)
//	CREATE/DROP TEMPORARY VIEW, view COMMENT, TEMPORARY and COMMENT removed; Statement.Temporary
//	EXPLAIN PLAN FOR, EXPLAIN CHANGELOG_MODE EXPLAIN; Statement.ExplainDetails
//	ALTER VIEW v AS q                        CREATE OR REPLACE VIEW v AS q; Statement.AlterView
//	catalog.db.table in a table position     `__qn_<n>`.table; Statement.TablePath
//	name AS expr (computed column)           a carrier CHECK constraint; Statement.Computed
//	name type METADATA [FROM 'k'] [VIRTUAL]  name type; Statement.Metadata
//	PARTITIONED BY (...), LIKE t (...)       removed; Statement.PartitionKeys, Statement.Like
//
// Flink's catalog, database, SHOW, DESCRIBE, ALTER TABLE and statement-set
// commands are client commands too (statements.go, ddl.go), and Parse
// groups EXECUTE STATEMENT SET BEGIN ... END into one Statement (Set).
// Flink statements streamsql does not run are refused by name
// (unsupportedStatements).
//
// Every rewrite keeps an offset map from the rewritten text back to the
// original, so errors (TiDB's syntax errors, the pre-lexer's own, and the
// planner's through Statement.Errorf) always point at, and quote, the text
// the user wrote.
package parser

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values in the AST
)

// Names of the internal functions and objects the rewrites synthesize. The
// pre-lexer rejects user identifiers with these names (and prefixes), so
// seeing one in the AST always means a rewrite put it there.
const (
	// IntervalFunc is the function an INTERVAL literal becomes when it is a
	// whole function argument or list element (TUMBLE(ts, INTERVAL '5'
	// SECOND), IN (INTERVAL ...)), where TiDB rejects it: INTERVAL '5'
	// SECOND -> __interval('5', 'SECOND'). The one exception is the second
	// argument of DATE_ADD, DATE_SUB, ADDDATE and SUBDATE, which TiDB takes
	// natively. The first argument is the value exactly as written, sign
	// included (a string, a number, a column, a parenthesized expression);
	// the second is the unit, upper case and singular: MICROSECOND,
	// MILLISECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER, YEAR, or
	// a MySQL compound unit such as DAY_SECOND. INTERVAL elsewhere (ts -
	// INTERVAL '1' SECOND, window frames) is left to TiDB.
	IntervalFunc = "__interval"
	// CastFunc is the function every CAST becomes: CAST(x AS DECIMAL(10, 2))
	// -> __cast(x, 'DECIMAL(10,2)'). The type text is the type as written,
	// bare words in upper case except ROW field names, no spaces inside
	// parentheses or around commas and angle brackets, single spaces
	// between words ('TIMESTAMP(3) WITH LOCAL TIME ZONE',
	// 'MAP<STRING,ROW<a INT,b STRING>>').
	// Quoted identifiers keep their backticks and case. The type is not
	// checked here: that is the planner's job.
	CastFunc = "__cast"
	// FloorToFunc and CeilToFunc are what Flink's FLOOR(ts TO unit) and
	// CEIL(ts TO unit) become: __floor_to(ts, 'HOUR'). The unit is upper case.
	FloorToFunc = "__floor_to"
	CeilToFunc  = "__ceil_to"
	// TryCastFunc is what TRY_CAST becomes, with the same arguments as CastFunc.
	TryCastFunc = "__try_cast"
	// FullJoinMarker is the join keyword FULL [OUTER] JOIN is rewritten to.
	// TiDB has no full join, and `a FULL JOIN b` even parses as the inner
	// join `a AS full JOIN b`. STRAIGHT_JOIN parses with ON and USING, and
	// the pre-lexer rejects STRAIGHT_JOIN written by the user, so in the AST
	// an *ast.Join with StraightJoin == true is exactly a FULL OUTER JOIN
	// (its Tp is 0, On/Using as written). See IsFullJoin. As in Flink,
	// where FULL is reserved, `a full JOIN b` is always a full join.
	FullJoinMarker = "STRAIGHT_JOIN"

	placeholderPrefix = "__tvf_"
	watermarkPrefix   = "__wm_"
	likePlaceholder   = "__like"
)

// IsPlaceholderTable reports whether a table name in the AST is the
// placeholder of a window table function (see Statement.WindowTVFs).
func IsPlaceholderTable(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), placeholderPrefix)
}

// IsFullJoin reports whether a join node is a FULL OUTER JOIN (see FullJoinMarker).
func IsFullJoin(j *ast.Join) bool { return j != nil && j.StraightJoin }

// Statement is one statement of a script.
type Statement struct {
	// Node is the TiDB AST; nil when Command != nil. Its positions and its
	// Text() refer to the rewritten text: use Text, Errorf and ErrorAtNode.
	Node      ast.StmtNode
	Command   *Command // statements handled entirely by the pre-lexer
	Text      string   // the statement's original text, trimmed, without the trailing ';'
	Line, Col int      // 1-based position of the statement start in the original script
	// Options are the WITH ('k'='v', ...) options of CREATE TABLE, in
	// order; nil if there is no WITH clause.
	Options []Option
	// Watermarks are the WATERMARK FOR declarations of CREATE TABLE. Their
	// carrier constraints are removed from the CreateTableStmt.
	Watermarks []Watermark
	// WindowTVFs maps each placeholder table name (see IsPlaceholderTable)
	// to the window table function it replaced; nil if there are none.
	WindowTVFs map[string]*WindowTVF
	// MaterializedView is set when CREATE MATERIALIZED VIEW v AS SELECT ...
	// was rewritten to CREATE TABLE v AS SELECT ...
	MaterializedView bool
	// IfNotExists is set when CREATE VIEW IF NOT EXISTS v was rewritten to
	// CREATE VIEW v: TiDB's CreateViewStmt cannot express it.
	IfNotExists bool
	// AlterView is set when ALTER VIEW v AS q was rewritten to CREATE OR
	// REPLACE VIEW v AS q.
	AlterView bool
	// Temporary is set when CREATE or DROP TEMPORARY VIEW/TABLE lost its
	// TEMPORARY in the rewrite.
	Temporary bool
	// ExplainDetails are the details of EXPLAIN CHANGELOG_MODE,
	// JSON_EXECUTION_PLAN ..., which the rewrite removed; EXPLAIN PLAN FOR
	// is EXPLAIN.
	ExplainDetails []string
	// Set is EXECUTE STATEMENT SET BEGIN ... END (or EXPLAIN STATEMENT SET
	// ...), grouped by Parse; Node and Command are then nil.
	Set *StatementSet
	// Computed are the computed columns (name AS expr) of CREATE TABLE,
	// Metadata its METADATA columns by lower-case name, PartitionKeys its
	// PARTITIONED BY columns, Like its LIKE clause (see ddl.go).
	// Elements are the elements of the CREATE TABLE column list as
	// written, for ALTER TABLE and CREATE TABLE ... LIKE, which make a new
	// column list from them.
	Elements      []TableElement
	Computed      []ComputedColumn
	Metadata      map[string]MetadataColumn
	PartitionKeys []string
	Like          *LikeClause
	// qualified maps the placeholder schemas of three-part names to
	// their catalog and database (see TablePath).
	qualified map[string][2]string
	// hinted maps the placeholder schemas of table names with an OPTIONS
	// hint to the name's other parts and the options (hints.go).
	hinted map[string]hintedTable
	// QueryHints are the accepted hints after SELECT (BROADCAST, LOOKUP,
	// ...), which change nothing here (hints.go).
	QueryHints []Hint
	// ColumnTypes maps a CREATE TABLE column (by name as written) whose
	// Flink type TiDB cannot parse (ROW, ARRAY, MAP, bare VARCHAR, ...) to
	// that type's text, for types.ParseType; the AST has TEXT in its place.
	// Nil when there are none. See types.go.
	ColumnTypes map[string]string
	// Unnests maps each UNNEST placeholder table name (see
	// IsUnnestPlaceholder) to its alias and column aliases; nil if there
	// are none. See types.go.
	Unnests map[string]*Unnest
	// ColumnAliases maps each placeholder table alias (see
	// IsColumnAliasPlaceholder) to the alias with a column list it
	// replaced, `AS T(a, b)`; nil if there are none (queries.go).
	ColumnAliases map[string]*ColumnAlias

	src        string // the whole original script
	start, end int    // the statement's byte range in src
	toks       []token
	rewritten  string // the text given to TiDB
	offsets    *offsetMap
	pos        *positioner // only used during Parse
}

// Option is one 'key' = 'value' of a WITH clause, both unquoted. Line and
// Col are the position of the key.
type Option struct {
	Key, Value string
	Line, Col  int
}

// Watermark is WATERMARK FOR Column AS Expr. Expr's positions are in the
// rewritten text, like every other node's: use Statement.ErrorAtNode.
type Watermark struct {
	Column    string
	Expr      ast.ExprNode
	Line, Col int // of the WATERMARK keyword
}

// WindowTVF is a window table function call: TUMBLE, HOP, CUMULATE or
// SESSION, written TABLE(TUMBLE(...)) or TUMBLE(...) in FROM, with
// positional or named (DATA =>, TIMECOL =>, SIZE =>, SLIDE =>, STEP =>,
// GAP =>) arguments.
type WindowTVF struct {
	Func        string   // "TUMBLE", "HOP", "CUMULATE", "SESSION"
	Table       string   // the name after TABLE; parts of a qualified name joined with "."
	PartitionBy []string // SESSION(TABLE t PARTITION BY k, ...) or PARTITION BY (k1, k2); else nil
	TimeCol     string   // DESCRIPTOR(ts)
	// Intervals are the sizes in this order: TUMBLE(size), HOP(slide, size),
	// CUMULATE(step, size), SESSION(gap), whatever order named arguments
	// were written in.
	Intervals []time.Duration
	// Offset is the OFFSET argument of TUMBLE, HOP and CUMULATE; 0 if none.
	Offset    time.Duration
	Line, Col int
}

// CommandKind says which client command a Command is.
type CommandKind int

// The client commands.
const (
	CmdSet           CommandKind = iota + 1 // SET 'k' = 'v'; SET (list)
	CmdReset                                // RESET 'k'; RESET (all)
	CmdShowJobs                             // SHOW JOBS
	CmdStopJob                              // STOP JOB 'id' [WITH SAVEPOINT]
	CmdHelp                                 // HELP
	CmdShowFunctions                        // SHOW [USER] FUNCTIONS [[NOT] {LIKE | ILIKE} 'pattern']
	// More kinds, for Flink's catalog statements, are in statements.go.
)

func (k CommandKind) String() string {
	switch k {
	case CmdSet:
		return "SET"
	case CmdReset:
		return "RESET"
	case CmdShowJobs:
		return "SHOW JOBS"
	case CmdStopJob:
		return "STOP JOB"
	case CmdHelp:
		return "HELP"
	case CmdShowFunctions:
		return "SHOW FUNCTIONS"
	}
	if n, ok := stmtCommandNames[k]; ok {
		return n
	}
	return fmt.Sprintf("CommandKind(%d)", int(k))
}

// Command is a statement handled entirely by the pre-lexer.
type Command struct {
	Kind          CommandKind
	Key, Value    string // SET 'k' = 'v'; SET alone: both empty (list); RESET 'k'; RESET alone: empty (all)
	JobID         string // STOP JOB 'id'
	WithSavepoint bool   // STOP JOB 'id' WITH SAVEPOINT
	// SHOW [USER] FUNCTIONS: User lists only user-defined functions (of
	// which streamsql has none); a LIKE or ILIKE clause sets Like to its
	// pattern, ILike for ILIKE and NotLike for NOT.
	User, HasLike, NotLike, ILike bool
	Like                          string
	// The commands of statements.go. Object is what SHOW shows (TABLES,
	// VIEWS, DATABASES, CATALOGS, COLUMNS, CURRENT CATALOG, CURRENT
	// DATABASE; for SHOW CREATE: TABLE, VIEW, CATALOG). Path is the name
	// the command is about, its parts unquoted: [catalog.]database for
	// SHOW TABLES FROM, USE and the DATABASE commands, the table for SHOW
	// COLUMNS and SHOW CREATE, the catalog for the CATALOG commands.
	Object                         string
	Path                           []string
	IfExists, IfNotExists, Cascade bool
	Comment                        string
	Keys                           []string    // ALTER CATALOG c RESET ('k', ...)
	Line, Col                      int         // of Path
	Alter                          *AlterTable // ALTER TABLE (ddl.go)
}

// newTiDBParser returns a TiDB parser in the SQL mode streamsql reads:
// PIPES_AS_CONCAT, so that a || b concatenates strings as in Flink SQL
// (and standard SQL) instead of being MySQL's logical OR, and
// NO_BACKSLASH_ESCAPES, so that a backslash in a string literal is an
// ordinary character as in Flink ('\d' is two characters).
func newTiDBParser() *parser.Parser {
	p := parser.New()
	p.SetSQLMode(mysql.ModePipesAsConcat | mysql.ModeNoBackslashEscapes)
	return p
}

// Parse splits a script into statements, rewrites Flink forms and parses
// each with TiDB. It returns the first error as *Error, positioned in the
// original text, together with the statements before the failing one.
func Parse(sql string) ([]*Statement, error) {
	lr, lexErr := lex(sql)
	var stmts []*Statement
	p := newTiDBParser() // not goroutine-safe: one per call
	pos := newPositioner(sql)
	begin := 0
	var set *setBuilder // an open EXECUTE STATEMENT SET BEGIN
	for i := 0; i <= len(lr.toks); i++ {
		if i < len(lr.toks) && !(lr.toks[i].kind == tkPunct && sql[lr.toks[i].start] == ';') {
			continue
		}
		if i == len(lr.toks) && lexErr != nil {
			// The statement holding the unterminated string or comment.
			return stmts, errorAt(sql, lexErr.off, lexErr.msg)
		}
		if i > begin {
			seg := lr.toks[begin:i]
			switch after, opens := setOpener(sql, seg); {
			case set != nil && isEnd(sql, seg):
				st, err := set.close(seg[0])
				if err != nil {
					return stmts, err
				}
				stmts, set = append(stmts, st), nil
			case set == nil && opens:
				var err *Error
				if set, err = openSet(pos, sql, seg, after); err != nil {
					return stmts, err
				}
				if after < len(seg) {
					st, err := parseStatement(&p, pos, sql, lr, seg[after:])
					if err != nil {
						return stmts, err
					}
					if err := set.add(st); err != nil {
						return stmts, err
					}
				}
			default:
				st, err := parseStatement(&p, pos, sql, lr, seg)
				if err != nil {
					return stmts, err
				}
				if set == nil {
					stmts = append(stmts, st)
				} else if err := set.add(st); err != nil {
					return stmts, err
				}
			}
		}
		begin = i + 1
	}
	if set != nil {
		return stmts, set.st.errorAtOrig(set.st.start, "STATEMENT SET BEGIN is never closed: end it with END;")
	}
	return stmts, nil
}

// parseStatement rewrites and parses the statement made of toks.
func parseStatement(p **parser.Parser, pos *positioner, src string, lr *lexResult, toks []token) (*Statement, error) {
	st := &Statement{
		src:   src,
		start: toks[0].start,
		end:   toks[len(toks)-1].end,
		toks:  toks,
		pos:   pos,
	}
	st.Text = src[st.start:st.end]
	st.Line, st.Col = pos.at(st.start)

	// Comments of this statement: a contiguous run of lr.comments.
	lo := sort.Search(len(lr.comments), func(i int) bool { return lr.comments[i].start >= st.start })
	hi := sort.Search(len(lr.comments), func(i int) bool { return lr.comments[i].start >= st.end })
	c, perr := newStmtCtx(st)
	if perr == nil {
		// The statement's hints, and those after its last token (a hint
		// may end it: SELECT * FROM t /*+ OPTIONS(...) */;).
		last := st.end
		for k := lo; k < len(lr.comments); k++ {
			cm := lr.comments[k]
			if k >= hi {
				if strings.TrimSpace(src[last:cm.start]) != "" {
					break
				}
				last = cm.end
			}
			if strings.HasPrefix(src[cm.start:cm.end], "/*+") {
				c.hints = append(c.hints, cm)
			}
		}
		perr = c.rewrite()
	}
	if perr != nil {
		return nil, errorAt(src, perr.off, perr.msg)
	}
	rw, m, err := build(src, st.start, st.end, c.edits, lr.comments[lo:hi])
	if err != nil {
		return nil, st.errorAtOrig(st.start, err.Error())
	}
	st.rewritten, st.offsets = rw, m
	if st.Command != nil {
		return st, nil
	}

	nodes, panicked, err := parseTiDB(*p, rw)
	if panicked {
		*p = newTiDBParser() // its state is unknown after a panic
		return nil, st.errorAtOrig(st.start, "internal error in the SQL parser")
	}
	if err != nil {
		return nil, st.translateTiDBError(err)
	}
	if len(nodes) != 1 {
		return nil, st.errorAtOrig(st.start, "expected one statement")
	}
	st.Node = nodes[0]
	fixAggregates(st.Node) // aggregates.go
	fixAggFilters(st.Node) // queries.go
	if ct, ok := st.Node.(*ast.CreateTableStmt); ok && st.MaterializedView && ct.Select == nil {
		return nil, st.errorAtOrig(st.start, "CREATE MATERIALIZED VIEW needs AS <query>")
	}
	if err := st.takeCarriers(); err != nil { // ddl.go
		return nil, err
	}
	return st, nil
}

// parseTiDB calls the TiDB parser, turning a panic in that third-party code
// into a flag instead of a crash.
func parseTiDB(p *parser.Parser, text string) (nodes []ast.StmtNode, panicked bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			nodes, panicked, err = nil, true, nil
		}
	}()
	nodes, _, err = p.Parse(text, "", "")
	return nodes, false, err
}

// Errorf returns an *Error positioned at a byte offset of the rewritten
// text given to TiDB (what ast.ExprNode.OriginTextPosition() returns for
// this statement's nodes), mapped back to the original text.
func (s *Statement) Errorf(rewrittenOffset int, format string, args ...any) error {
	return s.errorAtOrig(s.offsets.toOrig(rewrittenOffset), fmt.Sprintf(format, args...))
}

// OriginalText returns the original text of the rewritten range [start,
// end) of this statement, e.g. of a SELECT item (SelectField.Offset and
// the length of its Text()), as the user wrote it: TRY_CAST(x AS INT)
// rather than its rewrite __try_cast(x, 'INT').
func (s *Statement) OriginalText(start, end int) string {
	a, b := s.offsets.toOrig(start), s.offsets.toOrigEnd(end)
	if a >= b {
		return ""
	}
	return s.src[a:b]
}

// ErrorAtNode is Errorf at n.OriginTextPosition(). TiDB only records
// positions for expressions; other nodes (and nil) report 0, which is the
// statement start.
func (s *Statement) ErrorAtNode(n ast.Node, format string, args ...any) error {
	off := 0
	if n != nil {
		off = n.OriginTextPosition()
	}
	return s.Errorf(off, format, args...)
}

// ErrorAt returns an *Error at a line and column of the original script,
// such as Option.Line/Col, Watermark.Line/Col or WindowTVF.Line/Col, with
// the script's real source line under it.
func (s *Statement) ErrorAt(line, col int, format string, args ...any) error {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(s.src[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	return errorOnLine(s.src, off, max(line, 1), max(col, 1), fmt.Sprintf(format, args...))
}

func (s *Statement) errorAtOrig(off int, msg string) *Error {
	return errorAt(s.src, off, msg)
}
