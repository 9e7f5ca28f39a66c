package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// CREATE TABLE ... LIKE and ALTER TABLE make a new definition of the
// table (planner.TableDef), render it as CREATE TABLE text and create the
// table from that, so that the result passes every check of CREATE TABLE
// and SHOW CREATE TABLE shows it.

// createFromDef creates a table from a rendered definition. Errors are
// reported at st, the statement the user wrote, with the message of the
// rendered statement's.
func (s *Session) createFromDef(st *parser.Statement, def planner.TableDef, what string) (*planner.TableEntry, error) {
	ddl := def.DDL()
	wrap := func(err error) error {
		msg := err.Error()
		var pe *parser.Error
		if errors.As(err, &pe) {
			msg = pe.Msg
		}
		return st.ErrorAt(st.Line, st.Col, "%s: %s", what, msg)
	}
	stmts, err := parser.Parse(ddl)
	if err != nil {
		return nil, wrap(err)
	}
	if len(stmts) != 1 {
		return nil, wrap(fmt.Errorf("internal error: the table definition is %d statements", len(stmts)))
	}
	ct, ok := stmts[0].Node.(*ast.CreateTableStmt)
	if !ok {
		return nil, wrap(fmt.Errorf("internal error: the table definition is no CREATE TABLE"))
	}
	t, err := s.planner.CreateTable(stmts[0], ct)
	if err != nil {
		return nil, wrap(err)
	}
	return t, nil
}

// createLike runs CREATE TABLE t (...) WITH (...) LIKE base (options).
func (s *Session) createLike(st *parser.Statement, n *ast.CreateTableStmt, path planner.ObjectPath) (*Result, error) {
	like := st.Like
	bp, _ := planner.PathOf(like.Path)
	base, ok := s.planner.Cat.Table(bp)
	if !ok {
		if _, isView := s.planner.Cat.View(bp); isView {
			return nil, st.ErrorAt(like.Line, like.Col, "LIKE '%s': a view cannot be the base of LIKE", bp)
		}
		return nil, st.ErrorAt(like.Line, like.Col, "LIKE: Table '%s' doesn't exist", bp)
	}
	nw := planner.TableDef{Name: planner.QuoteIdent(n.Table.Name.O), Temporary: st.Temporary, Elements: st.Elements, Partition: st.PartitionKeys, Options: st.Options}
	def, err := planner.MergeLike(base.Def(), nw, like.Options)
	if err != nil {
		return nil, st.ErrorAt(like.Line, like.Col, "%v", err)
	}
	t, err := s.createFromDef(st, def, "CREATE TABLE ... LIKE "+strings.Join(like.Path, "."))
	if err != nil {
		return nil, err
	}
	s.planner.Cat.AddTable(path, t)
	return &Result{Message: fmt.Sprintf("Table '%s' created", t.Name)}, nil
}

// alterTable runs ALTER TABLE.
func (s *Session) alterTable(st *parser.Statement, c *parser.Command) (*Result, error) {
	a := c.Alter
	p, err := s.commandPath(st, c)
	if err != nil {
		return nil, err
	}
	t, ok := s.planner.Cat.Table(p)
	if !ok {
		if a.IfExists {
			return &Result{Message: fmt.Sprintf("Table '%s' doesn't exist; nothing done", p)}, nil
		}
		if _, isView := s.planner.Cat.View(p); isView {
			return nil, st.ErrorAt(c.Line, c.Col, "'%s' is a view; ALTER TABLE changes tables", p)
		}
		return nil, st.ErrorAt(c.Line, c.Col, "Table '%s' doesn't exist", p)
	}
	if a.Op == "RENAME" {
		np, err := s.renameTarget(st, c, p, a.NewPath)
		if err != nil {
			return nil, err
		}
		def := t.Def()
		def.Name = planner.QuoteIdent(np.Name)
		nt, err := s.createFromDef(st, def, "ALTER TABLE ... RENAME TO")
		if err != nil {
			return nil, err
		}
		s.planner.Cat.Drop(p, false)
		s.planner.Cat.AddTable(np, nt)
		return &Result{Message: fmt.Sprintf("Table '%s' renamed to '%s'", t.Name, nt.Name)}, nil
	}
	def, err := t.Def().Alter(a, st.Options)
	if err != nil {
		return nil, st.ErrorAt(c.Line, c.Col, "ALTER TABLE %s: %v", p, err)
	}
	nt, err := s.createFromDef(st, def, "ALTER TABLE "+p.String())
	if err != nil {
		return nil, err
	}
	s.planner.Cat.Drop(p, false)
	s.planner.Cat.AddTable(p, nt)
	return &Result{Message: fmt.Sprintf("Table '%s' altered", t.Name)}, nil
}

// renameTarget is the new path of ALTER TABLE/VIEW p RENAME TO newPath:
// in p's catalog and database unless it names others, in a database that
// exists, and free.
func (s *Session) renameTarget(st *parser.Statement, c *parser.Command, p planner.ObjectPath, newPath []string) (planner.ObjectPath, error) {
	np, _ := planner.PathOf(newPath)
	if np.Catalog == "" && np.Database == "" {
		np.Catalog, np.Database = p.Catalog, p.Database
	}
	if err := s.planner.Cat.CheckDatabase(np); err != nil {
		return np, st.ErrorAt(c.Line, c.Col, "%v", err)
	}
	if s.planner.Cat.Exists(np) {
		return np, st.ErrorAt(c.Line, c.Col, "Table '%s' already exists", np)
	}
	return np, nil
}
