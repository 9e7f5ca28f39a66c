package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
)

// GlobalAggNode is the second phase of a two-phase group aggregation
// (Flink's GlobalGroupAggregate): after the hash exchange on the group
// keys, it merges the partials of its LocalAggNode input into its state
// and emits what the one-phase AggNode would, with the same columns,
// mode and upsert key.
type GlobalAggNode struct {
	nodeBase
	// groupAgg is the one-phase aggregation's, over the local phase's
	// input; the global phase's keys are the first len(GroupKeys)
	// columns of its own input.
	groupAgg
}

func newGlobalAgg(agg *AggNode, local *LocalAggNode) *GlobalAggNode {
	return &GlobalAggNode{nodeBase: nodeBase{cols: agg.cols, inputs: []Node{local}}, groupAgg: agg.groupAgg}
}

// Mode: the local phase's input is insert-only, so groups never lose
// rows: no -D.
func (n *GlobalAggNode) Mode() dyntable.ChangelogMode {
	return dyntable.ModeI | dyntable.ModeUB | dyntable.ModeUA
}

func (n *GlobalAggNode) UpsertKey() []int        { return allCols(len(n.GroupKeys)) }
func (n *GlobalAggNode) partitionKeys(int) []int { return allCols(len(n.GroupKeys)) }
func (n *GlobalAggNode) timeAttrs() []timeAttr   { return make([]timeAttr, len(n.cols)) }

func (n *GlobalAggNode) Explain() string {
	group, sel := explainGroup(n.inputs[0].Columns(), allCols(len(n.GroupKeys)), aggSelect(n.AggText, n.cols[len(n.GroupKeys):]))
	return fmt.Sprintf("GlobalGroupAggregate(%sselect=[%s], miniBatch=[%s])", group, sel, n.MiniBatch)
}

func (n *GlobalAggNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec, mb := n.spec(), n.MiniBatch
	if _, err := operators.NewGlobalGroupAgg(spec, mb); err != nil {
		return nil, err
	}
	return t.keyed(n, ins, &dataflow.Node{Name: "GlobalGroupAggregate", StateTTL: true,
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewGlobalGroupAgg(spec, mb) }}), nil
}

func (n *GlobalAggNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
