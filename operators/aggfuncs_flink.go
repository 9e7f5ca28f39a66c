package operators

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/types"
)

// The aggregates beyond COUNT, SUM, AVG, MIN and MAX: the STDDEV and VAR
// family, FIRST_VALUE, LAST_VALUE, LISTAGG, PERCENTILE and the JSON
// aggregates. Each keeps what it needs to retract a row; over an
// insert-only input the order-keeping ones keep only their result.

// ---------------------------------------------------------------------------
// STDDEV_POP, STDDEV_SAMP, VAR_POP, VAR_SAMP
//
// Flink does not run these as functions of their own: its planner
// rewrites them (Calcite's AggregateReduceFunctionsRule) into SUM(x*x),
// SUM(x) and COUNT(x) combined as
//
//	VAR_POP  = (SUM(x*x) - SUM(x)*SUM(x) / COUNT(x)) / COUNT(x)
//	VAR_SAMP = (SUM(x*x) - SUM(x)*SUM(x) / COUNT(x)) / NULLIF(COUNT(x) - 1, 0)
//	STDDEV_* = POWER(VAR_*, 0.5)
//
// evaluated in the aggregate's result type, which is the argument's for
// INT, BIGINT and DOUBLE, and DECIMAL(38, max(6, s)) for DECIMAL(p, s).
// varianceAcc keeps the three sums and evaluates the same expression with
// the same types, so the results match Flink's, including the truncation
// of integer arithmetic: VAR_POP of the INTs 1, 2, 3, 4 is 1, not 1.25.
// Where Flink's Java arithmetic would wrap around, an overflow here is an
// error.

type varianceAcc struct {
	kind       AggKind
	num        types.TypeID // Int, BigInt, Double or Decimal
	n          int64
	isum, isq  int64
	fsum, fsq  float64
	dsum, dsq  apd.Decimal
	lo, hi     int64 // range of the integer type
	scale      int32 // DECIMAL: the result scale max(6, s)
	sqScale    int32 // DECIMAL: the scale of x*x and SUM(x)*SUM(x)
	diffScale  int32 // DECIMAL: the scale of the difference and the quotient
	precDigits int32 // 38
}

func newVarianceAcc(c AggCall) (*varianceAcc, error) {
	a := &varianceAcc{kind: c.Kind, num: c.ArgType.ID, lo: math.MinInt64, hi: math.MaxInt64, precDigits: types.MaxDecimalPrecision}
	switch c.ArgType.ID {
	case types.Int:
		a.lo, a.hi = math.MinInt32, math.MaxInt32
	case types.BigInt, types.Double:
	case types.Decimal:
		// Flink's DECIMAL rules (see expr's doc): the argument is cast to
		// DECIMAL(38, rs); a product of two of those has scale
		// max(2rs - 39, 6); a quotient by COUNT keeps its dividend's scale;
		// the difference of two DECIMAL(38, k) has scale max(k - 1, 6).
		rs := int32(max(6, c.ArgType.Scale))
		a.scale = rs
		a.sqScale = max(2*rs-39, 6)
		a.diffScale = max(a.sqScale-1, 6)
	default:
		return nil, fmt.Errorf("%s of %s is not supported", c.Kind, c.ArgType)
	}
	return a, nil
}

func (a *varianceAcc) overflow(what string) error {
	return fmt.Errorf("%s overflow in %s (%s)", a.num, a.kind, what)
}

// checkedMul multiplies within [lo, hi].
func (a *varianceAcc) checkedMul(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, true
	}
	p := x * y
	if p/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) || p < a.lo || p > a.hi {
		return 0, false
	}
	return p, true
}

func (a *varianceAcc) checkedAdd(x, y int64) (int64, bool) {
	s := x + y
	if (y > 0 && s < x) || (y < 0 && s > x) || s < a.lo || s > a.hi {
		return 0, false
	}
	return s, true
}

// roundDec rounds d HALF_UP to scale and checks it fits 38 digits.
func (a *varianceAcc) roundDec(d *apd.Decimal, scale int32) (*apd.Decimal, error) {
	out := new(apd.Decimal)
	if _, err := decCtx.Quantize(out, d, -scale); err != nil || int32(out.NumDigits()) > a.precDigits {
		return nil, a.overflow("DECIMAL(38, " + fmt.Sprint(scale) + ")")
	}
	return out, nil
}

func (a *varianceAcc) update(v types.Value, sign int64) error {
	switch a.num {
	case types.Int, types.BigInt:
		x := v.Int()
		sq, ok := a.checkedMul(x, x)
		if !ok {
			return a.overflow(fmt.Sprintf("%d * %d", x, x))
		}
		if a.isum, ok = a.checkedAdd(a.isum, sign*x); !ok {
			return a.overflow("SUM")
		}
		if a.isq, ok = a.checkedAdd(a.isq, sign*sq); !ok {
			return a.overflow("SUM of squares")
		}
	case types.Double:
		x := v.Float()
		a.fsum += float64(sign) * x
		a.fsq += float64(sign) * x * x
	default:
		x := v.Decimal()
		sq := new(apd.Decimal)
		if _, err := decCtx.Mul(sq, x, x); err != nil {
			return a.overflow("x * x")
		}
		sq, err := a.roundDec(sq, a.sqScale)
		if err != nil {
			return err
		}
		op := decCtx.Add
		if sign < 0 {
			op = decCtx.Sub
		}
		if _, err := op(&a.dsum, &a.dsum, x); err != nil {
			return a.overflow("SUM")
		}
		if _, err := op(&a.dsq, &a.dsq, sq); err != nil {
			return a.overflow("SUM of squares")
		}
	}
	a.n += sign
	// The result's arithmetic can overflow where the sums did not (SUM *
	// SUM): fail on the row that causes it, so that result never has to.
	_, err := a.compute()
	return err
}

func (a *varianceAcc) add(v types.Value) error     { return a.update(v, 1) }
func (a *varianceAcc) retract(v types.Value) error { return a.update(v, -1) }

func (a *varianceAcc) merge(s *varianceAcc) error {
	a.n += s.n
	var ok bool
	if a.isum, ok = a.checkedAdd(a.isum, s.isum); !ok {
		return a.overflow("SUM")
	}
	if a.isq, ok = a.checkedAdd(a.isq, s.isq); !ok {
		return a.overflow("SUM of squares")
	}
	a.fsum += s.fsum
	a.fsq += s.fsq
	if _, err := decCtx.Add(&a.dsum, &a.dsum, &s.dsum); err != nil {
		return a.overflow("SUM")
	}
	if _, err := decCtx.Add(&a.dsq, &a.dsq, &s.dsq); err != nil {
		return a.overflow("SUM of squares")
	}
	_, err := a.compute()
	return err
}

func (a *varianceAcc) samp() bool { return a.kind == AggStddevSamp || a.kind == AggVarSamp }
func (a *varianceAcc) sqrt() bool { return a.kind == AggStddevPop || a.kind == AggStddevSamp }

func (a *varianceAcc) denominator() (int64, bool) {
	if a.samp() {
		if a.n == 1 {
			return 0, false // NULLIF(COUNT(x) - 1, 0)
		}
		return a.n - 1, true
	}
	return a.n, true
}

// result cannot fail: update and merge computed it already.
func (a *varianceAcc) result() types.Value {
	v, _ := a.compute()
	return v
}

func (a *varianceAcc) compute() (types.Value, error) {
	den, ok := a.denominator()
	if a.n <= 0 || !ok {
		return types.NullValue, nil
	}
	switch a.num {
	case types.Int, types.BigInt:
		ss, ok := a.checkedMul(a.isum, a.isum)
		if !ok {
			return types.NullValue, a.overflow("SUM * SUM")
		}
		v := (a.isq - ss/a.n) / den // BIGINT arithmetic, truncating
		if a.sqrt() {
			v = int64(math.Pow(float64(v), 0.5))
		}
		return types.NewInt(v), nil
	case types.Double:
		v := (a.fsq - a.fsum*a.fsum/float64(a.n)) / float64(den)
		if a.sqrt() {
			v = math.Pow(v, 0.5)
		}
		return types.NewFloat(v), nil
	}
	sum := new(apd.Decimal).Set(&a.dsum)
	ss := new(apd.Decimal)
	if _, err := decCtx.Mul(ss, sum, sum); err != nil {
		return types.NullValue, a.overflow("SUM * SUM")
	}
	ss, err := a.roundDec(ss, a.sqScale)
	if err != nil {
		return types.NullValue, err
	}
	avg := new(apd.Decimal)
	if _, err := decCtx.Quo(avg, ss, apd.New(a.n, 0)); err != nil {
		return types.NullValue, a.overflow("division")
	}
	if avg, err = a.roundDec(avg, a.sqScale); err != nil {
		return types.NullValue, err
	}
	diff := new(apd.Decimal)
	if _, err := decCtx.Sub(diff, &a.dsq, avg); err != nil {
		return types.NullValue, a.overflow("difference")
	}
	if diff, err = a.roundDec(diff, a.diffScale); err != nil {
		return types.NullValue, err
	}
	q := new(apd.Decimal)
	if _, err := decCtx.Quo(q, diff, apd.New(den, 0)); err != nil {
		return types.NullValue, a.overflow("division")
	}
	if q, err = a.roundDec(q, a.diffScale); err != nil {
		return types.NullValue, err
	}
	if a.sqrt() {
		variance := q
		f, _ := variance.Float64()
		q = new(apd.Decimal)
		if _, err := q.SetFloat64(math.Pow(f, 0.5)); err != nil {
			// Rounding each step can leave a tiny negative variance,
			// whose square root Flink cannot make a DECIMAL either.
			return types.NullValue, fmt.Errorf("%s of a negative variance %s", a.kind, variance)
		}
	}
	out, err := a.roundDec(q, a.scale)
	if err != nil {
		return types.NullValue, err
	}
	return types.NewDecimal(out), nil
}

func (a *varianceAcc) encode(dst []byte) []byte {
	dst = binary.AppendVarint(dst, a.n)
	switch a.num {
	case types.Int, types.BigInt:
		dst = binary.AppendVarint(binary.AppendVarint(dst, a.isum), a.isq)
	case types.Double:
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(a.fsum))
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(a.fsq))
	default:
		dst = types.AppendValue(dst, types.NewDecimal(&a.dsum))
		dst = types.AppendValue(dst, types.NewDecimal(&a.dsq))
	}
	return dst
}

func (a *varianceAcc) decode(b []byte) ([]byte, error) {
	n, b, err := readVarint(b)
	if err != nil {
		return nil, err
	}
	a.n = n
	switch a.num {
	case types.Int, types.BigInt:
		if a.isum, b, err = readVarint(b); err != nil {
			return nil, err
		}
		a.isq, b, err = readVarint(b)
		return b, err
	case types.Double:
		if len(b) < 16 {
			return nil, types.ErrCorrupt
		}
		a.fsum = math.Float64frombits(binary.BigEndian.Uint64(b))
		a.fsq = math.Float64frombits(binary.BigEndian.Uint64(b[8:]))
		return b[16:], nil
	}
	for _, d := range []*apd.Decimal{&a.dsum, &a.dsq} {
		v, rest, err := types.DecodeValue(b)
		if err != nil || v.Kind() != types.KindDecimal {
			return nil, types.ErrCorrupt
		}
		d.Set(v.Decimal())
		b = rest
	}
	return b, nil
}

// ---------------------------------------------------------------------------
// FIRST_VALUE, LAST_VALUE, LISTAGG, JSON_ARRAYAGG, ARRAY_AGG: values in
// arrival order

// seqAcc keeps the accumulated values in arrival order. A retraction
// removes the earliest copy of the value, as Flink's retracting
// FIRST_VALUE, LAST_VALUE and LISTAGG do. Over an insert-only input
// (keep false) FIRST_VALUE keeps one value and LAST_VALUE the latest.
type seqAcc struct {
	kind AggKind
	keep bool // retractable: keep every value
	vals []types.Value
	sep  string // LISTAGG's separator
}

func (a *seqAcc) add(v types.Value) error {
	switch {
	case a.keep:
		a.vals = append(a.vals, v)
	case a.kind == AggFirstValue:
		if len(a.vals) == 0 {
			a.vals = append(a.vals, v)
		}
	case a.kind == AggLastValue:
		a.vals = append(a.vals[:0], v)
	default:
		a.vals = append(a.vals, v)
	}
	return nil
}

func (a *seqAcc) retract(v types.Value) error {
	if !a.keep {
		return fmt.Errorf("%s received a retraction on a plan that declared its input insert-only", a.kind)
	}
	var buf, kb [32]byte
	want := types.AppendValue(buf[:0], v)
	for i, x := range a.vals {
		if string(types.AppendValue(kb[:0], x)) == string(want) {
			a.vals = append(a.vals[:i], a.vals[i+1:]...)
			return nil
		}
	}
	return fmt.Errorf("retraction of value %s that was never accumulated", types.Format(v, types.Type{}))
}

func (a *seqAcc) merge(s *seqAcc) error {
	for _, v := range s.vals {
		if err := a.add(v); err != nil {
			return err
		}
	}
	return nil
}

func (a *seqAcc) result() types.Value {
	switch a.kind {
	case AggFirstValue:
		if len(a.vals) == 0 {
			return types.NullValue
		}
		return a.vals[0]
	case AggLastValue:
		if len(a.vals) == 0 {
			return types.NullValue
		}
		return a.vals[len(a.vals)-1]
	case AggArrayAgg:
		if len(a.vals) == 0 {
			return types.NullValue
		}
		return types.NewArray(append([]types.Value(nil), a.vals...))
	case AggJSONArrayAgg:
		var sb strings.Builder
		sb.WriteByte('[')
		for i, v := range a.vals {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(v.Str())
		}
		sb.WriteByte(']')
		return types.NewString(sb.String())
	}
	if len(a.vals) == 0 { // LISTAGG
		return types.NullValue
	}
	parts := make([]string, len(a.vals))
	for i, v := range a.vals {
		parts[i] = v.Str()
	}
	return types.NewString(strings.Join(parts, a.sep))
}

func (a *seqAcc) encode(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(a.vals)))
	for _, v := range a.vals {
		dst = types.AppendValue(dst, v)
	}
	return dst
}

func (a *seqAcc) decode(b []byte) ([]byte, error) {
	n, b, err := readCount(b)
	if err != nil {
		return nil, err
	}
	a.vals = make([]types.Value, 0, n)
	for i := uint64(0); i < n; i++ {
		v, rest, err := types.DecodeValue(b)
		if err != nil {
			return nil, err
		}
		a.vals = append(a.vals, v)
		b = rest
	}
	return b, nil
}

// ---------------------------------------------------------------------------
// JSON_OBJECTAGG

// jsonObjectAcc collects the members "key":value that the planner's
// projection builds (the JSON text of the key, a colon, the value's JSON).
// A key may occur once, as in Flink; the object lists its members in key
// order.
type jsonObjectAcc struct {
	members map[string]string // key text -> member
}

// memberKey returns the quoted key at the start of a member.
func memberKey(m string) (string, error) {
	if len(m) == 0 || m[0] != '"' {
		return "", fmt.Errorf("JSON_OBJECTAGG: malformed member %q", m)
	}
	for i := 1; i < len(m); i++ {
		switch m[i] {
		case '\\':
			i++
		case '"':
			return m[:i+1], nil
		}
	}
	return "", fmt.Errorf("JSON_OBJECTAGG: malformed member %q", m)
}

func (a *jsonObjectAcc) add(v types.Value) error {
	k, err := memberKey(v.Str())
	if err != nil {
		return err
	}
	if _, dup := a.members[k]; dup {
		return fmt.Errorf("JSON_OBJECTAGG: duplicate key %s", k)
	}
	a.members[k] = v.Str()
	return nil
}

func (a *jsonObjectAcc) retract(v types.Value) error {
	k, err := memberKey(v.Str())
	if err != nil {
		return err
	}
	delete(a.members, k)
	return nil
}

func (a *jsonObjectAcc) merge(s *jsonObjectAcc) error {
	for _, m := range s.members {
		if err := a.add(types.NewString(m)); err != nil {
			return err
		}
	}
	return nil
}

func (a *jsonObjectAcc) result() types.Value {
	keys := make([]string, 0, len(a.members))
	for k := range a.members {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(a.members[k])
	}
	sb.WriteByte('}')
	return types.NewString(sb.String())
}

func (a *jsonObjectAcc) encode(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(a.members)))
	for _, m := range a.members {
		dst = types.AppendValue(dst, types.NewString(m))
	}
	return dst
}

func (a *jsonObjectAcc) decode(b []byte) ([]byte, error) {
	n, b, err := readCount(b)
	if err != nil {
		return nil, err
	}
	a.members = map[string]string{}
	for i := uint64(0); i < n; i++ {
		v, rest, err := types.DecodeValue(b)
		if err != nil || v.Kind() != types.KindString {
			return nil, types.ErrCorrupt
		}
		if err := a.add(v); err != nil {
			return nil, err
		}
		b = rest
	}
	return b, nil
}

// ---------------------------------------------------------------------------
// PERCENTILE

// percentileAcc is PERCENTILE(x, p): the value at position p * (n - 1) of
// the sorted values, interpolated linearly between its neighbours, as
// Flink's continuous percentile.
type percentileAcc struct {
	p   float64
	set *multiset
}

func (a *percentileAcc) add(v types.Value) error { a.set.add(v); return nil }
func (a *percentileAcc) retract(v types.Value) error {
	return a.set.remove(v)
}

func (a *percentileAcc) result() types.Value {
	type entry struct {
		x float64
		n int64
	}
	var es []entry
	var total int64
	for _, e := range a.set.m {
		es = append(es, entry{types.ToFloat(e.v), e.n})
		total += e.n
	}
	if total == 0 {
		return types.NullValue
	}
	sort.Slice(es, func(i, j int) bool { return es[i].x < es[j].x })
	pos := a.p * float64(total-1)
	lo, hi := int64(math.Floor(pos)), int64(math.Ceil(pos))
	at := func(i int64) float64 {
		for _, e := range es {
			if i < e.n {
				return e.x
			}
			i -= e.n
		}
		return es[len(es)-1].x
	}
	l, h := at(lo), at(hi)
	return types.NewFloat(l + (pos-float64(lo))*(h-l))
}

func (a *percentileAcc) encode(dst []byte) []byte { return a.set.encode(dst) }
func (a *percentileAcc) decode(b []byte) ([]byte, error) {
	a.set = newMultiset()
	return a.set.decode(b)
}
