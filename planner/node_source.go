package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/types"
)

// ScanNode reads a catalog table through its connector.
type ScanNode struct {
	nodeBase
	Table *TableEntry
	// Fields are the table columns the scan reads, in output order; nil
	// means all of them (see pruneScan).
	Fields []int
	// Paths, when set, are per output column the field path read within
	// its table column Fields[i]: nil for the whole column, [f] for field
	// f of a ROW column, [f, g] for field g of that ROW's field f (nested
	// projection push-down). nil when every column is read whole.
	Paths [][]int
	mode  dyntable.ChangelogMode // the connector's
}

func newScan(t *TableEntry, mode dyntable.ChangelogMode) *ScanNode {
	return &ScanNode{nodeBase: nodeBase{cols: readScope(t.Conn, "")}, Table: t, mode: mode}
}

func (n *ScanNode) Mode() dyntable.ChangelogMode { return n.mode }

// UpsertKey is the table's primary key, unless the scan leaves out one
// of its columns.
func (n *ScanNode) UpsertKey() []int {
	pk := n.Table.Conn.PrimaryKey
	if n.Fields == nil || pk == nil {
		return pk
	}
	var key []int
	for _, k := range pk {
		i := n.wholeColumn(k)
		if i < 0 {
			return nil
		}
		key = append(key, i)
	}
	return key
}

// wholeColumn is the output column that reads table column k whole, or
// -1.
func (n *ScanNode) wholeColumn(k int) int {
	for i, f := range n.Fields {
		if f == k && (n.Paths == nil || n.Paths[i] == nil) {
			return i
		}
	}
	return -1
}

// projection is the scan's projection as connectors.ProjectionPushDown
// takes it: per output column its table column, then the field path
// within it; nil when the scan reads every column whole.
func (n *ScanNode) projection() [][]int {
	if n.Fields == nil {
		return nil
	}
	out := make([][]int, len(n.Fields))
	for i, f := range n.Fields {
		out[i] = []int{f}
		if n.Paths != nil {
			out[i] = append(out[i], n.Paths[i]...)
		}
	}
	return out
}

// nested reports whether the scan reads a field of a ROW column.
func (n *ScanNode) nested() bool {
	for _, p := range n.Paths {
		if p != nil {
			return true
		}
	}
	return false
}

func (n *ScanNode) timeAttrs() []timeAttr { return make([]timeAttr, len(n.cols)) }

func (n *ScanNode) Explain() string {
	return fmt.Sprintf("TableSourceScan(table=[%s%s], fields=[%s])", n.Table.Name, n.Table.explainHints(), allNames(n.cols))
}

// fieldIndex is the table column of output column i.
func (n *ScanNode) fieldIndex(i int) int {
	if n.Fields == nil {
		return i
	}
	return n.Fields[i]
}

func (n *ScanNode) translate(t *translator, _ []*dataflow.Node) (*dataflow.Node, error) {
	sc, err := n.Table.Scan(t.p.Env)
	if err != nil {
		return nil, err
	}
	p := t.connectorParallelism(sc.Parallelism())
	fields := n.projection()
	pd, _ := sc.(connectors.ProjectionPushDown)
	if _, wm := sc.(connectors.WatermarkPushDown); wm {
		pd = nil // a pushed watermark reads whole table rows
	}
	// A source that reads whole columns only reads the columns the paths
	// start from, and a projecting wrapper takes the fields out of them.
	var top, rest [][]int
	if pd != nil && n.nested() && !pd.SupportsNestedProjection() {
		top, rest = splitPaths(fields)
	}
	return &dataflow.Node{Name: "TableSourceScan(" + n.Table.Name + ")", Parallelism: p,
		NewSource: func(s int) (dataflow.Source, error) {
			switch {
			case fields == nil:
				return sc.Create(s, p)
			case top != nil:
				src, err := pd.CreateProjected(s, p, top)
				if err != nil {
					return nil, err
				}
				return operators.NewProjectingSource(src, rest), nil
			case pd != nil:
				return pd.CreateProjected(s, p, fields)
			}
			src, err := sc.Create(s, p)
			if err != nil {
				return nil, err
			}
			return operators.NewProjectingSource(src, fields), nil
		}}, nil
}

// splitPaths splits a nested projection into the whole columns it reads
// (each once, in order of first use) and, over those, the paths that
// take the fields out of them.
func splitPaths(fields [][]int) (top, rest [][]int) {
	pos := map[int]int{}
	for _, f := range fields {
		i, ok := pos[f[0]]
		if !ok {
			i = len(top)
			pos[f[0]] = i
			top = append(top, []int{f[0]})
		}
		rest = append(rest, append([]int{i}, f[1:]...))
	}
	return top, rest
}

func (n *ScanNode) withInputs(ins []Node) Node { return copyOver(n, ins) }

// ValuesNode is a constant relation: SELECT without FROM, or the tuples
// of INSERT ... VALUES.
type ValuesNode struct {
	nodeBase
	Rows []types.Row
}

func (n *ValuesNode) Mode() dyntable.ChangelogMode { return dyntable.InsertOnly }
func (n *ValuesNode) UpsertKey() []int             { return nil }

func (n *ValuesNode) timeAttrs() []timeAttr { return make([]timeAttr, len(n.cols)) }

func (n *ValuesNode) Explain() string {
	return fmt.Sprintf("Values(tuples=%d, fields=[%s])", len(n.Rows), allNames(n.cols))
}

func (n *ValuesNode) translate(*translator, []*dataflow.Node) (*dataflow.Node, error) {
	rows := n.Rows
	return &dataflow.Node{Name: "Values", Parallelism: 1,
		NewSource: func(int) (dataflow.Source, error) { return operators.NewConstSource(rows), nil }}, nil
}

func (n *ValuesNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
