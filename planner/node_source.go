package planner

import (
	"fmt"
	"slices"

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
	mode   dyntable.ChangelogMode // the connector's
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
		i := slices.Index(n.Fields, k)
		if i < 0 {
			return nil
		}
		key = append(key, i)
	}
	return key
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
	fields := n.Fields
	pd, _ := sc.(connectors.ProjectionPushDown)
	if _, wm := sc.(connectors.WatermarkPushDown); wm {
		pd = nil // a pushed watermark reads whole table rows
	}
	return &dataflow.Node{Name: "TableSourceScan(" + n.Table.Name + ")", Parallelism: p,
		NewSource: func(s int) (dataflow.Source, error) {
			switch {
			case fields == nil:
				return sc.Create(s, p)
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
