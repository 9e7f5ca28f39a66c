package planner

import (
	"math"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
)

// optimize applies the rewrites that need a complete tree, once, when a
// plan is made (newPlan). It builds new nodes where it changes something
// and leaves the built tree as it was, so a node shared by two parents
// is rewritten once and no node changes under a parent that has seen it.
//
// Today that is Calc merging and projection push-down. A Calc over a
// Calc becomes one Calc (mergeCalc). A Calc over a table scan (maybe
// with the table's watermark assigner between them) makes the scan read
// only the columns the Calc and the assigner use, and of a ROW column
// only the fields they read (nested projection push-down), so EXPLAIN
// shows them in TableSourceScan(fields=[...]) and no unused column
// travels further. A Calc over a watermark assigner over a Calc (the
// computed columns of a table) narrows that Calc the same way
// (pruneWatermark). A Calc left doing nothing (no filter, every column
// passed on under its name) is removed. A Calc over a regular join makes
// each side carry only the columns the Calc, the join keys and the join
// condition use (pruneJoin), because the join keeps every row of both
// sides in state.
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
			out = mergeCalc(c)
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
			out = pruneBelow(c)
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

// mergeCalc merges c with the Calc below it into one Calc, as Flink's
// CalcMergeRule does: c's expressions are put over the lower Calc's
// input, and the filter is the lower filter, then c's (evaluated in that
// order, see predicate). It does not merge when c reads a column that
// the lower Calc computes by more than a column, a literal or a field
// read more than once: the merged Calc would compute it again for each
// read (and a non-deterministic one would differ between them). It
// returns c's replacement, or c.
func mergeCalc(c *CalcNode) Node {
	lower, ok := c.inputs[0].(*CalcNode)
	if !ok {
		return c
	}
	reads := map[int]int{}
	for _, e := range append([]expr.Expr{c.Filter}, c.Proj...) {
		if e == nil {
			continue
		}
		expr.Walk(e, func(x expr.Expr) bool {
			if idx, ok := expr.ColumnIndex(x); ok {
				reads[idx]++
			}
			return true
		})
	}
	for idx, n := range reads {
		if n > 1 && !expr.IsTrivial(lower.Proj[idx]) {
			return c
		}
	}
	in := lower.inputs[0]
	nc := &CalcNode{nodeBase: nodeBase{cols: c.cols, inputs: lower.inputs}, Filter: lower.Filter}
	if c.Filter != nil {
		nc.Filter = andExpr(lower.Filter, expr.Substitute(c.Filter, lower.Proj))
	}
	for _, p := range c.Proj {
		nc.Proj = append(nc.Proj, expr.Substitute(p, lower.Proj))
	}
	if nc.Filter == nil && isIdentity(nc.Proj, len(in.Columns())) && allNames(nc.cols) == allNames(in.Columns()) {
		return in
	}
	return nc
}

// pruneBelow pushes c's projection down as far as it goes: through a
// watermark assigner into the Calc below it, and into the scan.
func pruneBelow(c *CalcNode) Node {
	out := pruneWatermark(c)
	if nc, ok := out.(*CalcNode); ok {
		out = pruneScan(nc)
	}
	return out
}

// pruneScan narrows the scan under c to the columns c uses, and to the
// fields of a ROW column when c reads only fields of it (and, when the
// table's watermark assigner sits between them, the columns its
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
	u := newFieldUses(len(s.cols))
	u.mark(c.Filter)
	u.mark(c.Proj...)
	if w != nil {
		u.markWhole(w.Expr)
		u[w.Rowtime].whole = true
	}
	if u.allWhole() || u.none() {
		return c
	}
	nu := u.narrowed(s.cols)
	ns := &ScanNode{Table: s.Table, mode: s.mode, nodeBase: nodeBase{cols: nu.cols}}
	nested := false
	for _, o := range nu.from {
		ns.Fields = append(ns.Fields, s.fieldIndex(o.col))
		var p []int
		if s.Paths != nil {
			p = s.Paths[o.col]
		}
		p = append(slices.Clone(p), o.path...)
		if len(p) == 0 {
			p = nil
		}
		nested = nested || p != nil
		ns.Paths = append(ns.Paths, p)
	}
	if !nested {
		ns.Paths = nil
	}
	var in Node = ns
	if w != nil {
		in = &WatermarkNode{nodeBase: nodeBase{cols: ns.cols, inputs: []Node{ns}},
			Rowtime: nu.whole[w.Rowtime], Expr: expr.RemapColumns(w.Expr, nu.whole)}
	}
	nc := &CalcNode{nodeBase: nodeBase{cols: c.cols, inputs: []Node{in}}, Filter: nu.rewrite(c.Filter)}
	for _, p := range c.Proj {
		nc.Proj = append(nc.Proj, nu.rewrite(p))
	}
	if nc.Filter == nil && isIdentity(nc.Proj, len(in.Columns())) && allNames(nc.cols) == allNames(in.Columns()) {
		return in
	}
	return nc
}

// pruneWatermark narrows the Calc under the watermark assigner under c
// (a table's computed columns, or a view's projection, below the
// table's WATERMARK) to the columns, and fields of ROW columns, that c
// and the assigner read, so that the scan below can be narrowed too: a
// Nexmark view reads bid.price and bid.auction of the one table's bid
// ROW. Only projection moves below the assigner, never a filter, since
// the watermark is taken over every row. It returns c's replacement,
// or c.
func pruneWatermark(c *CalcNode) Node {
	w, ok := c.inputs[0].(*WatermarkNode)
	if !ok {
		return c
	}
	lower, ok := w.inputs[0].(*CalcNode)
	if !ok {
		return c
	}
	u := newFieldUses(len(w.cols))
	u.mark(c.Filter)
	u.mark(c.Proj...)
	u.markWhole(w.Expr)
	u[w.Rowtime].whole = true
	if u.allWhole() {
		return c
	}
	nu := u.narrowed(w.cols)
	nl := &CalcNode{nodeBase: nodeBase{cols: nu.cols, inputs: lower.inputs}, Filter: lower.Filter}
	for _, o := range nu.from {
		nl.Proj = append(nl.Proj, expr.AccessPath(lower.Proj[o.col], o.path))
	}
	below := pruneBelow(nl)
	nw := &WatermarkNode{nodeBase: nodeBase{cols: nu.cols, inputs: []Node{below}},
		Rowtime: nu.whole[w.Rowtime], Expr: expr.RemapColumns(w.Expr, nu.whole)}
	nc := &CalcNode{nodeBase: nodeBase{cols: c.cols, inputs: []Node{nw}}, Filter: nu.rewrite(c.Filter)}
	for _, p := range c.Proj {
		nc.Proj = append(nc.Proj, nu.rewrite(p))
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
			sides[side] = pruneBelow(nc)
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
		nin = pruneBelow(nc)
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

// fieldUses records, per input column, how expressions read it: whole,
// or only some fields of it (a ROW column read as r.f, r.f.g).
type fieldUses []fieldUse

type fieldUse struct {
	whole bool
	paths [][]int // the field paths read, when not whole
}

func newFieldUses(n int) fieldUses { return make(fieldUses, n) }

// mark records what es read (nil expressions read nothing).
func (u fieldUses) mark(es ...expr.Expr) {
	for _, e := range es {
		if e == nil {
			continue
		}
		expr.Walk(e, func(x expr.Expr) bool {
			if col, path, ok := expr.FieldPath(x); ok {
				u[col].paths = append(u[col].paths, path)
				return false
			}
			if idx, ok := expr.ColumnIndex(x); ok {
				u[idx].whole = true
			}
			return true
		})
	}
}

// markWhole records the columns es read as read whole.
func (u fieldUses) markWhole(es ...expr.Expr) {
	used := map[int]bool{}
	markColumns(used, math.MaxInt, es...)
	for i := range used {
		u[i].whole = true
	}
}

func (u fieldUses) allWhole() bool {
	for _, c := range u {
		if !c.whole {
			return false
		}
	}
	return true
}

func (u fieldUses) none() bool {
	for _, c := range u {
		if c.whole || len(c.paths) > 0 {
			return false
		}
	}
	return true
}

// narrowedColumns is the narrowed input that fieldUses make: its
// columns, where each comes from, and how to read the old input's
// columns from it.
type narrowedColumns struct {
	cols []expr.Column
	from []fieldOrigin
	// whole maps an old column read whole to its new column.
	whole map[int]int
	// fields maps an old column read only in part to its paths' new
	// columns.
	fields map[int][]fieldOrigin
}

// fieldOrigin is a new column: old column col's field at path (nil: the
// whole column), at index idx of the new columns.
type fieldOrigin struct {
	col  int
	path []int
	idx  int
}

// narrowed lays out the new columns over old ones cols: in column
// order, a column read whole as itself, a column read in part as one
// column per field path read (the shortest, when one path extends
// another), named by the path ("bid.price"), in path order.
func (u fieldUses) narrowed(cols []expr.Column) narrowedColumns {
	nu := narrowedColumns{whole: map[int]int{}, fields: map[int][]fieldOrigin{}}
	for i, c := range u {
		if c.whole {
			nu.whole[i] = len(nu.cols)
			nu.from = append(nu.from, fieldOrigin{col: i, idx: len(nu.cols)})
			nu.cols = append(nu.cols, cols[i])
			continue
		}
		paths := slices.Clone(c.paths)
		slices.SortFunc(paths, slices.Compare[[]int])
		paths = slices.CompactFunc(paths, slices.Equal[[]int])
		var kept [][]int
		for _, p := range paths {
			if n := len(kept); n > 0 && isPrefix(kept[n-1], p) {
				continue // sorted: a prefix comes right before what extends it
			}
			kept = append(kept, p)
		}
		for _, p := range kept {
			t := cols[i].Type
			name := []string{cols[i].Name}
			for _, f := range p {
				name = append(name, t.Fields[f].Name)
				nn := t.NotNull
				t = t.Fields[f].Type
				t.NotNull = t.NotNull && nn
			}
			o := fieldOrigin{col: i, path: p, idx: len(nu.cols)}
			nu.fields[i] = append(nu.fields[i], o)
			nu.from = append(nu.from, o)
			nu.cols = append(nu.cols, expr.Column{Name: strings.Join(name, "."), Type: t})
		}
	}
	return nu
}

func isPrefix(p, q []int) bool { return len(p) <= len(q) && slices.Equal(p, q[:len(p)]) }

// rewrite returns e over the narrowed columns.
func (nu narrowedColumns) rewrite(e expr.Expr) expr.Expr {
	return expr.Rewrite(e, func(x expr.Expr) (expr.Expr, bool) {
		if col, path, ok := expr.FieldPath(x); ok {
			if n, ok := nu.whole[col]; ok {
				return expr.AccessPath(nu.ref(n), path), true
			}
			for _, o := range nu.fields[col] {
				if isPrefix(o.path, path) {
					return expr.AccessPath(nu.ref(o.idx), path[len(o.path):]), true
				}
			}
			panic("planner: a field read that was not recorded") // mark saw every read
		}
		if idx, ok := expr.ColumnIndex(x); ok {
			return nu.ref(nu.whole[idx]), true
		}
		return nil, false
	})
}

func (nu narrowedColumns) ref(i int) expr.Expr {
	return expr.NewColumnRef(i, nu.cols[i].Name, nu.cols[i].Type)
}
