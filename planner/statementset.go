package planner

import (
	"slices"
	"strings"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/expr"
)

// SetPlan is a statement set (EXECUTE STATEMENT SET, BEGIN STATEMENT SET
// ... END): several INSERT plans that run as one job. Every table the
// plans read is read by one scan, which feeds all of them, as Flink
// reuses a source shared by the statements of a set.
type SetPlan struct {
	Plans []*Plan
}

// PlanSet makes the plans share their sources. Per table, one scan
// reads the union of the columns the plans read (projection push-down
// may have narrowed each plan's scan differently); above it the table's
// ChangelogNormalize and watermark assigner are shared too, and each
// plan gets a projection back to the columns it read. The plans given
// are not changed.
func PlanSet(plans []*Plan) *SetPlan {
	// The union of the columns each table is read with; nil: all.
	union := map[*TableEntry][]int{}
	all := map[*TableEntry]bool{}
	seen := map[Node]bool{}
	var collect func(n Node)
	collect = func(n Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		if s, ok := n.(*ScanNode); ok {
			if s.Fields == nil {
				all[s.Table] = true
			}
			for i := range s.cols {
				if f := s.fieldIndex(i); !slices.Contains(union[s.Table], f) {
					union[s.Table] = append(union[s.Table], f)
				}
			}
		}
		for _, in := range n.Inputs() {
			collect(in)
		}
	}
	for _, p := range plans {
		collect(p.Root)
	}
	sh := &sharer{scans: map[*TableEntry]*ScanNode{}, above: map[Node]Node{}, done: map[Node]Node{}, projections: map[Node]map[int]int{}}
	for t, fields := range union {
		slices.Sort(fields)
		s := &ScanNode{Table: t}
		if !all[t] && len(fields) < len(readScope(t.Conn, "")) {
			s.Fields = fields
		}
		sh.scans[t] = s
	}
	out := &SetPlan{}
	for _, p := range plans {
		out.Plans = append(out.Plans, &Plan{Root: sh.rewrite(p.Root).(*SinkNode), Columns: p.Columns})
	}
	return out
}

// sharer rewrites plans onto the shared scans.
type sharer struct {
	scans map[*TableEntry]*ScanNode // the shared scan of each table; its cols and mode are set on first use
	above map[Node]Node             // the shared node over a shared node: its Normalize or watermark assigner
	done  map[Node]Node
	// projections are the Calcs made to project a shared node back to the
	// columns a plan read, each with its column mapping.
	projections map[Node]map[int]int
}

// sourceChain returns the scan at the bottom of n when n is a scan, a
// ChangelogNormalize over one, or a watermark assigner over either.
func sourceChain(n Node) (*ScanNode, bool) {
	for {
		switch x := n.(type) {
		case *ScanNode:
			return x, true
		case *NormalizeNode, *WatermarkNode:
			n = x.Inputs()[0]
		default:
			return nil, false
		}
	}
}

func (sh *sharer) rewrite(n Node) Node {
	if r, ok := sh.done[n]; ok {
		return r
	}
	var out Node
	if s, ok := sourceChain(n); ok {
		shared, pos := sh.shared(n, s)
		out = shared
		proj := make([]expr.Expr, len(s.cols))
		for i, c := range s.cols {
			proj[i] = expr.NewColumnRef(pos[i], c.Name, c.Type)
			if s.Paths != nil && s.Paths[i] != nil {
				// A field of a ROW column: the shared scan reads the column.
				top := shared.Columns()[pos[i]]
				proj[i] = expr.AccessPath(expr.NewColumnRef(pos[i], top.Name, top.Type), s.Paths[i])
			}
		}
		if !isIdentity(proj, len(shared.Columns())) {
			out = &CalcNode{nodeBase: nodeBase{cols: n.Columns(), inputs: []Node{shared}}, Proj: proj}
			if !s.nested() {
				remap := map[int]int{}
				for i, p := range pos {
					remap[i] = p
				}
				sh.projections[out] = remap
			}
		}
	} else {
		ins := n.Inputs()
		newIns := make([]Node, len(ins))
		changed := false
		for i, in := range ins {
			newIns[i] = sh.rewrite(in)
			changed = changed || newIns[i] != in
		}
		out = n
		if c, ok := n.(*CalcNode); ok && sh.projections[newIns[0]] != nil {
			// A Calc over a projection of the shared node reads the shared
			// node itself: one Calc, not two.
			remap := sh.projections[newIns[0]]
			nc := &CalcNode{nodeBase: nodeBase{cols: c.cols, inputs: newIns[0].Inputs()}}
			for _, p := range c.Proj {
				nc.Proj = append(nc.Proj, expr.RemapColumns(p, remap))
			}
			if c.Filter != nil {
				nc.Filter = expr.RemapColumns(c.Filter, remap)
			}
			out = nc
		} else if changed {
			out = n.withInputs(newIns)
		}
	}
	sh.done[n] = out
	return out
}

// shared returns the shared node standing for the source chain n over
// scan s, and for each column of s its position in the shared node.
func (sh *sharer) shared(n Node, s *ScanNode) (Node, []int) {
	scan := sh.scans[s.Table]
	if scan.cols == nil {
		scan.mode = s.mode
		for i, c := range readScope(s.Table.Conn, "") {
			if scan.Fields == nil || slices.Contains(scan.Fields, i) {
				scan.cols = append(scan.cols, c)
			}
		}
	}
	pos := make([]int, len(s.cols))
	remap := map[int]int{}
	for i := range s.cols {
		pos[i] = s.fieldIndex(i)
		if scan.Fields != nil {
			pos[i] = slices.Index(scan.Fields, pos[i])
		}
		remap[i] = pos[i]
	}
	var build func(n Node) Node
	build = func(n Node) Node {
		switch x := n.(type) {
		case *ScanNode:
			return scan
		case *NormalizeNode:
			below := build(x.inputs[0])
			if a, ok := sh.above[below]; ok {
				return a
			}
			keys := make([]int, len(x.Keys))
			for i, k := range x.Keys {
				keys[i] = remap[k]
			}
			a := &NormalizeNode{nodeBase: nodeBase{cols: below.Columns(), inputs: []Node{below}}, Keys: keys}
			sh.above[below] = a
			return a
		case *WatermarkNode:
			below := build(x.inputs[0])
			if a, ok := sh.above[below]; ok {
				return a
			}
			a := &WatermarkNode{nodeBase: nodeBase{cols: below.Columns(), inputs: []Node{below}},
				Rowtime: remap[x.Rowtime], Expr: expr.RemapColumns(x.Expr, remap)}
			sh.above[below] = a
			return a
		}
		panic("planner: not a source chain") // sourceChain checked n
	}
	return build(n), pos
}

// Explain renders the plans one after the other (without blank lines
// between them, so a golden file can hold them), the shared nodes once, as Flink does:
// marked (reuse_id=[n]) the first time and Reused(reference_id=[n]) after.
func (sp *SetPlan) Explain() string {
	parents := map[Node]int{}
	seen := map[Node]bool{}
	var count func(n Node)
	count = func(n Node) {
		for _, in := range n.Inputs() {
			parents[in]++
			if !seen[in] {
				seen[in] = true
				count(in)
			}
		}
	}
	for _, p := range sp.Plans {
		count(p.Root)
	}
	reuse := map[Node]int{}
	var number func(n Node)
	number = func(n Node) { // in the order they are written
		if _, ok := reuse[n]; !ok && parents[n] > 1 {
			reuse[n] = len(reuse) + 1
		}
		for _, in := range n.Inputs() {
			number(in)
		}
	}
	for _, p := range sp.Plans {
		number(p.Root)
	}
	var b strings.Builder
	printed := map[Node]bool{}
	for _, p := range sp.Plans {
		explainNode(&b, p.Root, "", "", reuse, printed)
	}
	return b.String()
}

// BuildSetGraph translates a statement set into one dataflow graph, each
// shared node once.
func (p *Planner) BuildSetGraph(name string, sp *SetPlan) (*dataflow.Graph, error) {
	t := p.newTranslator(name, nil)
	for _, pl := range sp.Plans {
		if _, err := t.node(pl.Root); err != nil {
			return nil, err
		}
	}
	return t.g, nil
}
