package planner

import (
	"slices"

	"github.com/streamsql/streamsql/expr"
)

// optimize applies the rewrites that need a complete tree, once, when a
// plan is made (newPlan). It builds new nodes where it changes something
// and leaves the built tree as it was, so a node shared by two parents
// is rewritten once and no node changes under a parent that has seen it.
//
// Today that is projection push-down: a Calc over a table scan (maybe
// with the table's watermark assigner between them) makes the scan read
// only the columns the Calc and the assigner use, so EXPLAIN shows them
// in TableSourceScan(fields=[...]) and no unused column travels further.
// A Calc left doing nothing (no filter, every column passed on under its
// name) is removed.
func optimize(root Node) Node {
	done := map[Node]Node{}
	var walk func(n Node) Node
	walk = func(n Node) Node {
		if r, ok := done[n]; ok {
			return r
		}
		out := n
		ins := n.Inputs()
		newIns := make([]Node, len(ins))
		for i, in := range ins {
			newIns[i] = walk(in)
			if newIns[i] != in {
				out = nil
			}
		}
		if out == nil {
			out = n.withInputs(newIns)
		}
		if c, ok := out.(*CalcNode); ok {
			out = pruneRankNumber(c)
		}
		if c, ok := out.(*CalcNode); ok {
			out = pruneScan(c)
		}
		done[n] = out
		return out
	}
	return walk(root)
}

// pruneRankNumber drops the rank number of a Top-N whose consumer, c,
// does not use it: the Rank then emits Flink's changelog without row
// number, rows leaving (-D) and entering (+I) the top N, instead of
// updates per rank position. With an offset (rn > 1 AND rn <= 3) Flink
// keeps the per-position updates, without the number: the number stays
// and c drops it. It returns c's replacement, or c.
func pruneRankNumber(c *CalcNode) Node {
	rk, ok := c.inputs[0].(*RankNode)
	if !ok || !rk.OutputRank || rk.Offset > 0 {
		return c
	}
	rn := len(rk.cols) - 1
	used := false
	visit := func(e expr.Expr) {
		expr.Walk(e, func(x expr.Expr) bool {
			if idx, ok := expr.ColumnIndex(x); ok && idx == rn {
				used = true
			}
			return !used
		})
	}
	if c.Filter != nil {
		visit(c.Filter)
	}
	for _, p := range c.Proj {
		visit(p)
	}
	if used {
		return c
	}
	nr := *rk
	nr.OutputRank = false
	nr.cols = rk.cols[:rn:rn]
	return c.withInputs([]Node{&nr})
}

// pruneScan narrows the scan under c to the columns c uses (and, when
// the table's watermark assigner sits between them, the columns its
// expression uses), and returns c's replacement: c itself when there is
// nothing to narrow, the new Calc, or the narrowed input when the Calc
// does nothing any more.
func pruneScan(c *CalcNode) Node {
	w, _ := c.inputs[0].(*WatermarkNode)
	var s *ScanNode
	if w != nil {
		s, _ = w.inputs[0].(*ScanNode)
	} else {
		s, _ = c.inputs[0].(*ScanNode)
	}
	if s == nil {
		return c
	}
	used := map[int]bool{}
	mark := func(e expr.Expr) {
		expr.Walk(e, func(x expr.Expr) bool {
			if idx, ok := expr.ColumnIndex(x); ok {
				used[idx] = true
			}
			return true
		})
	}
	for _, p := range c.Proj {
		mark(p)
	}
	if c.Filter != nil {
		mark(c.Filter)
	}
	if w != nil {
		mark(w.Expr)
		used[w.Rowtime] = true
	}
	if len(used) == len(s.cols) || len(used) == 0 {
		return c
	}
	remap := map[int]int{}
	ns := &ScanNode{Table: s.Table, mode: s.mode}
	for i, col := range s.cols {
		if used[i] {
			remap[i] = len(ns.Fields)
			ns.Fields = append(ns.Fields, s.fieldIndex(i))
			ns.cols = append(ns.cols, col)
		}
	}
	var in Node = ns
	if w != nil {
		in = &WatermarkNode{nodeBase: nodeBase{cols: ns.cols, inputs: []Node{ns}},
			Rowtime: remap[w.Rowtime], Expr: expr.RemapColumns(w.Expr, remap)}
	}
	nc := &CalcNode{nodeBase: nodeBase{cols: c.cols, inputs: []Node{in}}}
	for _, p := range c.Proj {
		nc.Proj = append(nc.Proj, expr.RemapColumns(p, remap))
	}
	if c.Filter != nil {
		nc.Filter = expr.RemapColumns(c.Filter, remap)
	}
	if nc.Filter == nil && isIdentity(nc.Proj, len(in.Columns())) && allNames(nc.cols) == allNames(in.Columns()) {
		return in
	}
	return nc
}

// replaceNode returns n with old, somewhere below it, replaced by new;
// the nodes on the way are copied.
func replaceNode(n, old, new Node) Node {
	if n == old {
		return new
	}
	ins := slices.Clone(n.Inputs())
	changed := false
	for i, in := range ins {
		ins[i] = replaceNode(in, old, new)
		changed = changed || ins[i] != in
	}
	if !changed {
		return n
	}
	return n.withInputs(ins)
}
