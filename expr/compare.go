package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamsql/streamsql/internal/numcmp"
	"github.com/streamsql/streamsql/types"
)

type cmpOp uint8

const (
	cmpEQ cmpOp = iota
	cmpNE
	cmpLT
	cmpLE
	cmpGT
	cmpGE
	cmpNullEQ // <=>
)

var cmpSyms = [...]string{cmpEQ: "=", cmpNE: "<>", cmpLT: "<", cmpLE: "<=", cmpGT: ">", cmpGE: ">=", cmpNullEQ: "<=>"}

// flip returns the operator for swapped operands.
func (o cmpOp) flip() cmpOp {
	switch o {
	case cmpLT:
		return cmpGT
	case cmpLE:
		return cmpGE
	case cmpGT:
		return cmpLT
	case cmpGE:
		return cmpLE
	}
	return o
}

func (o cmpOp) holds(c int) bool {
	switch o {
	case cmpEQ, cmpNullEQ:
		return c == 0
	case cmpNE:
		return c != 0
	case cmpLT:
		return c < 0
	case cmpLE:
		return c <= 0
	case cmpGT:
		return c > 0
	}
	return c >= 0
}

type cmpMode uint8

const (
	cmInt     cmpMode = iota // raw int64 payloads: INT, BIGINT, BOOLEAN, DATE, TIMESTAMP, TIME, INTERVAL
	cmFloat                  // numbers compared as float64
	cmDecimal                // numbers compared as decimals
	cmString
	cmAny // types.Compare (only used with NULL literals)
)

// cmpValues compares two non-NULL values in mode m.
func cmpValues(m cmpMode, a, b types.Value) int {
	switch m {
	case cmInt:
		return numcmp.Int(a.Raw(), b.Raw())
	case cmFloat:
		return numcmp.Float(types.ToFloat(a), types.ToFloat(b))
	case cmDecimal:
		return types.ToDecimal(a).Cmp(types.ToDecimal(b))
	case cmString:
		return strings.Compare(a.Str(), b.Str())
	}
	return types.Compare(a, b)
}

// comparePrep decides how l and r compare, converting operands where the
// rules allow (DATE vs TIMESTAMP, string literal vs DATE/TIMESTAMP). It
// returns a non-nil error message if the types are not comparable.
//
// TIMESTAMP_LTZ values compare as instants. Against a TIMESTAMP, a DATE or
// a string literal the other side is read as a wall clock in loc (the
// session zone) and compared as the instant it names there, as Flink's
// implicit cast to TIMESTAMP_LTZ does.
func comparePrep(sym string, l, r Expr, loc *time.Location) (Expr, Expr, cmpMode, error) {
	lt, rt := l.Type(), r.Type()
	if lt.ID == types.Null || rt.ID == types.Null {
		return l, r, cmAny, nil
	}
	if lt.ID == types.TimestampLTZ || rt.ID == types.TimestampLTZ {
		toLTZ := func(e Expr, other types.Type) (Expr, error) {
			t := e.Type()
			switch {
			case t.ID == types.TimestampLTZ:
				return e, nil
			case t.ID == types.String:
				if _, ok := e.(*literal); !ok {
					return nil, fmt.Errorf("cannot compare STRING with %s without an explicit CAST", typeName(other))
				}
				return ImplicitCastIn(e, types.TimestampLTZType(9), loc)
			case isTemporal(t):
				return newCast(e, types.TimestampLTZType(9), false, loc)
			}
			return nil, fmt.Errorf("cannot apply '%s' to %s and %s", sym, typeName(lt), typeName(rt))
		}
		nl, err := toLTZ(l, rt)
		if err != nil {
			return nil, nil, 0, err
		}
		nr, err := toLTZ(r, lt)
		if err != nil {
			return nil, nil, 0, err
		}
		return nl, nr, cmInt, nil
	}
	// A string literal next to a DATE/TIMESTAMP/TIME is converted to it.
	if lt.ID == types.String && rt.ID == types.Time {
		nl, err := timeLiteral(l) // timeofday.go
		if err != nil {
			return nil, nil, 0, err
		}
		l, lt = nl, nl.Type()
	} else if rt.ID == types.String && lt.ID == types.Time {
		nr, err := timeLiteral(r)
		if err != nil {
			return nil, nil, 0, err
		}
		r, rt = nr, nr.Type()
	}
	if lt.ID == types.String && isTemporal(rt) {
		nl, err := temporalLiteral(l, rt)
		if err != nil {
			return nil, nil, 0, err
		}
		l, lt = nl, nl.Type()
	} else if rt.ID == types.String && isTemporal(lt) {
		nr, err := temporalLiteral(r, lt)
		if err != nil {
			return nil, nil, 0, err
		}
		r, rt = nr, nr.Type()
	}
	switch {
	case lt.IsNumeric() && rt.IsNumeric():
		switch {
		case lt.IsInteger() && rt.IsInteger():
			return l, r, cmInt, nil
		case lt.ID == types.Double || rt.ID == types.Double:
			return l, r, cmFloat, nil
		}
		return l, r, cmDecimal, nil
	case lt.ID == rt.ID:
		switch lt.ID {
		case types.String, types.Bytes: // BYTES: unsigned byte order, as Flink
			return l, r, cmString, nil
		case types.Boolean, types.Date, types.Timestamp, types.Interval, types.Time, types.IntervalYM:
			return l, r, cmInt, nil
		}
	case isTemporal(lt) && isTemporal(rt):
		// DATE vs TIMESTAMP: compare as TIMESTAMP.
		if lt.ID == types.Date {
			l = dateToTs(l)
		} else {
			r = dateToTs(r)
		}
		return l, r, cmInt, nil
	}
	return nil, nil, 0, fmt.Errorf("cannot apply '%s' to %s and %s", sym, typeName(lt), typeName(rt))
}

func dateToTs(e Expr) Expr {
	c, _ := ImplicitCast(e, types.TimestampType(0))
	return c
}

// temporalLiteral converts a string literal compared with a DATE or
// TIMESTAMP. A text with a time part becomes a TIMESTAMP even against a
// DATE, so that no information is lost.
func temporalLiteral(e Expr, want types.Type) (Expr, error) {
	lit, ok := e.(*literal)
	if !ok {
		return nil, fmt.Errorf("cannot compare STRING with %s without an explicit CAST", typeName(want))
	}
	s := lit.v.Str()
	days, tod, frac, hasTime, ok := parseDateTime(s)
	if !ok {
		return nil, fmt.Errorf("cannot convert %s to %s", renderValue(lit.v, lit.typ), typeName(want))
	}
	if want.ID == types.Date && !hasTime {
		return NewLiteral(types.NewDate(days), types.TypeDate), nil
	}
	ns, ok := tsFromDaysNanos(days, tod)
	if !ok {
		return nil, fmt.Errorf("cannot convert %s to %s: out of range", renderValue(lit.v, lit.typ), typeName(want))
	}
	return NewLiteral(types.NewTimestamp(ns), types.TimestampType(frac)), nil
}

// compare is a binary comparison.
type compare struct {
	op     cmpOp
	l, r   Expr
	mode   cmpMode
	li, ri intExpr // int fast path (mode cmInt), nil if unavailable
}

// cmpColLit compares a column with a non-NULL literal.
type cmpColLit struct {
	compare
	idx int
	lit types.Value
	x   int64 // lit's payload for cmInt
}

func newCompare(op cmpOp, l, r Expr, m cmpMode) Expr {
	c := compare{op: op, l: l, r: r, mode: m}
	if op != cmpNullEQ && m != cmAny {
		if col, ok := l.(*colRef); ok {
			if lit, ok := r.(*literal); ok && !lit.v.IsNull() {
				return &cmpColLit{compare: c, idx: col.idx, lit: lit.v, x: lit.v.Raw()}
			}
		}
	}
	if m == cmInt {
		c.li, c.ri = asIntExpr(l), asIntExpr(r)
	}
	return &c
}

func (c *compare) Type() types.Type {
	return types.Type{ID: types.Boolean, NotNull: c.op == cmpNullEQ || (c.l.Type().NotNull && c.r.Type().NotNull)}
}
func (c *compare) String() string {
	return "(" + c.l.String() + " " + cmpSyms[c.op] + " " + c.r.String() + ")"
}
func (c *compare) children() []Expr           { return []Expr{c.l, c.r} }
func (c *compare) withChildren(k []Expr) Expr { return newCompare(c.op, k[0], k[1], c.mode) }

func (c *compare) Eval(row types.Row) (types.Value, error) {
	t, err := c.evalTruth(row)
	return truthValues[t], err
}

func (c *compare) evalTruth(row types.Row) (uint8, error) {
	if c.li != nil && c.ri != nil {
		x, xn, err := c.li.evalInt(row)
		if err != nil {
			return 2, err
		}
		y, yn, err := c.ri.evalInt(row)
		if err != nil {
			return 2, err
		}
		if xn || yn {
			if c.op == cmpNullEQ {
				return b2u(xn && yn), nil
			}
			return 2, nil
		}
		return b2u(c.op.holds(numcmp.Int(x, y))), nil
	}
	lv, err := c.l.Eval(row)
	if err != nil {
		return 2, err
	}
	rv, err := c.r.Eval(row)
	if err != nil {
		return 2, err
	}
	if lv.IsNull() || rv.IsNull() {
		if c.op == cmpNullEQ {
			return b2u(lv.IsNull() && rv.IsNull()), nil
		}
		return 2, nil
	}
	return b2u(c.op.holds(cmpValues(c.mode, lv, rv))), nil
}

func (c *cmpColLit) withChildren(k []Expr) Expr { return newCompare(c.op, k[0], k[1], c.mode) }

func (c *cmpColLit) Eval(row types.Row) (types.Value, error) {
	t, err := c.evalTruth(row)
	return truthValues[t], err
}

func (c *cmpColLit) evalTruth(row types.Row) (uint8, error) {
	v := &row[c.idx]
	if v.IsNull() {
		return 2, nil
	}
	if c.mode == cmInt {
		x, y := v.Raw(), c.x
		switch c.op {
		case cmpEQ:
			return b2u(x == y), nil
		case cmpNE:
			return b2u(x != y), nil
		case cmpLT:
			return b2u(x < y), nil
		case cmpLE:
			return b2u(x <= y), nil
		case cmpGT:
			return b2u(x > y), nil
		default:
			return b2u(x >= y), nil
		}
	}
	return b2u(c.op.holds(cmpValues(c.mode, *v, c.lit))), nil
}

// ---------------------------------------------------------------------------
// Boolean logic

type logicOp uint8

const (
	logicAnd logicOp = iota
	logicOr
	logicXor
)

var logicSyms = [...]string{"AND", "OR", "XOR"}

type logic struct {
	op     logicOp
	l, r   Expr
	lt, rt truthExpr // fast paths, nil if unavailable
}

func newLogic(op logicOp, l, r Expr) *logic {
	return &logic{op: op, l: l, r: r, lt: asTruthExpr(l), rt: asTruthExpr(r)}
}

func (x *logic) Type() types.Type {
	return types.Type{ID: types.Boolean, NotNull: x.l.Type().NotNull && x.r.Type().NotNull}
}
func (x *logic) String() string {
	return "(" + x.l.String() + " " + logicSyms[x.op] + " " + x.r.String() + ")"
}
func (x *logic) children() []Expr           { return []Expr{x.l, x.r} }
func (x *logic) withChildren(k []Expr) Expr { return newLogic(x.op, k[0], k[1]) }

// truthExpr is implemented by boolean nodes that can report their
// three-valued result (0 false, 1 true, 2 NULL) without building a Value.
type truthExpr interface {
	evalTruth(row types.Row) (uint8, error)
}

func asTruthExpr(e Expr) truthExpr {
	t, _ := e.(truthExpr)
	return t
}

// truthOf evaluates a boolean expression to 0 false, 1 true, 2 NULL.
func truthOf(e Expr, te truthExpr, row types.Row) (uint8, error) {
	if te != nil {
		return te.evalTruth(row)
	}
	v, err := e.Eval(row)
	if err != nil {
		return 2, err
	}
	return truthOfValue(v), nil
}

func truthOfValue(v types.Value) uint8 {
	if v.IsNull() {
		return 2
	}
	return uint8(v.Raw() & 1)
}

var truthValues = [3]types.Value{types.NewBool(false), types.NewBool(true), types.NullValue}

func (x *logic) Eval(row types.Row) (types.Value, error) {
	t, err := x.evalTruth(row)
	return truthValues[t], err
}

func (x *logic) evalTruth(row types.Row) (uint8, error) {
	a, err := truthOf(x.l, x.lt, row)
	if err != nil {
		return 2, err
	}
	switch x.op {
	case logicAnd:
		if a == 0 {
			return 0, nil
		}
	case logicOr:
		if a == 1 {
			return 1, nil
		}
	}
	b, err := truthOf(x.r, x.rt, row)
	if err != nil {
		return 2, err
	}
	switch x.op {
	case logicAnd:
		if b == 0 {
			return 0, nil
		}
		if a == 2 || b == 2 {
			return 2, nil
		}
		return 1, nil
	case logicOr:
		if b == 1 {
			return 1, nil
		}
		if a == 2 || b == 2 {
			return 2, nil
		}
		return 0, nil
	}
	if a == 2 || b == 2 {
		return 2, nil
	}
	return a ^ b, nil
}

type not struct {
	e  Expr
	te truthExpr
}

func (x *not) Type() types.Type {
	return types.Type{ID: types.Boolean, NotNull: x.e.Type().NotNull}
}
func (x *not) String() string             { return "(NOT " + x.e.String() + ")" }
func (x *not) children() []Expr           { return []Expr{x.e} }
func (x *not) withChildren(k []Expr) Expr { return &not{e: k[0], te: asTruthExpr(k[0])} }
func (x *not) Eval(row types.Row) (types.Value, error) {
	t, err := x.evalTruth(row)
	return truthValues[t], err
}
func (x *not) evalTruth(row types.Row) (uint8, error) {
	t, err := truthOf(x.e, x.te, row)
	if t < 2 {
		t = 1 - t
	}
	return t, err
}

// isNull is IS [NOT] NULL.
type isNull struct {
	e   Expr
	not bool
}

func (x *isNull) Type() types.Type { return types.Type{ID: types.Boolean, NotNull: true} }
func (x *isNull) String() string {
	if x.not {
		return "(" + x.e.String() + " IS NOT NULL)"
	}
	return "(" + x.e.String() + " IS NULL)"
}
func (x *isNull) children() []Expr           { return []Expr{x.e} }
func (x *isNull) withChildren(k []Expr) Expr { return &isNull{e: k[0], not: x.not} }
func (x *isNull) Eval(row types.Row) (types.Value, error) {
	t, err := x.evalTruth(row)
	return truthValues[t], err
}
func (x *isNull) evalTruth(row types.Row) (uint8, error) {
	v, err := x.e.Eval(row)
	if err != nil {
		return 2, err
	}
	return b2u(v.IsNull() != x.not), nil
}

// isTruth is IS [NOT] TRUE / FALSE.
type isTruth struct {
	e    Expr
	not  bool
	want bool
}

func (x *isTruth) Type() types.Type { return types.Type{ID: types.Boolean, NotNull: true} }
func (x *isTruth) String() string {
	s := "(" + x.e.String() + " IS "
	if x.not {
		s += "NOT "
	}
	if x.want {
		return s + "TRUE)"
	}
	return s + "FALSE)"
}
func (x *isTruth) children() []Expr { return []Expr{x.e} }
func (x *isTruth) withChildren(k []Expr) Expr {
	return &isTruth{e: k[0], not: x.not, want: x.want}
}
func (x *isTruth) Eval(row types.Row) (types.Value, error) {
	t, err := x.evalTruth(row)
	return truthValues[t], err
}
func (x *isTruth) evalTruth(row types.Row) (uint8, error) {
	v, err := x.e.Eval(row)
	if err != nil {
		return 2, err
	}
	is := !v.IsNull() && (v.Raw() != 0) == x.want
	return b2u(is != x.not), nil
}

// ---------------------------------------------------------------------------
// IN, BETWEEN

type inList struct {
	e     Expr
	list  []Expr
	modes []cmpMode
	not   bool
	// Set lookups when every list item is a literal of one int/string mode.
	ints    map[int64]struct{}
	strs    map[string]struct{}
	hasNull bool
}

func newInList(e Expr, list []Expr, modes []cmpMode, not bool) Expr {
	x := &inList{e: e, list: list, modes: modes, not: not}
	allLit, mode := true, cmpMode(255)
	for i, it := range list {
		lit, ok := it.(*literal)
		if !ok {
			allLit = false
			break
		}
		if lit.v.IsNull() {
			x.hasNull = true
			continue
		}
		if mode == 255 {
			mode = modes[i]
		} else if modes[i] != mode {
			allLit = false
			break
		}
	}
	if allLit && len(list) > 3 && (mode == cmInt || mode == cmString) {
		for _, it := range list {
			v := it.(*literal).v
			if v.IsNull() {
				continue
			}
			if mode == cmInt {
				if x.ints == nil {
					x.ints = make(map[int64]struct{}, len(list))
				}
				x.ints[v.Raw()] = struct{}{}
			} else {
				if x.strs == nil {
					x.strs = make(map[string]struct{}, len(list))
				}
				x.strs[v.Str()] = struct{}{}
			}
		}
	}
	return x
}

func (x *inList) Type() types.Type {
	nn := x.e.Type().NotNull
	for _, it := range x.list {
		nn = nn && it.Type().NotNull
	}
	return types.Type{ID: types.Boolean, NotNull: nn}
}
func (x *inList) String() string {
	var b strings.Builder
	b.WriteString("(" + x.e.String())
	if x.not {
		b.WriteString(" NOT")
	}
	b.WriteString(" IN (")
	for i, it := range x.list {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(it.String())
	}
	b.WriteString("))")
	return b.String()
}
func (x *inList) children() []Expr { return append([]Expr{x.e}, x.list...) }
func (x *inList) withChildren(k []Expr) Expr {
	return newInList(k[0], k[1:], x.modes, x.not)
}
func (x *inList) Eval(row types.Row) (types.Value, error) {
	t, err := x.evalTruth(row)
	return truthValues[t], err
}

func (x *inList) evalTruth(row types.Row) (uint8, error) {
	v, err := x.e.Eval(row)
	if err != nil || v.IsNull() {
		return 2, err
	}
	found, unknown := false, x.hasNull
	switch {
	case x.ints != nil:
		_, found = x.ints[v.Raw()]
	case x.strs != nil:
		_, found = x.strs[v.Str()]
	default:
		for i, it := range x.list {
			w, err := it.Eval(row)
			if err != nil {
				return 2, err
			}
			if w.IsNull() {
				unknown = true
				continue
			}
			if cmpValues(x.modes[i], v, w) == 0 {
				found = true
				break
			}
		}
	}
	switch {
	case found:
		return b2u(!x.not), nil
	case unknown:
		return 2, nil
	}
	return b2u(x.not), nil
}

type between struct {
	e, lo, hi    Expr
	mlo, mhi     cmpMode
	not          bool
	ei, loi, hii intExpr // int fast path when both modes are cmInt
}

func newBetween(e, lo, hi Expr, mlo, mhi cmpMode, not bool) *between {
	x := &between{e: e, lo: lo, hi: hi, mlo: mlo, mhi: mhi, not: not}
	if mlo == cmInt && mhi == cmInt {
		x.ei, x.loi, x.hii = asIntExpr(e), asIntExpr(lo), asIntExpr(hi)
		if x.ei == nil || x.loi == nil || x.hii == nil {
			x.ei, x.loi, x.hii = nil, nil, nil
		}
	}
	return x
}

func (x *between) Type() types.Type {
	return types.Type{ID: types.Boolean, NotNull: x.e.Type().NotNull && x.lo.Type().NotNull && x.hi.Type().NotNull}
}
func (x *between) String() string {
	n := ""
	if x.not {
		n = " NOT"
	}
	return "(" + x.e.String() + n + " BETWEEN " + x.lo.String() + " AND " + x.hi.String() + ")"
}
func (x *between) children() []Expr { return []Expr{x.e, x.lo, x.hi} }
func (x *between) withChildren(k []Expr) Expr {
	return newBetween(k[0], k[1], k[2], x.mlo, x.mhi, x.not)
}
func (x *between) Eval(row types.Row) (types.Value, error) {
	t, err := x.evalTruth(row)
	return truthValues[t], err
}

func (x *between) evalTruth(row types.Row) (uint8, error) {
	if x.ei != nil {
		return x.evalTruthInt(row)
	}
	v, err := x.e.Eval(row)
	if err != nil || v.IsNull() {
		return 2, err
	}
	lo, err := x.lo.Eval(row)
	if err != nil {
		return 2, err
	}
	hi, err := x.hi.Eval(row)
	if err != nil {
		return 2, err
	}
	a, b := uint8(2), uint8(2)
	if !lo.IsNull() {
		a = b2u(cmpValues(x.mlo, v, lo) >= 0)
	}
	if !hi.IsNull() {
		b = b2u(cmpValues(x.mhi, v, hi) <= 0)
	}
	return x.truth(a, b), nil
}

func (x *between) evalTruthInt(row types.Row) (uint8, error) {
	v, vn, err := x.ei.evalInt(row)
	if err != nil || vn {
		return 2, err
	}
	lo, lon, err := x.loi.evalInt(row)
	if err != nil {
		return 2, err
	}
	hi, hin, err := x.hii.evalInt(row)
	if err != nil {
		return 2, err
	}
	a, b := uint8(2), uint8(2)
	if !lon {
		a = b2u(v >= lo)
	}
	if !hin {
		b = b2u(v <= hi)
	}
	return x.truth(a, b), nil
}

// truth combines the two bound tests, a = (v >= lo) and b = (v <= hi),
// each 0, 1 or 2 (UNKNOWN, a NULL bound): their three-valued AND,
// negated for NOT BETWEEN (UNKNOWN stays UNKNOWN).
func (x *between) truth(a, b uint8) uint8 {
	var r uint8
	switch {
	case a == 0 || b == 0:
		r = 0
	case a == 2 || b == 2:
		return 2
	default:
		r = 1
	}
	if x.not {
		r = 1 - r
	}
	return r
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// ---------------------------------------------------------------------------
// CASE, COALESCE, IF, NULLIF

type caseExpr struct {
	value Expr // nil for a searched CASE
	whens []Expr
	thens []Expr
	els   Expr // nil: ELSE NULL
	modes []cmpMode
	typ   types.Type
	wt    []truthExpr // fast paths of a searched CASE's conditions
}

// finish computes the fast paths once the children are final.
func (x *caseExpr) finish() *caseExpr {
	x.wt = nil
	if x.value == nil {
		x.wt = make([]truthExpr, len(x.whens))
		for i, w := range x.whens {
			x.wt[i] = asTruthExpr(w)
		}
	}
	return x
}

func (x *caseExpr) Type() types.Type { return x.typ }
func (x *caseExpr) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	if x.value != nil {
		b.WriteString(" " + x.value.String())
	}
	for i := range x.whens {
		b.WriteString(" WHEN " + x.whens[i].String() + " THEN " + x.thens[i].String())
	}
	if x.els != nil {
		b.WriteString(" ELSE " + x.els.String())
	}
	b.WriteString(" END")
	return b.String()
}
func (x *caseExpr) children() []Expr {
	var k []Expr
	if x.value != nil {
		k = append(k, x.value)
	}
	for i := range x.whens {
		k = append(k, x.whens[i], x.thens[i])
	}
	if x.els != nil {
		k = append(k, x.els)
	}
	return k
}
func (x *caseExpr) withChildren(k []Expr) Expr {
	c := *x
	if c.value != nil {
		c.value, k = k[0], k[1:]
	}
	c.whens = make([]Expr, len(x.whens))
	c.thens = make([]Expr, len(x.thens))
	for i := range x.whens {
		c.whens[i], c.thens[i] = k[2*i], k[2*i+1]
	}
	if c.els != nil {
		c.els = k[2*len(x.whens)]
	}
	return c.finish()
}
func (x *caseExpr) Eval(row types.Row) (types.Value, error) {
	if x.value != nil {
		v, err := x.value.Eval(row)
		if err != nil {
			return v, err
		}
		if !v.IsNull() {
			for i, w := range x.whens {
				wv, err := w.Eval(row)
				if err != nil {
					return wv, err
				}
				if !wv.IsNull() && cmpValues(x.modes[i], v, wv) == 0 {
					return x.thens[i].Eval(row)
				}
			}
		}
	} else {
		for i, w := range x.whens {
			t, err := truthOf(w, x.wt[i], row)
			if err != nil {
				return types.NullValue, err
			}
			if t == 1 {
				return x.thens[i].Eval(row)
			}
		}
	}
	if x.els != nil {
		return x.els.Eval(row)
	}
	return types.NullValue, nil
}

// coalesce returns its first non-NULL argument (COALESCE, IFNULL).
type coalesce struct {
	name string
	args []Expr
	typ  types.Type
}

func (x *coalesce) Type() types.Type { return x.typ }
func (x *coalesce) String() string   { return renderCall(x.name, x.args) }
func (x *coalesce) children() []Expr { return x.args }
func (x *coalesce) withChildren(k []Expr) Expr {
	return &coalesce{name: x.name, args: k, typ: x.typ}
}
func (x *coalesce) Eval(row types.Row) (types.Value, error) {
	for _, a := range x.args {
		v, err := a.Eval(row)
		if err != nil || !v.IsNull() {
			return v, err
		}
	}
	return types.NullValue, nil
}

// ifExpr is IF(cond, a, b).
type ifExpr struct {
	c, a, b Expr
	typ     types.Type
}

func (x *ifExpr) Type() types.Type { return x.typ }
func (x *ifExpr) String() string   { return renderCall("IF", []Expr{x.c, x.a, x.b}) }
func (x *ifExpr) children() []Expr { return []Expr{x.c, x.a, x.b} }
func (x *ifExpr) withChildren(k []Expr) Expr {
	return &ifExpr{c: k[0], a: k[1], b: k[2], typ: x.typ}
}
func (x *ifExpr) Eval(row types.Row) (types.Value, error) {
	c, err := x.c.Eval(row)
	if err != nil {
		return c, err
	}
	if !c.IsNull() && c.Raw() != 0 {
		return x.a.Eval(row)
	}
	return x.b.Eval(row)
}

// nullIf is NULLIF(a, b).
type nullIf struct {
	a, b Expr
	mode cmpMode
	typ  types.Type
}

func (x *nullIf) Type() types.Type { return x.typ }
func (x *nullIf) String() string   { return renderCall("NULLIF", []Expr{x.a, x.b}) }
func (x *nullIf) children() []Expr { return []Expr{x.a, x.b} }
func (x *nullIf) withChildren(k []Expr) Expr {
	return &nullIf{a: k[0], b: k[1], mode: x.mode, typ: x.typ}
}
func (x *nullIf) Eval(row types.Row) (types.Value, error) {
	a, err := x.a.Eval(row)
	if err != nil || a.IsNull() {
		return types.NullValue, err
	}
	b, err := x.b.Eval(row)
	if err != nil {
		return b, err
	}
	if !b.IsNull() && cmpValues(x.mode, a, b) == 0 {
		return types.NullValue, nil
	}
	return a, nil
}

func renderCall(name string, args []Expr) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	b.WriteByte(')')
	return b.String()
}

// unify converts exprs to their common type (CASE branches, COALESCE,
// IF, GREATEST). A string literal among DATE/TIMESTAMP values is
// converted to them. what names the construct in the error.
func unify(what string, es []Expr) ([]Expr, types.Type, error) {
	temporal := false
	for _, e := range es {
		if isTemporal(e.Type()) {
			temporal = true
		}
	}
	t := types.Type{ID: types.Null}
	for _, e := range es {
		et := e.Type()
		if _, lit := e.(*literal); lit && temporal && et.ID == types.String {
			continue
		}
		nt, ok := commonType(t, et)
		if !ok {
			return nil, t, fmt.Errorf("%s has incompatible types %s and %s", what, typeName(t), typeName(et))
		}
		t = nt
	}
	out := make([]Expr, len(es))
	for i, e := range es {
		if _, lit := e.(*literal); lit && temporal && isTemporal(t) && e.Type().ID == types.String {
			c, err := temporalLiteral(e, t)
			if err != nil {
				return nil, t, err
			}
			e = c
		}
		c, err := ImplicitCast(e, t)
		if err != nil {
			return nil, t, err
		}
		out[i] = c
	}
	t.NotNull = false
	return out, t, nil
}
