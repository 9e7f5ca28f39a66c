package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/types"
)

// WindowAggNode is a window aggregation: GROUP BY window_start,
// window_end[, keys] over a (fused) window table function. Its output
// has the grouping columns in GROUP BY order, then the aggregates, as
// AggNode's does; it is insert-only.
type WindowAggNode struct {
	nodeBase
	Window   operators.WindowSpec
	TimeCol  int // input column carrying the time attribute
	TimeName string
	ProcTime bool
	Keys     []int // input columns of the non-window group keys
	Out      []operators.WindowOutCol
	Aggs     []operators.AggCall
	AggText  []string
	// StartKey is, for a cascaded window aggregation, the index in Keys
	// of the input's window_start.
	StartKey int
}

func (n *WindowAggNode) Explain() string {
	name := "WindowAggregate"
	if n.Window.Kind == operators.WindowSession {
		name = "SessionWindowAggregate"
	}
	in := n.inputs[0].Columns()
	var sel []string
	for i, o := range n.Out {
		if o.Kind == operators.WinKey {
			sel = append(sel, in[n.Keys[o.Key]].Name)
		} else {
			sel = append(sel, n.cols[i].Name)
		}
	}
	for i, t := range n.AggText {
		if name := n.cols[len(n.Out)+i].Name; name != t {
			t += " AS " + name
		}
		sel = append(sel, t)
	}
	s := name + "("
	keys := n.Keys
	if n.Window.Kind == operators.WindowAssigned {
		keys = keys[:n.StartKey] // window_start is a key only to carry it
	}
	if len(keys) > 0 {
		s += "groupBy=[" + colNames(in, keys) + "], "
	}
	if n.Window.Kind == operators.WindowAssigned {
		s += fmt.Sprintf("window=[WINDOWED(window=[%s])]", n.TimeName)
	} else {
		s += fmt.Sprintf("window=[%s(time_col=[%s]%s)]", n.Window.Kind, n.TimeName, windowArgs(n.Window))
	}
	if n.ProcTime {
		s += ", proctime=[true]"
	}
	return s + ", select=[" + strings.Join(sel, ", ") + "])"
}

// windowAggregate turns a group aggregation whose GROUP BY holds the
// window_start and window_end of one window table function into a
// window aggregation, fusing the function into it. Any other aggregation
// is returned as it is.
func (b *builder) windowAggregate(agg *AggNode) (Node, error) {
	pre := agg.inputs[0]
	var tvf *WindowTVFNode
	var start, end bool
	timeKey := -1
	out := make([]operators.WindowOutCol, len(agg.GroupKeys))
	var keys []int
	for i, k := range agg.GroupKeys {
		if wn, kind, ok := windowColOf(pre, k); ok {
			if t, isTVF := wn.(*WindowTVFNode); isTVF && (tvf == nil || tvf == t) {
				tvf = t
				out[i] = operators.WindowOutCol{Kind: kind}
				start = start || kind == operators.WinStart
				end = end || kind == operators.WinEnd
				timeKey = k
				continue
			}
		}
		out[i] = operators.WindowOutCol{Kind: operators.WinKey, Key: len(keys)}
		keys = append(keys, k)
	}
	if tvf == nil {
		if t := findWindowTVF(pre); t != nil && t.Window.Kind == operators.WindowSession {
			return nil, t.errAt("SESSION windows must be aggregated with GROUP BY window_start, window_end")
		}
		if n := cascadedWindowAggregate(agg); n != nil {
			return n, nil
		}
		return agg, nil
	}
	if !start || !end {
		if tvf.Window.Kind == operators.WindowSession {
			return nil, tvf.errAt("SESSION windows must be aggregated with GROUP BY window_start, window_end")
		}
		// GROUP BY window_start alone is an ordinary, updating aggregation
		// over the assigned windows.
		return agg, nil
	}
	wcols, err := windowColsUpTo(pre, tvf)
	if err != nil {
		return nil, tvf.errAt("%v", err)
	}
	for _, a := range agg.Aggs {
		if a.Kind != operators.AggCountStar && wcols[a.Arg] {
			return nil, tvf.errAt("in a window aggregation the window columns can only be GROUP BY keys, not aggregate arguments")
		}
	}
	if tvf.Window.Kind == operators.WindowSession {
		for _, p := range tvf.PartitionBy {
			found := false
			for _, k := range keys {
				if idx, ok := inputColOf(pre, k, tvf); ok && idx == p {
					found = true
				}
			}
			if !found {
				name := tvf.inputs[0].Columns()[p].Name
				return nil, tvf.errAt("SESSION ... PARTITION BY %s: the window aggregation must GROUP BY %s too", name, name)
			}
		}
	}
	tvf.Fused = true
	if c, ok := pre.(*CalcNode); ok && c.inputs[0] == Node(tvf) {
		// The usual shape: the aggregation's input projection sits right
		// on the window function. Let it read the time attribute itself,
		// and drop the window function from the plan.
		in := tvf.inputs[0].Columns()
		nIn := len(in)
		for i, p := range c.Proj {
			if idx, ok := expr.ColumnIndex(p); ok && idx >= nIn {
				c.Proj[i] = expr.NewColumnRef(tvf.TimeCol, in[tvf.TimeCol].Name, in[tvf.TimeCol].Type)
			}
		}
		c.inputs[0] = tvf.inputs[0]
	}
	n := &WindowAggNode{nodeBase: nodeBase{cols: agg.cols, inputs: []Node{pre}, mode: dyntable.InsertOnly},
		Window: tvf.Window, TimeCol: timeKey, TimeName: tvf.inputs[0].Columns()[tvf.TimeCol].Name,
		ProcTime: tvf.ProcTime, Keys: keys, Out: out, Aggs: agg.Aggs, AggText: agg.AggText}
	return n, nil
}

// cascadedWindowAggregate turns an aggregation grouped by the
// window_start and window_end that a window aggregation below produced
// (through projections, maybe renamed) into a window aggregation over
// those same windows (Flink's cascading window aggregation): insert-only,
// each window emitted once when the watermark passes its end, instead of
// an updating GroupAggregate. It returns nil for any other aggregation.
func cascadedWindowAggregate(agg *AggNode) *WindowAggNode {
	pre := agg.inputs[0]
	if !pre.Mode().IsInsertOnly() {
		return nil
	}
	var win Node
	startCol, endCol := -1, -1
	out := make([]operators.WindowOutCol, len(agg.GroupKeys))
	var keys []int
	for i, k := range agg.GroupKeys {
		if wn, kind, ok := windowColOf(pre, k); ok && (win == nil || wn == win) {
			if wa, isAgg := wn.(*WindowAggNode); isAgg && !wa.ProcTime && (kind == operators.WinStart || kind == operators.WinEnd) {
				win = wn
				out[i] = operators.WindowOutCol{Kind: kind}
				if kind == operators.WinStart {
					startCol = k
				} else {
					endCol = k
				}
				continue
			}
		}
		out[i] = operators.WindowOutCol{Kind: operators.WinKey, Key: len(keys)}
		keys = append(keys, k)
	}
	if startCol < 0 || endCol < 0 {
		return nil
	}
	// window_start is carried as a key, so that the output has it.
	startKey := len(keys)
	keys = append(keys, startCol)
	in := pre.Columns()
	return &WindowAggNode{nodeBase: nodeBase{cols: agg.cols, inputs: []Node{pre}, mode: dyntable.InsertOnly},
		Window: operators.WindowSpec{Kind: operators.WindowAssigned}, TimeCol: endCol,
		TimeName: in[startCol].Name + ", " + in[endCol].Name, Keys: keys, Out: out, Aggs: agg.Aggs, AggText: agg.AggText,
		StartKey: startKey}
}

// findWindowTVF finds a window function under projections.
func findWindowTVF(n Node) *WindowTVFNode {
	switch x := n.(type) {
	case *WindowTVFNode:
		return x
	case *CalcNode:
		return findWindowTVF(x.inputs[0])
	}
	return nil
}

// windowColsUpTo returns the columns of n that pass tvf's window columns
// through, checking that nothing between tvf and n computes with them: a
// fused window function hands the time attribute on in their places.
func windowColsUpTo(n Node, tvf *WindowTVFNode) (map[int]bool, error) {
	if n == Node(tvf) {
		nIn := len(tvf.inputs[0].Columns())
		return map[int]bool{nIn: true, nIn + 1: true, nIn + 2: true}, nil
	}
	c, ok := n.(*CalcNode)
	if !ok {
		return nil, fmt.Errorf("window aggregation over %T is not supported", n)
	}
	below, err := windowColsUpTo(c.inputs[0], tvf)
	if err != nil {
		return nil, err
	}
	uses := func(e expr.Expr) bool {
		u := false
		expr.Walk(e, func(x expr.Expr) bool {
			if idx, ok := expr.ColumnIndex(x); ok && below[idx] {
				u = true
			}
			return !u
		})
		return u
	}
	if c.Filter != nil && uses(c.Filter) {
		return nil, fmt.Errorf("in a window aggregation the window columns can only be GROUP BY keys; filter on them in an enclosing query")
	}
	out := map[int]bool{}
	for i, p := range c.Proj {
		if idx, ok := expr.ColumnIndex(p); ok && below[idx] {
			out[i] = true
		} else if uses(p) {
			return nil, fmt.Errorf("in a window aggregation the window columns can only be GROUP BY keys; compute with them in an enclosing query")
		}
	}
	return out, nil
}

// inputColOf traces column col of n through projections to a column of
// tvf's input.
func inputColOf(n Node, col int, tvf *WindowTVFNode) (int, bool) {
	if n == Node(tvf) {
		return col, col < len(tvf.inputs[0].Columns())
	}
	if c, ok := n.(*CalcNode); ok {
		if idx, ok := expr.ColumnIndex(c.Proj[col]); ok {
			return inputColOf(c.inputs[0], idx, tvf)
		}
	}
	return 0, false
}

// ---- translation ----

func (n *WindowTVFNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	return t.windowNode(n, ins)
}

func (n *WindowAggNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	return t.windowNode(n, ins)
}

func (n *WindowAggNode) exchange(i int) string { return windowExchangeFor(n, i) }

// windowNode translates the window plan nodes.
func (t *translator) windowNode(n Node, ins []*dataflow.Node) (*dataflow.Node, error) {
	switch n := n.(type) {
	case *WindowTVFNode:
		e, p := forward(ins[0])
		nIn := len(n.inputs[0].Columns())
		if n.Fused {
			// Hand the time attribute on in the window columns' places.
			var proj []operators.Scalar
			for i := 0; i < nIn; i++ {
				proj = append(proj, columnScalar(i))
			}
			for range 3 {
				proj = append(proj, columnScalar(n.TimeCol))
			}
			return &dataflow.Node{Name: "WindowTableFunction", Parallelism: p, Inputs: []dataflow.Edge{e},
				NewOperator: func(int) (dataflow.Operator, error) { return operators.NewCalc(nil, proj), nil }}, nil
		}
		if n.Window.Kind == operators.WindowSession {
			return nil, n.errAt("SESSION windows must be aggregated with GROUP BY window_start, window_end")
		}
		win, tc, proc, clock := n.Window, n.TimeCol, n.ProcTime, t.p.windowClock()
		if _, err := operators.NewWindowTableFunction(win, tc, proc, clock); err != nil {
			return nil, err
		}
		return &dataflow.Node{Name: "WindowTableFunction", Parallelism: p, Inputs: []dataflow.Edge{e}, Stateful: true, // its watermark
			NewOperator: func(int) (dataflow.Operator, error) {
				return operators.NewWindowTableFunction(win, tc, proc, clock)
			}}, nil
	case *WindowAggNode:
		e, p := t.keyed(ins[0], n.Keys)
		spec := operators.WindowAggSpec{Window: n.Window, TimeCol: n.TimeCol, Keys: n.Keys, Aggs: n.Aggs,
			Out: n.Out, ProcTime: n.ProcTime, Clock: t.p.windowClock(), StartKey: n.StartKey}
		if n.Window.Kind == operators.WindowSession {
			if _, err := operators.NewSessionAgg(spec); err != nil {
				return nil, err
			}
			return &dataflow.Node{Name: "SessionWindowAggregate", Stateful: true, Parallelism: p, Inputs: []dataflow.Edge{e},
				NewOperator: func(int) (dataflow.Operator, error) { return operators.NewSessionAgg(spec) }}, nil
		}
		if _, err := operators.NewWindowAgg(spec); err != nil {
			return nil, err
		}
		return &dataflow.Node{Name: "WindowAggregate", Stateful: true, Parallelism: p, Inputs: []dataflow.Edge{e},
			NewOperator: func(int) (dataflow.Operator, error) { return operators.NewWindowAgg(spec) }}, nil
	}
	return nil, fmt.Errorf("planner: no translation for %T", n)
}

func columnScalar(i int) operators.Scalar {
	return func(row types.Row) (types.Value, error) { return row[i], nil }
}

// ProcTimeClock, when set, is the clock of processing-time windows (for
// tests); nil means time.Now. Set it before planning.
var ProcTimeClock func() time.Time

func (p *Planner) windowClock() func() time.Time { return ProcTimeClock }

// windowExchangeFor describes the re-partitioning in front of a window
// node, for EXPLAIN.
func windowExchangeFor(n Node, i int) string {
	if w, ok := n.(*WindowAggNode); ok {
		if len(w.Keys) == 0 {
			return "Exchange(distribution=[single])"
		}
		return "Exchange(distribution=[hash[" + colNames(n.Inputs()[i].Columns(), w.Keys) + "]])"
	}
	return ""
}
