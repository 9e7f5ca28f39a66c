package planner

import (
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/types"
)

// Node is a node of a stream plan. Every node knows its output columns,
// the changelog mode of its output, and its upsert key (the columns that
// identify a row across updates), which the planner infers bottom-up.
type Node interface {
	Columns() []expr.Column
	Inputs() []Node
	Mode() dyntable.ChangelogMode
	// UpsertKey is nil when no key identifies rows across updates.
	UpsertKey() []int
	// Explain is the node's line in EXPLAIN, without mode and key.
	Explain() string
}

type nodeBase struct {
	cols   []expr.Column
	inputs []Node
	mode   dyntable.ChangelogMode
	key    []int
}

func (n *nodeBase) Columns() []expr.Column       { return n.cols }
func (n *nodeBase) Inputs() []Node               { return n.inputs }
func (n *nodeBase) Mode() dyntable.ChangelogMode { return n.mode }
func (n *nodeBase) UpsertKey() []int             { return n.key }

func colTypes(cols []expr.Column) []types.Type {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	return ts
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

// ScanNode reads a catalog table through its connector.
type ScanNode struct {
	nodeBase
	Table *TableEntry
	// Fields are the table columns the scan reads, in output order; nil
	// means all of them.
	Fields []int
}

func (n *ScanNode) fieldIndex(i int) int {
	if n.Fields == nil {
		return i
	}
	return n.Fields[i]
}

func (n *ScanNode) Explain() string {
	return fmt.Sprintf("TableSourceScan(table=[%s], fields=[%s])", n.Table.Name, allNames(n.cols))
}

// ValuesNode is a constant relation (SELECT without FROM).
type ValuesNode struct {
	nodeBase
	Rows []types.Row
}

func (n *ValuesNode) Explain() string {
	return fmt.Sprintf("Values(tuples=%d, fields=[%s])", len(n.Rows), allNames(n.cols))
}

// WatermarkNode assigns event-time watermarks.
type WatermarkNode struct {
	nodeBase
	Rowtime int
	Expr    expr.Expr
}

func (n *WatermarkNode) Explain() string {
	return fmt.Sprintf("WatermarkAssigner(rowtime=[%s], watermark=[%s])", n.cols[n.Rowtime].Name, n.Expr)
}

// NormalizeNode turns an upsert stream into a retract changelog.
type NormalizeNode struct {
	nodeBase
	Keys []int
}

func (n *NormalizeNode) Explain() string {
	return fmt.Sprintf("ChangelogNormalize(key=[%s])", colNames(n.cols, n.Keys))
}

// CalcNode is projection and filter.
type CalcNode struct {
	nodeBase
	Filter expr.Expr   // nil: none
	Proj   []expr.Expr // one per output column
}

func (n *CalcNode) Explain() string {
	var sel []string
	in := n.inputs[0].Columns()
	for i, p := range n.Proj {
		s := p.String()
		if idx, ok := expr.ColumnIndex(p); !ok || in[idx].Name != n.cols[i].Name {
			s += " AS " + n.cols[i].Name
		}
		sel = append(sel, s)
	}
	out := "Calc(select=[" + strings.Join(sel, ", ") + "]"
	if n.Filter != nil {
		out += ", where=[" + n.Filter.String() + "]"
	}
	return out + ")"
}

// AggNode is a group aggregation.
type AggNode struct {
	nodeBase
	GroupKeys []int // input columns
	Aggs      []operators.AggCall
	AggText   []string // for EXPLAIN
}

func (n *AggNode) Explain() string {
	in := n.inputs[0].Columns()
	sel := []string{}
	for _, k := range n.GroupKeys {
		sel = append(sel, in[k].Name)
	}
	for i, t := range n.AggText {
		if name := n.cols[len(n.GroupKeys)+i].Name; name != t {
			t += " AS " + name
		}
		sel = append(sel, t)
	}
	if len(n.GroupKeys) == 0 {
		return fmt.Sprintf("GroupAggregate(select=[%s])", strings.Join(sel, ", "))
	}
	return fmt.Sprintf("GroupAggregate(groupBy=[%s], select=[%s])", colNames(in, n.GroupKeys), strings.Join(sel, ", "))
}

// JoinNode is a regular (unbounded) equi-join.
type JoinNode struct {
	nodeBase
	Type                operators.JoinType
	LeftKeys, RightKeys []int
	Cond                expr.Expr // residual, over left ++ right; nil if none
}

var joinNames = map[operators.JoinType]string{
	operators.InnerJoin: "InnerJoin", operators.LeftJoin: "LeftOuterJoin",
	operators.RightJoin: "RightOuterJoin", operators.FullJoin: "FullOuterJoin",
}

// equalities renders the join's key equalities ("a = b AND c = d") for
// EXPLAIN; every kind of join prints them the same way.
func (n *JoinNode) equalities() string {
	l, r := n.inputs[0].Columns(), n.inputs[1].Columns()
	var eq []string
	for i := range n.LeftKeys {
		eq = append(eq, fmt.Sprintf("%s = %s", l[n.LeftKeys[i]].Name, r[n.RightKeys[i]].Name))
	}
	return strings.Join(eq, " AND ")
}

func (n *JoinNode) Explain() string {
	s := fmt.Sprintf("Join(joinType=[%s], where=[%s]", joinNames[n.Type], n.equalities())
	if n.Cond != nil {
		s += ", condition=[" + n.Cond.String() + "]"
	}
	return s + ")"
}

// RankNode is ROW_NUMBER() filtered to a range: deduplication, Top-N and
// ORDER BY ... LIMIT.
type RankNode struct {
	nodeBase
	PartitionKeys []int
	OrderBy       []operators.SortKey
	Offset, Limit int64 // Limit < 0 until a filter on the rank number sets it
	OutputRank    bool
	rankFrom      string // how the rank arose, for error messages
}

func (n *RankNode) Explain() string {
	in := n.inputs[0].Columns()
	var ord []string
	for _, k := range n.OrderBy {
		d := "ASC"
		if k.Desc {
			d = "DESC"
		}
		ord = append(ord, in[k.Col].Name+" "+d)
	}
	name := "Rank"
	switch {
	case windowRankName(n) != "": // build_window_rank.go
		name = windowRankName(n)
	case n.Limit == 1 && n.Offset == 0 && len(n.PartitionKeys) > 0:
		name = "Deduplicate"
	}
	s := fmt.Sprintf("%s(partitionBy=[%s], orderBy=[%s], rankRange=[%d..%d]", name,
		colNames(in, n.PartitionKeys), strings.Join(ord, ", "), n.Offset+1, n.Offset+n.Limit)
	if n.OutputRank {
		s += ", rankNumber=[" + n.cols[len(n.cols)-1].Name + "]"
	}
	return s + ")"
}

// UnionNode is UNION ALL.
type UnionNode struct{ nodeBase }

func (n *UnionNode) Explain() string {
	return fmt.Sprintf("Union(all=[true], fields=[%s])", allNames(n.cols))
}

// SinkNode writes its input into a catalog table, or into the client's
// result when Table is nil.
type SinkNode struct {
	nodeBase
	Table    *TableEntry
	Encoding dyntable.SinkEncoding
}

func (n *SinkNode) Explain() string {
	if n.Table == nil {
		return fmt.Sprintf("Collect(fields=[%s])", allNames(n.cols))
	}
	return fmt.Sprintf("Sink(table=[%s], fields=[%s], encoding=[%s])", n.Table.Name, allNames(n.cols), n.Encoding)
}

// ExplainTree renders a plan as an indented tree, one node a line, each
// with its changelog mode and upsert key, and an Exchange line where the
// data is re-partitioned by key.
func ExplainTree(root Node) string {
	var b strings.Builder
	var walk func(n Node, prefix, childPrefix string)
	walk = func(n Node, prefix, childPrefix string) {
		b.WriteString(prefix)
		b.WriteString(n.Explain())
		fmt.Fprintf(&b, " changelogMode=%s", n.Mode())
		if k := n.UpsertKey(); k != nil {
			fmt.Fprintf(&b, " upsertKey=[%s]", colNames(n.Columns(), k))
		}
		b.WriteByte('\n')
		ins := n.Inputs()
		for i, in := range ins {
			p, cp := childPrefix+":- ", childPrefix+":  "
			if i == len(ins)-1 {
				p, cp = childPrefix+"+- ", childPrefix+"   "
			}
			if ex := exchangeFor(n, i); ex != "" {
				b.WriteString(p + ex + "\n")
				p, cp = cp+"+- ", cp+"   "
			}
			walk(in, p, cp)
		}
	}
	walk(root, "", "")
	return b.String()
}

// exchangeFor describes the re-partitioning in front of input i of n.
func exchangeFor(n Node, i int) string {
	in := n.Inputs()[i].Columns()
	switch n := n.(type) {
	case *AggNode:
		if len(n.GroupKeys) == 0 {
			return "Exchange(distribution=[single])"
		}
		return "Exchange(distribution=[hash[" + colNames(in, n.GroupKeys) + "]])"
	case *JoinNode:
		keys := n.LeftKeys
		if i == 1 {
			keys = n.RightKeys
		}
		return "Exchange(distribution=[hash[" + colNames(in, keys) + "]])"
	case *RankNode:
		if len(n.PartitionKeys) == 0 {
			return "Exchange(distribution=[single])"
		}
		return "Exchange(distribution=[hash[" + colNames(in, n.PartitionKeys) + "]])"
	case *NormalizeNode:
		return "Exchange(distribution=[hash[" + colNames(in, n.Keys) + "]])"
	case partitionedNode:
		return n.exchange(i)
	}
	return ""
}
