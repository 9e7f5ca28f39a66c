package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
)

// UnionNode is UNION ALL of two or more inputs of the same columns.
type UnionNode struct{ nodeBase }

// Mode: every kind of change any input carries.
func (n *UnionNode) Mode() dyntable.ChangelogMode {
	var m dyntable.ChangelogMode
	for _, in := range n.inputs {
		m = m.Union(in.Mode())
	}
	return m
}

// UpsertKey: the same key may come from two inputs.
func (n *UnionNode) UpsertKey() []int { return nil }

// timeAttrs: a column is an attribute of the kind every input agrees on.
func (n *UnionNode) timeAttrs() []timeAttr {
	attrs := n.inputs[0].timeAttrs()
	for _, in := range n.inputs[1:] {
		for i, a := range in.timeAttrs() {
			if a != attrs[i] {
				attrs[i] = attrNone
			}
		}
	}
	return attrs
}

func (n *UnionNode) Explain() string {
	return fmt.Sprintf("Union(all=[true], fields=[%s])", allNames(n.cols))
}

// translate: the inputs at the default parallelism chain into the
// union; any other is hashed by the whole row, which keeps each row's
// changes in order.
func (n *UnionNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	d := &dataflow.Node{Name: "Union", Parallelism: t.parallelism,
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewUnion(), nil }}
	for _, in := range ins {
		if in.Parallelism == t.parallelism {
			d.Inputs = append(d.Inputs, dataflow.Edge{From: in, Partition: dataflow.Forward})
		} else {
			d.Inputs = append(d.Inputs, dataflow.Edge{From: in, Partition: dataflow.Hash, Keys: allCols(len(n.cols))})
		}
	}
	return d, nil
}

func (n *UnionNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
