package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/window"
)

// Joins over time: each is a regular join's keys, type and residual
// condition (the embedded JoinNode) plus what bounds its state in time.
// Each emits a result once, when the watermark says it is final, so all
// are insert-only, even as outer joins. build_timejoin.go recognises
// them.

// IntervalJoinNode is an event-time interval join: a left row joins the
// right rows whose time lies within [left.time - Upper, left.time -
// Lower]. Both inputs' rowtime attributes stay rowtime.
type IntervalJoinNode struct {
	JoinNode
	LeftTime, RightTime int
	Lower, Upper        int64 // bounds of left.time - right.time, ns, inclusive
}

func (n *IntervalJoinNode) Mode() dyntable.ChangelogMode { return dyntable.InsertOnly }

func (n *IntervalJoinNode) Explain() string {
	return n.explainAs("IntervalJoin", fmt.Sprintf("windowBounds=[isRowTime=true, leftLowerBound=%s, leftUpperBound=%s, leftTimeIndex=%d, rightTimeIndex=%d]",
		fmtBound(n.Lower), fmtBound(n.Upper), n.LeftTime, n.RightTime), n.where(n.inputs))
}

// timeAttrs: the join holds the watermark back by its bounds, so its
// results are not late, and both sides' rowtime attributes stay.
func (n *IntervalJoinNode) timeAttrs() []timeAttr {
	return append(rowtimeOnly(n.inputs[0]), rowtimeOnly(n.inputs[1])...)
}

// translate: without equi-keys (partitionKeys empty) the join runs in
// one subtask, as Flink's does.
func (n *IntervalJoinNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec := operators.IntervalJoinSpec{Join: n.spec(), LeftTime: n.LeftTime, RightTime: n.RightTime, Lower: n.Lower, Upper: n.Upper}
	return t.keyed(n, ins, &dataflow.Node{Name: "IntervalJoin", GeneratesWatermarks: true,
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewIntervalJoin(spec), nil }}), nil
}

func (n *IntervalJoinNode) withInputs(ins []Node) Node { return copyOver(n, ins) }

// TemporalJoinNode is an event-time temporal join with a versioned
// table: each left row joins the version of the right row valid at its
// time.
type TemporalJoinNode struct {
	JoinNode
	LeftTime, RightTime int
}

// Mode: each output row has its left row's kind, as in Flink.
func (n *TemporalJoinNode) Mode() dyntable.ChangelogMode { return n.inputs[0].Mode() }

func (n *TemporalJoinNode) Explain() string {
	l, r := n.inputs[0].Columns(), n.inputs[1].Columns()
	return n.explainAs("TemporalJoin", n.where(n.inputs), "leftTime=["+l[n.LeftTime].Name+"]", "rightTime=["+r[n.RightTime].Name+"]")
}

// timeAttrs: the left side's rowtime attributes stay (each row is
// emitted when the watermark reaches its time, before that watermark);
// the right side's become plain timestamps.
func (n *TemporalJoinNode) timeAttrs() []timeAttr {
	return append(rowtimeOnly(n.inputs[0]), make([]timeAttr, len(n.inputs[1].Columns()))...)
}

func (n *TemporalJoinNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec := operators.TemporalJoinSpec{Join: n.spec(), LeftTime: n.LeftTime, RightTime: n.RightTime}
	return t.keyed(n, ins, &dataflow.Node{Name: "TemporalJoin",
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewTemporalJoin(spec), nil }}), nil
}

func (n *TemporalJoinNode) withInputs(ins []Node) Node { return copyOver(n, ins) }

// WindowJoinNode joins two windowed inputs window by window: its keys
// equate window_start and window_end of the two sides.
type WindowJoinNode struct {
	JoinNode
	LeftEnd, RightEnd int // window_end columns
}

func (n *WindowJoinNode) Mode() dyntable.ChangelogMode { return dyntable.InsertOnly }

func (n *WindowJoinNode) Explain() string {
	l, r := n.inputs[0].Columns(), n.inputs[1].Columns()
	return n.explainAs("WindowJoin", n.where(n.inputs), "leftWindowEnd=["+l[n.LeftEnd].Name+"]", "rightWindowEnd=["+r[n.RightEnd].Name+"]")
}

// timeAttrs: a window's rows are emitted when the watermark reaches
// window_time, before that watermark, so both sides' window_time stay
// rowtime attributes; the rows' own times have passed by then.
func (n *WindowJoinNode) timeAttrs() []timeAttr {
	return append(windowTimeOnly(n.inputs[0]), windowTimeOnly(n.inputs[1])...)
}

func (n *WindowJoinNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec := window.WindowJoinSpec{Join: n.spec(), LeftEnd: n.LeftEnd, RightEnd: n.RightEnd}
	return t.keyed(n, ins, &dataflow.Node{Name: "WindowJoin",
		NewOperator: func(int) (dataflow.Operator, error) { return window.NewWindowJoin(spec), nil }}), nil
}

func (n *WindowJoinNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
