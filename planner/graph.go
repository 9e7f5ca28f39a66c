package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/types"
)

// CollectFunc receives the result changes of a query, in order, from the
// single collecting subtask. It must not retain the chunk.
type CollectFunc func(c *dyntable.Chunk) error

// BuildGraph translates a plan into a dataflow graph. collect receives the
// result of a query plan (Root.Table == nil) and is ignored otherwise.
// The plan is not changed: it can be explained, and translated again.
func (p *Planner) BuildGraph(name string, plan *Plan, collect CollectFunc) (*dataflow.Graph, error) {
	t := p.newTranslator(name, collect)
	if _, err := t.node(plan.Root); err != nil {
		return nil, err
	}
	return t.g, nil
}

func (p *Planner) newTranslator(name string, collect CollectFunc) *translator {
	t := &translator{p: p, g: &dataflow.Graph{Name: name}, done: map[Node]*dataflow.Node{},
		parallelism: p.Conf.Int("parallelism.default"), collect: collect}
	t.g.IdleTimeout = p.Conf.Duration("table.exec.source.idle-timeout") // see dataflow.Graph
	return t
}

// translator walks a plan bottom-up and adds each node's dataflow node
// (Node.translate) to the graph.
type translator struct {
	p           *Planner
	g           *dataflow.Graph
	done        map[Node]*dataflow.Node // a node read by two parents is translated once
	parallelism int
	collect     CollectFunc
}

func (t *translator) node(n Node) (*dataflow.Node, error) {
	if d, ok := t.done[n]; ok {
		return d, nil
	}
	var ins []*dataflow.Node
	for _, in := range n.Inputs() {
		d, err := t.node(in)
		if err != nil {
			return nil, err
		}
		ins = append(ins, d)
	}
	if w, ok := n.(*WatermarkNode); ok && t.pushWatermark(w) {
		// The source generates the watermarks.
		t.done[n] = ins[0]
		return ins[0], nil
	}
	d, err := n.translate(t, ins)
	if err != nil {
		return nil, err
	}
	t.done[n] = t.g.AddNode(d)
	return d, nil
}

// pushWatermark hands w's strategy to the scan right below it when its
// source generates watermarks itself (connectors.WatermarkPushDown). The
// expression is bound to the scan's columns, which projection push-down
// may have narrowed; the source evaluates it on whole table rows, so the
// column references are mapped back to the table's.
func (t *translator) pushWatermark(w *WatermarkNode) bool {
	sn, ok := w.inputs[0].(*ScanNode)
	if !ok {
		return false
	}
	sc, err := sn.Table.Scan(t.p.Env)
	if err != nil {
		return false
	}
	pd, ok := sc.(connectors.WatermarkPushDown)
	if !ok {
		return false
	}
	e := w.Expr
	if sn.Fields != nil {
		back := map[int]int{}
		for i, f := range sn.Fields {
			back[i] = f
		}
		e = expr.RemapColumns(e, back)
	}
	wm := func(row types.Row) (int64, bool, error) {
		v, err := e.Eval(row)
		if err != nil || v.IsNull() {
			return 0, false, err
		}
		if v.Kind() != types.KindTimestamp {
			return 0, false, fmt.Errorf("watermark expression returned %v, not a TIMESTAMP", v.Kind())
		}
		return v.Timestamp(), true, nil
	}
	return pd.PushWatermark(wm, t.p.Conf.Duration("table.exec.source.idle-timeout"))
}

// forward connects a stateless operator to its input at the input's
// parallelism, so that it chains into the input's task and keeps the
// input's order.
func forward(in *dataflow.Node) (dataflow.Edge, int) {
	return dataflow.Edge{From: in, Partition: dataflow.Forward}, in.Parallelism
}

// keyed completes d, the dataflow node of the keyed plan node n. Its
// operator keeps state per key, so d is stateful, and each input is
// hashed by n's partition keys at the default parallelism, or sent to
// one subtask when n has none.
func (t *translator) keyed(n keyedNode, ins []*dataflow.Node, d *dataflow.Node) *dataflow.Node {
	d.Stateful, d.Parallelism = true, t.parallelism
	for i, in := range ins {
		keys := n.partitionKeys(i)
		if len(keys) == 0 {
			d.Inputs = append(d.Inputs, dataflow.Edge{From: in, Partition: dataflow.Single})
			d.Parallelism = 1
			continue
		}
		d.Inputs = append(d.Inputs, dataflow.Edge{From: in, Partition: dataflow.Hash, Keys: keys})
	}
	return d
}

// connectorParallelism is the parallelism of a source or sink whose
// connector asks for p subtasks, 0 meaning the default.
func (t *translator) connectorParallelism(p int) int {
	if p == 0 {
		return t.parallelism
	}
	return p
}

func scalar(e expr.Expr) operators.Scalar { return e.Eval }

// projection is a Calc's output column e: a copy of the input column
// when e is a plain column reference.
func projection(e expr.Expr) operators.Projection {
	if idx, ok := expr.ColumnIndex(e); ok {
		return operators.ColumnProjection(idx)
	}
	return operators.ScalarProjection(e.Eval)
}

// predicate evaluates a filter's conjuncts in order and stops at the
// first that is not TRUE, so a conjunct is never evaluated on a row an
// earlier one has dropped: a Calc merged into the Calc below it (see
// mergeCalc) then fails on no row that the two Calcs would have let pass.
func predicate(e expr.Expr) operators.Predicate {
	cs := expr.Conjuncts(e)
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return func(row types.Row) (bool, error) { return expr.EvalBool(e, row) }
	}
	return func(row types.Row) (bool, error) {
		for _, c := range cs {
			if ok, err := expr.EvalBool(c, row); !ok || err != nil {
				return false, err
			}
		}
		return true, nil
	}
}

func allCols(n int) []int {
	k := make([]int, n)
	for i := range k {
		k[i] = i
	}
	return k
}
