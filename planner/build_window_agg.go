package planner

import (
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/window"
)

// windowAggregate turns a group aggregation whose GROUP BY holds the
// window_start and window_end of one window table function into a
// window aggregation, fusing the function into it. Any other aggregation
// is returned as it is.
func (b *builder) windowAggregate(agg *AggNode) (Node, error) {
	pre := agg.inputs[0]
	var tvf *WindowTVFNode
	var start, end bool
	timeKey := -1
	out := make([]window.WindowOutCol, len(agg.GroupKeys))
	var keys []int
	for i, k := range agg.GroupKeys {
		if wn, kind, ok := windowColOf(pre, k); ok {
			if t, isTVF := wn.(*WindowTVFNode); isTVF && (tvf == nil || tvf == t) {
				tvf = t
				out[i] = window.WindowOutCol{Kind: kind}
				start = start || kind == window.WinStart
				end = end || kind == window.WinEnd
				timeKey = k
				continue
			}
		}
		out[i] = window.WindowOutCol{Kind: window.WinKey, Key: len(keys)}
		keys = append(keys, k)
	}
	if tvf == nil {
		if t := findWindowTVF(pre); t != nil && t.Window.Kind == window.WindowSession {
			return nil, t.errAt("SESSION windows must be aggregated with GROUP BY window_start, window_end")
		}
		if n := cascadedWindowAggregate(agg); n != nil {
			return n, nil
		}
		return agg, nil
	}
	if !start || !end {
		if tvf.Window.Kind == window.WindowSession {
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
		if a.Kind != operators.AggCountStar && wcols[a.Arg] || a.Filtered && wcols[a.Filter] {
			return nil, tvf.errAt("in a window aggregation the window columns can only be GROUP BY keys, not aggregate arguments")
		}
	}
	if tvf.Window.Kind == window.WindowSession {
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
	var fused Node
	if c, ok := pre.(*CalcNode); ok && c.inputs[0] == Node(tvf) {
		// The usual shape: the aggregation's input projection sits right
		// on the window function. Let it read the time attribute itself,
		// and drop the window function from the plan.
		in := tvf.inputs[0].Columns()
		proj := slices.Clone(c.Proj)
		for i, p := range proj {
			if idx, ok := expr.ColumnIndex(p); ok && idx >= len(in) {
				proj[i] = expr.NewColumnRef(tvf.TimeCol, in[tvf.TimeCol].Name, in[tvf.TimeCol].Type)
			}
		}
		fused = &CalcNode{nodeBase: nodeBase{cols: c.cols, inputs: tvf.inputs}, Filter: c.Filter, Proj: proj}
	} else {
		f := *tvf
		f.Fused = true
		fused = replaceNode(pre, tvf, &f)
	}
	n := &WindowAggNode{nodeBase: nodeBase{cols: agg.cols, inputs: []Node{fused}},
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
	out := make([]window.WindowOutCol, len(agg.GroupKeys))
	var keys []int
	for i, k := range agg.GroupKeys {
		if wn, kind, ok := windowColOf(pre, k); ok && (win == nil || wn == win) {
			if wa, isAgg := wn.(*WindowAggNode); isAgg && !wa.ProcTime && wa.Window.Zone == nil && (kind == window.WinStart || kind == window.WinEnd) {
				win = wn
				out[i] = window.WindowOutCol{Kind: kind}
				if kind == window.WinStart {
					startCol = k
				} else {
					endCol = k
				}
				continue
			}
		}
		out[i] = window.WindowOutCol{Kind: window.WinKey, Key: len(keys)}
		keys = append(keys, k)
	}
	if startCol < 0 || endCol < 0 {
		return nil
	}
	// window_start is carried as a key, so that the output has it.
	startKey := len(keys)
	keys = append(keys, startCol)
	in := pre.Columns()
	return &WindowAggNode{nodeBase: nodeBase{cols: agg.cols, inputs: []Node{pre}},
		Window: window.WindowSpec{Kind: window.WindowAssigned}, TimeCol: endCol,
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
