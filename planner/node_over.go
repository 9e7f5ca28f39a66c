package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
)

// OverAggNode is an event-time OVER aggregation (build_over.go): its
// input columns with one column per aggregate appended. Each row is
// emitted once, with its aggregates, when the watermark passes its
// time, so it is insert-only.
type OverAggNode struct {
	nodeBase
	PartitionKeys []int
	TimeCol       int
	Rows          bool
	Preceding     int64
	Aggs          []operators.AggCall
	FrameText     string   // for EXPLAIN
	AggText       []string // for EXPLAIN
}

func (n *OverAggNode) Mode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (n *OverAggNode) UpsertKey() []int             { return nil }
func (n *OverAggNode) partitionKeys(int) []int      { return n.PartitionKeys }

func (n *OverAggNode) Explain() string {
	in := n.inputs[0].Columns()
	sel := []string{allNames(in)}
	for i, t := range n.AggText {
		sel = append(sel, t+" AS "+n.cols[len(in)+i].Name)
	}
	s := "OverAggregate("
	if len(n.PartitionKeys) > 0 {
		s += "partitionBy=[" + colNames(in, n.PartitionKeys) + "], "
	}
	return s + fmt.Sprintf("orderBy=[%s ASC], window=[%s], select=[%s])", in[n.TimeCol].Name, n.FrameText, strings.Join(sel, ", "))
}

// timeAttrs: each row is emitted when the watermark reaches its time,
// before that watermark, so the input's rowtime attributes stay.
func (n *OverAggNode) timeAttrs() []timeAttr {
	return append(rowtimeOnly(n.inputs[0]), make([]timeAttr, len(n.Aggs))...)
}

func (n *OverAggNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec := operators.OverAggSpec{PartitionKeys: n.PartitionKeys, TimeCol: n.TimeCol, Rows: n.Rows,
		Preceding: n.Preceding, Aggs: n.Aggs, Width: len(n.inputs[0].Columns())}
	return t.keyed(n, ins, &dataflow.Node{Name: "OverAggregate",
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewOverAgg(spec), nil }}), nil
}

func (n *OverAggNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
