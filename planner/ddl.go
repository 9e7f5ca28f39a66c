package planner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	tidbtypes "github.com/pingcap/tidb/pkg/parser/types"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/internal/secrets"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// fieldType maps a TiDB column type to a streamsql type. The pre-lexer
// has already turned Flink's STRING into TEXT and TIMESTAMP_LTZ into
// TIMESTAMP.
func fieldType(ft *tidbtypes.FieldType) (types.Type, error) {
	flen, dec := ft.GetFlen(), ft.GetDecimal()
	switch ft.GetType() {
	case mysql.TypeTiny:
		if flen == 1 {
			return types.TypeBoolean, nil // BOOLEAN is TINYINT(1)
		}
		return types.TypeInt, nil
	case mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong:
		return types.TypeInt, nil
	case mysql.TypeLonglong:
		return types.TypeBigInt, nil
	case mysql.TypeDouble, mysql.TypeFloat:
		return types.TypeDouble, nil
	case mysql.TypeNewDecimal:
		p, s := flen, dec
		if p <= 0 {
			p = 10
		}
		if s < 0 {
			s = 0
		}
		if p > types.MaxDecimalPrecision || s > p {
			return types.Type{}, fmt.Errorf("DECIMAL(%d, %d): precision must be 1..%d and scale 0..precision", p, s, types.MaxDecimalPrecision)
		}
		return types.DecimalType(p, s), nil
	case mysql.TypeVarchar, mysql.TypeVarString, mysql.TypeString:
		if ft.GetCharset() == "binary" { // VARBINARY(n), BINARY(n)
			if flen <= 0 {
				return types.TypeBytes, nil
			}
			return types.VarbinaryType(flen), nil
		}
		if flen <= 0 {
			return types.TypeString, nil
		}
		return types.VarcharType(flen), nil
	case mysql.TypeBlob, mysql.TypeTinyBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		if ft.GetCharset() == "binary" { // BYTES
			return types.TypeBytes, nil
		}
		return types.TypeString, nil
	case mysql.TypeDate:
		return types.TypeDate, nil
	case mysql.TypeDuration: // TIME(p); the pre-lexer hands most over as text
		return types.TimeType(max(dec, 0)), nil
	case mysql.TypeTimestamp, mysql.TypeDatetime:
		p := dec
		if p < 0 {
			p = 6 // Flink's TIMESTAMP without precision is TIMESTAMP(6)
		}
		if p > 9 {
			return types.Type{}, fmt.Errorf("TIMESTAMP(%d): precision must be 0..9", p)
		}
		return types.TimestampType(p), nil
	}
	return types.Type{}, fmt.Errorf("column type %s is not supported", strings.ToUpper(ft.String()))
}

// CreateTable builds a catalog entry from CREATE TABLE; it does not add
// it. The connector is checked now, so that a bad option fails at DDL
// time, not when the table is first used.
func (p *Planner) CreateTable(stmt *parser.Statement, n *ast.CreateTableStmt) (_ *TableEntry, err error) {
	if n.Select != nil {
		return nil, stmt.ErrorAtNode(n, "use CreateTableAs for CREATE TABLE ... AS SELECT")
	}
	if n.ReferTable != nil || stmt.Like != nil {
		return nil, stmt.ErrorAtNode(n, "internal error: CREATE TABLE ... LIKE reached the planner unmerged")
	}
	t := &TableEntry{Name: n.Table.Name.O, DDL: secrets.Mask(stmt.Text), Options: stmt.Options, stmt: stmt, Temporary: stmt.Temporary}
	ct := &connectors.Table{Name: t.Name, Options: map[string]string{}}
	seen := map[string]bool{}
	for _, cc := range stmt.Computed {
		seen[norm(cc.Name)] = true
	}
	var stored []declaredColumn // the physical and metadata columns, as declared
	for _, c := range n.Cols {
		name := c.Name.Name.O
		if seen[norm(name)] {
			return nil, stmt.ErrorAtNode(c, "duplicate column '%s'", name)
		}
		seen[norm(name)] = true
		ty, err := fieldType(c.Tp)
		if text, ok := stmt.ColumnTypes[name]; ok {
			ty, err = types.ParseType(text) // a Flink type TiDB cannot parse
		}
		if err != nil {
			return nil, stmt.ErrorAtIdent(name, c, "column '%s': %v", name, err)
		}
		if md, ok := stmt.Metadata[strings.ToLower(name)]; ok {
			for _, o := range c.Options {
				if o.Tp == ast.ColumnOptionPrimaryKey {
					return nil, stmt.ErrorAtIdent(name, c, "metadata column '%s' cannot be part of the PRIMARY KEY", name)
				}
			}
			stored = append(stored, declaredColumn{Name: name, Type: ty, read: -1 - len(ct.Metadata)})
			ct.Metadata = append(ct.Metadata, connectors.MetadataColumn{Name: name, Key: md.Key, Type: ty, Virtual: md.Virtual})
			continue
		}
		stored = append(stored, declaredColumn{Name: name, Type: ty, read: len(ct.Columns)})
		for _, o := range c.Options {
			switch o.Tp {
			case ast.ColumnOptionNotNull:
				ty.NotNull = true
			case ast.ColumnOptionNull, ast.ColumnOptionComment:
			case ast.ColumnOptionPrimaryKey:
				if ct.PrimaryKey != nil { // a second column-level key, as Flink refuses
					return nil, stmt.ErrorAtIdent(name, c, "table '%s' has more than one PRIMARY KEY: '%s' and '%s' are each declared PRIMARY KEY; declare a key of several columns as PRIMARY KEY (a, b) NOT ENFORCED", t.Name, ct.Columns[ct.PrimaryKey[0]].Name, name)
				}
				ct.PrimaryKey = append(ct.PrimaryKey, len(ct.Columns))
				ty.NotNull = true
			default:
				return nil, stmt.ErrorAtNode(c, "column option on '%s' is not supported", name)
			}
		}
		ct.Columns = append(ct.Columns, connectors.Column{Name: name, Type: ty})
	}
	colIdx := func(name string) int {
		for i, c := range ct.Columns {
			if strings.EqualFold(c.Name, name) {
				return i
			}
		}
		return -1
	}
	if err := t.declare(stmt, ct, stored); err != nil { // computed.go
		return nil, err
	}
	if err := p.partitionKeys(stmt, n, ct); err != nil {
		return nil, err
	}
	for _, c := range n.Constraints {
		switch c.Tp {
		case ast.ConstraintPrimaryKey:
			if ct.PrimaryKey != nil {
				return nil, stmt.ErrorAtNode(c, "table '%s' has more than one PRIMARY KEY", t.Name)
			}
			for _, k := range c.Keys {
				if k.Column == nil {
					return nil, stmt.ErrorAtNode(c, "PRIMARY KEY must list columns")
				}
				i := colIdx(k.Column.Name.O)
				if i < 0 {
					return nil, stmt.ErrorAtNode(k, "PRIMARY KEY column '%s' does not exist", k.Column.Name.O)
				}
				if slices.Contains(ct.PrimaryKey, i) {
					return nil, stmt.ErrorAtNode(k, "PRIMARY KEY column '%s' is listed twice", k.Column.Name.O)
				}
				ct.PrimaryKey = append(ct.PrimaryKey, i)
				ct.Columns[i].Type.NotNull = true
			}
		default:
			return nil, stmt.ErrorAtNode(c, "constraint %s is not supported; only PRIMARY KEY (...) NOT ENFORCED and WATERMARK are", constraintName(c))
		}
	}
	schema := t.schema(ct, t.Name)
	for _, w := range stmt.Watermarks {
		i := -1
		for k, c := range schema {
			if strings.EqualFold(c.Name, w.Column) {
				i = k
			}
		}
		if i < 0 {
			return nil, stmt.ErrorAt(w.Line, w.Col, "WATERMARK FOR '%s': no such column", w.Column)
		}
		if !schema[i].Type.IsTimestamp() {
			return nil, stmt.ErrorAt(w.Line, w.Col, "WATERMARK FOR '%s': the rowtime column must be a TIMESTAMP or TIMESTAMP_LTZ, not %s", w.Column, schema[i].Type)
		}
		if t.Watermark != nil {
			return nil, stmt.ErrorAt(w.Line, w.Col, "a table may declare only one WATERMARK")
		}
		t.Watermark = &WatermarkDef{Column: i, Expr: w.Expr, stmt: stmt}
		// Check the expression now, so that a bad one fails at DDL time.
		e, err := expr.Bind(w.Expr, &expr.Scope{Columns: schema}, stmt.ErrorAtNode)
		if err != nil {
			return nil, err
		}
		if e.Type().ID != schema[i].Type.ID {
			return nil, stmt.ErrorAtNode(w.Expr, "the WATERMARK expression must be a %s, like its rowtime column, not %s", schema[i].Type.ID, e.Type())
		}
	}
	ct.HasWatermark = t.Watermark != nil
	if err := p.attachConnector(stmt, n, t, ct); err != nil {
		return nil, err
	}
	return t, nil
}

// attachConnector reads the WITH options into ct, finds the connector and
// validates the options by creating the table's source and sink eagerly,
// so that a bad option fails at DDL time.
func (p *Planner) attachConnector(stmt *parser.Statement, n ast.Node, t *TableEntry, ct *connectors.Table) error {
	for _, o := range stmt.Options {
		ct.Options[o.Key] = o.Value
	}
	return p.attachConnectorOptions(stmt, n, t, ct)
}

func (p *Planner) attachConnectorOptions(stmt *parser.Statement, n ast.Node, t *TableEntry, ct *connectors.Table) error {
	name, ok := ct.Options["connector"]
	if legacy, isLegacy := ct.Options["connector.type"]; !ok && isLegacy {
		// The descriptor keys of Flink before 1.11 (the reference's q13):
		// refused by name, with the current keys to write instead.
		return stmt.ErrorAtNode(n, "table '%s': 'connector.type' = '%s' is Flink's legacy connector descriptor (with 'connector.path', 'format.type', ...), which streamsql does not read; write 'connector' = '%s' with the current option names (for the filesystem: 'path' and 'format')", t.Name, legacy, legacy)
	}
	if !ok {
		return stmt.ErrorAtNode(n, "table '%s' needs a WITH ('connector' = '...') option; connectors: %s", t.Name, strings.Join(connectors.Names(), ", "))
	}
	conn, err := connectors.Lookup(name)
	if err != nil {
		return optionError(stmt, "connector", err)
	}
	if err := connectors.CheckOptions(conn, ct.Options); err != nil {
		return optionError(stmt, "", err)
	}
	if err := checkMetadata(stmt, ct, conn); err != nil { // computed.go
		return err
	}
	if _, ok := conn.(connectors.PartitionConnector); len(ct.PartitionKeys) > 0 && !ok {
		return stmt.ErrorAtNode(n, "connector '%s' does not write partitions: PARTITIONED BY is supported by the filesystem connector", conn.Name())
	}
	t.Conn, t.connector = ct, conn
	_, isSrc := conn.(connectors.SourceConnector)
	_, isSink := conn.(connectors.SinkConnector)
	if isSrc {
		// A table in a write-only form (a sink-only format) is fine as long
		// as it is only written; reading it reports the kept error.
		if _, err := t.Scan(p.Env); err != nil && !(isSink && errors.Is(err, connectors.ErrWriteOnly)) {
			return optionError(stmt, "", err)
		}
	}
	if isSink {
		if _, err := t.Sink(p.Env); err != nil {
			return optionError(stmt, "", err)
		}
	}
	return nil
}

// CreateTableAs plans CREATE TABLE t WITH (...) AS SELECT ... and CREATE
// MATERIALIZED VIEW v AS SELECT ...: a table whose columns are the
// query's, and the INSERT that fills it. A materialized view is a values
// table, keyed by the query's upsert key when it has one, so it always
// holds the query's current result.
func (p *Planner) CreateTableAs(stmt *parser.Statement, n *ast.CreateTableStmt) (_ *TableEntry, _ *Plan, err error) {
	if len(n.Cols) > 0 || len(n.Constraints) > 0 {
		return nil, nil, stmt.ErrorAtNode(n, "CREATE TABLE ... AS SELECT takes its columns from the query; do not list them")
	}
	r, err := p.buildStatement(stmt, n.Select)
	if err != nil {
		return nil, nil, err
	}
	t := &TableEntry{Name: n.Table.Name.O, DDL: secrets.Mask(stmt.Text), Options: stmt.Options, stmt: stmt}
	ct := &connectors.Table{Name: t.Name, Options: map[string]string{}}
	seen := map[string]bool{}
	for _, c := range r.scope {
		if seen[norm(c.Name)] {
			return nil, nil, stmt.ErrorAtNode(n, "the query has two columns named '%s'; give them distinct aliases", c.Name)
		}
		seen[norm(c.Name)] = true
		ct.Columns = append(ct.Columns, connectors.Column{Name: c.Name, Type: c.Type})
	}
	if stmt.MaterializedView {
		if len(stmt.Options) > 0 {
			return nil, nil, stmt.ErrorAtNode(n, "a materialized view takes no WITH options")
		}
		ct.Options["connector"] = "values"
		ct.PrimaryKey = r.node.UpsertKey()
		for _, k := range ct.PrimaryKey {
			ct.Columns[k].Type.NotNull = true
		}
		if err := p.attachConnectorOptions(stmt, n, t, ct); err != nil {
			return nil, nil, err
		}
	} else if err := p.attachConnector(stmt, n, t, ct); err != nil {
		return nil, nil, err
	}
	sink, err := t.Sink(p.Env)
	if err != nil {
		return nil, nil, stmt.ErrorAtNode(n, "%v", err)
	}
	enc := sink.Encoding()
	if err := enc.Accepts(r.node.Mode()); err != nil {
		return nil, nil, stmt.ErrorAtIdent(t.Name, n, "%s", appendOnlyMessage(t, sink, r.node.Mode()))
	}
	cols := tableScope(ct, "")
	return t, newPlan(r.node, t, enc, cols), nil
}

func constraintName(c *ast.Constraint) string {
	switch c.Tp {
	case ast.ConstraintCheck:
		return "CHECK"
	case ast.ConstraintForeignKey:
		return "FOREIGN KEY"
	case ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
		return "UNIQUE"
	}
	return "INDEX/KEY"
}

// optionError positions a connector error at the WITH option it names,
// or at the statement.
func optionError(stmt *parser.Statement, key string, err error) error {
	for _, o := range stmt.Options {
		if key != "" && o.Key == key || key == "" && strings.Contains(err.Error(), "'"+o.Key+"'") {
			return stmt.ErrorAt(o.Line, o.Col, "%s", err.Error())
		}
	}
	return stmt.ErrorAt(stmt.Line, stmt.Col, "%s", err.Error())
}

func tableScope(ct *connectors.Table, qual string) []expr.Column {
	cols := make([]expr.Column, len(ct.Columns))
	for i, c := range ct.Columns {
		cols[i] = expr.Column{Name: c.Name, Table: qual, Type: c.Type}
	}
	return cols
}

// CreateView builds a view entry, planning its query once to check it.
func (p *Planner) CreateView(stmt *parser.Statement, n *ast.CreateViewStmt) (*ViewEntry, error) {
	sel, ok := n.Select.(ast.ResultSetNode)
	if !ok {
		return nil, stmt.ErrorAtNode(n, "a view must be a query")
	}
	home := p.Cat.Resolve(ObjectPath{})
	home.Name = ""
	ddl := stmt.Text
	if stmt.AlterView { // ALTER VIEW v AS q: the view is now CREATE VIEW v AS q
		ddl = "CREATE" + strings.TrimSpace(ddl)[len("ALTER"):]
	}
	v := &ViewEntry{Name: n.ViewName.Name.O, Query: sel, DDL: secrets.Mask(ddl), Temporary: stmt.Temporary, Home: home, stmt: stmt}
	for _, c := range n.Cols {
		v.colAs = append(v.colAs, c.O)
	}
	r, err := p.buildStatement(stmt, sel)
	if err != nil {
		return nil, err
	}
	if v.colAs != nil && len(v.colAs) != len(r.scope) {
		return nil, stmt.ErrorAtNode(n, "view '%s' names %d columns but its query has %d", v.Name, len(v.colAs), len(r.scope))
	}
	for i, c := range r.scope {
		name := c.Name
		if v.colAs != nil {
			name = v.colAs[i]
		}
		v.Columns = append(v.Columns, expr.Column{Name: name, Type: c.Type})
	}
	return v, nil
}
