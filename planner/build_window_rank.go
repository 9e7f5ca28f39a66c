package planner

import (
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
)

// Window Top-N and window deduplication:
//
//	SELECT * FROM (
//	  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end[, k]
//	                               ORDER BY price DESC) AS rn
//	  FROM <window TVF or window aggregation>)
//	WHERE rn <= 3
//
// A ROW_NUMBER rank whose PARTITION BY holds the window_start and
// window_end of one window (a window table function, or the output of a
// window aggregation) over an insert-only input is a window rank: each
// window's ranks are final once the window fires, so it emits them then,
// insert-only, and keeps nothing of the window afterwards. The RankNode
// stays in the plan; windowRankOf recognises it, so that EXPLAIN shows
// WindowRank and the translator builds operators.WindowRank.

// windowRankOf reports whether rk is a window rank and which input
// column holds window_end.
func windowRankOf(rk *RankNode) (endCol int, ok bool) {
	if rk.Limit < 1 || !rk.inputs[0].Mode().IsInsertOnly() {
		return 0, false
	}
	var win Node
	start, end := false, false
	for _, k := range rk.PartitionKeys {
		wn, kind, ok := windowColOf(rk.inputs[0], k)
		if !ok || (win != nil && wn != win) {
			continue
		}
		win = wn
		switch kind {
		case operators.WinStart:
			start = true
		case operators.WinEnd:
			end, endCol = true, k
		}
	}
	return endCol, start && end
}

// windowRankFolded runs when the rank's range is closed by the enclosing
// WHERE: a window rank becomes insert-only, and so do the projections
// between it and top.
func (b *builder) windowRankFolded(top Node, rk *RankNode) {
	if _, ok := windowRankOf(rk); !ok {
		return
	}
	rk.mode = dyntable.InsertOnly
	rk.key = nil
	var fix func(n Node)
	fix = func(n Node) {
		if c, ok := n.(*CalcNode); ok {
			fix(c.inputs[0])
			c.mode = c.inputs[0].Mode()
		}
	}
	fix(top)
}

// windowRankName is the EXPLAIN name of a window rank, "" for any
// other rank.
func windowRankName(n *RankNode) string {
	if _, ok := windowRankOf(n); !ok {
		return ""
	}
	if n.Offset == 0 && n.Limit == 1 {
		return "WindowDeduplicate"
	}
	return "WindowRank"
}

// windowRank translates a window rank; ok is false for other ranks.
func (t *translator) windowRank(n *RankNode, ins []*dataflow.Node) (d *dataflow.Node, ok bool, err error) {
	endCol, ok := windowRankOf(n)
	if !ok {
		return nil, false, nil
	}
	e, p := t.keyed(ins[0], n.PartitionKeys)
	spec := operators.WindowRankSpec{PartitionKeys: n.PartitionKeys, EndCol: endCol, OrderBy: n.OrderBy,
		Offset: n.Offset, Limit: n.Limit, OutputRank: n.OutputRank}
	if _, err := operators.NewWindowRank(spec); err != nil {
		return nil, true, err
	}
	return &dataflow.Node{Name: "WindowRank", Stateful: true, Parallelism: p, Inputs: []dataflow.Edge{e},
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewWindowRank(spec) }}, true, nil
}
