package planner

import (
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// A table's columns as queries see them (its schema) are its physical,
// metadata and computed columns in the order declared. Its connector
// reads the physical columns followed by the metadata ones (its read
// columns, connectors.Table.Columns then .Metadata); when that is not
// the schema, a Calc right above the scan computes the computed columns
// and puts every column in its declared place. INSERT writes the
// physical columns only, as in Flink.

// declaredColumn is a column of a table's schema: read column read (a
// physical column i >= 0, metadata column -1-j), or computed from expr.
type declaredColumn struct {
	Name string
	Type types.Type
	read int
	expr ast.ExprNode // computed columns only
	stmt *parser.Statement
}

func (c declaredColumn) computed() bool { return c.expr != nil }

// readScope is the columns the table's connector reads: the physical
// ones, then the metadata ones.
func readScope(ct *connectors.Table, qual string) []expr.Column {
	cols := tableScope(ct, qual)
	for _, m := range ct.Metadata {
		cols = append(cols, expr.Column{Name: m.Name, Table: qual, Type: m.Type})
	}
	return cols
}

// declare records the table's schema: the stored columns (physical and
// metadata, in their order) with the computed ones of stmt at their
// declared places. Computed expressions are bound over the read
// columns, so they cannot refer to each other, as in Flink.
func (t *TableEntry) declare(stmt *parser.Statement, ct *connectors.Table, stored []declaredColumn) error {
	if len(stmt.Computed) == 0 && len(ct.Metadata) == 0 {
		return nil
	}
	total := len(stored) + len(stmt.Computed)
	decl := make([]declaredColumn, 0, total)
	next, ci := 0, 0
	for i := 0; i < total; i++ {
		if ci < len(stmt.Computed) && stmt.Computed[ci].Ordinal == i || next == len(stored) {
			cc := stmt.Computed[ci]
			ci++
			e, err := expr.Bind(cc.Expr, &expr.Scope{Columns: readScope(ct, t.Name)}, stmt.ErrorAtNode)
			if err != nil {
				return err
			}
			decl = append(decl, declaredColumn{Name: cc.Name, Type: e.Type().Nullable(), read: -1, expr: cc.Expr, stmt: stmt})
			continue
		}
		c := stored[next]
		next++
		if c.read < 0 {
			c.read = len(ct.Columns) - 1 - c.read // metadata j -> len(physical) + j
		}
		decl = append(decl, c)
	}
	t.declared = decl
	return nil
}

// schema is the table's columns as queries see them, qualified by qual.
func (t *TableEntry) schema(ct *connectors.Table, qual string) []expr.Column {
	if t.declared == nil {
		return tableScope(ct, qual)
	}
	cols := make([]expr.Column, len(t.declared))
	for i, c := range t.declared {
		cols[i] = expr.Column{Name: c.Name, Table: qual, Type: c.Type}
		if !c.computed() {
			cols[i].Type = readScope(ct, "")[c.read].Type
		}
	}
	return cols
}

// Schema is the table's columns as queries see them.
func (t *TableEntry) Schema() []expr.Column { return t.schema(t.Conn, "") }

// schemaKey is the table's primary key as positions in its schema.
func (t *TableEntry) schemaKey() []int {
	if t.declared == nil || t.Conn.PrimaryKey == nil {
		return t.Conn.PrimaryKey
	}
	var key []int
	for _, k := range t.Conn.PrimaryKey {
		for i, c := range t.declared {
			if !c.computed() && c.read == k {
				key = append(key, i)
			}
		}
	}
	return key
}

// schemaProjection is the Calc above the table's scan that makes its
// schema from its read columns; nil when they are the same.
func (t *TableEntry) schemaProjection(in Node) (Node, error) {
	if t.declared == nil {
		return in, nil
	}
	read := readScope(t.Conn, t.Name)
	proj := make([]expr.Expr, len(t.declared))
	for i, c := range t.declared {
		if !c.computed() {
			proj[i] = expr.NewColumnRef(c.read, c.Name, read[c.read].Type)
			continue
		}
		e, err := expr.Bind(c.expr, &expr.Scope{Columns: read}, c.stmt.ErrorAtNode)
		if err != nil {
			return nil, err
		}
		proj[i] = e
	}
	return &CalcNode{nodeBase: nodeBase{cols: t.schema(t.Conn, ""), inputs: []Node{in}}, Proj: proj}, nil
}

// checkMetadata checks the metadata columns against what the connector
// can read.
func checkMetadata(stmt *parser.Statement, ct *connectors.Table, conn connectors.Connector) error {
	if len(ct.Metadata) == 0 {
		return nil
	}
	mc, ok := conn.(connectors.MetadataConnector)
	if !ok {
		return stmt.ErrorAtIdent(ct.Metadata[0].Name, nil, "column '%s': connector '%s' has no readable metadata", ct.Metadata[0].Name, conn.Name())
	}
	keys := mc.MetadataKeys()
	for _, m := range ct.Metadata {
		ty, ok := keys[m.Key]
		if !ok {
			var known []string
			for k := range keys {
				known = append(known, "'"+k+"'")
			}
			sort.Strings(known)
			return stmt.ErrorAtIdent(m.Name, nil, "column '%s': connector '%s' has no metadata key '%s'; it has %s", m.Name, conn.Name(), m.Key, strings.Join(known, ", "))
		}
		if ty.ID != m.Type.ID || ty.IsComposite() && !ty.Equal(m.Type) {
			return stmt.ErrorAtIdent(m.Name, nil, "column '%s': metadata '%s' is %s, not %s", m.Name, m.Key, ty, m.Type)
		}
	}
	return nil
}

// partitionKeys reads PARTITIONED BY into ct; only a connector that
// writes partitions (connectors.PartitionConnector) takes it, which
// attachConnector checks.
func (p *Planner) partitionKeys(stmt *parser.Statement, n ast.Node, ct *connectors.Table) error {
	for _, k := range stmt.PartitionKeys {
		i := -1
		for j, c := range ct.Columns {
			if strings.EqualFold(c.Name, k) {
				i = j
			}
		}
		if i < 0 {
			return stmt.ErrorAtIdent(k, n, "PARTITIONED BY column '%s' is not a physical column of the table", k)
		}
		ct.PartitionKeys = append(ct.PartitionKeys, i)
	}
	return nil
}
