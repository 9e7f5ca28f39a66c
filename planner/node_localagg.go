package planner

import (
	"fmt"

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
	groupAgg
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
	return &LocalAggNode{nodeBase: nodeBase{cols: cols, inputs: agg.inputs}, groupAgg: agg.groupAgg}, nil
}

// Mode: partials are only ever inserted.
func (n *LocalAggNode) Mode() dyntable.ChangelogMode { return dyntable.ModeI }
func (n *LocalAggNode) UpsertKey() []int             { return nil }
func (n *LocalAggNode) timeAttrs() []timeAttr        { return make([]timeAttr, len(n.cols)) }

func (n *LocalAggNode) Explain() string {
	group, sel := explainGroup(n.inputs[0].Columns(), n.GroupKeys, n.AggText)
	return fmt.Sprintf("LocalGroupAggregate(%sselect=[%s], partial=[%s], miniBatch=[%s])", group,
		sel, allNames(n.cols[len(n.GroupKeys):]), n.MiniBatch)
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
