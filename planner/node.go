package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators/window"
)

// Node is a node of a stream plan. Each kind of node lives in a file of
// its own (node_*.go) and owns everything about itself: its output
// columns, its changelog mode and upsert key (inferred from its inputs
// each time they are asked for, so they are never stale), its line in
// EXPLAIN and its translation into a dataflow node.
//
// A node is built once and not changed after the plan is optimized:
// rewrites make new nodes (withInputs) instead.
type Node interface {
	Columns() []expr.Column
	Inputs() []Node
	// Mode is which of +I, -U, +U, -D the node's output carries.
	Mode() dyntable.ChangelogMode
	// UpsertKey lists the output columns that identify a row across
	// updates; nil when no key does.
	UpsertKey() []int
	// Explain is the node's line in EXPLAIN, without mode and key.
	Explain() string
	// timeAttrs says which output columns are time attributes.
	timeAttrs() []timeAttr
	// translate makes the node's dataflow node. ins are the dataflow
	// nodes of Inputs(), in order, already in the graph; the caller adds
	// the result to the graph.
	translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error)
	// withInputs returns a copy of the node over ins, which have the
	// columns of Inputs().
	withInputs(ins []Node) Node
}

// keyedNode is implemented by nodes whose operator keeps its state per
// key: input i is hash-partitioned by partitionKeys(i), or sent whole to
// one subtask when that is empty. EXPLAIN shows the Exchange and the
// translation connects the input (translator.keyed) from this one
// method, so that the two cannot disagree.
type keyedNode interface {
	Node
	partitionKeys(input int) []int
}

// nodeBase holds what every node has: its output columns and inputs.
type nodeBase struct {
	cols   []expr.Column
	inputs []Node
}

func (n *nodeBase) Columns() []expr.Column { return n.cols }
func (n *nodeBase) Inputs() []Node         { return n.inputs }
func (n *nodeBase) base() *nodeBase        { return n }

// copyOver implements withInputs for every node type: a shallow copy of
// n whose inputs are ins.
func copyOver[T any, P interface {
	*T
	Node
	base() *nodeBase
}](n P, ins []Node) Node {
	c := P(new(T))
	*c = *n
	c.base().inputs = ins
	return c
}

// timeAttr is what kind of time attribute a column is. A rowtime
// attribute is a TIMESTAMP column that a watermark describes: the column
// named in WATERMARK FOR (and the window_time of an event-time window),
// and whatever passes it on unchanged without emitting its rows after
// the watermark passed them. A processing-time attribute is a PROCTIME()
// column. A regular join or a group aggregation turns either into a
// plain TIMESTAMP, as in Flink.
type timeAttr uint8

const (
	attrNone timeAttr = iota
	attrRowtime
	attrProctime
)

// timeAttrOf is the time attribute of column col of n.
func timeAttrOf(n Node, col int) timeAttr {
	if a := n.timeAttrs(); col >= 0 && col < len(a) {
		return a[col]
	}
	return attrNone
}

// isRowtime reports whether column col of n is a rowtime attribute.
func isRowtime(n Node, col int) bool { return timeAttrOf(n, col) == attrRowtime }

// rowtimeOnly keeps the rowtime attributes of n's columns: an operator
// over event time emits a row when the watermark reaches its time,
// before that watermark, which keeps those; the time it emits at is not
// the row's processing time.
func rowtimeOnly(n Node) []timeAttr {
	attrs := n.timeAttrs()
	for i, a := range attrs {
		if a != attrRowtime {
			attrs[i] = attrNone
		}
	}
	return attrs
}

// windowTimeOnly keeps the time attributes of n's window_time columns:
// an operator that emits a window's rows when the window fires emits
// them after the watermark passed their other times.
func windowTimeOnly(n Node) []timeAttr {
	attrs := n.timeAttrs()
	for i := range attrs {
		if _, kind, ok := windowColOf(n, i); !ok || kind != window.WinTime {
			attrs[i] = attrNone
		}
	}
	return attrs
}

// ExplainTree renders a plan as an indented tree, one node a line, each
// with its changelog mode and upsert key, and an Exchange line where the
// data is re-partitioned by key.
func ExplainTree(root Node) string { return explainRoots([]Node{root}) }

// explainRoots renders the trees under roots one after the other, a node
// that several parents read (a shared source, see shareSources) once, as
// Flink does: marked (reuse_id=[n]) the first time and
// Reused(reference_id=[n]) after.
func explainRoots(roots []Node) string {
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
	for _, r := range roots {
		count(r)
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
	for _, r := range roots {
		number(r)
	}
	var b strings.Builder
	printed := map[Node]bool{}
	for _, r := range roots {
		explainNode(&b, r, "", "", reuse, printed)
	}
	return b.String()
}

// explainNode writes n and the nodes below it. A node with an id in
// reuse (a node several parents read) is written in
// full the first time, marked (reuse_id=[id]), and as Reused(reference_id=[id])
// after that, as Flink writes its plans.
func explainNode(b *strings.Builder, n Node, prefix, childPrefix string, reuse map[Node]int, printed map[Node]bool) {
	b.WriteString(prefix)
	if id, ok := reuse[n]; ok && printed[n] {
		fmt.Fprintf(b, "Reused(reference_id=[%d])\n", id)
		return
	}
	b.WriteString(n.Explain())
	fmt.Fprintf(b, " changelogMode=%s", n.Mode())
	if k := n.UpsertKey(); k != nil {
		fmt.Fprintf(b, " upsertKey=[%s]", colNames(n.Columns(), k))
	}
	if id, ok := reuse[n]; ok {
		fmt.Fprintf(b, " (reuse_id=[%d])", id)
		printed[n] = true
	}
	b.WriteByte('\n')
	ins := n.Inputs()
	for i, in := range ins {
		p, cp := childPrefix+":- ", childPrefix+":  "
		if i == len(ins)-1 {
			p, cp = childPrefix+"+- ", childPrefix+"   "
		}
		if kn, ok := n.(keyedNode); ok {
			b.WriteString(p + exchange(in.Columns(), kn.partitionKeys(i)) + "\n")
			p, cp = cp+"+- ", cp+"   "
		}
		explainNode(b, in, p, cp, reuse, printed)
	}
}

// exchange describes the re-partitioning by keys of columns cols.
func exchange(cols []expr.Column, keys []int) string {
	if len(keys) == 0 {
		return "Exchange(distribution=[single])"
	}
	return "Exchange(distribution=[hash[" + colNames(cols, keys) + "]])"
}

func colNames(cols []expr.Column, idx []int) string {
	var s []string
	for _, i := range idx {
		s = append(s, cols[i].Name)
	}
	return strings.Join(s, ", ")
}

func allNames(cols []expr.Column) string {
	var s []string
	for _, c := range cols {
		s = append(s, c.Name)
	}
	return strings.Join(s, ", ")
}
