package planner

import (
	"math"
	"slices"

	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
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
// name) is removed. A Calc over a regular join makes each side carry
// only the columns the Calc, the join keys and the join condition use
// (pruneJoin), because the join keeps every row of both sides in state.
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
			out = pruneRank(c)
		}
		if c, ok := out.(*CalcNode); ok {
			out = pruneJoin(c)
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
	markColumns(used, math.MaxInt, c.Proj...)
	markColumns(used, math.MaxInt, c.Filter)
	if w != nil {
		markColumns(used, math.MaxInt, w.Expr)
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

// pruneJoin narrows the inputs of the regular join under c to the
// columns c, the join keys and the residual condition use, as Flink's
// projection push-down into a join does: the join keeps every row of
// both sides in state, so a column nobody reads costs memory (Nexmark
// q4 stores whole bids, channel, url and extra included, to read the
// price). A side that is a Calc keeps only the projections used; any
// other side gets a Calc of the used columns. It returns c's
// replacement, or c when every column is used.
func pruneJoin(c *CalcNode) Node {
	j, ok := c.inputs[0].(*JoinNode)
	if !ok {
		return c
	}
	used := map[int]bool{}
	markColumns(used, math.MaxInt, c.Proj...)
	markColumns(used, math.MaxInt, c.Filter, j.Cond)
	lw := len(j.inputs[0].Columns())
	for i := range j.LeftKeys {
		used[j.LeftKeys[i]] = true
		used[lw+j.RightKeys[i]] = true
	}
	if len(used) == len(j.cols) {
		return c
	}
	remap := map[int]int{} // join column -> narrowed join column
	var sides [2]Node
	next := 0
	for side, off := range [2]int{0, lw} {
		in := j.inputs[side]
		var keep []int
		for i := range in.Columns() {
			if used[off+i] {
				keep = append(keep, i)
			}
		}
		if len(keep) == 0 {
			keep = []int{0} // a row of no columns would not say how many rows there are
		}
		for _, i := range keep {
			remap[off+i] = next
			next++
		}
		sides[side] = narrow(in, keep)
		if nc, ok := sides[side].(*CalcNode); ok {
			sides[side] = pruneScan(nc)
		}
	}
	nj := *j
	nj.inputs = sides[:]
	nj.cols = make([]expr.Column, next)
	for old, nw := range remap {
		nj.cols[nw] = j.cols[old]
	}
	nlw := len(sides[0].Columns())
	nj.LeftKeys, nj.RightKeys = make([]int, len(j.LeftKeys)), make([]int, len(j.RightKeys))
	for i := range j.LeftKeys {
		nj.LeftKeys[i] = remap[j.LeftKeys[i]]
		nj.RightKeys[i] = remap[lw+j.RightKeys[i]] - nlw
	}
	if j.Cond != nil {
		nj.Cond = expr.RemapColumns(j.Cond, remap)
	}
	nc := &CalcNode{nodeBase: nodeBase{cols: c.cols, inputs: []Node{&nj}}}
	for _, p := range c.Proj {
		nc.Proj = append(nc.Proj, expr.RemapColumns(p, remap))
	}
	if c.Filter != nil {
		nc.Filter = expr.RemapColumns(c.Filter, remap)
	}
	if nc.Filter == nil && isIdentity(nc.Proj, next) && allNames(nc.cols) == allNames(nj.cols) {
		return &nj
	}
	return nc
}

// pruneRank narrows the input of the Top-N or deduplication under c
// (not a window one) to the columns c, the partition keys and the sort
// keys use, so that a join below it can then be narrowed too (Nexmark
// q9 ranks joined rows whose bid channel and url nobody reads). It
// returns c's replacement, or c.
func pruneRank(c *CalcNode) Node {
	rk, ok := c.inputs[0].(*RankNode)
	if !ok {
		return c
	}
	if _, window := rk.windowEnd(); window {
		return c
	}
	in := rk.inputs[0]
	width := len(in.Columns())
	used := map[int]bool{}
	markColumns(used, width, c.Proj...)
	markColumns(used, width, c.Filter)
	for _, k := range rk.PartitionKeys {
		used[k] = true
	}
	for _, k := range rk.OrderBy {
		used[k.Col] = true
	}
	if len(used) == width || len(used) == 0 {
		return c
	}
	var keep []int
	remap := map[int]int{}
	for i := range width {
		if used[i] {
			remap[i] = len(keep)
			keep = append(keep, i)
		}
	}
	if rk.OutputRank {
		remap[width] = len(keep)
	}
	nin := narrow(in, keep)
	if nc, ok := nin.(*CalcNode); ok {
		nin = pruneJoin(nc)
	}
	if nc, ok := nin.(*CalcNode); ok {
		nin = pruneScan(nc)
	}
	nr := *rk
	nr.inputs = []Node{nin}
	nr.cols = nil
	for _, i := range keep {
		nr.cols = append(nr.cols, rk.cols[i])
	}
	if rk.OutputRank {
		nr.cols = append(nr.cols, rk.cols[width])
	}
	nr.PartitionKeys = make([]int, len(rk.PartitionKeys))
	for i, k := range rk.PartitionKeys {
		nr.PartitionKeys[i] = remap[k]
	}
	nr.OrderBy = make([]operators.SortKey, len(rk.OrderBy))
	for i, k := range rk.OrderBy {
		nr.OrderBy[i] = operators.SortKey{Col: remap[k.Col], Desc: k.Desc}
	}
	nc := &CalcNode{nodeBase: nodeBase{cols: c.cols, inputs: []Node{&nr}}}
	for _, p := range c.Proj {
		nc.Proj = append(nc.Proj, expr.RemapColumns(p, remap))
	}
	if c.Filter != nil {
		nc.Filter = expr.RemapColumns(c.Filter, remap)
	}
	return nc
}

// narrow returns in reduced to its columns keep (ascending), in as it is
// when keep is all of them.
func narrow(in Node, keep []int) Node {
	cols := in.Columns()
	if len(keep) == len(cols) {
		return in
	}
	nc := &CalcNode{}
	for _, i := range keep {
		nc.cols = append(nc.cols, cols[i])
	}
	if lower, ok := in.(*CalcNode); ok {
		nc.inputs, nc.Filter = lower.inputs, lower.Filter
		for _, i := range keep {
			nc.Proj = append(nc.Proj, lower.Proj[i])
		}
		return nc
	}
	nc.inputs = []Node{in}
	for _, i := range keep {
		nc.Proj = append(nc.Proj, expr.NewColumnRef(i, cols[i].Name, cols[i].Type))
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

// markColumns sets in used the input columns below limit that es read
// (nil expressions read none): what the prune rules keep.
func markColumns(used map[int]bool, limit int, es ...expr.Expr) {
	for _, e := range es {
		if e == nil {
			continue
		}
		expr.Walk(e, func(x expr.Expr) bool {
			if idx, ok := expr.ColumnIndex(x); ok && idx < limit {
				used[idx] = true
			}
			return true
		})
	}
}
