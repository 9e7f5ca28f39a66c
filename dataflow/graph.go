package dataflow

import (
	"fmt"
	"strings"
	"time"
)

// PartitionKind says how an edge routes rows from upstream subtasks to
// downstream subtasks.
type PartitionKind uint8

// Partitionings.
const (
	// Forward sends subtask i's output to subtask i; it needs equal
	// parallelism and lets the two nodes chain into one task.
	Forward PartitionKind = iota
	// Hash routes each row by the hash of its key columns, so that every
	// change of one key reaches the same subtask, in order.
	Hash
	// Single sends everything to subtask 0 of a parallelism-1 node.
	Single
	// Rebalance spreads chunks round-robin.
	Rebalance
)

// Edge is an input of a node.
type Edge struct {
	From      *Node
	Partition PartitionKind
	Keys      []int // Hash only: column indexes of From's output
}

// Node is one vertex of the job graph.
type Node struct {
	ID          int
	Name        string // shown in logs and metrics, e.g. "GroupAggregate"
	Parallelism int
	Inputs      []Edge
	// GeneratesWatermarks marks a watermark assigner: see Collector.EmitWatermark.
	GeneratesWatermarks bool
	// Stateful marks a node whose operator keeps keyed state, which a
	// checkpoint must snapshot.
	Stateful bool
	// StateTTL marks a stateful node whose keyed state may expire after
	// table.exec.state.ttl without being written, as Flink's regular
	// aggregations, joins, ranks and ChangelogNormalize do. Operators that
	// clean their state by time (windows, interval and temporal joins,
	// OVER) and state that must never vanish (sink transactions,
	// watermarks, source positions) leave it false.
	StateTTL bool
	// Exactly one of NewOperator and NewSource is set. Each is called once
	// per subtask.
	NewOperator func(subtask int) (Operator, error)
	NewSource   func(subtask int) (Source, error)
}

// Graph is a job: its nodes in topological order (inputs first).
type Graph struct {
	Name  string
	Nodes []*Node
	// IdleTimeout (table.exec.source.idle-timeout) is how long a source
	// subtask may emit nothing before it tells downstream it is idle
	// (KindIdle), so that it no longer holds back the watermark; 0 never.
	IdleTimeout time.Duration
}

// AddNode appends a node and gives it the next ID.
func (g *Graph) AddNode(n *Node) *Node {
	n.ID = len(g.Nodes)
	if n.Parallelism < 1 {
		n.Parallelism = 1
	}
	g.Nodes = append(g.Nodes, n)
	return n
}

// Validate checks the invariants the executor relies on.
func (g *Graph) Validate() error {
	for i, n := range g.Nodes {
		if n.ID != i {
			return fmt.Errorf("dataflow: node %q has id %d at position %d", n.Name, n.ID, i)
		}
		if (n.NewOperator == nil) == (n.NewSource == nil) {
			return fmt.Errorf("dataflow: node %q must have exactly one of operator and source", n.Name)
		}
		if n.NewSource != nil && len(n.Inputs) > 0 {
			return fmt.Errorf("dataflow: source node %q has inputs", n.Name)
		}
		if n.NewOperator != nil && len(n.Inputs) == 0 {
			return fmt.Errorf("dataflow: operator node %q has no inputs", n.Name)
		}
		for _, e := range n.Inputs {
			if e.From.ID >= n.ID {
				return fmt.Errorf("dataflow: node %q is not after its input %q", n.Name, e.From.Name)
			}
			if e.Partition == Forward && e.From.Parallelism != n.Parallelism {
				return fmt.Errorf("dataflow: forward edge %q -> %q joins parallelism %d and %d", e.From.Name, n.Name, e.From.Parallelism, n.Parallelism)
			}
			if e.Partition == Single && n.Parallelism != 1 {
				return fmt.Errorf("dataflow: single edge into %q of parallelism %d", n.Name, n.Parallelism)
			}
		}
	}
	return nil
}

// String lists the graph, one node a line.
func (g *Graph) String() string {
	var b strings.Builder
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "%d %s p=%d", n.ID, n.Name, n.Parallelism)
		for _, e := range n.Inputs {
			fmt.Fprintf(&b, " <-%d(%s%v)", e.From.ID, [...]string{"forward", "hash", "single", "rebalance"}[e.Partition], e.Keys)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
