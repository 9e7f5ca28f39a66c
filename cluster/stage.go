package cluster

import (
	"fmt"
	"sort"
	"strings"

	"github.com/streamsql/streamsql/dataflow"
)

// Stage is a part of the job graph that runs without an exchange: the
// nodes joined by forward edges. Its tasks run its nodes, one task per
// partition of its input topics.
type Stage struct {
	ID int
	// Parallelism is the parallelism of its nodes, which is its number of
	// tasks: cluster.partitions, or 1 behind a single exchange or for a
	// source its connector fixes at one subtask.
	Parallelism int
	// Nodes are the IDs of its nodes in the job graph, in graph order.
	Nodes []int
	// Inputs are the exchanges it reads; Outputs those it writes.
	Inputs, Outputs []*Exchange
}

// Exchange is a cut edge of the job graph: the key-hash, rebalance or
// single edge from a node of one stage to a node of another, carried by
// an internal topic.
type Exchange struct {
	// From and To are the node IDs; Input is the index of the edge among
	// To's inputs.
	From, To, Input int
	Kind            dataflow.PartitionKind
	Keys            []int
	FromStage       int
	ToStage         int
	// Topic is streamsql-<job>-s<ToStage> for the stage's first input,
	// streamsql-<job>-s<ToStage>-in<k> for its input k > 0.
	Topic string
	// Partitions is the topic's partition count: the parallelism of the
	// stage that reads it.
	Partitions int
	// Upstream is the number of tasks that write it: the parallelism of
	// the stage that writes it. Each of them sends its own watermarks and
	// end-of-input.
	Upstream int
}

// cutStages splits g into stages at every edge that is not forward.
// Forward edges join nodes of equal parallelism (Graph.Validate), so all
// nodes of a stage have the same parallelism.
func cutStages(job string, g *dataflow.Graph) ([]*Stage, error) {
	parent := make([]int, len(g.Nodes))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, n := range g.Nodes {
		for _, e := range n.Inputs {
			if e.Partition == dataflow.Forward {
				a, b := find(n.ID), find(e.From.ID)
				parent[max(a, b)] = min(a, b)
			}
		}
	}
	// Stages are numbered in the order of their first node, so that the
	// stages reading the job's sources come first.
	byRoot := map[int]*Stage{}
	var stages []*Stage
	stageOf := make([]int, len(g.Nodes))
	for _, n := range g.Nodes {
		r := find(n.ID)
		st := byRoot[r]
		if st == nil {
			st = &Stage{ID: len(stages), Parallelism: n.Parallelism}
			byRoot[r] = st
			stages = append(stages, st)
		}
		if n.Parallelism != st.Parallelism {
			return nil, fmt.Errorf("cluster: internal error: node %q of parallelism %d in a stage of parallelism %d", n.Name, n.Parallelism, st.Parallelism)
		}
		st.Nodes = append(st.Nodes, n.ID)
		stageOf[n.ID] = st.ID
	}
	for _, n := range g.Nodes {
		for i, e := range n.Inputs {
			if e.Partition == dataflow.Forward {
				continue
			}
			to, from := stages[stageOf[n.ID]], stages[stageOf[e.From.ID]]
			x := &Exchange{From: e.From.ID, To: n.ID, Input: i, Kind: e.Partition, Keys: append([]int(nil), e.Keys...),
				FromStage: from.ID, ToStage: to.ID, Partitions: to.Parallelism, Upstream: from.Parallelism}
			x.Topic = fmt.Sprintf("streamsql-%s-s%d", job, to.ID)
			if k := len(to.Inputs); k > 0 {
				x.Topic += fmt.Sprintf("-in%d", k)
			}
			to.Inputs = append(to.Inputs, x)
			from.Outputs = append(from.Outputs, x)
		}
	}
	return stages, nil
}

// describe is the stages as text, for the fingerprint and for logs:
// one line per stage with its nodes and its exchanges.
func describe(g *dataflow.Graph, stages []*Stage) string {
	var b strings.Builder
	for _, st := range stages {
		var names []string
		for _, id := range st.Nodes {
			names = append(names, g.Nodes[id].Name)
		}
		fmt.Fprintf(&b, "s%d tasks=%d [%s]", st.ID, st.Parallelism, strings.Join(names, " -> "))
		outs := append([]*Exchange(nil), st.Outputs...)
		sort.Slice(outs, func(i, j int) bool { return outs[i].Topic < outs[j].Topic })
		for _, x := range outs {
			fmt.Fprintf(&b, " =%s%v=> %s(%d partitions)", [...]string{"forward", "hash", "single", "rebalance"}[x.Kind], x.Keys, x.Topic, x.Partitions)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
