package planner

import "github.com/streamsql/streamsql/expr"

// optimize applies the rewrites that need a complete tree. Today that is
// projection push-down: a Calc right above a table scan makes the scan
// read only the columns the Calc uses, so EXPLAIN shows them in
// TableSourceScan(fields=[...]) and no unused column travels further.
func optimize(n Node) Node {
	ins := n.Inputs()
	for i, in := range ins {
		ins[i] = optimize(in)
	}
	if c, ok := n.(*CalcNode); ok {
		switch in := c.inputs[0].(type) {
		case *ScanNode:
			pruneScan(c, in, nil)
		case *WatermarkNode:
			if s, ok := in.inputs[0].(*ScanNode); ok {
				pruneScan(c, s, in)
			}
		}
	}
	return n
}

// pruneScan narrows s to the columns c uses (and, when a watermark
// assigner w sits between them, the columns its expression uses).
func pruneScan(c *CalcNode, s *ScanNode, w *WatermarkNode) {
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
		return
	}
	remap := map[int]int{}
	var fields []int
	var cols []expr.Column
	for i, col := range s.cols {
		if used[i] {
			remap[i] = len(fields)
			fields = append(fields, s.fieldIndex(i))
			cols = append(cols, col)
		}
	}
	for i, p := range c.Proj {
		c.Proj[i] = expr.RemapColumns(p, remap)
	}
	if c.Filter != nil {
		c.Filter = expr.RemapColumns(c.Filter, remap)
	}
	s.Fields = fields
	s.cols = cols
	if w != nil {
		w.Expr = expr.RemapColumns(w.Expr, remap)
		w.Rowtime = remap[w.Rowtime]
		w.cols = cols
	}
	var key []int
	for _, k := range s.key {
		nk, ok := remap[k]
		if !ok {
			key = nil
			break
		}
		key = append(key, nk)
	}
	s.key = key
	if w != nil {
		w.key = key
	}
}
