package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/internal/secrets"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// Flink's catalog statements: catalogs, databases, SHOW and DESCRIBE.
// Every catalog is in memory (Flink's generic_in_memory type).

// objectPath is the catalog path of a table name of st; an error names
// the catalog or database that does not exist.
func (s *Session) objectPath(st *parser.Statement, tn *ast.TableName) (planner.ObjectPath, error) {
	p, _ := planner.PathOf(st.TablePath(tn))
	if err := s.planner.Cat.CheckDatabase(p); err != nil {
		return p, st.ErrorAtIdent(tn.Name.O, tn, "%v", err)
	}
	return p, nil
}

// commandPath is the path of a command's Path: a table of 1..3 parts.
func (s *Session) commandPath(st *parser.Statement, c *parser.Command) (planner.ObjectPath, error) {
	p, ok := planner.PathOf(c.Path)
	if !ok {
		return p, st.ErrorAt(c.Line, c.Col, "invalid name %s", strings.Join(c.Path, "."))
	}
	if err := s.planner.Cat.CheckDatabase(p); err != nil {
		return p, st.ErrorAt(c.Line, c.Col, "%v", err)
	}
	return p, nil
}

// catalogDB splits a [catalog.]database path; catalog "" is the current.
func catalogDB(path []string) (catalog, db string) {
	if len(path) == 2 {
		return path[0], path[1]
	}
	if len(path) == 1 {
		return "", path[0]
	}
	return "", ""
}

// catalogCommand runs the catalog commands; ok is false for others.
func (s *Session) catalogCommand(st *parser.Statement, c *parser.Command) (_ *Result, ok bool, _ error) {
	cat := s.planner.Cat
	errAt := func(err error) error { return st.ErrorAt(c.Line, c.Col, "%v", err) }
	switch c.Kind {
	case parser.CmdShow:
		r, err := s.showObjects(st, c)
		return r, true, err
	case parser.CmdShowCreate:
		r, err := s.showCreate(st, c)
		return r, true, err
	case parser.CmdAlterTable:
		r, err := s.alterTable(st, c) // ddl.go
		return r, true, err
	case parser.CmdAlterView:
		r, err := s.renameView(st, c)
		return r, true, err
	case parser.CmdCreateCatalog:
		return s.createCatalog(st, c)
	case parser.CmdAlterCatalog:
		return s.alterCatalog(st, c)
	case parser.CmdDropCatalog:
		if _, exists := cat.CatalogEntry(c.Path[0]); !exists && c.IfExists {
			return &Result{Message: fmt.Sprintf("Catalog '%s' does not exist; nothing done", c.Path[0])}, true, nil
		}
		if err := cat.DropCatalog(c.Path[0]); err != nil {
			return nil, true, errAt(err)
		}
		return &Result{Message: fmt.Sprintf("Catalog '%s' dropped", c.Path[0])}, true, nil
	case parser.CmdUseCatalog:
		if err := cat.UseCatalog(c.Path[0]); err != nil {
			return nil, true, errAt(err)
		}
		return &Result{Message: "OK"}, true, nil
	case parser.CmdCreateDatabase:
		catalog, db := catalogDB(c.Path)
		created, err := cat.CreateDatabase(catalog, db, c.Comment, c.IfNotExists)
		if err != nil {
			return nil, true, errAt(err)
		}
		if !created {
			return &Result{Message: fmt.Sprintf("Database '%s' already exists; nothing done", db)}, true, nil
		}
		return &Result{Message: fmt.Sprintf("Database '%s' created", db)}, true, nil
	case parser.CmdDropDatabase:
		catalog, db := catalogDB(c.Path)
		if c.IfExists {
			if names, err := cat.DatabaseNames(catalog); err != nil || !containsFold(names, db) {
				return &Result{Message: fmt.Sprintf("Database '%s' does not exist; nothing done", db)}, true, nil
			}
		}
		if err := cat.DropDatabase(catalog, db, c.Cascade); err != nil {
			return nil, true, errAt(err)
		}
		return &Result{Message: fmt.Sprintf("Database '%s' dropped", db)}, true, nil
	case parser.CmdUseDatabase:
		catalog, db := catalogDB(c.Path)
		if err := cat.UseDatabase(catalog, db); err != nil {
			return nil, true, errAt(err)
		}
		return &Result{Message: "OK"}, true, nil
	}
	return nil, false, nil
}

func containsFold(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// createCatalog runs CREATE CATALOG c WITH ('type' = 'generic_in_memory'
// [, 'default-database' = 'db']).
func (s *Session) createCatalog(st *parser.Statement, c *parser.Command) (*Result, bool, error) {
	name := c.Path[0]
	if _, exists := s.planner.Cat.CatalogEntry(name); exists {
		if c.IfNotExists {
			return &Result{Message: fmt.Sprintf("Catalog '%s' already exists; nothing done", name)}, true, nil
		}
		return nil, true, st.ErrorAt(c.Line, c.Col, "Catalog '%s' already exists", name)
	}
	typ, defaultDB := "", ""
	options := map[string]string{}
	for _, o := range st.Options {
		switch o.Key {
		case "type":
			typ = o.Value
			if typ != planner.InMemoryCatalogType {
				return nil, true, st.ErrorAt(o.Line, o.Col, "catalog type '%s' is not supported; streamsql's catalogs are in memory: 'type' = '%s'", typ, planner.InMemoryCatalogType)
			}
		case "default-database":
			defaultDB = o.Value
			options[o.Key] = o.Value
		default:
			return nil, true, st.ErrorAt(o.Line, o.Col, "unknown option '%s' for catalog type '%s'; it takes 'type' and 'default-database'", o.Key, planner.InMemoryCatalogType)
		}
	}
	if typ == "" {
		return nil, true, st.ErrorAt(c.Line, c.Col, "CREATE CATALOG needs the option 'type' = '%s'", planner.InMemoryCatalogType)
	}
	if err := s.planner.Cat.CreateCatalog(name, c.Comment, secrets.Mask(st.Text), defaultDB, options); err != nil {
		return nil, true, st.ErrorAt(c.Line, c.Col, "%v", err)
	}
	return &Result{Message: fmt.Sprintf("Catalog '%s' created", name)}, true, nil
}

// alterCatalog runs ALTER CATALOG c SET (...) | RESET (...) | COMMENT
// 'x', as Flink: SET takes the options CREATE CATALOG takes, RESET
// drops keys (ones not set are ignored), neither may change 'type' and
// RESET needs a key. The catalog's databases are left as they are;
// DESCRIBE CATALOG EXTENDED and SHOW CREATE CATALOG show the new
// definition.
func (s *Session) alterCatalog(st *parser.Statement, c *parser.Command) (*Result, bool, error) {
	ce, ok := s.planner.Cat.CatalogEntry(c.Path[0])
	if !ok {
		return nil, true, st.ErrorAt(c.Line, c.Col, "Catalog '%s' does not exist", c.Path[0])
	}
	if ce.DDL == "" {
		return nil, true, st.ErrorAt(c.Line, c.Col, "catalog '%s' is built in and cannot be altered", ce.Name)
	}
	opts := map[string]string{}
	for k, v := range ce.Options {
		opts[k] = v
	}
	comment := ce.Comment
	switch c.Object {
	case "SET":
		for _, o := range st.Options {
			switch o.Key {
			case "type":
				return nil, true, st.ErrorAt(o.Line, o.Col, "ALTER CATALOG SET does not support changing 'type'")
			case "default-database":
				opts[o.Key] = o.Value
			default:
				return nil, true, st.ErrorAt(o.Line, o.Col, "unknown option '%s' for catalog type '%s'; it takes 'type' and 'default-database'", o.Key, planner.InMemoryCatalogType)
			}
		}
	case "RESET":
		if len(c.Keys) == 0 {
			return nil, true, st.ErrorAt(c.Line, c.Col, "ALTER CATALOG RESET does not support empty key")
		}
		for _, k := range c.Keys {
			if k == "type" {
				return nil, true, st.ErrorAt(c.Line, c.Col, "ALTER CATALOG RESET does not support changing 'type'")
			}
			delete(opts, k)
		}
	case "COMMENT":
		comment = c.Comment
	}
	ce.Options, ce.Comment = opts, comment
	ce.DDL = catalogDDL(ce)
	return &Result{Message: fmt.Sprintf("Catalog '%s' altered", ce.Name)}, true, nil
}

// catalogDDL writes a catalog's definition as CREATE CATALOG, its
// options sorted, after ALTER CATALOG changed it.
func catalogDDL(ce *planner.CatalogEntry) string {
	quote := func(x string) string { return "'" + strings.ReplaceAll(x, "'", "''") + "'" }
	var b strings.Builder
	b.WriteString("CREATE CATALOG `" + strings.ReplaceAll(ce.Name, "`", "``") + "`")
	if ce.Comment != "" {
		b.WriteString(" COMMENT " + quote(ce.Comment))
	}
	opts := map[string]string{"type": ce.Type}
	for k, v := range ce.Options {
		opts[k] = v
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString(" WITH (")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(k) + " = " + quote(opts[k]))
	}
	b.WriteString(")")
	return b.String()
}

// showObjects runs SHOW TABLES, VIEWS, DATABASES, CATALOGS, COLUMNS,
// CURRENT CATALOG and CURRENT DATABASE, with Flink's column headers.
func (s *Session) showObjects(st *parser.Statement, c *parser.Command) (*Result, error) {
	cat := s.planner.Cat
	var header string
	var names []string
	switch c.Object {
	case "CURRENT CATALOG":
		cur, _ := cat.Current()
		return &Result{Header: []string{"current catalog name"}, Rows: [][]string{{cur}}}, nil
	case "CURRENT DATABASE":
		_, db := cat.Current()
		return &Result{Header: []string{"current database name"}, Rows: [][]string{{db}}}, nil
	case "CATALOG INFO", "CATALOG INFO EXTENDED":
		ce, ok := cat.CatalogEntry(c.Path[0])
		if !ok {
			return nil, st.ErrorAt(c.Line, c.Col, "Catalog '%s' does not exist", c.Path[0])
		}
		rows := [][]string{{"name", ce.Name}, {"type", ce.Type}, {"comment", ce.Comment}}
		if c.Object == "CATALOG INFO EXTENDED" {
			keys := make([]string, 0, len(ce.Options))
			for k := range ce.Options {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				rows = append(rows, []string{"option:" + k, ce.Options[k]})
			}
		}
		return &Result{Header: []string{"info name", "info value"}, Rows: rows}, nil
	case "CATALOGS":
		header, names = "catalog name", cat.CatalogNames()
	case "MODULES":
		// One module, Flink's core: the built-in functions.
		header, names = "module name", []string{"core"}
	case "FULL MODULES":
		return &Result{Header: []string{"module name", "used"}, Rows: [][]string{{"core", "true"}}}, nil
	case "USE MODULES":
		return &Result{Message: "OK"}, nil
	case "DATABASES":
		header = "database name"
		catalog := ""
		if len(c.Path) > 0 {
			catalog = c.Path[0]
		}
		dbs, err := cat.DatabaseNames(catalog)
		if err != nil {
			return nil, st.ErrorAt(c.Line, c.Col, "%v", err)
		}
		names = dbs
	case "TABLES", "VIEWS":
		catalog, db := catalogDB(c.Path)
		p := planner.ObjectPath{Catalog: catalog, Database: db}
		if err := cat.CheckDatabase(p); err != nil {
			return nil, st.ErrorAt(c.Line, c.Col, "%v", err)
		}
		tables, views := cat.Objects(p)
		if c.Object == "VIEWS" {
			header, names = "view name", views
		} else {
			// Flink's SHOW TABLES lists the views too.
			header, names = "table name", append(tables, views...)
		}
	case "COLUMNS":
		p, err := s.commandPath(st, c)
		if err != nil {
			return nil, err
		}
		cols, pk, err := s.planner.Describe(p)
		if err != nil {
			return nil, st.ErrorAt(c.Line, c.Col, "%v", err)
		}
		r := describe(cols, pk)
		if c.HasLike {
			kept := r.Rows[:0]
			for _, row := range r.Rows {
				ok, err := expr.MatchLike(c.Like, row[0], c.ILike)
				if err != nil {
					return nil, st.ErrorAt(c.Line, c.Col, "%v", err)
				}
				if ok != c.NotLike {
					kept = append(kept, row)
				}
			}
			r.Rows = kept
		}
		return r, nil
	default:
		return nil, st.ErrorAt(c.Line, c.Col, "SHOW %s is not supported", c.Object)
	}
	r := &Result{Header: []string{header}, Rows: [][]string{}}
	sort.Strings(names)
	for _, n := range names {
		if c.HasLike {
			ok, err := expr.MatchLike(c.Like, n, c.ILike)
			if err != nil {
				return nil, st.ErrorAt(c.Line, c.Col, "%v", err)
			}
			if ok == c.NotLike {
				continue
			}
		}
		r.Rows = append(r.Rows, []string{n})
	}
	return r, nil
}

// showCreate runs SHOW CREATE TABLE, VIEW and CATALOG: the statement as
// it was written, secrets masked.
func (s *Session) showCreate(st *parser.Statement, c *parser.Command) (*Result, error) {
	cat := s.planner.Cat
	if c.Object == "CATALOG" {
		ce, ok := cat.CatalogEntry(c.Path[0])
		if !ok {
			return nil, st.ErrorAt(c.Line, c.Col, "Catalog '%s' does not exist", c.Path[0])
		}
		if ce.DDL == "" {
			return &Result{Text: fmt.Sprintf("CREATE CATALOG `%s` WITH (\n  'type' = '%s'\n)", ce.Name, ce.Type)}, nil
		}
		return &Result{Text: ce.DDL}, nil
	}
	p, err := s.commandPath(st, c)
	if err != nil {
		return nil, err
	}
	t, isTable := cat.Table(p)
	v, isView := cat.View(p)
	switch {
	case c.Object == "TABLE" && isTable:
		return &Result{Text: t.DDL}, nil
	case c.Object == "VIEW" && isView:
		return &Result{Text: v.DDL}, nil
	case c.Object == "TABLE" && isView:
		return nil, st.ErrorAt(c.Line, c.Col, "SHOW CREATE TABLE is only supported for tables, but '%s' is a view; use SHOW CREATE VIEW", p)
	case c.Object == "VIEW" && isTable:
		return nil, st.ErrorAt(c.Line, c.Col, "SHOW CREATE VIEW is only supported for views, but '%s' is a table; use SHOW CREATE TABLE", p)
	case c.Object == "VIEW":
		return nil, st.ErrorAt(c.Line, c.Col, "View '%s' doesn't exist", p)
	}
	return nil, st.ErrorAt(c.Line, c.Col, "Table '%s' doesn't exist", p)
}

// renameView runs ALTER VIEW v RENAME TO w.
func (s *Session) renameView(st *parser.Statement, c *parser.Command) (*Result, error) {
	p, err := s.commandPath(st, c)
	if err != nil {
		return nil, err
	}
	v, ok := s.planner.Cat.View(p)
	if !ok {
		return nil, st.ErrorAt(c.Line, c.Col, "View '%s' doesn't exist", p)
	}
	np, err := s.renameTarget(st, c, p, c.Alter.NewPath)
	if err != nil {
		return nil, err
	}
	old := v.Name
	s.planner.Cat.Drop(p, true)
	v.Name = np.Name
	v.DDL = renameInDDL(v.DDL, np.Name)
	s.planner.Cat.AddView(np, v)
	return &Result{Message: fmt.Sprintf("View '%s' renamed to '%s'", old, v.Name)}, nil
}

// renameInDDL replaces the name after CREATE [TEMPORARY] VIEW [IF NOT
// EXISTS] in a view's DDL.
func renameInDDL(ddl, name string) string {
	fields := strings.Fields(ddl)
	i := 0
	for i < len(fields) && !strings.EqualFold(fields[i], "VIEW") {
		i++
	}
	i++
	if i+2 < len(fields) && strings.EqualFold(fields[i], "IF") {
		i += 3
	}
	if i >= len(fields) {
		return ddl
	}
	old := fields[i]
	if k := strings.IndexAny(old, "("); k > 0 {
		old = old[:k]
	}
	from := strings.Index(strings.ToUpper(ddl), "VIEW")
	if from < 0 {
		return ddl
	}
	at := strings.Index(ddl[from:], " "+old)
	if at < 0 {
		return ddl
	}
	at += from
	return ddl[:at+1] + planner.QuoteIdent(name) + ddl[at+1+len(old):]
}
