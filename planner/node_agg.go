package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// AggNode is a group aggregation (GROUP BY, DISTINCT, UNION): its
// output is the group keys, then one column per aggregate.
type AggNode struct {
	nodeBase
	groupAgg
	// Phase is "PARTIAL" or "FINAL" for the two levels of a split
	// distinct aggregation (build_agg_split.go), else empty; EXPLAIN shows
	// it as Flink does (partialFinalType).
	Phase string
}

func newAgg(in Node, keys []int, aggs []operators.AggCall, text []string, cols []expr.Column) *AggNode {
	return &AggNode{nodeBase: nodeBase{cols: cols, inputs: []Node{in}}, groupAgg: groupAgg{GroupKeys: keys, Aggs: aggs, AggText: text}}
}

// groupAgg is what the one-phase group aggregation and the two phases
// it splits into (LocalAggNode, GlobalAggNode) share: the aggregation,
// over the one-phase aggregation's input, and how it runs.
type groupAgg struct {
	GroupKeys []int // input columns
	Aggs      []operators.AggCall
	AggText   []string // for EXPLAIN
	// MiniBatch is the mini-batch setting (table.exec.mini-batch.*),
	// zero when off.
	MiniBatch operators.MiniBatch
}

// spec is the operator's description of the aggregation, for an
// insert-only input.
func (g *groupAgg) spec() operators.GroupAggSpec {
	return operators.GroupAggSpec{GroupKeys: g.GroupKeys, Aggs: g.Aggs}
}

// explainGroup renders the groupBy=[...] and select=[...] parts of a
// group aggregation's EXPLAIN line: group is "groupBy=[k, ...], " ("" with
// no keys) and sel the keys' names (keys are columns of in), then aggs.
func explainGroup(in []expr.Column, keys []int, aggs []string) (group, sel string) {
	var names []string
	for _, k := range keys {
		names = append(names, in[k].Name)
	}
	if len(keys) > 0 {
		group = "groupBy=[" + colNames(in, keys) + "], "
	}
	return group, strings.Join(append(names, aggs...), ", ")
}

// Mode: a group's result is updated in place (-U/+U); a group that can
// lose all its rows emits -D, so -D appears only for inputs with
// retractions.
func (n *AggNode) Mode() dyntable.ChangelogMode {
	if n.inputs[0].Mode().HasUpdates() {
		return dyntable.Retract
	}
	return dyntable.ModeI | dyntable.ModeUB | dyntable.ModeUA
}

// UpsertKey is the group keys, which come first in the output; with no
// keys there is one group, identified by no column.
func (n *AggNode) UpsertKey() []int { return allCols(len(n.GroupKeys)) }

func (n *AggNode) partitionKeys(int) []int { return n.GroupKeys }
func (n *AggNode) timeAttrs() []timeAttr   { return make([]timeAttr, len(n.cols)) }

func (n *AggNode) Explain() string {
	group, sel := explainGroup(n.inputs[0].Columns(), n.GroupKeys, aggSelect(n.AggText, n.cols[len(n.GroupKeys):]))
	mb := ""
	if n.Phase != "" {
		mb = ", partialFinalType=[" + n.Phase + "]"
	}
	if n.MiniBatch.On() {
		mb += ", miniBatch=[" + n.MiniBatch.String() + "]"
	}
	return fmt.Sprintf("GroupAggregate(%sselect=[%s]%s)", group, sel, mb)
}

// aggSelect renders aggregate calls for EXPLAIN, each with the name of
// its output column when that is not the call's text.
func aggSelect(text []string, cols []expr.Column) []string {
	var sel []string
	for i, t := range text {
		if name := cols[i].Name; name != t {
			t += " AS " + name
		}
		sel = append(sel, t)
	}
	return sel
}

// spec is groupAgg's, for this node's input, which may retract.
func (n *AggNode) spec() operators.GroupAggSpec {
	s := n.groupAgg.spec()
	s.InputRetracts = n.inputs[0].Mode().HasUpdates()
	return s
}

func (n *AggNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec := n.spec()
	if _, err := operators.NewGroupAgg(spec); err != nil {
		return nil, err
	}
	newOp := func(int) (dataflow.Operator, error) { return operators.NewGroupAgg(spec) }
	if mb := n.MiniBatch; mb.On() {
		newOp = func(int) (dataflow.Operator, error) { return operators.NewMiniBatchGroupAgg(spec, mb) }
	}
	return t.keyed(n, ins, &dataflow.Node{Name: "GroupAggregate", StateTTL: true, NewOperator: newOp}), nil
}

func (n *AggNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
