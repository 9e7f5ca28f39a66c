package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
)

// SinkNode is the root of every plan: it writes its input into a catalog
// table, or hands it to the client (Collect) when Table is nil.
type SinkNode struct {
	nodeBase
	Table    *TableEntry
	Encoding dyntable.SinkEncoding
}

func (n *SinkNode) Mode() dyntable.ChangelogMode { return n.inputs[0].Mode() }
func (n *SinkNode) UpsertKey() []int             { return n.inputs[0].UpsertKey() }

func (n *SinkNode) timeAttrs() []timeAttr { return make([]timeAttr, len(n.cols)) }

func (n *SinkNode) Explain() string {
	if n.Table == nil {
		return fmt.Sprintf("Collect(fields=[%s])", allNames(n.cols))
	}
	return fmt.Sprintf("Sink(table=[%s%s], fields=[%s], encoding=[%s])", n.Table.Name, n.Table.explainHints(), allNames(n.cols), n.Encoding)
}

func (n *SinkNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	in := ins[0]
	if n.Table == nil {
		collect := t.collect
		if collect == nil {
			return nil, fmt.Errorf("planner: a query plan needs a collector")
		}
		return &dataflow.Node{Name: "Collect", Parallelism: 1, Inputs: []dataflow.Edge{{From: in, Partition: dataflow.Single}},
			NewOperator: func(int) (dataflow.Operator, error) { return operators.NewCollect(collect), nil }}, nil
	}
	sk, err := n.Table.Sink(t.p.Env)
	if err != nil {
		return nil, err
	}
	p := t.connectorParallelism(sk.Parallelism())
	var e dataflow.Edge
	switch {
	case len(n.Table.Conn.PrimaryKey) > 0 && (p > 1 || in.Parallelism != p):
		// Every change of one primary key goes to the same sink subtask.
		e = dataflow.Edge{From: in, Partition: dataflow.Hash, Keys: n.Table.Conn.PrimaryKey}
	case in.Parallelism == p:
		e = dataflow.Edge{From: in, Partition: dataflow.Forward}
	default:
		e = dataflow.Edge{From: in, Partition: dataflow.Hash, Keys: allCols(len(n.cols))}
	}
	stateful := false
	if ss, ok := sk.(connectors.StatefulSink); ok {
		stateful = ss.KeepsState()
	}
	return &dataflow.Node{Name: "Sink(" + n.Table.Name + ")", Parallelism: p, Inputs: []dataflow.Edge{e}, Stateful: stateful,
		NewOperator: func(s int) (dataflow.Operator, error) { return sk.Create(s, p) }}, nil
}

func (n *SinkNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
