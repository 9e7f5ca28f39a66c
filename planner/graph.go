package planner

import (
	"context"
	"encoding/binary"
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
func (p *Planner) BuildGraph(name string, plan *Plan, collect CollectFunc) (*dataflow.Graph, error) {
	t := &translator{p: p, g: &dataflow.Graph{Name: name}, done: map[Node]*dataflow.Node{},
		parallelism: p.Conf.Int("parallelism.default"), collect: collect}
	t.g.IdleTimeout = p.Conf.Duration("table.exec.source.idle-timeout") // see dataflow.Graph
	if _, err := t.node(plan.Root); err != nil {
		return nil, err
	}
	return t.g, nil
}

type translator struct {
	p           *Planner
	g           *dataflow.Graph
	done        map[Node]*dataflow.Node
	parallelism int
	collect     CollectFunc
}

func scalar(e expr.Expr) operators.Scalar { return e.Eval }

func predicate(e expr.Expr) operators.Predicate {
	if e == nil {
		return nil
	}
	return func(row types.Row) (bool, error) { return expr.EvalBool(e, row) }
}

// forward connects a stateless operator to its input at the input's
// parallelism, so that it chains into the input's task and keeps the
// input's order.
func forward(in *dataflow.Node) (dataflow.Edge, int) {
	return dataflow.Edge{From: in, Partition: dataflow.Forward}, in.Parallelism
}

// keyed connects a keyed operator: hash by keys, or everything to one
// subtask when there are no keys.
func (t *translator) keyed(in *dataflow.Node, keys []int) (dataflow.Edge, int) {
	if len(keys) == 0 {
		return dataflow.Edge{From: in, Partition: dataflow.Single}, 1
	}
	return dataflow.Edge{From: in, Partition: dataflow.Hash, Keys: keys}, t.parallelism
}

func allCols(n int) []int {
	k := make([]int, n)
	for i := range k {
		k[i] = i
	}
	return k
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
	name := fmt.Sprintf("%T", n)[len("*planner."):]
	if w, ok := n.(*WatermarkNode); ok && t.pushWatermark(w) {
		// The source generates the watermarks (hook for the Kafka source).
		t.done[n] = ins[0]
		return ins[0], nil
	}
	var d *dataflow.Node
	switch n := n.(type) {
	case *ScanNode:
		sc, err := n.Table.Scan(t.p.Env)
		if err != nil {
			return nil, err
		}
		p := sc.Parallelism()
		if p == 0 {
			p = t.parallelism
		}
		fields := n.Fields
		d = &dataflow.Node{Name: "TableSourceScan(" + n.Table.Name + ")", Parallelism: p,
			NewSource: func(s int) (dataflow.Source, error) {
				src, err := sc.Create(s, p)
				if err != nil || fields == nil {
					return src, err
				}
				return &projectingSource{Source: src, fields: fields}, nil
			}}
	case *ValuesNode:
		rows := n.Rows
		d = &dataflow.Node{Name: "Values", Parallelism: 1,
			NewSource: func(int) (dataflow.Source, error) { return &constSource{rows: rows}, nil }}
	case *WatermarkNode:
		e, p := forward(ins[0])
		ex := n.Expr
		iv := t.watermarkInterval(n) // periodic watermarks: build_window_watermark.go
		// Stateful: its watermark is checkpointed.
		d = &dataflow.Node{Name: "WatermarkAssigner", Parallelism: p, Inputs: []dataflow.Edge{e}, GeneratesWatermarks: true, Stateful: true,
			NewOperator: func(int) (dataflow.Operator, error) {
				return operators.NewWatermarkAssigner(scalar(ex)).WithInterval(iv), nil
			}}
	case *NormalizeNode:
		e, p := t.keyed(ins[0], n.Keys)
		keys := n.Keys
		d = &dataflow.Node{Name: "ChangelogNormalize", Stateful: true, StateTTL: true, Parallelism: p, Inputs: []dataflow.Edge{e},
			NewOperator: func(int) (dataflow.Operator, error) { return operators.NewChangelogNormalize(keys), nil }}
	case *CalcNode:
		e, p := forward(ins[0])
		filter := predicate(n.Filter)
		var proj []operators.Scalar
		identity := len(n.Proj) == len(n.inputs[0].Columns())
		for i, pe := range n.Proj {
			proj = append(proj, scalar(pe))
			if idx, ok := expr.ColumnIndex(pe); !ok || idx != i {
				identity = false
			}
		}
		if identity {
			proj = nil
		}
		d = &dataflow.Node{Name: "Calc", Parallelism: p, Inputs: []dataflow.Edge{e},
			NewOperator: func(int) (dataflow.Operator, error) { return operators.NewCalc(filter, proj), nil }}
		if wd := currentWatermarkCalc(n, e, p); wd != nil { // build_window_watermark.go
			d = wd
		}
	case *AggNode:
		e, p := t.keyed(ins[0], n.GroupKeys)
		spec := operators.GroupAggSpec{GroupKeys: n.GroupKeys, Aggs: n.Aggs, InputRetracts: n.inputs[0].Mode().HasUpdates()}
		if _, err := operators.NewGroupAgg(spec); err != nil {
			return nil, err
		}
		d = &dataflow.Node{Name: "GroupAggregate", Stateful: true, StateTTL: true, Parallelism: p, Inputs: []dataflow.Edge{e},
			NewOperator: func(int) (dataflow.Operator, error) { return operators.NewGroupAgg(spec) }}
	case *JoinNode:
		le, p := t.keyed(ins[0], n.LeftKeys)
		re, _ := t.keyed(ins[1], n.RightKeys)
		var cond func(types.Row) (bool, error)
		if n.Cond != nil {
			cond = predicate(n.Cond)
		}
		spec := operators.JoinSpec{Type: n.Type, LeftKeys: n.LeftKeys, RightKeys: n.RightKeys,
			LeftWidth: len(n.inputs[0].Columns()), RightWidth: len(n.inputs[1].Columns()), Condition: cond}
		d = &dataflow.Node{Name: "Join", Stateful: true, StateTTL: true, Parallelism: p, Inputs: []dataflow.Edge{le, re},
			NewOperator: func(int) (dataflow.Operator, error) { return operators.NewJoin(spec), nil }}
	case *RankNode:
		if wd, ok, err := t.windowRank(n, ins); ok { // build_window_rank.go
			if err != nil {
				return nil, err
			}
			d = wd
			break
		}
		e, p := t.keyed(ins[0], n.PartitionKeys)
		spec := operators.RankSpec{PartitionKeys: n.PartitionKeys, OrderBy: n.OrderBy, Offset: n.Offset,
			Limit: n.Limit, OutputRank: n.OutputRank, Width: len(n.inputs[0].Columns()),
			InputInsertOnly: n.inputs[0].Mode().IsInsertOnly()}
		if spec.Limit == 1 && spec.Offset == 0 && len(spec.PartitionKeys) > 0 && spec.InputInsertOnly {
			// rn = 1 over an insert-only input: the same changelog as Rank
			// with one value read per row (operators/dedup.go).
			d = &dataflow.Node{Name: "Deduplicate", Stateful: true, StateTTL: true, Parallelism: p, Inputs: []dataflow.Edge{e},
				NewOperator: func(int) (dataflow.Operator, error) { return operators.NewDeduplicate(spec), nil }}
			break
		}
		d = &dataflow.Node{Name: "Rank", Stateful: true, StateTTL: true, Parallelism: p, Inputs: []dataflow.Edge{e},
			NewOperator: func(int) (dataflow.Operator, error) { return operators.NewRank(spec), nil }}
	case *UnionNode:
		d = &dataflow.Node{Name: "Union", Parallelism: t.parallelism,
			NewOperator: func(int) (dataflow.Operator, error) { return operators.NewUnion(), nil }}
		for i, in := range ins {
			if in.Parallelism == t.parallelism {
				d.Inputs = append(d.Inputs, dataflow.Edge{From: in, Partition: dataflow.Forward})
			} else {
				// Hash by the whole row keeps each row's changes in order.
				d.Inputs = append(d.Inputs, dataflow.Edge{From: in, Partition: dataflow.Hash, Keys: allCols(len(n.inputs[i].Columns()))})
			}
		}
	case *SinkNode:
		var err error
		if d, err = t.sink(n, ins[0]); err != nil {
			return nil, err
		}
	case translatedNode:
		var err error
		if d, err = n.translate(t, ins); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("planner: no translation for %s", name)
	}
	t.done[n] = t.g.AddNode(d)
	return d, nil
}

func (t *translator) sink(n *SinkNode, in *dataflow.Node) (*dataflow.Node, error) {
	if n.Table == nil {
		collect := t.collect
		if collect == nil {
			return nil, fmt.Errorf("planner: a query plan needs a collector")
		}
		return &dataflow.Node{Name: "Collect", Parallelism: 1, Inputs: []dataflow.Edge{{From: in, Partition: dataflow.Single}},
			NewOperator: func(int) (dataflow.Operator, error) { return &collectOp{fn: collect}, nil }}, nil
	}
	sk, err := n.Table.Sink(t.p.Env)
	if err != nil {
		return nil, err
	}
	p := sk.Parallelism()
	if p == 0 {
		p = t.parallelism
	}
	var e dataflow.Edge
	switch {
	case len(n.Table.Conn.PrimaryKey) > 0 && (p > 1 || in.Parallelism != p):
		// Every change of one primary key goes to the same sink subtask.
		e = dataflow.Edge{From: in, Partition: dataflow.Hash, Keys: n.Table.Conn.PrimaryKey}
	case in.Parallelism == p:
		e = dataflow.Edge{From: in, Partition: dataflow.Forward}
	default:
		e = dataflow.Edge{From: in, Partition: dataflow.Hash, Keys: allCols(len(n.cols))}
	}
	stateful := false
	if ss, ok := sk.(connectors.StatefulSink); ok {
		stateful = ss.KeepsState()
	}
	return &dataflow.Node{Name: "Sink(" + n.Table.Name + ")", Parallelism: p, Inputs: []dataflow.Edge{e}, Stateful: stateful,
		NewOperator: func(s int) (dataflow.Operator, error) { return sk.Create(s, p) }}, nil
}

// collectOp hands the query result to the client.
type collectOp struct {
	dataflow.BaseOperator
	fn CollectFunc
}

func (c *collectOp) ProcessChunk(_ int, ch *dyntable.Chunk, _ dataflow.Collector) error {
	return c.fn(ch)
}

// constSource emits the constant rows of a FROM-less query or a VALUES
// list once. Its position is the number of rows emitted, so it takes part
// in checkpoints like any other bounded source.
type constSource struct {
	dataflow.BaseSource
	rows    []types.Row
	emitted int
}

func (s *constSource) Run(_ context.Context, out dataflow.SourceOutput) error {
	if s.emitted >= len(s.rows) {
		return nil
	}
	c := &dyntable.Chunk{}
	for _, r := range s.rows[s.emitted:] {
		c.Append(dyntable.Insert, r)
	}
	s.emitted = len(s.rows) // the position is advanced before Emit
	return out.Emit(c)
}

// SnapshotPosition implements dataflow.Source.
func (s *constSource) SnapshotPosition(int64) ([]byte, error) {
	return binary.AppendUvarint(nil, uint64(s.emitted)), nil
}

// RestorePosition implements dataflow.Source.
func (s *constSource) RestorePosition(pos []byte) error {
	n, k := binary.Uvarint(pos)
	if k <= 0 || k != len(pos) || n > uint64(len(s.rows)) {
		return fmt.Errorf("constant rows: invalid saved position %x for %d rows", pos, len(s.rows))
	}
	s.emitted = int(n)
	return nil
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

// projectingSource narrows a source's rows to the columns a scan reads.
// Embedding the source passes every call but Run through, so the wrapped
// source's abilities (positions, notices) are its own.
type projectingSource struct {
	dataflow.Source
	fields []int
}

func (s *projectingSource) Run(ctx context.Context, out dataflow.SourceOutput) error {
	return s.Source.Run(ctx, &projectingOutput{SourceOutput: out, fields: s.fields})
}

type projectingOutput struct {
	dataflow.SourceOutput
	fields []int
}

func (o *projectingOutput) Emit(c *dyntable.Chunk) error {
	vals := make([]types.Value, len(c.Changes)*len(o.fields))
	w := len(o.fields)
	for i := range c.Changes {
		row := types.Row(vals[i*w : (i+1)*w : (i+1)*w])
		for j, f := range o.fields {
			row[j] = c.Changes[i].Row[f]
		}
		c.Changes[i].Row = row
	}
	return o.SourceOutput.Emit(c)
}
