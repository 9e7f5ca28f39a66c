package parser

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Flink's CREATE TABLE forms TiDB does not parse, and ALTER TABLE:
//
//	name AS expr [COMMENT 'x']                   a computed column: CONSTRAINT __cc_<n> CHECK (expr) NOT ENFORCED,
//	                                             taken out of the AST again; Statement.Computed
//	name type METADATA [FROM 'key'] [VIRTUAL]    a metadata column: name type; Statement.Metadata
//	PARTITIONED BY (a, b)                        removed; Statement.PartitionKeys
//	LIKE src [(INCLUDING ALL ...)]               removed (TiDB's LIKE src when there is no column
//	                                             list); Statement.Like
//	ALTER TABLE t RENAME TO u, SET (...), RESET (...), ADD/MODIFY (...), DROP (...)
//	                                             a client command; Statement.Command.Alter

// ComputedColumn is name AS expr in a CREATE TABLE column list.
type ComputedColumn struct {
	Name string
	// Ordinal is the column's position among the table's columns as
	// declared (physical, metadata and computed).
	Ordinal   int
	Expr      ast.ExprNode // positions in the rewritten text, like every node's
	Line, Col int
}

// MetadataColumn is name type METADATA [FROM 'key'] [VIRTUAL].
type MetadataColumn struct {
	Key     string // the FROM key, or the column name
	Virtual bool
}

// LikeClause is CREATE TABLE ... LIKE source [(options)].
type LikeClause struct {
	Path []string
	// Options are Flink's like options in order, e.g. {"INCLUDING", "ALL"},
	// {"OVERWRITING", "OPTIONS"}, {"EXCLUDING", "WATERMARKS"}.
	Options   [][2]string
	Line, Col int
}

const computedPrefix = "__cc_"

// likeFeatures are what INCLUDING, EXCLUDING and OVERWRITING apply to.
var likeFeatures = map[string]bool{"ALL": true, "CONSTRAINTS": true, "GENERATED": true, "METADATA": true, "OPTIONS": true, "PARTITIONS": true, "WATERMARKS": true}

// rewriteComputedOrMetadata handles the element [s, e) when it is a
// computed or metadata column; ok is false for other elements.
func (c *stmtCtx) rewriteComputedOrMetadata(s, e int) (ok bool, err *posError) {
	if !c.isName(s) || s+1 >= e {
		return false, nil
	}
	if c.isKw(s+1, "AS") {
		if s+2 >= e {
			return true, c.errAt(s+2, "computed column %s needs an expression after AS", c.text(s))
		}
		end := e
		if end-2 > s+2 && c.isKw(end-2, "COMMENT") && c.isStringLit(end-1) {
			c.replaceSpan(end-2, end-1, c.toks[end-3].end, c.toks[end-1].end, "", c.toks[end-2].start)
			end -= 2
		}
		line, col := c.st.pos.at(c.toks[s].start)
		c.st.Computed = append(c.st.Computed, ComputedColumn{Name: c.nameValue(s), Ordinal: c.colOrdinal, Line: line, Col: col})
		c.replaceSpan(s, s+1, c.toks[s].start, c.toks[s+2].start,
			fmt.Sprintf("CONSTRAINT %s%d CHECK (", computedPrefix, len(c.st.Computed)), c.toks[s].start)
		c.insertAfter(end-1, ") NOT ENFORCED")
		return true, nil
	}
	for k := s + 2; k < e; k++ {
		if !c.isKw(k, "METADATA") || c.parent[k] != c.parent[s] {
			continue
		}
		m := MetadataColumn{Key: c.nameValue(s)}
		last := k
		if c.isKw(k+1, "FROM") {
			if !c.isStringLit(k + 2) {
				return true, c.errAt(k+2, "METADATA FROM needs a key string such as 'timestamp', found %s", c.describe(k+2))
			}
			m.Key, last = unquote(c.text(k+2)), k+2
		}
		if c.isKw(last+1, "VIRTUAL") {
			m.Virtual, last = true, last+1
		}
		if last+1 < e {
			return true, c.errAt(last+1, "unexpected %s after METADATA", c.describe(last+1))
		}
		if c.st.Metadata == nil {
			c.st.Metadata = map[string]MetadataColumn{}
		}
		c.st.Metadata[strings.ToLower(c.nameValue(s))] = m
		c.replaceSpan(k, last, c.toks[k-1].end, c.toks[last].end, "", c.toks[k].start)
		return false, nil // the rest of the column (its type) as any other
	}
	return false, nil
}

// rewriteTableClauses handles PARTITIONED BY (...) and LIKE src [(...)]
// at depth 0 after the column list, from token i; hasColumns says
// whether there is a column list.
func (c *stmtCtx) rewriteTableClauses(i int, hasColumns bool) *posError {
	for ; i < len(c.toks); i++ {
		if c.parent[i] != -1 || c.covered[i] {
			continue
		}
		switch {
		case c.isKw(i, "AS") || c.isKw(i, "SELECT"):
			return nil
		case c.isKw(i, "DISTRIBUTED") && c.isKw(i+1, "BY"), c.isKw(i, "DISTRIBUTED") && c.isKw(i+1, "INTO"):
			return c.errAt(i, "DISTRIBUTED BY (Flink's buckets) is not supported")
		case c.isKw(i, "PARTITIONED") && c.isKw(i+1, "BY"):
			if !c.isPunct(i+2, "(") {
				return c.errAt(i+2, "PARTITIONED BY needs a list of columns in parentheses, found %s", c.describe(i+2))
			}
			close := c.match[i+2]
			for k := i + 3; k < close; k++ {
				switch {
				case c.isName(k) && (c.isPunct(k+1, ",") || k+1 == close):
					c.st.PartitionKeys = append(c.st.PartitionKeys, c.nameValue(k))
				case c.isPunct(k, ",") && k+1 < close:
				default:
					return c.errAt(k, "PARTITIONED BY takes column names, found %s", c.describe(k))
				}
			}
			if len(c.st.PartitionKeys) == 0 {
				return c.errAt(close, "PARTITIONED BY needs at least one column")
			}
			c.replace(i, close, "")
			i = close
		case c.isKw(i, "LIKE"):
			path, k, err := c.path(i+1, 3)
			if err != nil {
				return err
			}
			like := &LikeClause{Path: path}
			like.Line, like.Col = c.st.pos.at(c.toks[i+1].start)
			end := k - 1
			if c.isPunct(k, "(") {
				close := c.match[k]
				for m := k + 1; m < close; m += 2 {
					kind, feat := c.upper(m), c.upper(m+1)
					if kind != "INCLUDING" && kind != "EXCLUDING" && kind != "OVERWRITING" {
						return c.errAt(m, "expected INCLUDING, EXCLUDING or OVERWRITING in the LIKE options, found %s", c.describe(m))
					}
					if !likeFeatures[feat] {
						return c.errAt(m+1, "unknown LIKE option %s %s; options are ALL, CONSTRAINTS, GENERATED, METADATA, OPTIONS, PARTITIONS, WATERMARKS", kind, c.describe(m+1))
					}
					like.Options = append(like.Options, [2]string{kind, feat})
					if m+2 < close && c.isPunct(m+2, ",") {
						m++
					}
				}
				end = close
			}
			c.st.Like = like
			if hasColumns {
				c.replace(i, end, "")
			} else {
				// TiDB parses CREATE TABLE t LIKE src; it stands in for the
				// Flink form, whose options are in Statement.Like.
				c.replace(i, end, "LIKE `__like`")
			}
			i = end
		}
	}
	return nil
}

// takeCarriers moves the expressions of the CHECK constraints carrying
// WATERMARK declarations and computed columns into Statement.Watermarks
// and Statement.Computed, and removes those constraints from the CREATE
// TABLE, so the planner never sees them.
func (s *Statement) takeCarriers() error {
	if len(s.Watermarks) == 0 && len(s.Computed) == 0 {
		return nil
	}
	ct, ok := s.Node.(*ast.CreateTableStmt)
	if !ok {
		return s.errorAtOrig(s.start, "internal error: WATERMARK or computed column outside CREATE TABLE")
	}
	kept := ct.Constraints[:0]
	for _, con := range ct.Constraints {
		var n int
		if con.Tp == ast.ConstraintCheck && strings.HasPrefix(con.Name, watermarkPrefix) {
			if _, err := fmt.Sscanf(con.Name[len(watermarkPrefix):], "%d", &n); err == nil && n >= 1 && n <= len(s.Watermarks) {
				s.Watermarks[n-1].Expr = con.Expr
				continue
			}
		}
		if con.Tp == ast.ConstraintCheck && strings.HasPrefix(con.Name, computedPrefix) {
			if _, err := fmt.Sscanf(con.Name[len(computedPrefix):], "%d", &n); err == nil && n >= 1 && n <= len(s.Computed) {
				s.Computed[n-1].Expr = con.Expr
				continue
			}
		}
		kept = append(kept, con)
	}
	ct.Constraints = kept
	for _, w := range s.Watermarks {
		if w.Expr == nil {
			return s.errorAtOrig(s.start, "internal error: lost the expression of WATERMARK FOR "+w.Column)
		}
	}
	for _, cc := range s.Computed {
		if cc.Expr == nil {
			return s.errorAtOrig(s.start, "internal error: lost the expression of computed column "+cc.Name)
		}
	}
	return nil
}

// TableElement is one element of a CREATE TABLE column list.
type TableElement struct {
	// Kind is "column" (physical), "computed", "metadata", "watermark",
	// "primary key" (the table constraint) or "constraint" (another).
	Kind string
	Name string // the column's name; the rowtime column of a watermark; "" otherwise
	Text string // as written
}

// elementKind classifies the element [s, e).
func (c *stmtCtx) elementKind(s, e int) (kind, name string) {
	switch {
	case c.isKw(s, "WATERMARK") && c.isKw(s+1, "FOR") && c.isName(s+2):
		return "watermark", c.nameValue(s + 2)
	case c.isKw(s, "PRIMARY") && c.isKw(s+1, "KEY"),
		c.isKw(s, "CONSTRAINT") && c.isKw(s+2, "PRIMARY"):
		return "primary key", ""
	case tableElementKeywords[c.upper(s)] && !(c.isKw(s, "KEY") && c.toks[min(s+1, len(c.toks)-1)].kind == tkIdent):
		return "constraint", ""
	case c.isName(s) && c.isKw(s+1, "AS"):
		return "computed", c.nameValue(s)
	}
	for k := s + 2; k < e; k++ {
		if c.isKw(k, "METADATA") && c.parent[k] == c.parent[s] {
			return "metadata", c.nameValue(s)
		}
	}
	return "column", c.nameValue(s)
}

// ---- ALTER TABLE ----

// CmdAlterTable is ALTER TABLE; Command.Alter holds it.
const CmdAlterTable CommandKind = 200

func init() { stmtCommandNames[CmdAlterTable] = "ALTER TABLE" }

// AlterTable is one of Flink's ALTER TABLE forms:
//
//	ALTER TABLE [IF EXISTS] t RENAME TO u
//	ALTER TABLE [IF EXISTS] t RENAME col TO col2
//	ALTER TABLE [IF EXISTS] t SET ('k' = 'v', ...)
//	ALTER TABLE [IF EXISTS] t RESET ('k', ...)
//	ALTER TABLE [IF EXISTS] t ADD element | ADD (element, ...) [FIRST | AFTER col]
//	ALTER TABLE [IF EXISTS] t MODIFY element | MODIFY (element, ...) [FIRST | AFTER col]
//	ALTER TABLE [IF EXISTS] t DROP col | DROP (col, ...) | DROP PRIMARY KEY | DROP WATERMARK
type AlterTable struct {
	Op       string // RENAME, RENAME COLUMN, SET, RESET, ADD, MODIFY, DROP
	IfExists bool
	NewPath  []string       // RENAME TO
	From, To string         // RENAME COLUMN
	Reset    []string       // RESET keys
	Elements []TableElement // ADD, MODIFY
	First    bool           // ADD/MODIFY ... FIRST
	After    string         // ADD/MODIFY ... AFTER col
	Drop     []string       // DROP columns
	DropPK   bool
	DropWM   bool
}

func (c *stmtCtx) parseAlterTable() (*Command, *posError) {
	n := len(c.toks)
	a := &AlterTable{}
	k := 2
	if c.isKw(k, "IF") && c.isKw(k+1, "EXISTS") {
		a.IfExists, k = true, k+2
	}
	cmd := c.cmdAt(&Command{Kind: CmdAlterTable, Alter: a}, k)
	path, k, err := c.path(k, 3)
	if err != nil {
		return nil, err
	}
	cmd.Path = path
	op := c.upper(k)
	a.Op = op
	end := func(i int) *posError {
		if i < n {
			return c.errAt(i, "unexpected %s in ALTER TABLE ... %s", c.describe(i), op)
		}
		return nil
	}
	switch op {
	case "RENAME":
		if c.isKw(k+1, "TO") {
			p, e, err := c.path(k+2, 3)
			if err != nil {
				return nil, err
			}
			a.NewPath = p
			return cmd, end(e)
		}
		if !c.isName(k+1) || !c.isKw(k+2, "TO") || !c.isName(k+3) {
			return nil, c.errAt(k+1, "expected RENAME TO <table> or RENAME <column> TO <column>")
		}
		a.Op, a.From, a.To = "RENAME COLUMN", c.nameValue(k+1), c.nameValue(k+3)
		return cmd, end(k + 4)
	case "SET":
		if !c.isPunct(k+1, "(") {
			return nil, c.errAt(k+1, "ALTER TABLE ... SET needs ('key' = 'value', ...)")
		}
		// rewriteOptions reads WITH ( ... ); SET ( ... ) has the same shape.
		if err := c.rewriteOptions(k); err != nil {
			return nil, err
		}
		return cmd, end(c.match[k+1] + 1)
	case "RESET":
		if !c.isPunct(k+1, "(") {
			return nil, c.errAt(k+1, "ALTER TABLE ... RESET needs ('key', ...)")
		}
		close := c.match[k+1]
		for m := k + 2; m < close; m += 2 {
			if !c.isStringLit(m) {
				return nil, c.errAt(m, "RESET takes option keys as strings, found %s", c.describe(m))
			}
			a.Reset = append(a.Reset, unquote(c.text(m)))
			if !c.isPunct(m+1, ",") && m+1 != close {
				return nil, c.errAt(m+1, "expected ',' or ')' in RESET, found %s", c.describe(m+1))
			}
		}
		return cmd, end(close + 1)
	case "ADD", "MODIFY":
		s, e := k+1, n
		if c.isPunct(s, "(") {
			close := c.match[s]
			st := s + 1
			for m := s + 1; m <= close; m++ {
				if m < close && !(c.isPunct(m, ",") && c.parent[m] == s) {
					continue
				}
				if st == m {
					return nil, c.errAt(m, "empty element in ALTER TABLE ... %s", op)
				}
				kind, name := c.elementKind(st, m)
				a.Elements = append(a.Elements, TableElement{Kind: kind, Name: name, Text: c.src[c.toks[st].start:c.toks[m-1].end]})
				st = m + 1
			}
			e = close + 1
		} else {
			for e = s; e < n && !(c.parent[e] == -1 && (c.isKw(e, "FIRST") || c.isKw(e, "AFTER"))); e++ {
			}
			if e == s {
				return nil, c.errAt(s, "ALTER TABLE ... %s needs a column, constraint or watermark", op)
			}
			kind, name := c.elementKind(s, e)
			a.Elements = append(a.Elements, TableElement{Kind: kind, Name: name, Text: c.src[c.toks[s].start:c.toks[e-1].end]})
		}
		switch {
		case c.isKw(e, "FIRST"):
			a.First, e = true, e+1
		case c.isKw(e, "AFTER"):
			if !c.isName(e + 1) {
				return nil, c.errAt(e+1, "AFTER needs a column name")
			}
			a.After, e = c.nameValue(e+1), e+2
		}
		return cmd, end(e)
	case "DROP":
		switch {
		case c.isKw(k+1, "PRIMARY") && c.isKw(k+2, "KEY"):
			a.DropPK = true
			return cmd, end(k + 3)
		case c.isKw(k+1, "CONSTRAINT") && c.isName(k+2):
			a.DropPK = true // the only constraint is the primary key
			return cmd, end(k + 3)
		case c.isKw(k+1, "WATERMARK"):
			a.DropWM = true
			return cmd, end(k + 2)
		case c.isPunct(k+1, "("):
			close := c.match[k+1]
			for m := k + 2; m < close; m += 2 {
				if !c.isName(m) {
					return nil, c.errAt(m, "DROP takes column names, found %s", c.describe(m))
				}
				a.Drop = append(a.Drop, c.nameValue(m))
			}
			return cmd, end(close + 1)
		case c.isName(k + 1):
			a.Drop = []string{c.nameValue(k + 1)}
			return cmd, end(k + 2)
		}
		return nil, c.errAt(k+1, "expected a column, (columns), PRIMARY KEY or WATERMARK after DROP")
	}
	return nil, c.errAt(k, "ALTER TABLE takes RENAME, SET, RESET, ADD, MODIFY or DROP, found %s", c.describe(k))
}
