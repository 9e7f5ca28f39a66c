package planner

import (
	"strconv"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/operators"
	"github.com/streamsql/streamsql/operators/window"
	"github.com/streamsql/streamsql/types"
)

// Joins over time: interval joins (below), event-time temporal joins
// and window joins; build_lookupjoin.go has processing-time lookup
// joins. The nodes are in node_timejoin.go.

// intervalBounds is the time condition of an interval join:
// Lower <= left.time - right.time <= Upper, in nanoseconds, inclusive.
type intervalBounds struct {
	leftTime, rightTime int // columns of the left and right input
	lower, upper        int64
	// conjuncts are the ON conjuncts the bounds came from; the join does
	// not evaluate them again.
	conjuncts map[ast.ExprNode]bool
}

// consumes reports whether the ON conjunct c is one of the time bounds.
func (tb *intervalBounds) consumes(c ast.ExprNode) bool {
	return tb != nil && tb.conjuncts[c]
}

// intervalJoinBounds looks for the bounds of an event-time interval join
// in the conjuncts of on: comparisons (or a BETWEEN) between a rowtime
// column of each side, each side possibly shifted by a constant
// day-time interval, giving both a lower and an upper bound of the
// difference. It returns nil when the join is not an interval join —
// then it is planned as a regular join, which is what Flink does too —
// for example when a time column is not a rowtime attribute or an input
// is updating.
func (b *builder) intervalJoinBounds(on ast.ExprNode, l, r rel) (*intervalBounds, error) {
	if !l.node.Mode().IsInsertOnly() || !r.node.Mode().IsInsertOnly() {
		return nil, nil
	}
	nl := len(l.scope)
	scope := append(append([]expr.Column(nil), l.scope...), r.scope...)
	attrs := append(l.node.timeAttrs(), r.node.timeAttrs()...)
	rowtime := func(col int) bool { return attrs[col] == attrRowtime }
	tb := &intervalBounds{leftTime: -1, rightTime: -1, conjuncts: map[ast.ExprNode]bool{}}
	hasLower, hasUpper := false, false
	var boundAt ast.ExprNode // the conjunct of the latest bound, for errors
	for _, c := range splitAnd(on, nil) {
		var cmps []timeCmp
		switch x := unparen(c).(type) {
		case *ast.BetweenExpr:
			if x.Not {
				continue
			}
			cmps = []timeCmp{{x.Expr, opcode.GE, x.Left}, {x.Expr, opcode.LE, x.Right}}
		case *ast.BinaryOperationExpr:
			switch x.Op {
			case opcode.GE, opcode.GT, opcode.LE, opcode.LT:
				cmps = []timeCmp{{x.L, x.Op, x.R}}
			}
		}
		if cmps == nil {
			continue
		}
		var found []timeBound
		for _, cmp := range cmps {
			bd, ok, err := b.timeBound(cmp, scope, nl, rowtime)
			if err != nil {
				return nil, err
			}
			if !ok {
				found = nil
				break
			}
			found = append(found, bd)
		}
		if found == nil {
			continue
		}
		for _, bd := range found {
			if tb.leftTime >= 0 && (tb.leftTime != bd.leftTime || tb.rightTime != bd.rightTime) {
				return nil, b.errf(c, "an interval join bounds one pair of time attributes; this condition uses another pair")
			}
			tb.leftTime, tb.rightTime = bd.leftTime, bd.rightTime
			if bd.isLower {
				if !hasLower || bd.value > tb.lower {
					tb.lower = bd.value
				}
				hasLower = true
			} else {
				if !hasUpper || bd.value < tb.upper {
					tb.upper = bd.value
				}
				hasUpper = true
			}
		}
		tb.conjuncts[c] = true
		boundAt = c
	}
	if !hasLower || !hasUpper {
		// One-sided: not an interval join (Flink needs both bounds too).
		return nil, nil
	}
	if tb.lower > tb.upper {
		return nil, b.errf(boundAt, "the time bounds of this interval join can never hold (%s > %s)", fmtBound(tb.lower), fmtBound(tb.upper))
	}
	tb.rightTime -= nl
	return tb, nil
}

// timeCmp is one comparison L op R of an ON conjunct.
type timeCmp struct {
	l  ast.ExprNode
	op opcode.Op
	r  ast.ExprNode
}

// timeBound is one bound of left.time - right.time.
type timeBound struct {
	leftTime, rightTime int // in the joined scope
	isLower             bool
	value               int64 // inclusive, ns
}

// timeBound recognises `f(x.ts) op g(y.ts)` where x.ts and y.ts are
// rowtime attributes of different sides and f, g add constant day-time
// intervals, and turns it into a bound of left.ts - right.ts.
func (b *builder) timeBound(c timeCmp, scope []expr.Column, nl int, rowtime func(int) bool) (timeBound, bool, error) {
	le, err := expr.Bind(c.l, &expr.Scope{Columns: scope}, b.stmt.ErrorAtNode)
	if err != nil {
		return timeBound{}, false, err
	}
	re, err := expr.Bind(c.r, &expr.Scope{Columns: scope}, b.stmt.ErrorAtNode)
	if err != nil {
		return timeBound{}, false, err
	}
	lc, loff, ok := timeOffset(le, len(scope))
	if !ok || !rowtime(lc) {
		return timeBound{}, false, nil
	}
	rc, roff, ok := timeOffset(re, len(scope))
	if !ok || !rowtime(rc) {
		return timeBound{}, false, nil
	}
	op := c.op
	if (lc < nl) == (rc < nl) {
		return timeBound{}, false, nil // both on one side: a filter
	}
	if lc >= nl { // y.ts + a op x.ts + b  =>  x.ts + b flip(op) y.ts + a
		lc, rc, loff, roff = rc, lc, roff, loff
		op = map[opcode.Op]opcode.Op{opcode.GE: opcode.LE, opcode.GT: opcode.LT, opcode.LE: opcode.GE, opcode.LT: opcode.GT}[op]
	}
	// lt + loff op rt + roff  <=>  lt - rt op roff - loff
	v := roff - loff
	bd := timeBound{leftTime: lc, rightTime: rc}
	switch op {
	case opcode.GE:
		bd.isLower, bd.value = true, v
	case opcode.GT:
		bd.isLower, bd.value = true, v+1
	case opcode.LE:
		bd.value = v
	case opcode.LT:
		bd.value = v - 1
	}
	return bd, true, nil
}

// timeOffsetProbes are the instants at which timeOffset checks that an
// expression is its column plus a constant: month ends and leap days
// tell a month or year interval from a day-time one.
var timeOffsetProbes = []int64{
	time.Date(2001, 1, 31, 0, 0, 0, 0, time.UTC).UnixNano(),
	time.Date(2001, 2, 28, 12, 0, 0, 0, time.UTC).UnixNano(),
	time.Date(2000, 2, 29, 23, 59, 59, 0, time.UTC).UnixNano(),
	time.Date(1999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixNano(),
}

// timeOffset reports whether e is a TIMESTAMP expression of exactly one
// column plus a constant (ts, ts + INTERVAL '1' HOUR, DATE_SUB(ts, ...)),
// and returns the column and the constant in nanoseconds. It checks the
// shape by evaluation at a few instants, which accepts every spelling
// the binder produces and rejects month intervals (not constant).
func timeOffset(e expr.Expr, width int) (int, int64, bool) {
	if e.Type().ID != types.Timestamp || !expr.IsDeterministic(e) {
		return 0, 0, false
	}
	col := -1
	expr.Walk(e, func(x expr.Expr) bool {
		if idx, ok := expr.ColumnIndex(x); ok && col < 0 {
			col = idx
		}
		return col < 0
	})
	if col < 0 || !onlyColumn(e, col) {
		return 0, 0, false
	}
	row := make(types.Row, width)
	var off int64
	for i, t := range timeOffsetProbes {
		row[col] = types.NewTimestamp(t)
		v, err := e.Eval(row)
		if err != nil || v.IsNull() || v.Kind() != types.KindTimestamp {
			return 0, 0, false
		}
		d := v.Timestamp() - t
		if i > 0 && d != off {
			return 0, 0, false
		}
		off = d
	}
	return col, off, true
}

// onlyColumn reports whether every column reference of e is col.
func onlyColumn(e expr.Expr, col int) bool {
	ok := true
	expr.Walk(e, func(x expr.Expr) bool {
		if idx, isCol := expr.ColumnIndex(x); isCol && idx != col {
			ok = false
		}
		return true
	})
	return ok
}

// fmtBound renders a bound in milliseconds (with a fraction when it is
// not whole, as a strict bound over nanoseconds is).
func fmtBound(ns int64) string {
	if ns%int64(time.Millisecond) == 0 {
		return strconv.FormatInt(ns/int64(time.Millisecond), 10) + "ms"
	}
	return strconv.FormatFloat(float64(ns)/1e6, 'f', -1, 64) + "ms"
}

// newIntervalJoin turns the planned regular join jn into an interval
// join with the bounds tb.
func newIntervalJoin(jn *JoinNode, tb *intervalBounds) *IntervalJoinNode {
	return &IntervalJoinNode{JoinNode: *jn, LeftTime: tb.leftTime, RightTime: tb.rightTime, Lower: tb.lower, Upper: tb.upper}
}

// ---- temporal joins ----

// detachAsOf takes a temporal join's FOR SYSTEM_TIME AS OF (TiDB's AS OF
// TIMESTAMP) off the right side's table name, so the table builds as a
// plain one; reattach puts it back, since view and CTE ASTs are built
// again on every use.
func detachAsOf(right ast.ResultSetNode) (asOf *ast.AsOfClause, reattach func()) {
	ts, ok := right.(*ast.TableSource)
	if !ok {
		return nil, func() {}
	}
	tn, ok := ts.Source.(*ast.TableName)
	if !ok || tn.AsOf == nil {
		return nil, func() {}
	}
	asOf, tn.AsOf = tn.AsOf, nil
	return asOf, func() { tn.AsOf = asOf }
}

// newTemporalJoin turns the planned join jn of l with a versioned table
// into an event-time temporal join: the right side must have a primary
// key (upsert key) covered by the join keys and one rowtime attribute;
// the AS OF time must be a rowtime attribute of the left side.
func (b *builder) newTemporalJoin(jn *JoinNode, asOf *ast.AsOfClause, l rel) (*TemporalJoinNode, error) {
	if jn.Type != operators.InnerJoin && jn.Type != operators.LeftJoin {
		return nil, b.errf(asOf.TsExpr, "a temporal join (FOR SYSTEM_TIME AS OF) is an INNER or LEFT join")
	}
	te, err := expr.Bind(asOf.TsExpr, &expr.Scope{Columns: l.scope}, b.stmt.ErrorAtNode)
	if err != nil {
		return nil, err
	}
	lt, ok := expr.ColumnIndex(te)
	if !ok || !isRowtime(l.node, lt) {
		return nil, b.errf(asOf.TsExpr, "FOR SYSTEM_TIME AS OF needs a rowtime attribute of the left side (a column with a WATERMARK); %s is not one (or a PROCTIME() attribute, for a lookup join)", te)
	}
	ln, rn := jn.inputs[0], jn.inputs[1]
	// An updating left input gives an updating output: each row keeps
	// its kind, as in Flink. It must retract with -U (an upsert stream's
	// +U alone could not be joined with the version its old row saw).
	if m := ln.Mode(); m.HasUpdates() && !m.Contains(dyntable.UpdateBefore) {
		return nil, b.errf(asOf.TsExpr, "an event-time temporal join takes an updating left input only with -U rows; it is an upsert stream (%s)", m)
	}
	pk := rn.UpsertKey()
	var rts []int
	for i, a := range rn.timeAttrs() {
		if a == attrRowtime {
			rts = append(rts, i)
		}
	}
	if pk == nil || len(rts) != 1 {
		return nil, b.errf(asOf.TsExpr, "the right side of a temporal join must be a versioned table: a PRIMARY KEY (or a deduplicating view) and a WATERMARK")
	}
	for _, k := range pk {
		found := false
		for _, rk := range jn.RightKeys {
			found = found || rk == k
		}
		if !found {
			return nil, b.errf(asOf.TsExpr, "a temporal join's ON condition must equate the versioned table's whole primary key (%s)", colNames(rn.Columns(), pk))
		}
	}
	return &TemporalJoinNode{JoinNode: *jn, LeftTime: lt, RightTime: rts[0]}, nil
}

// ---- the dispatch from buildJoin ----

// timeJoin turns the planned regular join jn into a join over time when
// it is one: an interval join when tb holds time bounds, a temporal join
// when the right side had FOR SYSTEM_TIME AS OF, a window join when both
// sides are windowed and the keys equate their window_start and
// window_end; otherwise it returns jn.
func (b *builder) timeJoin(jn *JoinNode, tb *intervalBounds, asOf *ast.AsOfClause, l rel) (Node, error) {
	switch {
	case tb != nil:
		return newIntervalJoin(jn, tb), nil
	case asOf != nil:
		// AS OF a PROCTIME() attribute: a lookup join (build_lookupjoin.go).
		if lj, ok, err := b.lookupJoin(jn, asOf, l); ok || err != nil {
			return lj, err
		}
		return b.newTemporalJoin(jn, asOf, l)
	}
	if wj := newWindowJoin(jn); wj != nil {
		return wj, nil
	}
	return jn, nil
}

// ---- window joins ----

// newWindowJoin returns jn as a window join when both inputs are
// insert-only event-time windowed relations and the keys pair their
// window_start and their window_end, else nil.
func newWindowJoin(jn *JoinNode) *WindowJoinNode {
	ln, rn := jn.inputs[0], jn.inputs[1]
	if !ln.Mode().IsInsertOnly() || !rn.Mode().IsInsertOnly() {
		return nil
	}
	start, end := -1, -1
	for i := range jn.LeftKeys {
		lw, lc, lok := windowColOf(ln, jn.LeftKeys[i])
		rw, rc, rok := windowColOf(rn, jn.RightKeys[i])
		if !lok || !rok || lc != rc || procTimeWindow(lw) || procTimeWindow(rw) {
			continue
		}
		switch lc {
		case window.WinStart:
			start = i
		case window.WinEnd:
			end = i
		}
	}
	if start < 0 || end < 0 {
		return nil
	}
	return &WindowJoinNode{JoinNode: *jn, LeftEnd: jn.LeftKeys[end], RightEnd: jn.RightKeys[end]}
}

// procTimeWindow reports whether a window node windows processing time.
func procTimeWindow(n Node) bool {
	switch x := n.(type) {
	case *WindowTVFNode:
		return x.ProcTime
	case *WindowAggNode:
		return x.ProcTime
	}
	return true // unknown: not a window join
}
