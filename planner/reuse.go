package planner

import (
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/expr"
)

// Source reuse: a table read in several places of one plan (a self-join,
// the Nexmark views over one generator) or by several plans of a
// statement set is read by one scan, as Flink's planner reuses a source
// (table.optimizer.reuse-source-enabled, its ScanReuser): the scan reads
// the union of the columns, and fields of ROW columns, that the readers
// read, and each reader gets a projection back to what it read.
//
// What sits right above a scan and belongs to the table — the Calc of
// its computed columns, its ChangelogNormalize, its watermark assigner —
// is shared too when every reader has the same chain of them: the
// shared Calc computes the union of the readers' expressions (each
// once), so the table's rows are made, and its watermarks taken, once.

// sourceChain reports whether n is the top of a table's source chain: a
// scan, then optionally a Calc without a filter right above it (the
// table's computed columns, narrowed by projection push-down), a
// ChangelogNormalize and a watermark assigner. It returns the scan and
// the nodes above it, bottom up.
func sourceChain(n Node) (*ScanNode, []Node, bool) {
	var levels []Node
	for {
		switch x := n.(type) {
		case *ScanNode:
			slices.Reverse(levels)
			return x, levels, true
		case *NormalizeNode, *WatermarkNode:
			levels = append(levels, n)
			n = x.Inputs()[0]
		case *CalcNode:
			if _, overScan := x.inputs[0].(*ScanNode); !overScan || x.Filter != nil || x.usesCurrentWatermark() {
				return nil, nil, false
			}
			levels = append(levels, n)
			n = x.inputs[0]
		default:
			return nil, nil, false
		}
	}
}

// chain is one reader's source chain.
type chain struct {
	top    Node
	scan   *ScanNode
	levels []Node
}

// shareSources rewrites the plans under roots so that each table read by
// more than one source chain is read by one. The nodes given are not
// changed; the roots returned stand for them, in order.
func shareSources(roots []Node) []Node {
	var order []*TableEntry
	chains := map[*TableEntry][]chain{}
	seen := map[Node]bool{}
	var collect func(n Node)
	collect = func(n Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		if s, levels, ok := sourceChain(n); ok {
			if chains[s.Table] == nil {
				order = append(order, s.Table)
			}
			chains[s.Table] = append(chains[s.Table], chain{top: n, scan: s, levels: levels})
			return
		}
		for _, in := range n.Inputs() {
			collect(in)
		}
	}
	for _, r := range roots {
		collect(r)
	}
	replace := map[Node]Node{}
	shared := map[Node]bool{} // the shared scans and chain tops
	for _, t := range order {
		if cs := chains[t]; len(cs) > 1 {
			shareChains(cs, replace, shared)
		}
	}
	if len(replace) == 0 {
		return roots
	}
	done := map[Node]Node{}
	var rewrite func(n Node) Node
	rewrite = func(n Node) Node {
		if r, ok := done[n]; ok {
			return r
		}
		out, ok := replace[n]
		if !ok {
			ins := n.Inputs()
			newIns := make([]Node, len(ins))
			changed := false
			for i, in := range ins {
				newIns[i] = rewrite(in)
				changed = changed || newIns[i] != in
			}
			out = n
			if changed {
				out = n.withInputs(newIns)
			}
			if c, ok := out.(*CalcNode); ok && changed && !shared[c.inputs[0]] {
				// A reader's Calc over its projection of the shared node
				// reads the shared node itself: one Calc, not two. (It is
				// never merged into the shared node itself, which would
				// compute the shared Calc again for this reader.)
				out = mergeCalc(c)
			}
		}
		done[n] = out
		return out
	}
	out := make([]Node, len(roots))
	for i, r := range roots {
		out[i] = rewrite(r)
	}
	return out
}

// shareChains records in replace, for each of the chains of one table,
// the node that stands for its top over the shared scan: the shared
// chain itself or a projection of it; and in shared the nodes that
// several readers read.
func shareChains(cs []chain, replace map[Node]Node, shared map[Node]bool) {
	table := cs[0].scan.Table
	full := readScope(table.Conn, "")
	u := newFieldUses(len(full))
	for _, c := range cs {
		for i := range c.scan.cols {
			u.mark(scanColumn(c.scan, i, full))
		}
	}
	nu := u.narrowed(full)
	scan := &ScanNode{Table: table, mode: cs[0].scan.mode, nodeBase: nodeBase{cols: nu.cols}}
	if !u.allWhole() {
		nested := false
		for _, o := range nu.from {
			scan.Fields = append(scan.Fields, o.col)
			scan.Paths = append(scan.Paths, o.path)
			nested = nested || o.path != nil
		}
		if !nested {
			scan.Paths = nil
		}
	}
	// subs[k][i] reads chain k's column i (at the level being built) from
	// the shared node.
	subs := make([][]expr.Expr, len(cs))
	for k, c := range cs {
		for i := range c.scan.cols {
			subs[k] = append(subs[k], nu.rewrite(scanColumn(c.scan, i, full)))
		}
	}
	if top, ok := shareLevels(cs, scan, subs); ok {
		shared[top] = true
		for k, c := range cs {
			replace[c.top] = projectOnto(top, subs[k], c.top.Columns())
		}
		return
	}
	// The chains differ above the scan: share the scan only, each chain
	// over its projection of it. A watermark assigner right above a scan
	// stays there (its source may generate the watermarks, per split).
	for _, c := range cs {
		if len(c.levels) > 0 {
			if _, ok := c.levels[0].(*WatermarkNode); ok {
				return
			}
		}
	}
	shared[scan] = true
	for k, c := range cs {
		var n Node = projectOnto(scan, subs[k], c.scan.Columns())
		for _, l := range c.levels {
			n = l.withInputs([]Node{n})
			if calc, ok := n.(*CalcNode); ok {
				n = mergeCalc(calc)
			}
		}
		replace[c.top] = n
	}
}

// scanColumn is column i of scan s as an expression over the table's
// columns full: the column, or the field of a ROW column it reads.
func scanColumn(s *ScanNode, i int, full []expr.Column) expr.Expr {
	f := s.fieldIndex(i)
	e := expr.NewColumnRef(f, full[f].Name, full[f].Type)
	if s.Paths != nil && s.Paths[i] != nil {
		e = expr.AccessPath(e, s.Paths[i])
	}
	return e
}

// shareLevels builds the chains' common levels over the shared scan and
// returns the top one, updating subs to read each chain's columns from
// it. It fails when the chains' levels differ in kind, or their
// ChangelogNormalize keys or watermarks differ.
func shareLevels(cs []chain, scan *ScanNode, subs [][]expr.Expr) (Node, bool) {
	for _, c := range cs[1:] {
		if len(c.levels) != len(cs[0].levels) {
			return nil, false
		}
		for j, l := range c.levels {
			if fmt.Sprintf("%T", l) != fmt.Sprintf("%T", cs[0].levels[j]) {
				return nil, false
			}
		}
	}
	var cur Node = scan
	for j := range cs[0].levels {
		switch cs[0].levels[j].(type) {
		case *CalcNode:
			nc := &CalcNode{nodeBase: nodeBase{inputs: []Node{cur}}}
			index := map[string]int{}
			for k, c := range cs {
				calc := c.levels[j].(*CalcNode)
				next := make([]expr.Expr, len(calc.Proj))
				for i, e := range calc.Proj {
					e = expr.Substitute(e, subs[k])
					key := exprKey(e)
					at, ok := index[key]
					if !ok {
						at = len(nc.Proj)
						index[key] = at
						nc.Proj = append(nc.Proj, e)
						nc.cols = append(nc.cols, expr.Column{Name: uniqueName(nc.cols, calc.cols[i].Name), Type: e.Type()})
					}
					next[i] = expr.NewColumnRef(at, nc.cols[at].Name, nc.cols[at].Type)
				}
				subs[k] = next
			}
			cur = nc
		case *NormalizeNode:
			var keys []int
			for k, c := range cs {
				var ks []int
				for _, key := range c.levels[j].(*NormalizeNode).Keys {
					idx, ok := expr.ColumnIndex(subs[k][key])
					if !ok {
						return nil, false
					}
					ks = append(ks, idx)
				}
				if k > 0 && !slices.Equal(ks, keys) {
					return nil, false
				}
				keys = ks
			}
			cur = &NormalizeNode{nodeBase: nodeBase{cols: cur.Columns(), inputs: []Node{cur}}, Keys: keys}
		case *WatermarkNode:
			var wm *WatermarkNode
			for k, c := range cs {
				w := c.levels[j].(*WatermarkNode)
				rt, ok := expr.ColumnIndex(subs[k][w.Rowtime])
				if !ok {
					return nil, false
				}
				e := expr.Substitute(w.Expr, subs[k])
				if wm != nil && (rt != wm.Rowtime || exprKey(e) != exprKey(wm.Expr)) {
					return nil, false
				}
				if wm == nil {
					wm = &WatermarkNode{nodeBase: nodeBase{cols: cur.Columns(), inputs: []Node{cur}}, Rowtime: rt, Expr: e}
				}
			}
			cur = wm
		}
	}
	return cur, true
}

// projectOnto is n's projection to cols, read as sub reads them; n itself
// when that is all of n.
func projectOnto(n Node, sub []expr.Expr, cols []expr.Column) Node {
	if isIdentity(sub, len(n.Columns())) && allNames(cols) == allNames(n.Columns()) {
		return n
	}
	return &CalcNode{nodeBase: nodeBase{cols: cols, inputs: []Node{n}}, Proj: slices.Clone(sub)}
}

// exprKey identifies an expression by what it computes: its rendering
// with every column reference by position, and its type.
func exprKey(e expr.Expr) string {
	e = expr.Rewrite(e, func(x expr.Expr) (expr.Expr, bool) {
		if idx, ok := expr.ColumnIndex(x); ok {
			return expr.NewColumnRef(idx, fmt.Sprintf("$%d", idx), x.Type()), true
		}
		return nil, false
	})
	return e.String() + " " + e.Type().String()
}

// uniqueName is name, or name with a suffix when cols has it already
// (two readers naming different expressions alike).
func uniqueName(cols []expr.Column, name string) string {
	taken := func(n string) bool {
		return slices.ContainsFunc(cols, func(c expr.Column) bool { return c.Name == n })
	}
	if !taken(name) {
		return name
	}
	for i := 0; ; i++ {
		if n := fmt.Sprintf("%s$%d", name, i); !taken(n) {
			return n
		}
	}
}
