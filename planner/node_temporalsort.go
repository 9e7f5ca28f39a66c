package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
)

// TemporalSortNode is ORDER BY without LIMIT on a streaming query whose
// first sort key is a time attribute, ascending (Flink's temporal sort,
// build_temporalsort.go). OrderBy holds every key, the time attribute
// first. Over rowtime the rows of each time are emitted, sorted by the
// other keys, when the watermark passes it; over processing time the
// rows held are emitted sorted at each tick. Either way each row is
// emitted once, so it is insert-only. It sorts the whole stream, so it
// runs as one subtask.
type TemporalSortNode struct {
	nodeBase
	OrderBy  []operators.SortKey
	ProcTime bool
}

func (n *TemporalSortNode) Mode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (n *TemporalSortNode) UpsertKey() []int             { return nil }
func (n *TemporalSortNode) partitionKeys(int) []int      { return nil }

func (n *TemporalSortNode) Explain() string {
	return fmt.Sprintf("TemporalSort(orderBy=[%s])", explainOrderBy(n.inputs[0].Columns(), n.OrderBy))
}

// timeAttrs: over rowtime a row is emitted when the watermark reaches
// its time, before that watermark, so the rowtime attributes stay. Over
// processing time rows are held while watermarks pass on, so only the
// processing-time attributes stay.
func (n *TemporalSortNode) timeAttrs() []timeAttr {
	if !n.ProcTime {
		return rowtimeOnly(n.inputs[0])
	}
	attrs := n.inputs[0].timeAttrs()
	for i, a := range attrs {
		if a != attrProctime {
			attrs[i] = attrNone
		}
	}
	return attrs
}

func (n *TemporalSortNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec := operators.TemporalSortSpec{TimeCol: n.OrderBy[0].Col, ProcTime: n.ProcTime,
		OrderBy: n.OrderBy[1:], Width: len(n.inputs[0].Columns())}
	return t.keyed(n, ins, &dataflow.Node{Name: "TemporalSort",
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewTemporalSort(spec), nil }}), nil
}

func (n *TemporalSortNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
