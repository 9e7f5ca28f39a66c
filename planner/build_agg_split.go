package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/types"
)

// splitDistinct is Flink's split distinct aggregation
// (table.optimizer.distinct-agg.split.enabled): a group aggregation with
// COUNT(DISTINCT x) or SUM(DISTINCT x) becomes two, so that one hot
// group's distinct values spread over bucket-num subtasks' state:
//
//	GroupAggregate(groupBy=[k], partialFinalType=[FINAL])     SUM of the counts, SUM of the sums, MIN of the MINs, MAX of the MAXs
//	+- GroupAggregate(groupBy=[k, $b0], partialFinalType=[PARTIAL])   the original aggregates
//	   +- Calc(k, args, MOD(HASH_CODE(x), bucket-num) AS $b0)
//
// Each value of x falls in one bucket, so the distinct values of the
// group are the disjoint union of its buckets' and the sums add up. The
// other aggregates of the query are computed per bucket too and merged
// by the final level. Distinct aggregates of different arguments need
// different bucket keys: an Expand then copies each row once per
// argument (and once for the non-distinct aggregates), with $e telling
// the copies apart, the other copies' bucket keys NULL and each
// aggregate's argument NULL in the copies that are not its own
// (aggregates skip NULL arguments, and COUNT(*) becomes a COUNT of TRUE).
// A FILTER (WHERE c) stays on the partial aggregate (its argument is
// CASE WHEN c THEN x END, build_agg_filter.go) while the bucket is of x
// alone, so several filters on one column share a bucket key, as in
// Flink.
//
// agg is the planned one-level aggregation over pre (computed from in);
// distinctArgs[i] is aggregate i's argument without its FILTER, for the
// distinct ones. It returns nil when the option is off or the
// aggregation does not qualify: it must hold a COUNT or SUM DISTINCT,
// and its aggregates must all be COUNT, SUM, MIN or MAX (Flink splits
// AVG too; here an aggregation with AVG or another function stays in
// one level).
func (b *builder) splitDistinct(in Node, pre []expr.Expr, preCols []expr.Column, agg *AggNode, distinctArgs []expr.Expr) (Node, error) {
	if b.p.Conf == nil || !b.p.Conf.Bool("table.optimizer.distinct-agg.split.enabled") {
		return nil, nil
	}
	splittable := false
	for _, a := range agg.Aggs {
		switch a.Kind {
		case operators.AggCount, operators.AggSum:
			splittable = splittable || a.Distinct
		case operators.AggCountStar, operators.AggMin, operators.AggMax:
		default:
			return nil, nil
		}
	}
	if !splittable {
		return nil, nil
	}
	nBuckets := b.p.Conf.Int("table.optimizer.distinct-agg.split.bucket-num")
	if nBuckets <= 0 {
		return nil, fmt.Errorf("table.optimizer.distinct-agg.split.enabled is true, so table.optimizer.distinct-agg.split.bucket-num must be above 0")
	}
	nk := len(agg.GroupKeys)
	// One bucket key per distinct argument; set[i] is aggregate i's copy
	// of the row: 0 for the non-distinct aggregates, 1+j for those of
	// bucket key j.
	var buckets []expr.Expr
	byArg := map[string]int{}
	set := make([]int, len(agg.Aggs))
	nonDistinct := false
	for i, a := range agg.Aggs {
		if !a.Distinct || (a.Kind != operators.AggCount && a.Kind != operators.AggSum) {
			nonDistinct = true
			continue
		}
		arg := distinctArgs[i]
		if arg == nil {
			return nil, fmt.Errorf("planner: distinct aggregate %s without its argument", agg.AggText[i])
		}
		key := arg.String()
		if idx, ok := expr.ColumnIndex(arg); ok {
			key = fmt.Sprintf("$%d", idx)
		}
		j, ok := byArg[key]
		if !ok {
			j = len(buckets)
			byArg[key] = j
			buckets = append(buckets, expr.NewHashBucket(arg, nBuckets))
		}
		set[i] = 1 + j
	}
	nb := len(buckets)
	proj := append(append([]expr.Expr(nil), pre...), buckets...)
	cols := append([]expr.Column(nil), preCols...)
	for j, e := range buckets {
		cols = append(cols, expr.Column{Name: "$b" + itoa(j), Type: e.Type()})
	}
	var partialIn Node = newCalc(in, nil, proj, cols)
	partialKeys := allCols(nk)
	for j := range buckets {
		partialKeys = append(partialKeys, len(pre)+j)
	}
	partialAggs := append([]operators.AggCall(nil), agg.Aggs...)
	if nb > 1 {
		partialIn, partialAggs = expandDistinctSets(partialIn, nk, len(pre), nb, nonDistinct, agg.Aggs, set)
		partialKeys = allCols(nk + nb + 1)
	}
	// The partial level: the group keys, the bucket keys (and $e), then
	// one column $a<i> per aggregate.
	pcols := make([]expr.Column, 0, len(partialKeys)+len(partialAggs))
	for _, k := range partialKeys {
		pcols = append(pcols, partialIn.Columns()[k])
	}
	for i := range pcols[:nk] {
		pcols[i].Name = agg.cols[i].Name
	}
	for i, a := range partialAggs {
		pcols = append(pcols, expr.Column{Name: "$a" + itoa(i), Type: a.ResultType})
	}
	partial := newAgg(partialIn, partialKeys, partialAggs, agg.AggText, pcols)
	partial.Phase = "PARTIAL"
	// The final level merges each group's partial rows: counts are summed
	// (a group has a partial row only with rows of its own, so the sum of
	// its counts is never NULL), as are sums; MIN and MAX take theirs.
	finalAggs := make([]operators.AggCall, len(agg.Aggs))
	finalText := make([]string, len(agg.Aggs))
	for i, a := range agg.Aggs {
		pc := pcols[len(partialKeys)+i]
		f := operators.AggCall{Kind: a.Kind, Arg: len(partialKeys) + i, ArgType: pc.Type, ResultType: a.ResultType}
		switch a.Kind {
		case operators.AggCount, operators.AggCountStar, operators.AggSum:
			f.Kind = operators.AggSum
		}
		finalAggs[i], finalText[i] = f, f.Kind.String()+"("+pc.Name+")"
	}
	pnode, err := b.withMiniBatch(partial)
	if err != nil {
		return nil, err
	}
	final := newAgg(pnode, allCols(nk), finalAggs, finalText, agg.cols)
	final.Phase = "FINAL"
	return b.withMiniBatch(final)
}

// expandDistinctSets copies each row of in (the group keys, the
// aggregates' arguments, then nb bucket keys at column nPre on) once per
// set of splitDistinct: the non-distinct aggregates' (when nonDistinct)
// and each bucket key's. A copy holds the group keys, the bucket keys
// with the others' NULL, $e (the set's number), then one argument per
// aggregate, NULL unless the aggregate is of the copy's set. It returns
// the Expand and the aggregates over its columns: each aggregate reads
// its own argument column, and COUNT(*) counts its column's TRUEs.
func expandDistinctSets(in Node, nk, nPre, nb int, nonDistinct bool, aggs []operators.AggCall, set []int) (Node, []operators.AggCall) {
	inCols := in.Columns()
	ref := func(i int) expr.Expr { return expr.NewColumnRef(i, inCols[i].Name, inCols[i].Type) }
	null := func(t types.Type) expr.Expr { return expr.NewLiteral(types.NullValue, t.Nullable()) }
	cols := append([]expr.Column(nil), inCols[:nk]...)
	for j := 0; j < nb; j++ {
		c := inCols[nPre+j]
		c.Type = c.Type.Nullable()
		cols = append(cols, c)
	}
	cols = append(cols, expr.Column{Name: "$e", Type: types.TypeInt.WithNotNull(true)})
	out := make([]operators.AggCall, len(aggs))
	for i, a := range aggs {
		out[i] = a
		out[i].Arg = len(cols)
		t := a.ArgType
		if a.Kind == operators.AggCountStar {
			out[i].Kind, out[i].ArgType, t = operators.AggCount, types.TypeBoolean, types.TypeBoolean
		}
		cols = append(cols, expr.Column{Name: fmt.Sprintf("$arg%d", i), Type: t.Nullable()})
	}
	var projs [][]expr.Expr
	for s := 0; s <= nb; s++ {
		if s == 0 && !nonDistinct {
			continue
		}
		var p []expr.Expr
		for k := 0; k < nk; k++ {
			p = append(p, ref(k))
		}
		for j := 0; j < nb; j++ {
			if s == 1+j {
				p = append(p, ref(nPre+j))
			} else {
				p = append(p, null(cols[nk+j].Type))
			}
		}
		p = append(p, expr.NewLiteral(types.NewInt(int64(s)), types.TypeInt))
		for i, a := range aggs {
			switch {
			case set[i] != s:
				p = append(p, null(cols[out[i].Arg].Type))
			case a.Kind == operators.AggCountStar:
				p = append(p, expr.NewLiteral(types.NewBool(true), types.TypeBoolean))
			default:
				p = append(p, ref(a.Arg))
			}
		}
		projs = append(projs, p)
	}
	return &ExpandNode{nodeBase: nodeBase{cols: cols, inputs: []Node{in}}, Projections: projs}, out
}
