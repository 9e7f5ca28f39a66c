package planner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	tidbformat "github.com/pingcap/tidb/pkg/parser/format"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

func newRestoreCtx(sb *strings.Builder) *tidbformat.RestoreCtx {
	return tidbformat.NewRestoreCtx(tidbformat.DefaultRestoreFlags|tidbformat.RestoreStringWithoutCharset, sb)
}

// Plan is a planned statement: an optimized tree whose root is a sink.
// Neither the plan nor its nodes change once it is made, so its EXPLAIN
// is the plan that runs, every time it is asked for (checkpoints keep a
// hash of it to recognise their job's plan).
type Plan struct {
	Root    *SinkNode
	Columns []expr.Column // the result's columns
}

// newPlan optimizes the plan that writes in to table t (nil: to the
// client) as cols, and makes a table read in several places be read
// once (shareSources).
func newPlan(in Node, t *TableEntry, enc dyntable.SinkEncoding, cols []expr.Column) *Plan {
	root := &SinkNode{nodeBase: nodeBase{cols: cols, inputs: []Node{in}}, Table: t, Encoding: enc}
	return &Plan{Root: shareSources([]Node{optimize(root)})[0].(*SinkNode), Columns: cols}
}

// RowLimit returns n when the query's result is the first n rows of an
// insert-only input (LIMIT n without ORDER BY): those rows never change,
// so the query is complete once they have arrived, and a client may end
// it then, as Flink does. Over an updating input the rows may still
// change, and the query goes on.
func (p *Plan) RowLimit() (int64, bool) {
	if p.Root == nil || len(p.Root.inputs) != 1 {
		return 0, false
	}
	rk, ok := p.Root.inputs[0].(*RankNode)
	if !ok || len(rk.OrderBy) > 0 || len(rk.PartitionKeys) > 0 || rk.OutputRank || rk.Limit < 0 ||
		!rk.Mode().IsInsertOnly() || !rk.inputs[0].Mode().IsInsertOnly() {
		return 0, false
	}
	return rk.Limit, true
}

// Explain renders the plan tree.
func (p *Plan) Explain() string { return ExplainTree(p.Root) }

// PlanQuery plans a SELECT whose result goes to the client.
func (p *Planner) PlanQuery(stmt *parser.Statement, q ast.ResultSetNode) (*Plan, error) {
	r, err := p.buildStatement(stmt, q)
	if err != nil {
		return nil, err
	}
	cols := unqualified(r.scope)
	return newPlan(r.node, nil, dyntable.RetractEncoding, cols), nil
}

// PlanInsert plans INSERT INTO t SELECT ... or INSERT INTO t VALUES ...
// into a sink table.
func (p *Planner) PlanInsert(stmt *parser.Statement, ins *ast.InsertStmt) (*Plan, error) {
	if ins.IsReplace {
		return nil, stmt.ErrorAtNode(ins, "REPLACE is not supported; declare a PRIMARY KEY on the sink for upserts")
	}
	if len(ins.OnDuplicate) > 0 || ins.Setlist {
		return nil, stmt.ErrorAtNode(ins, "INSERT ... SET / ON DUPLICATE KEY UPDATE is not supported")
	}
	tn, ok := tableOfInsert(ins)
	if !ok {
		return nil, stmt.ErrorAtNode(ins, "INSERT needs a single target table")
	}
	path, _ := PathOf(stmt.TablePath(tn))
	t, ok := p.Cat.Table(path)
	if !ok {
		if _, isView := p.Cat.View(path); isView {
			return nil, stmt.ErrorAtIdent(tn.Name.O, tn, "cannot INSERT into view '%s'", path)
		}
		if err := p.Cat.CheckDatabase(path); err != nil {
			return nil, stmt.ErrorAtIdent(tn.Name.O, tn, "Table '%s' doesn't exist: %v", path, err)
		}
		return nil, stmt.ErrorAtIdent(tn.Name.O, tn, "Table '%s' doesn't exist", path)
	}
	t, err := p.withHints(stmt, tn, t) // hints.go
	if err != nil {
		return nil, err
	}
	if err := checkWritableMetadata(t); err != nil {
		return nil, stmt.ErrorAtIdent(tn.Name.O, tn, "%v", err)
	}
	sinkCols, order := t.insertColumns()
	sink, err := t.Sink(p.Env)
	if err != nil {
		return nil, stmt.ErrorAtIdent(tn.Name.O, tn, "%v", err)
	}
	var r rel
	if ins.Select != nil {
		r, err = p.buildStatement(stmt, ins.Select)
	} else {
		r, err = p.newBuilder(stmt).buildValues(ins.Lists, t, ins)
	}
	if err != nil {
		return nil, err
	}
	// Map the query's columns onto the table's, casting where allowed.
	target := make([]int, 0, len(sinkCols)) // query column -> sink column
	if len(ins.Columns) > 0 {
		for _, c := range ins.Columns {
			i := -1
			for j, tc := range sinkCols {
				if strings.EqualFold(tc.Name, c.Name.O) {
					i = j
				}
			}
			if i < 0 {
				return nil, stmt.ErrorAtIdent(c.Name.O, c, "Unknown column '%s' in table '%s'", c.Name.O, t.Name)
			}
			target = append(target, i)
		}
	} else {
		target = append(target, order...)
	}
	if len(target) != len(r.scope) {
		return nil, stmt.ErrorAtNode(ins, "INSERT INTO %s: the query has %d columns but %d are expected", t.Name, len(r.scope), len(target))
	}
	proj := make([]expr.Expr, len(sinkCols))
	cols := make([]expr.Column, len(sinkCols))
	for i, c := range sinkCols {
		cols[i] = expr.Column{Name: c.Name, Type: c.Type}
	}
	identity := len(target) == len(sinkCols)
	for qi, ti := range target {
		tc := sinkCols[ti]
		ref := expr.NewColumnRef(qi, r.scope[qi].Name, r.scope[qi].Type)
		e, err := expr.ImplicitCastIn(ref, tc.Type.Nullable(), p.zone())
		if err != nil && r.scope[qi].Type.IsTimestamp() && tc.Type.IsTimestamp() {
			// TIMESTAMP and TIMESTAMP_LTZ convert implicitly on INSERT,
			// through the session zone, as in Flink.
			e, err = expr.CastIn(ref, tc.Type.Nullable(), p.zone())
		}
		if err != nil {
			return nil, stmt.ErrorAtNode(ins, "column '%s' of table '%s' is %s but the query produces %s for it", tc.Name, t.Name, tc.Type.Nullable(), r.scope[qi].Type.Nullable())
		}
		if qi != ti || !r.scope[qi].Type.Equal(tc.Type) {
			identity = false
		}
		proj[ti] = e
	}
	for i := range proj {
		if proj[i] == nil {
			identity = false
			if sinkCols[i].Type.NotNull {
				return nil, stmt.ErrorAtNode(ins, "column '%s' of table '%s' is NOT NULL and must be inserted", sinkCols[i].Name, t.Name)
			}
			proj[i] = expr.NewLiteral(types.NullValue, sinkCols[i].Type.Nullable())
		}
	}
	in := r.node
	if !identity {
		in = newCalc(in, nil, proj, cols)
	}
	enc := sink.Encoding()
	if err := enc.Accepts(in.Mode()); err != nil {
		return nil, stmt.ErrorAtIdent(tn.Name.O, tn, "%s", appendOnlyMessage(t, sink, in.Mode()))
	}
	return newPlan(in, t, enc, cols), nil
}

// appendOnlyMessage says that t cannot take an updating query, and how
// to write one: the connector's own hint (connectors.UpdatesHinter) or
// the sinks that take updates.
func appendOnlyMessage(t *TableEntry, sink connectors.TableSink, mode dyntable.ChangelogMode) string {
	hint := "write to a sink that takes updates: mysql or upsert-kafka with a PRIMARY KEY, filesystem with 'format' = 'debezium-json', print or blackhole"
	if h, ok := sink.(connectors.UpdatesHinter); ok {
		hint = h.UpdatesHint()
	}
	return fmt.Sprintf("table '%s' (connector '%s') is an append-only sink, but the query produces updates %s; %s", t.Name, t.ConnectorName(), mode, hint)
}

func tableOfInsert(ins *ast.InsertStmt) (*ast.TableName, bool) {
	if ins.Table == nil || ins.Table.TableRefs == nil || ins.Table.TableRefs.Right != nil {
		return nil, false
	}
	ts, ok := ins.Table.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, false
	}
	tn, ok := ts.Source.(*ast.TableName)
	return tn, ok
}

// buildValues plans the tuples of INSERT ... VALUES as a constant
// relation typed like the target table.
func (b *builder) buildValues(lists [][]ast.ExprNode, t *TableEntry, at ast.Node) (rel, error) {
	sinkCols, order := t.insertColumns()
	ts := make([]types.Type, len(order))
	cols := make([]expr.Column, len(order))
	for i, j := range order {
		ts[i] = sinkCols[j].Type
		cols[i] = expr.Column{Name: sinkCols[j].Name, Type: sinkCols[j].Type}
	}
	rows, err := b.EvalTuples(lists, ts, at)
	if err != nil {
		return rel{}, err
	}
	return rel{node: &ValuesNode{nodeBase: nodeBase{cols: cols}, Rows: rows}, scope: cols}, nil
}

// insertColumns are the columns an INSERT writes, as its sink receives
// them: the physical ones, then the written metadata ones
// (connectors.Table.WrittenMetadata); order is their declared order
// (computed and VIRTUAL columns left out), as indexes into cols, which
// is the order of an INSERT without a column list, as in Flink.
func (t *TableEntry) insertColumns() (cols []connectors.Column, order []int) {
	cols = append(cols, t.Conn.Columns...)
	written := map[int]int{} // metadata index -> sink column
	for j, m := range t.Conn.Metadata {
		if !m.Virtual {
			written[j] = len(cols)
			cols = append(cols, connectors.Column{Name: m.Name, Type: m.Type})
		}
	}
	if t.declared == nil {
		for i := range cols {
			order = append(order, i)
		}
		return cols, order
	}
	np := len(t.Conn.Columns)
	for _, c := range t.declared {
		switch {
		case c.computed():
		case c.read < np:
			order = append(order, c.read)
		default:
			if k, ok := written[c.read-np]; ok {
				order = append(order, k)
			}
		}
	}
	return cols, order
}

// checkWritableMetadata refuses an INSERT into a table whose metadata
// columns not declared VIRTUAL are not all writable by its connector,
// with Flink's advice.
func checkWritableMetadata(t *TableEntry) error {
	written := t.Conn.WrittenMetadata()
	if len(written) == 0 {
		return nil
	}
	var keys map[string]types.Type
	if wc, ok := t.connector.(connectors.WritableMetadataConnector); ok {
		keys = wc.WritableMetadataKeys()
	}
	for _, m := range written {
		if _, ok := keys[m.Key]; !ok {
			var known []string
			for k := range keys {
				known = append(known, "'"+k+"'")
			}
			sort.Strings(known)
			can := "it writes no metadata"
			if len(known) > 0 {
				can = "it writes " + strings.Join(known, ", ")
			}
			return fmt.Errorf("table '%s': metadata column '%s' (METADATA FROM '%s') cannot be written by connector '%s' (%s); declare it VIRTUAL to insert into this table", t.Name, m.Name, m.Key, t.ConnectorName(), can)
		}
	}
	return nil
}

// EvalTuples evaluates VALUES tuples, each cast to the given types.
func (p *Planner) EvalTuples(stmt *parser.Statement, lists [][]ast.ExprNode, ts []types.Type, at ast.Node) ([]types.Row, error) {
	return p.newBuilder(stmt).EvalTuples(lists, ts, at)
}

func (b *builder) EvalTuples(lists [][]ast.ExprNode, ts []types.Type, at ast.Node) ([]types.Row, error) {
	var rows []types.Row
	for _, l := range lists {
		if len(l) != len(ts) {
			return nil, b.errf(at, "VALUES tuple has %d values but %d are expected", len(l), len(ts))
		}
		row := make(types.Row, len(l))
		for i, v := range l {
			e, err := expr.Bind(v, &expr.Scope{Zone: b.p.zone()}, b.stmt.ErrorAtNode)
			if err != nil {
				return nil, err
			}
			ce, err := expr.ImplicitCastIn(e, ts[i].Nullable(), b.p.zone())
			if err != nil {
				return nil, b.errf(v, "value %s of type %s does not fit column type %s", exprText(v), e.Type(), ts[i])
			}
			val, err := ce.Eval(nil)
			if err != nil {
				return nil, b.errf(v, "%v", err)
			}
			if val.IsNull() && ts[i].NotNull {
				return nil, b.errf(v, "NULL in a NOT NULL column")
			}
			row[i] = val
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Describe returns a table's or view's columns.
func (p *Planner) Describe(path ObjectPath) ([]expr.Column, []int, error) {
	if t, ok := p.Cat.Table(path); ok {
		return t.Schema(), t.schemaKey(), nil
	}
	if v, ok := p.Cat.View(path); ok {
		return v.Columns, nil, nil
	}
	if err := p.Cat.CheckDatabase(path); err != nil {
		return nil, nil, fmt.Errorf("Table '%s' doesn't exist: %w", path, err)
	}
	return nil, nil, fmt.Errorf("Table '%s' doesn't exist", path)
}

// Bounded reports whether every source of the plan ends by itself, so a
// job running it finishes.
func (p *Plan) Bounded(env *connectors.Env) bool {
	var walk func(n Node) bool
	walk = func(n Node) bool {
		if s, ok := n.(*ScanNode); ok {
			sc, err := s.Table.Scan(env)
			return err == nil && sc.Bounded()
		}
		for _, in := range n.Inputs() {
			if !walk(in) {
				return false
			}
		}
		return true
	}
	return walk(p.Root)
}
