package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/window"
)

// The window nodes (built in build_window*.go). Both are insert-only: a
// window's rows and results are emitted once, when it fires.

// WindowTVFNode is a window table function (TUMBLE, HOP, CUMULATE,
// SESSION) over its input: the input's columns followed by
// window_start, window_end and window_time.
type WindowTVFNode struct {
	nodeBase
	Window   window.WindowSpec
	TimeCol  int // input column of the time attribute
	ProcTime bool
	// PartitionBy are the input columns of SESSION's PARTITION BY.
	PartitionBy []int
	// Fused is set when a window aggregation consumes the node: it then
	// passes each row once, with the time attribute in the window
	// columns, and the aggregation assigns the windows.
	Fused bool
	// errAt makes an error positioned at the call in the user's text.
	errAt func(format string, args ...any) error
}

func (n *WindowTVFNode) Mode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (n *WindowTVFNode) UpsertKey() []int             { return nil }

// timeAttrs: the function emits each row as it comes, so the input's
// attributes stay; window_time is a rowtime attribute of an event-time
// window.
func (n *WindowTVFNode) timeAttrs() []timeAttr {
	attrs := append(n.inputs[0].timeAttrs(), attrNone, attrNone, attrNone)
	if !n.ProcTime {
		attrs[len(attrs)-1] = attrRowtime
	}
	return attrs
}

func (n *WindowTVFNode) Explain() string {
	in := n.inputs[0].Columns()
	s := fmt.Sprintf("WindowTableFunction(window=[%s(time_col=[%s]%s)]", n.Window.Kind, in[n.TimeCol].Name, windowArgs(n.Window))
	if n.ProcTime {
		s += ", proctime=[true]"
	}
	if n.Fused {
		s += ", fusedInto=[WindowAggregate]"
	}
	return s + ")"
}

// translate: a fused function is a stateless Calc; otherwise the
// operator assigns the windows and keeps its watermark in state.
func (n *WindowTVFNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	e, p := forward(ins[0])
	if n.Fused {
		// Hand the time attribute on in the window columns' places.
		nIn := len(n.inputs[0].Columns())
		var proj []operators.Projection
		for i := 0; i < nIn; i++ {
			proj = append(proj, operators.ColumnProjection(i))
		}
		for range 3 {
			proj = append(proj, operators.ColumnProjection(n.TimeCol))
		}
		return &dataflow.Node{Name: "WindowTableFunction", Parallelism: p, Inputs: []dataflow.Edge{e},
			NewOperator: func(int) (dataflow.Operator, error) { return operators.NewCalc(nil, proj), nil }}, nil
	}
	if n.Window.Kind == window.WindowSession {
		// builder.finish rejects this plan.
		return nil, fmt.Errorf("planner: internal error: a SESSION window function without its aggregation")
	}
	win, tc, proc, clock := n.Window, n.TimeCol, n.ProcTime, t.p.windowClock()
	if _, err := window.NewWindowTableFunction(win, tc, proc, clock); err != nil {
		return nil, err
	}
	return &dataflow.Node{Name: "WindowTableFunction", Parallelism: p, Inputs: []dataflow.Edge{e}, Stateful: true, // its watermark
		NewOperator: func(int) (dataflow.Operator, error) {
			return window.NewWindowTableFunction(win, tc, proc, clock)
		}}, nil
}

func (n *WindowTVFNode) withInputs(ins []Node) Node { return copyOver(n, ins) }

// WindowAggNode is a window aggregation: GROUP BY window_start,
// window_end[, keys] over a (fused) window table function, or over the
// windows a window aggregation below produced (a cascaded one,
// Window.Kind == WindowAssigned). Its output has the grouping columns in
// GROUP BY order, then the aggregates, as AggNode's does.
type WindowAggNode struct {
	nodeBase
	Window   window.WindowSpec
	TimeCol  int // input column carrying the time attribute
	TimeName string
	ProcTime bool
	Keys     []int // input columns of the non-window group keys
	Out      []window.WindowOutCol
	Aggs     []operators.AggCall
	AggText  []string
	// StartKey is, for a cascaded window aggregation, the index in Keys
	// of the input's window_start.
	StartKey int
}

func (n *WindowAggNode) Mode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (n *WindowAggNode) UpsertKey() []int             { return nil }
func (n *WindowAggNode) partitionKeys(int) []int      { return n.Keys }

// name is the operator's: sessions merge, the others slice.
func (n *WindowAggNode) name() string {
	if n.Window.Kind == window.WindowSession {
		return "SessionWindowAggregate"
	}
	return "WindowAggregate"
}

// timeAttrs: window_time of an event-time window is a rowtime attribute.
func (n *WindowAggNode) timeAttrs() []timeAttr {
	attrs := make([]timeAttr, len(n.cols))
	for i, o := range n.Out {
		if o.Kind == window.WinTime && !n.ProcTime {
			attrs[i] = attrRowtime
		}
	}
	return attrs
}

func (n *WindowAggNode) Explain() string {
	in := n.inputs[0].Columns()
	var sel []string
	for i, o := range n.Out {
		if o.Kind == window.WinKey {
			sel = append(sel, in[n.Keys[o.Key]].Name)
		} else {
			sel = append(sel, n.cols[i].Name)
		}
	}
	sel = append(sel, aggSelect(n.AggText, n.cols[len(n.Out):])...)
	s := n.name() + "("
	keys := n.Keys
	if n.Window.Kind == window.WindowAssigned {
		keys = keys[:n.StartKey] // window_start is a key only to carry it
	}
	if len(keys) > 0 {
		s += "groupBy=[" + colNames(in, keys) + "], "
	}
	if n.Window.Kind == window.WindowAssigned {
		s += fmt.Sprintf("window=[WINDOWED(window=[%s])]", n.TimeName)
	} else {
		s += fmt.Sprintf("window=[%s(time_col=[%s]%s)]", n.Window.Kind, n.TimeName, windowArgs(n.Window))
	}
	if n.ProcTime {
		s += ", proctime=[true]"
	}
	return s + ", select=[" + strings.Join(sel, ", ") + "])"
}

func (n *WindowAggNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	spec := window.WindowAggSpec{Window: n.Window, TimeCol: n.TimeCol, Keys: n.Keys, Aggs: n.Aggs,
		Out: n.Out, ProcTime: n.ProcTime, Clock: t.p.windowClock(), StartKey: n.StartKey}
	newOp := func(s window.WindowAggSpec) (dataflow.Operator, error) { return window.NewWindowAgg(s) }
	if n.Window.Kind == window.WindowSession {
		newOp = func(s window.WindowAggSpec) (dataflow.Operator, error) { return window.NewSessionAgg(s) }
	}
	if _, err := newOp(spec); err != nil {
		return nil, err
	}
	return t.keyed(n, ins, &dataflow.Node{Name: n.name(),
		NewOperator: func(int) (dataflow.Operator, error) { return newOp(spec) }}), nil
}

func (n *WindowAggNode) withInputs(ins []Node) Node { return copyOver(n, ins) }

// windowArgs renders a window's sizes as EXPLAIN shows them.
func windowArgs(w window.WindowSpec) string {
	d := fmtDuration
	off := ""
	if w.Offset != 0 {
		off = ", offset=[" + d(w.Offset) + "]"
	}
	switch w.Kind {
	case window.WindowHop:
		return ", slide=[" + d(w.Slide) + "], size=[" + d(w.Size) + "]" + off
	case window.WindowCumulate:
		return ", step=[" + d(w.Slide) + "], max_size=[" + d(w.Size) + "]" + off
	case window.WindowSession:
		return ", gap=[" + d(w.Size) + "]"
	}
	return ", size=[" + d(w.Size) + "]" + off
}

// fmtDuration renders nanoseconds in the largest whole unit, Flink style
// ("10 s", "1 min", "1500 ms").
func fmtDuration(ns int64) string {
	units := []struct {
		n    int64
		name string
	}{{86400e9, "d"}, {3600e9, "h"}, {60e9, "min"}, {1e9, "s"}, {1e6, "ms"}, {1e3, "us"}}
	for _, u := range units {
		if ns%u.n == 0 {
			return fmt.Sprintf("%d %s", ns/u.n, u.name)
		}
	}
	return fmt.Sprintf("%d ns", ns)
}

// ProcTimeClock, when set, is the clock of processing-time windows (for
// tests); nil means time.Now. Set it before planning.
var ProcTimeClock func() time.Time

func (p *Planner) windowClock() func() time.Time { return ProcTimeClock }
