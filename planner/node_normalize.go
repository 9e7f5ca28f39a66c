package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/operators"
)

// NormalizeNode turns an upsert stream (+I, +U, -D without -U) into a
// retract changelog, keeping the last row of each key.
type NormalizeNode struct {
	nodeBase
	Keys []int
}

func (n *NormalizeNode) Mode() dyntable.ChangelogMode { return dyntable.Retract }
func (n *NormalizeNode) UpsertKey() []int             { return n.Keys }
func (n *NormalizeNode) partitionKeys(int) []int      { return n.Keys }

func (n *NormalizeNode) timeAttrs() []timeAttr { return n.inputs[0].timeAttrs() }

func (n *NormalizeNode) Explain() string {
	return fmt.Sprintf("ChangelogNormalize(key=[%s])", colNames(n.cols, n.Keys))
}

func (n *NormalizeNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	keys := n.Keys
	return t.keyed(n, ins, &dataflow.Node{Name: "ChangelogNormalize", StateTTL: true,
		NewOperator: func(int) (dataflow.Operator, error) { return operators.NewChangelogNormalize(keys), nil }}), nil
}

func (n *NormalizeNode) withInputs(ins []Node) Node { return copyOver(n, ins) }
