package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/window"
)

// RankNode is ROW_NUMBER() filtered to a range, and ORDER BY ... LIMIT.
// What runs it depends on its shape (kind): deduplication (rn = 1 over
// an insert-only input), window Top-N or deduplication (partitioned by
// the window of an insert-only windowed input), or a general Top-N,
// which EXPLAIN calls SortLimit or Limit, as Flink does, when it is
// ORDER BY ... LIMIT or LIMIT alone.
type RankNode struct {
	nodeBase
	PartitionKeys []int
	OrderBy       []operators.SortKey
	Offset, Limit int64 // Limit < 0 until a filter on the rank number sets it
	OutputRank    bool  // the rank number is the last output column
}

// Rank kinds: the EXPLAIN names. The operators are Rank (for the first
// three), Deduplicate and WindowRank (for the last two).
const (
	rankTopN              = "Rank"
	rankSortLimit         = "SortLimit"
	rankLimit             = "Limit"
	rankDeduplicate       = "Deduplicate"
	rankWindowTopN        = "WindowRank"
	rankWindowDeduplicate = "WindowDeduplicate"
)

// kind says which operator runs the rank.
func (n *RankNode) kind() string {
	_, window := n.windowEnd()
	switch {
	case window && n.Offset == 0 && n.Limit == 1:
		return rankWindowDeduplicate
	case window:
		return rankWindowTopN
	case n.Offset == 0 && n.Limit == 1 && len(n.PartitionKeys) > 0 && n.inputs[0].Mode().IsInsertOnly():
		return rankDeduplicate
	case n.OutputRank || len(n.PartitionKeys) > 0:
		return rankTopN
	case len(n.OrderBy) > 0:
		return rankSortLimit
	}
	return rankLimit
}

// windowEnd reports whether the rank is a window rank, and which input
// column holds window_end: a rank whose PARTITION BY holds the
// window_start and window_end of one window (a window table function,
// or the output of a window aggregation) over an insert-only input.
// Each window's ranks are final once the window fires, so it emits them
// then, insert-only, and keeps nothing of the window afterwards.
func (n *RankNode) windowEnd() (endCol int, ok bool) {
	if n.Limit < 1 || !n.inputs[0].Mode().IsInsertOnly() {
		return 0, false
	}
	var win Node
	start, end := false, false
	for _, k := range n.PartitionKeys {
		wn, kind, ok := windowColOf(n.inputs[0], k)
		if !ok || (win != nil && wn != win) || zonedWindow(wn) {
			continue
		}
		win = wn
		switch kind {
		case window.WinStart:
			start = true
		case window.WinEnd:
			end, endCol = true, k
		}
	}
	return endCol, start && end
}

// Mode: a Top-N retracts a row that falls out of its range and updates
// the rows whose rank changes. LIMIT without ORDER BY over an insert-only
// input keeps the first rows, which never change; a window rank emits
// each window's final ranks once. Keep-first deduplication over an
// insert-only input never deletes (a key keeps a row once it has one),
// but it is not insert-only: a row that arrives later with a smaller
// ORDER BY value (an out-of-order event time) replaces the kept row
// with -U/+U. Only ordering by arrival would make it insert-only. A
// Top-N without its rank number in the output emits Flink's changelog
// without row number: rows entering (+I) and leaving (-D) the top N.
func (n *RankNode) Mode() dyntable.ChangelogMode {
	switch n.kind() {
	case rankWindowTopN, rankWindowDeduplicate:
		return dyntable.InsertOnly
	case rankDeduplicate:
		return dyntable.ModeI | dyntable.ModeUB | dyntable.ModeUA
	}
	if len(n.OrderBy) == 0 && n.inputs[0].Mode().IsInsertOnly() {
		return dyntable.InsertOnly
	}
	if !n.OutputRank && n.Offset == 0 { // rows enter (+I) and leave (-D) the top N
		return dyntable.ModeI | dyntable.ModeD
	}
	return dyntable.Retract
}

// UpsertKey: with one row per partition, the partition keys; with the
// rank number in the output, the partition keys and the rank number, as
// the changes are per rank position; a window rank's rows are only
// inserted, so no key is needed.
func (n *RankNode) UpsertKey() []int {
	if _, window := n.windowEnd(); window || n.Limit < 1 {
		return nil
	}
	if n.Limit == 1 {
		return n.PartitionKeys
	}
	if n.OutputRank {
		return append(slices.Clone(n.PartitionKeys), len(n.cols)-1)
	}
	return nil
}

func (n *RankNode) partitionKeys(int) []int { return n.PartitionKeys }

// timeAttrs: a window rank emits a window's ranks when it fires, after
// the watermark passed every time of its rows but window_time; other
// ranks pass rows (and rowtime attributes) on as they come.
func (n *RankNode) timeAttrs() []timeAttr {
	attrs := rowtimeOnly(n.inputs[0])
	if _, window := n.windowEnd(); window {
		attrs = windowTimeOnly(n.inputs[0])
	}
	if n.OutputRank {
		attrs = append(attrs, attrNone)
	}
	return attrs
}

func (n *RankNode) Explain() string {
	in := n.inputs[0].Columns()
	ord := explainOrderBy(in, n.OrderBy)
	kind := n.kind()
	switch kind {
	case rankSortLimit:
		return fmt.Sprintf("SortLimit(orderBy=[%s], offset=[%d], fetch=[%d])", ord, n.Offset, n.Limit)
	case rankLimit:
		return fmt.Sprintf("Limit(offset=[%d], fetch=[%d])", n.Offset, n.Limit)
	}
	s := fmt.Sprintf("%s(partitionBy=[%s], orderBy=[%s], rankRange=[%d..%d]", kind,
		colNames(in, n.PartitionKeys), ord, n.Offset+1, n.Offset+n.Limit)
	if n.OutputRank {
		s += ", rankNumber=[" + n.cols[len(n.cols)-1].Name + "]"
	}
	return s + ")"
}

func (n *RankNode) translate(t *translator, ins []*dataflow.Node) (*dataflow.Node, error) {
	var newOp func(int) (dataflow.Operator, error)
	name, ttl := n.kind(), true
	switch name {
	case rankWindowTopN, rankWindowDeduplicate:
		endCol, _ := n.windowEnd()
		spec := window.WindowRankSpec{PartitionKeys: n.PartitionKeys, EndCol: endCol, OrderBy: n.OrderBy,
			Offset: n.Offset, Limit: n.Limit, OutputRank: n.OutputRank}
		if _, err := window.NewWindowRank(spec); err != nil {
			return nil, err
		}
		name, ttl = rankWindowTopN, false // cleaned by time
		newOp = func(int) (dataflow.Operator, error) { return window.NewWindowRank(spec) }
	default:
		spec := operators.RankSpec{PartitionKeys: n.PartitionKeys, OrderBy: n.OrderBy, Offset: n.Offset,
			Limit: n.Limit, OutputRank: n.OutputRank, Width: len(n.inputs[0].Columns()),
			InputInsertOnly: n.inputs[0].Mode().IsInsertOnly()}
		newOp = func(int) (dataflow.Operator, error) { return operators.NewRank(spec), nil }
		if name != rankDeduplicate {
			name = rankTopN
		} else {
			// The same changelog as Rank, with one value read per row
			// (operators/dedup.go).
			newOp = func(int) (dataflow.Operator, error) { return operators.NewDeduplicate(spec), nil }
		}
	}
	return t.keyed(n, ins, &dataflow.Node{Name: name, StateTTL: ttl, NewOperator: newOp}), nil
}

func (n *RankNode) withInputs(ins []Node) Node { return copyOver(n, ins) }

// explainOrderBy renders sort keys over columns in for EXPLAIN, as
// "a ASC, b DESC" (Top-N and the temporal sort).
func explainOrderBy(in []expr.Column, keys []operators.SortKey) string {
	ord := make([]string, len(keys))
	for i, k := range keys {
		d := "ASC"
		if k.Desc {
			d = "DESC"
		}
		ord[i] = in[k.Col].Name + " " + d
	}
	return strings.Join(ord, ", ")
}
