package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// LocalAggNode is the first phase of a two-phase group aggregation
// (Flink's LocalGroupAggregate; build_minibatch.go decides when): it
// runs before the hash exchange, at its input's parallelism, and emits
// per mini-batch one partial aggregate per group, insert-only. Its
// output is the group keys, then the partial's columns
// (operators.PartialColumns).
type LocalAggNode struct {
	nodeBase
	GroupKeys []int // input columns
	Aggs      []operators.AggCall
	AggText   []string // for EXPLAIN
	MiniBatch operators.MiniBatch
}

func newLocalAgg(agg *AggNode) (*LocalAggNode, error) {
	part, err := operators.PartialColumns(agg.spec())
	if err != nil {
		return nil, err
	}
	in := agg.inputs[0].Columns()
	var cols []expr.Column
	for _, k := range agg.GroupKeys {
		cols = append(cols, in[k])
	}
	for _, p := range part {
		cols = append(cols, expr.Column{Name: p.Name, Type: p.Type})
	}
	return &LocalAggNode{nodeBase: nodeBase{cols: cols, inputs: agg.inputs}, GroupKeys: agg.GroupKeys,
		Aggs: agg.Aggs, AggText: agg.AggText, MiniBatch: agg.MiniBatch}, nil
}

func (n *LocalAggNode) spec() operators.GroupAggSpec {
	return operators.GroupAggSpec{GroupKeys: n.GroupKeys, Aggs: n.Aggs}
}

// Mode: partials are only ever inserted.
func (n *LocalAggNode) Mode() dyntable.ChangelogMode { return dyntable.ModeI }
func (n *LocalAggNode) UpsertKey() []int             { return nil }
func (n *LocalAggNode) timeAttrs() []timeAttr        { return make([]timeAttr, len(n.cols)) }

func (n *LocalAggNode) Explain() string {
	in := n.inputs[0].Columns()
	var sel []string
	for _, k := range n.GroupKeys {
		sel = append(sel, in[k].Name)
	}
	sel = append(sel, n.AggText...)
	group := ""
	if len(n.GroupKeys) > 0 {
		group = "groupBy=[" + colNames(in, n.GroupKeys) + "], "
	}
	return fmt.Sprintf("LocalGroupAggregate(%sselect=[%s], partial=[%s], miniBatch=[%s])", group,
		strings.Join(sel, ", "), allNames(n.cols[len(n.GroupKeys):]), n.MiniBatch)
}

func (n *LocalAggNode) translate(_ *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec, mb := n.spec(), n.MiniBatch
	if _, err := operators.NewLocalGroupAgg(spec, mb); err != nil {
		return nil, err
	}
	e, p := forward(ins[0])
	return &dataflow.Node{Name: "LocalGroupAggregate", Parallelism: p, Inputs: []dataflow.Edge{e},
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewLocalGroupAgg(spec, mb) }}, nil
}

func (n *LocalAggNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
