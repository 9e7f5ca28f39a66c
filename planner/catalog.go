package planner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/parser"
)

// TableEntry is a table of the catalog: its schema, its WITH options and
// the connector objects made from them.
type TableEntry struct {
	Name       string
	Conn       *connectors.Table // stable for the table's life: connectors key their state by it
	Options    []parser.Option   // in the order written
	Watermark  *WatermarkDef
	DDL        string // the CREATE TABLE text as the user wrote it
	connector  connectors.Connector
	scan       made[connectors.ScanSource]
	sink       made[connectors.TableSink]
	stmt       *parser.Statement
	insertOnly bool
	Temporary  bool
	// declared is the table's schema when it is not the connector's row
	// (computed or metadata columns; see computed.go); nil otherwise.
	declared []declaredColumn
	// hints are the OPTIONS hint this entry was copied for (hints.go);
	// nil for the catalog's own entry.
	hints []parser.Option
}

// WatermarkDef is WATERMARK FOR column AS expr.
type WatermarkDef struct {
	Column int
	Expr   ast.ExprNode
	stmt   *parser.Statement
}

// made is a connector object made on first use, with the error making
// it gave; it is made once for the table's life.
type made[T any] struct {
	v     T
	err   error
	tried bool
}

func (m *made[T]) get(make func() (T, error)) (T, error) {
	if !m.tried {
		m.tried = true
		m.v, m.err = make()
	}
	return m.v, m.err
}

// tableErr names the table in an error of its connector.
func (t *TableEntry) tableErr(err error) error {
	if err != nil {
		return fmt.Errorf("table '%s': %w", t.Name, err)
	}
	return nil
}

// Scan returns the table's source, creating it on first use.
func (t *TableEntry) Scan(env *connectors.Env) (connectors.ScanSource, error) {
	return makeOnce(t, &t.scan, "read", "sink-only", func(c connectors.SourceConnector) (connectors.ScanSource, error) {
		return c.NewScan(t.Conn, env)
	})
}

// Sink returns the table's sink, creating it on first use.
func (t *TableEntry) Sink(env *connectors.Env) (connectors.TableSink, error) {
	return makeOnce(t, &t.sink, "written", "source-only", func(c connectors.SinkConnector) (connectors.TableSink, error) {
		return c.NewSink(t.Conn, env)
	})
}

// makeOnce makes one side of t's connector (its source or its sink)
// into m on first use: with mk when the connector is a C, else an error
// that t cannot be used so (verb: "read", "written"; the connector is
// only: "sink-only", "source-only").
func makeOnce[C, T any](t *TableEntry, m *made[T], verb, only string, mk func(C) (T, error)) (T, error) {
	return m.get(func() (T, error) {
		c, ok := t.connector.(C)
		if !ok {
			var zero T
			return zero, fmt.Errorf("table '%s' cannot be %s: connector '%s' is %s", t.Name, verb, t.connector.Name(), only)
		}
		v, err := mk(c)
		return v, t.tableErr(err)
	})
}

// ConnectorName is the table's 'connector' option.
func (t *TableEntry) ConnectorName() string { return t.connector.Name() }

// ViewEntry is a view: a named query, planned anew wherever it is used.
// Its unqualified table names are resolved in the catalog and database
// that were current when it was created (Home), as Flink expands a view
// at creation.
type ViewEntry struct {
	Name      string
	Query     ast.ResultSetNode
	Columns   []expr.Column
	DDL       string
	Temporary bool
	Home      ObjectPath // the catalog and database current at creation; Name unused
	stmt      *parser.Statement
	colAs     []string // CREATE VIEW v (a, b) AS ...
}

// The names every session starts with, as in Flink.
const (
	DefaultCatalog  = "default_catalog"
	DefaultDatabase = "default_database"
	// InMemoryCatalogType is the one catalog type: Flink's
	// generic_in_memory, whose objects live as long as the session.
	InMemoryCatalogType = "generic_in_memory"
)

// ObjectPath names a table or view, catalog.database.name. An empty
// Catalog or Database is the session's current one (Catalog.Resolve).
type ObjectPath struct{ Catalog, Database, Name string }

// PathOf makes a path from the parts of a name as written: name,
// database.name or catalog.database.name. It returns false for more
// parts, or none.
func PathOf(parts []string) (ObjectPath, bool) {
	switch len(parts) {
	case 1:
		return ObjectPath{Name: parts[0]}, true
	case 2:
		return ObjectPath{Database: parts[0], Name: parts[1]}, true
	case 3:
		return ObjectPath{Catalog: parts[0], Database: parts[1], Name: parts[2]}, true
	}
	return ObjectPath{}, false
}

// qualify fills p's empty catalog and database from home's.
func (home ObjectPath) qualify(p ObjectPath) ObjectPath {
	if p.Catalog == "" && home.Catalog != "" {
		p.Catalog = home.Catalog
		if p.Database == "" {
			p.Database = home.Database
		}
	}
	return p
}

// Local is a path to name in the current database.
func Local(name string) ObjectPath { return ObjectPath{Name: name} }

func (p ObjectPath) String() string {
	var parts []string
	for _, s := range []string{p.Catalog, p.Database, p.Name} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ".")
}

// CatalogEntry is a catalog: CREATE CATALOG c WITH ('type' = ...).
type CatalogEntry struct {
	Name    string
	Type    string
	Comment string
	DDL     string // the CREATE CATALOG text, secrets masked; "" for default_catalog
	// Options are the WITH options but 'type', as DESCRIBE CATALOG
	// EXTENDED lists them; nil for default_catalog.
	Options map[string]string
	// defaultDB is the database USE CATALOG makes current.
	defaultDB string
	dbs       map[string]*Database
}

// Database is a database of a catalog: its tables and views.
type Database struct {
	Name    string
	Comment string
	tables  map[string]*TableEntry
	views   map[string]*ViewEntry
}

func newDatabase(name, comment string) *Database {
	return &Database{Name: name, Comment: comment, tables: map[string]*TableEntry{}, views: map[string]*ViewEntry{}}
}

// Empty reports whether the database holds no table or view.
func (d *Database) Empty() bool { return len(d.tables) == 0 && len(d.views) == 0 }

// Catalog holds a session's catalogs, their databases and the tables and
// views in them, and the current catalog and database. Every catalog is
// in memory (generic_in_memory). Names are looked up case-insensitively,
// as MySQL does on most systems.
type Catalog struct {
	catalogs   map[string]*CatalogEntry
	cur, curDB string // the current catalog and database, as named at creation
}

// NewCatalog returns a catalog set holding default_catalog with its
// default_database, both current.
func NewCatalog() *Catalog {
	c := &Catalog{catalogs: map[string]*CatalogEntry{}, cur: DefaultCatalog, curDB: DefaultDatabase}
	c.catalogs[norm(DefaultCatalog)] = &CatalogEntry{Name: DefaultCatalog, Type: InMemoryCatalogType, defaultDB: DefaultDatabase,
		dbs: map[string]*Database{norm(DefaultDatabase): newDatabase(DefaultDatabase, "")}}
	return c
}

func norm(name string) string { return strings.ToLower(name) }

// Current returns the current catalog and database.
func (c *Catalog) Current() (catalog, database string) { return c.cur, c.curDB }

// Resolve fills the empty parts of p with the current catalog and
// database, spelled as they were created.
func (c *Catalog) Resolve(p ObjectPath) ObjectPath {
	if p.Catalog == "" {
		p.Catalog = c.cur
		if p.Database == "" {
			p.Database = c.curDB
		}
	}
	if ce, ok := c.catalogs[norm(p.Catalog)]; ok {
		p.Catalog = ce.Name
		if d, ok := ce.dbs[norm(p.Database)]; ok {
			p.Database = d.Name
		}
	}
	return p
}

// database returns the database of p (resolved), or an error naming
// what does not exist.
func (c *Catalog) database(p ObjectPath) (*Database, error) {
	p = c.Resolve(p)
	ce, err := c.catalogNamed(p.Catalog)
	if err != nil {
		return nil, err
	}
	return ce.database(p.Database)
}

// catalogNamed returns the catalog called name, or an error saying it
// does not exist.
func (c *Catalog) catalogNamed(name string) (*CatalogEntry, error) {
	ce, ok := c.catalogs[norm(name)]
	if !ok {
		return nil, fmt.Errorf("Catalog '%s' does not exist", name)
	}
	return ce, nil
}

// catalogOrCurrent is catalogNamed, with "" the current catalog.
func (c *Catalog) catalogOrCurrent(name string) (*CatalogEntry, error) {
	if name == "" {
		name = c.cur
	}
	return c.catalogNamed(name)
}

// databaseIn returns the catalog ("" is the current one) and its
// database called name, or an error naming the one that does not exist.
func (c *Catalog) databaseIn(catalog, name string) (*CatalogEntry, *Database, error) {
	ce, err := c.catalogOrCurrent(catalog)
	if err != nil {
		return nil, nil, err
	}
	d, err := ce.database(name)
	return ce, d, err
}

// database returns the catalog's database called name, or an error
// saying it does not exist.
func (ce *CatalogEntry) database(name string) (*Database, error) {
	d, ok := ce.dbs[norm(name)]
	if !ok {
		return nil, fmt.Errorf("Database '%s' does not exist in catalog '%s'", name, ce.Name)
	}
	return d, nil
}

// entryAt looks p's name up among the objects of p's database that
// kind picks (its tables or its views).
func entryAt[E any](c *Catalog, p ObjectPath, kind func(*Database) map[string]*E) (*E, bool) {
	d, err := c.database(p)
	if err != nil {
		return nil, false
	}
	e, ok := kind(d)[norm(p.Name)]
	return e, ok
}

func tablesOf(d *Database) map[string]*TableEntry { return d.tables }
func viewsOf(d *Database) map[string]*ViewEntry   { return d.views }

// Table returns the table at p.
func (c *Catalog) Table(p ObjectPath) (*TableEntry, bool) { return entryAt(c, p, tablesOf) }

// View returns the view at p.
func (c *Catalog) View(p ObjectPath) (*ViewEntry, bool) { return entryAt(c, p, viewsOf) }

// Exists reports whether a table or view is at p.
func (c *Catalog) Exists(p ObjectPath) bool {
	_, t := c.Table(p)
	_, v := c.View(p)
	return t || v
}

// CheckDatabase returns an error naming the catalog or database of p
// that does not exist, or nil.
func (c *Catalog) CheckDatabase(p ObjectPath) error {
	_, err := c.database(p)
	return err
}

// Names lists the tables and views of the current database, sorted.
func (c *Catalog) Names() []string {
	tables, views := c.Objects(ObjectPath{})
	return sortedUnion(tables, views)
}

// Objects lists the table names and the view names of the database of
// p (its Name unused), each sorted; nil if the database does not exist.
func (c *Catalog) Objects(p ObjectPath) (tables, views []string) {
	d, err := c.database(p)
	if err != nil {
		return nil, nil
	}
	return sortedNames(d.tables, func(t *TableEntry) string { return t.Name }),
		sortedNames(d.views, func(v *ViewEntry) string { return v.Name })
}

// sortedNames lists the names (as name gives them) of m's entries, sorted.
func sortedNames[E any](m map[string]E, name func(E) string) []string {
	var ns []string
	for _, e := range m {
		ns = append(ns, name(e))
	}
	sort.Strings(ns)
	return ns
}

func sortedUnion(a, b []string) []string {
	out := append(append([]string(nil), a...), b...)
	sort.Strings(out)
	return out
}

// Drop removes a table or view; view says which kind is meant.
func (c *Catalog) Drop(p ObjectPath, view bool) bool {
	d, err := c.database(p)
	if err != nil {
		return false
	}
	if view {
		return remove(d.views, norm(p.Name))
	}
	return remove(d.tables, norm(p.Name))
}

// remove deletes key k from m, reporting whether it was there.
func remove[E any](m map[string]*E, k string) bool {
	_, ok := m[k]
	delete(m, k)
	return ok
}

// AddTable adds a table at p (whose Name is t.Name); the caller has
// checked that the database exists and the name is free.
func (c *Catalog) AddTable(p ObjectPath, t *TableEntry) {
	if d, err := c.database(p); err == nil {
		d.tables[norm(t.Name)] = t
	}
}

// AddView adds a view at p, like AddTable.
func (c *Catalog) AddView(p ObjectPath, v *ViewEntry) {
	if d, err := c.database(p); err == nil {
		d.views[norm(v.Name)] = v
	}
}

// ---- catalogs and databases ----

// CatalogNames lists the catalogs, sorted.
func (c *Catalog) CatalogNames() []string {
	return sortedNames(c.catalogs, func(ce *CatalogEntry) string { return ce.Name })
}

// CatalogEntry returns the named catalog.
func (c *Catalog) CatalogEntry(name string) (*CatalogEntry, bool) {
	ce, ok := c.catalogs[norm(name)]
	return ce, ok
}

// InMemoryDefaultDatabase is the database a created catalog starts
// with when its 'default-database' option is not given: Flink's
// GenericInMemoryCatalog names it "default" (only default_catalog has
// default_database).
const InMemoryDefaultDatabase = "default"

// CreateCatalog adds an in-memory catalog holding one empty database,
// defaultDB ("" is InMemoryDefaultDatabase), as Flink's
// generic_in_memory catalog does; options are kept for DESCRIBE
// CATALOG EXTENDED.
func (c *Catalog) CreateCatalog(name, comment, ddl, defaultDB string, options map[string]string) error {
	if _, ok := c.catalogs[norm(name)]; ok {
		return fmt.Errorf("Catalog '%s' already exists", name)
	}
	if defaultDB == "" {
		defaultDB = InMemoryDefaultDatabase
	}
	c.catalogs[norm(name)] = &CatalogEntry{Name: name, Type: InMemoryCatalogType, Comment: comment, DDL: ddl, Options: options,
		defaultDB: defaultDB, dbs: map[string]*Database{norm(defaultDB): newDatabase(defaultDB, "")}}
	return nil
}

// DropCatalog removes a catalog and everything in it. The current
// catalog cannot be dropped, as in Flink.
func (c *Catalog) DropCatalog(name string) error {
	ce, err := c.catalogNamed(name)
	if err != nil {
		return err
	}
	if norm(name) == norm(c.cur) {
		return fmt.Errorf("Cannot drop catalog '%s' because it is the current catalog; USE CATALOG another first", ce.Name)
	}
	delete(c.catalogs, norm(name))
	return nil
}

// UseCatalog makes a catalog current, and its default_database (or its
// first database) the current database.
func (c *Catalog) UseCatalog(name string) error {
	ce, err := c.catalogNamed(name)
	if err != nil {
		return err
	}
	c.cur = ce.Name
	c.curDB = ""
	if d, ok := ce.dbs[norm(ce.defaultDB)]; ok {
		c.curDB = d.Name
	} else if dbs := ce.sortedDBs(); len(dbs) > 0 {
		c.curDB = dbs[0]
	}
	return nil
}

func (ce *CatalogEntry) sortedDBs() []string {
	return sortedNames(ce.dbs, func(d *Database) string { return d.Name })
}

// DatabaseNames lists the databases of a catalog ("" is the current one), sorted.
func (c *Catalog) DatabaseNames(catalog string) ([]string, error) {
	ce, err := c.catalogOrCurrent(catalog)
	if err != nil {
		return nil, err
	}
	return ce.sortedDBs(), nil
}

// CreateDatabase adds a database to a catalog ("" is the current one).
// created is false when it exists and ifNotExists is set.
func (c *Catalog) CreateDatabase(catalog, name, comment string, ifNotExists bool) (created bool, err error) {
	ce, err := c.catalogOrCurrent(catalog)
	if err != nil {
		return false, err
	}
	if _, ok := ce.dbs[norm(name)]; ok {
		if ifNotExists {
			return false, nil
		}
		return false, fmt.Errorf("Database '%s' already exists in catalog '%s'", name, ce.Name)
	}
	ce.dbs[norm(name)] = newDatabase(name, comment)
	return true, nil
}

// DropDatabase removes a database. Without cascade it must be empty
// (Flink's RESTRICT, the default); the current database cannot be
// dropped.
func (c *Catalog) DropDatabase(catalog, name string, cascade bool) error {
	ce, d, err := c.databaseIn(catalog, name)
	if err != nil {
		return err
	}
	if norm(ce.Name) == norm(c.cur) && norm(d.Name) == norm(c.curDB) {
		return fmt.Errorf("Cannot drop database '%s' because it is the current database; USE another first", d.Name)
	}
	if !cascade && !d.Empty() {
		return fmt.Errorf("Database '%s' in catalog '%s' is not empty; DROP DATABASE ... CASCADE drops it with its tables and views", d.Name, ce.Name)
	}
	delete(ce.dbs, norm(name))
	return nil
}

// UseDatabase makes a database current; catalog "" is the current catalog.
func (c *Catalog) UseDatabase(catalog, name string) error {
	ce, d, err := c.databaseIn(catalog, name)
	if err != nil {
		return err
	}
	c.cur, c.curDB = ce.Name, d.Name
	return nil
}
