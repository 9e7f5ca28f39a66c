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
	return t.scan.get(func() (connectors.ScanSource, error) {
		sc, ok := t.connector.(connectors.SourceConnector)
		if !ok {
			return nil, fmt.Errorf("table '%s' cannot be read: connector '%s' is sink-only", t.Name, t.connector.Name())
		}
		s, err := sc.NewScan(t.Conn, env)
		return s, t.tableErr(err)
	})
}

// Sink returns the table's sink, creating it on first use.
func (t *TableEntry) Sink(env *connectors.Env) (connectors.TableSink, error) {
	return t.sink.get(func() (connectors.TableSink, error) {
		sc, ok := t.connector.(connectors.SinkConnector)
		if !ok {
			return nil, fmt.Errorf("table '%s' cannot be written: connector '%s' is source-only", t.Name, t.connector.Name())
		}
		s, err := sc.NewSink(t.Conn, env)
		return s, t.tableErr(err)
	})
}

// ConnectorName is the table's 'connector' option.
func (t *TableEntry) ConnectorName() string { return t.connector.Name() }

// ViewEntry is a view: a named query, planned anew wherever it is used.
type ViewEntry struct {
	Name    string
	Query   ast.ResultSetNode
	Columns []expr.Column
	DDL     string
	stmt    *parser.Statement
	colAs   []string // CREATE VIEW v (a, b) AS ...
}

// Catalog holds a session's tables and views. Names are looked up
// case-insensitively, as MySQL does on most systems.
type Catalog struct {
	tables map[string]*TableEntry
	views  map[string]*ViewEntry
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{tables: map[string]*TableEntry{}, views: map[string]*ViewEntry{}}
}

func norm(name string) string { return strings.ToLower(name) }

// Table returns the named table.
func (c *Catalog) Table(name string) (*TableEntry, bool) {
	t, ok := c.tables[norm(name)]
	return t, ok
}

// View returns the named view.
func (c *Catalog) View(name string) (*ViewEntry, bool) {
	v, ok := c.views[norm(name)]
	return v, ok
}

// Exists reports whether a table or view has the name.
func (c *Catalog) Exists(name string) bool {
	_, t := c.tables[norm(name)]
	_, v := c.views[norm(name)]
	return t || v
}

// Names lists tables and views, sorted.
func (c *Catalog) Names() []string {
	var ns []string
	for _, t := range c.tables {
		ns = append(ns, t.Name)
	}
	for _, v := range c.views {
		ns = append(ns, v.Name)
	}
	sort.Strings(ns)
	return ns
}

// Drop removes a table or view; view says which kind is meant.
func (c *Catalog) Drop(name string, view bool) bool {
	if view {
		if _, ok := c.views[norm(name)]; ok {
			delete(c.views, norm(name))
			return true
		}
		return false
	}
	if _, ok := c.tables[norm(name)]; ok {
		delete(c.tables, norm(name))
		return true
	}
	return false
}

// AddTable adds a table; the caller has checked the name is free.
func (c *Catalog) AddTable(t *TableEntry) { c.tables[norm(t.Name)] = t }

// AddView adds a view; the caller has checked the name is free.
func (c *Catalog) AddView(v *ViewEntry) { c.views[norm(v.Name)] = v }
