package planner

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	tidbtypes "github.com/pingcap/tidb/pkg/parser/types"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/expr"
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
		if flen <= 0 {
			return types.TypeString, nil
		}
		return types.VarcharType(flen), nil
	case mysql.TypeBlob, mysql.TypeTinyBlob, mysql.TypeMediumBlob, mysql.TypeLongBlob:
		if ft.GetCharset() == "binary" {
			return types.Type{}, fmt.Errorf("type BYTES is not supported yet")
		}
		return types.TypeString, nil
	case mysql.TypeDate:
		return types.TypeDate, nil
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
func (p *Planner) CreateTable(stmt *parser.Statement, n *ast.CreateTableStmt) (*TableEntry, error) {
	if n.Select != nil {
		return nil, stmt.ErrorAtNode(n, "CREATE TABLE ... AS SELECT is not supported yet")
	}
	if n.ReferTable != nil {
		return nil, stmt.ErrorAtNode(n, "CREATE TABLE ... LIKE is not supported")
	}
	t := &TableEntry{Name: n.Table.Name.O, DDL: stmt.Text, Options: stmt.Options, stmt: stmt}
	ct := &connectors.Table{Name: t.Name, Options: map[string]string{}}
	seen := map[string]bool{}
	for _, c := range n.Cols {
		name := c.Name.Name.O
		if seen[norm(name)] {
			return nil, stmt.ErrorAtNode(c, "duplicate column '%s'", name)
		}
		seen[norm(name)] = true
		ty, err := fieldType(c.Tp)
		if err != nil {
			return nil, stmt.ErrorAtNode(c, "column '%s': %v", name, err)
		}
		for _, o := range c.Options {
			switch o.Tp {
			case ast.ColumnOptionNotNull:
				ty.NotNull = true
			case ast.ColumnOptionNull, ast.ColumnOptionComment:
			case ast.ColumnOptionPrimaryKey:
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
				ct.PrimaryKey = append(ct.PrimaryKey, i)
				ct.Columns[i].Type.NotNull = true
			}
		default:
			return nil, stmt.ErrorAtNode(c, "constraint %s is not supported; only PRIMARY KEY (...) NOT ENFORCED and WATERMARK are", constraintName(c))
		}
	}
	for _, w := range stmt.Watermarks {
		i := colIdx(w.Column)
		if i < 0 {
			return nil, (&parser.Error{Line: w.Line, Col: w.Col, Msg: fmt.Sprintf("WATERMARK FOR '%s': no such column", w.Column), SourceLine: sourceLine(stmt, w.Line)})
		}
		if ct.Columns[i].Type.ID != types.Timestamp {
			return nil, (&parser.Error{Line: w.Line, Col: w.Col, Msg: fmt.Sprintf("WATERMARK FOR '%s': the rowtime column must be a TIMESTAMP, not %s", w.Column, ct.Columns[i].Type), SourceLine: sourceLine(stmt, w.Line)})
		}
		if t.Watermark != nil {
			return nil, (&parser.Error{Line: w.Line, Col: w.Col, Msg: "a table may declare only one WATERMARK", SourceLine: sourceLine(stmt, w.Line)})
		}
		t.Watermark = &WatermarkDef{Column: i, Expr: w.Expr, stmt: stmt}
		// Check the expression now, so that a bad one fails at DDL time.
		e, err := expr.Bind(w.Expr, &expr.Scope{Columns: tableScope(ct, t.Name)}, stmt.ErrorAtNode)
		if err != nil {
			return nil, err
		}
		if e.Type().ID != types.Timestamp {
			return nil, stmt.ErrorAtNode(w.Expr, "the WATERMARK expression must be a TIMESTAMP, not %s", e.Type())
		}
	}
	ct.HasWatermark = t.Watermark != nil
	for _, o := range stmt.Options {
		ct.Options[o.Key] = o.Value
	}
	name, ok := ct.Options["connector"]
	if !ok {
		return nil, stmt.ErrorAtNode(n, "table '%s' needs a WITH ('connector' = '...') option; connectors: %s", t.Name, strings.Join(connectors.Names(), ", "))
	}
	conn, err := connectors.Lookup(name)
	if err != nil {
		return nil, optionError(stmt, "connector", err)
	}
	if err := connectors.CheckOptions(conn, ct.Options); err != nil {
		return nil, optionError(stmt, firstUnknown(conn, ct.Options), err)
	}
	t.Conn, t.connector = ct, conn
	// Validate option values by creating the source or sink eagerly.
	_, isSrc := conn.(connectors.SourceConnector)
	_, isSink := conn.(connectors.SinkConnector)
	if isSrc {
		if _, err := t.Scan(p.Env); err != nil {
			return nil, optionError(stmt, "", err)
		}
	}
	if isSink {
		if _, err := t.Sink(p.Env); err != nil {
			return nil, optionError(stmt, "", err)
		}
	}
	return t, nil
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

func firstUnknown(c connectors.Connector, opts map[string]string) string {
	return ""
}

// optionError positions a connector error at the WITH option it names,
// or at the statement.
func optionError(stmt *parser.Statement, key string, err error) error {
	for _, o := range stmt.Options {
		if key != "" && o.Key == key || key == "" && strings.Contains(err.Error(), "'"+o.Key+"'") {
			return &parser.Error{Line: o.Line, Col: o.Col, Msg: err.Error(), SourceLine: sourceLine(stmt, o.Line)}
		}
	}
	return &parser.Error{Line: stmt.Line, Col: stmt.Col, Msg: err.Error(), SourceLine: sourceLine(stmt, stmt.Line)}
}

// sourceLine returns line l (1-based, of the whole script) of the
// statement's text.
func sourceLine(stmt *parser.Statement, l int) string {
	lines := strings.Split(stmt.Text, "\n")
	i := l - stmt.Line
	if i < 0 || i >= len(lines) {
		return ""
	}
	if i == 0 {
		return strings.Repeat(" ", max(stmt.Col-1, 0)) + lines[0]
	}
	return lines[i]
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
	v := &ViewEntry{Name: n.ViewName.Name.O, Query: sel, DDL: stmt.Text, stmt: stmt}
	for _, c := range n.Cols {
		v.colAs = append(v.colAs, c.O)
	}
	b := p.newBuilder(stmt)
	r, err := b.buildQuery(sel)
	if err != nil {
		return nil, err
	}
	if err := b.finish(r.node); err != nil {
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
