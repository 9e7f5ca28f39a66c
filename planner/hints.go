package planner

import (
	"maps"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/internal/secrets"
	"github.com/streamsql/streamsql/parser"
)

// withHints returns table t as read or written under the OPTIONS hint of
// name tn (Flink's dynamic table options), or t itself when there is
// none. The hinted options override the table's for this one use: a
// copy of the entry with its own source and sink, whose options pass the
// connector's checks as a CREATE TABLE's would. The copy's
// connectors.Table names the catalog's as its Base, so connectors that
// keep data per table (values) read and write the same rows.
func (p *Planner) withHints(stmt *parser.Statement, tn *ast.TableName, t *TableEntry) (*TableEntry, error) {
	opts := stmt.TableHints(tn)
	if len(opts) == 0 {
		return t, nil
	}
	if !p.Conf.Bool("table.dynamic-table-options.enabled") {
		return nil, stmt.ErrorAt(opts[0].Line, opts[0].Col, "the OPTIONS hint is disabled: 'table.dynamic-table-options.enabled' is 'false'")
	}
	ct := *t.Conn
	ct.Options = maps.Clone(t.Conn.Options)
	ct.Base = t.Conn.Identity()
	for _, o := range opts {
		if strings.EqualFold(o.Key, "connector") && o.Value != ct.Options["connector"] {
			return nil, stmt.ErrorAt(o.Line, o.Col, "the OPTIONS hint cannot change 'connector' of table '%s'", t.Name)
		}
		ct.Options[o.Key] = o.Value
	}
	if err := connectors.CheckOptions(t.connector, ct.Options); err != nil {
		for _, o := range opts {
			if strings.Contains(err.Error(), "'"+o.Key+"'") {
				return nil, stmt.ErrorAt(o.Line, o.Col, "OPTIONS hint on table '%s': %v", t.Name, err)
			}
		}
		return nil, stmt.ErrorAt(opts[0].Line, opts[0].Col, "OPTIONS hint on table '%s': %v", t.Name, err)
	}
	cp := *t
	cp.scan, cp.sink = made[connectors.ScanSource]{}, made[connectors.TableSink]{}
	cp.Conn = &ct
	cp.hints = opts
	return &cp, nil
}

// explainHints renders a hinted table's dynamic options for EXPLAIN,
// secrets masked: ", dynamic options: {k=v, ...}" after the name.
func (t *TableEntry) explainHints() string {
	if len(t.hints) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(", dynamic options: {")
	for i, o := range t.hints {
		if i > 0 {
			b.WriteString(", ")
		}
		v := o.Value
		if secrets.IsSecretKey(o.Key) {
			v = secrets.Redacted
		}
		b.WriteString(o.Key + "=" + v)
	}
	b.WriteString("}")
	return b.String()
}
