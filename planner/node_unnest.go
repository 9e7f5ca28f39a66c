package planner

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// UnnestNode is CROSS JOIN UNNEST(Coll): each input row followed by each
// element of its ARRAY (a ROW element as its fields) or each key and
// value of its MAP. Stateless, chained to its input; the changelog mode
// is the input's, and no upsert key survives the multiplication.
type UnnestNode struct {
	nodeBase
	Coll expr.Expr
	// Left keeps a row whose collection is NULL or empty, padded with
	// NULLs (LEFT JOIN UNNEST ... ON TRUE); Ordinality adds the element's
	// number from 1 as the last column (WITH ORDINALITY).
	Left, Ordinality bool
}

func (n *UnnestNode) Mode() dyntable.ChangelogMode { return n.inputs[0].Mode() }
func (n *UnnestNode) UpsertKey() []int             { return nil }

func (n *UnnestNode) timeAttrs() []timeAttr {
	in := n.inputs[0].timeAttrs()
	return append(append([]timeAttr(nil), in...), make([]timeAttr, len(n.cols)-len(in))...)
}

func (n *UnnestNode) Explain() string {
	s := "Correlate(invocation=[UNNEST(" + n.Coll.String() + ")"
	if n.Ordinality {
		s += " WITH ORDINALITY"
	}
	s += "], fields=[" + allNames(n.cols) + "]"
	if n.Left {
		s += ", joinType=[LEFT]"
	}
	return s + ")"
}

func (n *UnnestNode) translate(_ *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	e, p := forward(ins[0])
	t := n.Coll.Type()
	mapEntries := t.ID == types.Map
	multiset := t.ID == types.Multiset
	rowFields := (t.ID == types.Array || multiset) && t.Elem().ID == types.RowT
	coll, width := scalar(n.Coll), len(n.cols)-len(n.inputs[0].Columns())
	left, ord := n.Left, n.Ordinality
	return &dataflow.Node{Name: "Unnest", Parallelism: p, Inputs: []dataflow.Edge{e},
		NewOperator: func(int) (dataflow.Operator, error) {
			u := operators.NewUnnest(coll, mapEntries, rowFields, width)
			u.Outer, u.Ordinality, u.Multiset = left, ord, multiset
			return u, nil
		}}, nil
}

func (n *UnnestNode) withInputs(ins []Node) Node { return copyOver(n, ins) }

// buildUnnestJoin builds j when its right side is an UNNEST placeholder
// (parser.Statement.Unnests); ok is false for every other join.
func (b *builder) buildUnnestJoin(j *ast.Join) (_ rel, ok bool, _ error) {
	ts, isTS := j.Right.(*ast.TableSource)
	if !isTS {
		return rel{}, false, nil
	}
	tn, isTN := ts.Source.(*ast.TableName)
	if !isTN || !parser.IsUnnestPlaceholder(tn.Name.O) {
		return rel{}, false, nil
	}
	u := b.stmt.Unnests[tn.Name.O]
	var fc *ast.FuncCallExpr
	isCall := false
	if j.On != nil {
		fc, isCall = j.On.Expr.(*ast.FuncCallExpr)
	}
	if u == nil || !isCall || fc.FnName.L != parser.UnnestFunc || len(fc.Args) != 1 {
		return rel{}, true, b.errf(j, "internal error: UNNEST placeholder %s without its expression", tn.Name.O)
	}
	l, err := b.buildFrom(j.Left)
	if err != nil {
		return rel{}, true, err
	}
	coll, err := expr.Bind(fc.Args[0], &expr.Scope{Zone: b.p.zone(), Columns: l.scope}, b.stmt.ErrorAtNode)
	if err != nil {
		return rel{}, true, err
	}
	t := coll.Type()
	var names []string
	var ts2 []types.Type
	switch {
	case t.ID == types.Map:
		names, ts2 = []string{"KEY", "VALUE"}, []types.Type{t.Elem(), t.MapValue()}
	case (t.ID == types.Array || t.ID == types.Multiset) && t.Elem().ID == types.RowT:
		for _, f := range t.Elem().Fields {
			names, ts2 = append(names, f.Name), append(ts2, f.Type)
		}
	case t.ID == types.Array || t.ID == types.Multiset:
		names, ts2 = []string{"EXPR$0"}, []types.Type{t.Elem()}
	default:
		return rel{}, true, b.stmt.ErrorAt(u.Line, u.Col, "UNNEST needs an ARRAY, a MAP or a MULTISET, got %s", t)
	}
	if u.Ordinality {
		names, ts2 = append(names, "ORDINALITY"), append(ts2, types.TypeBigInt)
	}
	if u.Columns != nil {
		if len(u.Columns) != len(names) {
			return rel{}, true, b.stmt.ErrorAt(u.Line, u.Col, "UNNEST of %s gives %d columns, but %d aliases are written", t, len(names), len(u.Columns))
		}
		names = u.Columns
	}
	scope := append([]expr.Column(nil), l.scope...)
	for i, name := range names {
		ct := ts2[i].Nullable()
		if u.Ordinality && i == len(names)-1 && !u.Left {
			ct = ct.WithNotNull(true)
		}
		scope = append(scope, expr.Column{Name: name, Table: u.Alias, Type: ct})
	}
	node := &UnnestNode{nodeBase: nodeBase{cols: unqualified(scope), inputs: []Node{l.node}}, Coll: coll, Left: u.Left, Ordinality: u.Ordinality}
	return rel{node: node, scope: scope}, true, nil
}
