package operators

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/types"
)

// AggKind names an aggregate function.
type AggKind uint8

// Aggregate functions of group aggregation.
const (
	AggCountStar AggKind = iota // COUNT(*): counts rows
	AggCount                    // COUNT(x): counts non-NULL x
	AggSum
	AggAvg
	AggMin
	AggMax
	AggStddevPop // aggfuncs_flink.go from here on
	AggStddevSamp
	AggVarPop
	AggVarSamp
	AggFirstValue
	AggLastValue
	AggListAgg       // Param: the separator
	AggPercentile    // Param: the percentage, a DOUBLE in [0, 1]
	AggJSONArrayAgg  // the argument is each element's JSON text
	AggJSONObjectAgg // the argument is each member's "key":value text
	AggLag           // OVER only; Offset: rows back, Param: the default (aggfunc_lag.go)
	AggArrayAgg      // ARRAY_AGG: the values in arrival order
	AggCollect       // COLLECT: the non-NULL values as a MULTISET (aggfunc_collect.go)
)

var aggNames = [...]string{"COUNT(*)", "COUNT", "SUM", "AVG", "MIN", "MAX",
	"STDDEV_POP", "STDDEV_SAMP", "VAR_POP", "VAR_SAMP", "FIRST_VALUE", "LAST_VALUE",
	"LISTAGG", "PERCENTILE", "JSON_ARRAYAGG", "JSON_OBJECTAGG", "LAG", "ARRAY_AGG", "COLLECT"}

func (k AggKind) String() string { return aggNames[k] }

// AggCall is one aggregate of a GROUP BY.
type AggCall struct {
	Kind     AggKind
	Arg      int // input column; unused for COUNT(*)
	Distinct bool
	// ArgType and ResultType were fixed by the planner:
	//   COUNT -> BIGINT NOT NULL
	//   SUM   -> INT for INT, BIGINT for BIGINT, DOUBLE, DECIMAL(38, s)
	//   AVG   -> the argument's type for INT/BIGINT/DOUBLE (integer AVG
	//            truncates, as Flink's does), DECIMAL(38, max(s, 6))
	//   MIN, MAX -> the argument's type
	//   STDDEV_*, VAR_* -> as AVG
	//   FIRST_VALUE, LAST_VALUE -> the argument's type
	//   LISTAGG, JSON_ARRAYAGG, JSON_OBJECTAGG -> STRING
	//   PERCENTILE -> DOUBLE
	//   ARRAY_AGG -> ARRAY of the argument's type
	//   COLLECT -> MULTISET of the argument's type
	ArgType, ResultType types.Type
	// Param is a constant second argument: LISTAGG's separator,
	// PERCENTILE's percentage, LAG's default.
	Param types.Value
	// Offset is LAG's offset, how many rows back.
	Offset int
	// KeepNulls: the aggregate sees NULL arguments too (ARRAY_AGG
	// without IGNORE NULLS); every other aggregate skips them.
	KeepNulls bool
	// Filtered: only rows whose input column Filter is TRUE reach the
	// aggregate. The planner uses it for FILTER (WHERE c) on a KeepNulls
	// aggregate, which cannot mask the rows that fail c with a NULL
	// argument as the others' FILTER does (planner/build_agg_filter.go).
	Filtered bool
	Filter   int
}

// accumulator is the running state of one aggregate in one group. add
// and retract see only non-NULL values (COUNT(*) sees a placeholder),
// except LAG's, which sees every value (aggfunc_lag.go), and those of a
// KeepNulls call (ARRAY_AGG's seqAcc, maybe inside a distinctAcc).
type accumulator interface {
	add(v types.Value) error
	retract(v types.Value) error
	result() types.Value
	encode(dst []byte) []byte
	decode(b []byte) ([]byte, error)
}

// decCtx is the DECIMAL context for aggregates: 38 digits, overflow is
// an error (the documented rule).
var decCtx = func() *apd.Context {
	c := apd.BaseContext.WithPrecision(types.MaxDecimalPrecision)
	c.Rounding = apd.RoundHalfUp
	c.Traps = apd.Overflow | apd.InvalidOperation | apd.DivisionByZero
	return c
}()

func newAccumulator(c AggCall, retracts bool) (accumulator, error) {
	var a accumulator
	switch c.Kind {
	case AggCountStar, AggCount:
		a = &countAcc{}
	case AggSum, AggAvg:
		switch c.ArgType.ID {
		case types.Int, types.BigInt:
			lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
			if c.ResultType.ID == types.Int {
				lo, hi = math.MinInt32, math.MaxInt32
			}
			a = &intSumAcc{avg: c.Kind == AggAvg, lo: lo, hi: hi}
		case types.Double:
			a = &floatSumAcc{avg: c.Kind == AggAvg}
		case types.Decimal:
			a = &decSumAcc{avg: c.Kind == AggAvg, scale: int32(c.ResultType.Scale)}
		default:
			return nil, fmt.Errorf("%s of %s is not supported", c.Kind, c.ArgType)
		}
	case AggMin, AggMax:
		sign := 1
		if c.Kind == AggMin {
			sign = -1
		}
		// DISTINCT does not change MIN or MAX.
		if retracts {
			return &retractExtremeAcc{sign: sign, set: newMultiset()}, nil
		}
		return &extremeAcc{sign: sign}, nil
	case AggStddevPop, AggStddevSamp, AggVarPop, AggVarSamp:
		va, err := newVarianceAcc(c)
		if err != nil {
			return nil, err
		}
		a = va
	case AggFirstValue, AggLastValue, AggListAgg, AggJSONArrayAgg, AggArrayAgg:
		sa := &seqAcc{kind: c.Kind, keep: retracts}
		if c.Kind == AggListAgg {
			if c.Param.Kind() != types.KindString {
				return nil, fmt.Errorf("LISTAGG without a separator")
			}
			sa.sep = c.Param.Str()
		}
		a = sa
	case AggJSONObjectAgg:
		a = &jsonObjectAcc{members: map[string]string{}}
	case AggLag:
		return newLagAcc(c)
	case AggPercentile:
		if c.Param.Kind() != types.KindFloat || !(c.Param.Float() >= 0 && c.Param.Float() <= 1) {
			return nil, fmt.Errorf("PERCENTILE without a percentage between 0 and 1")
		}
		a = &percentileAcc{p: c.Param.Float(), set: newMultiset()}
	case AggCollect:
		a = &collectAcc{set: newMultiset()}
	default:
		return nil, fmt.Errorf("unknown aggregate %d", c.Kind)
	}
	if c.Distinct && c.Kind != AggCountStar {
		a = &distinctAcc{inner: a}
	}
	return a, nil
}

// aggOp is how GroupAgg computes one aggregate: in int64 words of the
// group state (all but opAcc) or by an accumulator object (opAcc).
type aggOp uint8

const (
	opCountStar aggOp = iota // the group's row count
	opCount                  // the non-NULL count of the argument
	opIntSum                 // SUM/AVG of INT/BIGINT: word is the sum
	opFloatSum               // SUM/AVG of DOUBLE: word holds the float64 bits of the sum
	opIntMin                 // insert-only MIN of INT/BIGINT: word is the minimum
	opIntMax                 // insert-only MAX of INT/BIGINT: word is the maximum
	opAcc                    // anything else: an accumulator from newAccumulator
)

// aggPlan is the per-operator configuration of one aggregate, so that
// per-group state holds data only.
type aggPlan struct {
	op     aggOp
	avg    bool
	arg    int
	nn     int   // word counting the non-NULL values of arg (not for opCountStar, opAcc)
	word   int   // the aggregate's own word (opIntSum, opFloatSum, opIntMin, opIntMax)
	lo, hi int64 // range of an integer SUM
	acc    int   // opAcc: index into groupExt.accs
	nulls  bool  // AggCall.KeepNulls: NULL arguments are accumulated
	filter int   // AggCall.Filter when Filtered, else -1
}

// planAgg decides how an aggregate is computed; GroupAgg assigns the
// words. It accepts exactly the calls newAccumulator accepts. The word
// aggregates compute what countAcc, intSumAcc, floatSumAcc and
// extremeAcc would: with n the non-NULL count, a SUM or AVG is NULL when
// n is 0 and an extreme is unset when n is 0.
func planAgg(c AggCall, retracts bool) (aggPlan, error) {
	if _, err := newAccumulator(c, retracts); err != nil {
		return aggPlan{}, err
	}
	if c.KeepNulls && c.Kind != AggArrayAgg {
		return aggPlan{}, fmt.Errorf("%s cannot keep NULL values", c.Kind)
	}
	p := aggPlan{op: opAcc, arg: c.Arg, avg: c.Kind == AggAvg, nulls: c.KeepNulls, filter: -1}
	if c.Filtered {
		p.filter = c.Filter
	}
	intArg := c.ArgType.ID == types.Int || c.ArgType.ID == types.BigInt
	switch c.Kind {
	case AggCountStar:
		p.op = opCountStar
	case AggCount:
		if !c.Distinct {
			p.op = opCount
		}
	case AggSum, AggAvg:
		switch {
		case c.Distinct:
		case intArg:
			p.op = opIntSum
			p.lo, p.hi = math.MinInt64, math.MaxInt64
			if c.ResultType.ID == types.Int {
				p.lo, p.hi = math.MinInt32, math.MaxInt32
			}
		case c.ArgType.ID == types.Double:
			p.op = opFloatSum
		}
	case AggMin, AggMax:
		// DISTINCT does not change MIN or MAX.
		if !retracts && intArg {
			p.op = opIntMin
			if c.Kind == AggMax {
				p.op = opIntMax
			}
		}
	}
	return p, nil
}

var errInsertOnlyExtreme = errors.New("MIN/MAX received a retraction on a plan that declared its input insert-only")

// The accumulators below compute one aggregate each. GroupAgg runs the
// common ones in words of the group state instead (see planAgg); these
// remain for DISTINCT, which wraps them, and for the rest.

type countAcc struct{ n int64 }

func (a *countAcc) add(types.Value) error     { a.n++; return nil }
func (a *countAcc) retract(types.Value) error { a.n--; return nil }
func (a *countAcc) result() types.Value       { return types.NewInt(a.n) }
func (a *countAcc) encode(dst []byte) []byte  { return binary.AppendVarint(dst, a.n) }
func (a *countAcc) decode(b []byte) ([]byte, error) {
	n, rest, err := readVarint(b)
	if err != nil {
		return nil, err
	}
	a.n = n
	return rest, nil
}

// intSumAcc sums INT/BIGINT with overflow checking against [lo, hi].
type intSumAcc struct {
	sum, n int64
	avg    bool
	lo, hi int64
}

func (a *intSumAcc) add(v types.Value) error {
	x := v.Int()
	s := a.sum + x
	if (x > 0 && s < a.sum) || (x < 0 && s > a.sum) || s < a.lo || s > a.hi {
		return fmt.Errorf("integer overflow in SUM: %d + %d", a.sum, x)
	}
	a.sum, a.n = s, a.n+1
	return nil
}

func (a *intSumAcc) retract(v types.Value) error {
	x := v.Int()
	s := a.sum - x
	if (x < 0 && s < a.sum) || (x > 0 && s > a.sum) {
		return fmt.Errorf("integer overflow in SUM: %d - %d", a.sum, x)
	}
	a.sum, a.n = s, a.n-1
	return nil
}

func (a *intSumAcc) result() types.Value {
	if a.n == 0 {
		return types.NullValue
	}
	if a.avg {
		return types.NewInt(a.sum / a.n)
	}
	return types.NewInt(a.sum)
}

func (a *intSumAcc) encode(dst []byte) []byte {
	return binary.AppendVarint(binary.AppendVarint(dst, a.sum), a.n)
}

func (a *intSumAcc) decode(b []byte) (rest []byte, err error) {
	if a.sum, rest, err = readVarint(b); err != nil {
		return nil, err
	}
	a.n, rest, err = readVarint(rest)
	return rest, err
}

type floatSumAcc struct {
	sum float64
	n   int64
	avg bool
}

func (a *floatSumAcc) add(v types.Value) error     { a.sum += v.Float(); a.n++; return nil }
func (a *floatSumAcc) retract(v types.Value) error { a.sum -= v.Float(); a.n--; return nil }
func (a *floatSumAcc) result() types.Value {
	if a.n == 0 {
		return types.NullValue
	}
	if a.avg {
		return types.NewFloat(a.sum / float64(a.n))
	}
	return types.NewFloat(a.sum)
}
func (a *floatSumAcc) encode(dst []byte) []byte {
	return binary.AppendVarint(binary.BigEndian.AppendUint64(dst, math.Float64bits(a.sum)), a.n)
}
func (a *floatSumAcc) decode(b []byte) ([]byte, error) {
	if len(b) < 8 {
		return nil, types.ErrCorrupt
	}
	a.sum = math.Float64frombits(binary.BigEndian.Uint64(b))
	n, rest, err := readVarint(b[8:])
	if err != nil {
		return nil, err
	}
	a.n = n
	return rest, nil
}

type decSumAcc struct {
	sum   apd.Decimal
	n     int64
	avg   bool
	scale int32
}

func (a *decSumAcc) add(v types.Value) error {
	if _, err := decCtx.Add(&a.sum, &a.sum, v.Decimal()); err != nil {
		return fmt.Errorf("DECIMAL overflow in SUM: %v", err)
	}
	a.n++
	return nil
}

func (a *decSumAcc) retract(v types.Value) error {
	if _, err := decCtx.Sub(&a.sum, &a.sum, v.Decimal()); err != nil {
		return fmt.Errorf("DECIMAL overflow in SUM: %v", err)
	}
	a.n--
	return nil
}

func (a *decSumAcc) result() types.Value {
	if a.n == 0 {
		return types.NullValue
	}
	r := new(apd.Decimal)
	if a.avg {
		if _, err := decCtx.Quo(r, &a.sum, apd.New(a.n, 0)); err != nil {
			return types.NullValue
		}
	} else {
		r.Set(&a.sum)
	}
	q := new(apd.Decimal)
	c := *decCtx
	c.Rounding = apd.RoundDown // Flink truncates AVG of DECIMAL to the result scale
	if !a.avg {
		c.Rounding = apd.RoundHalfUp
	}
	if _, err := c.Quantize(q, r, -a.scale); err != nil {
		return types.NullValue
	}
	return types.NewDecimal(q)
}

func (a *decSumAcc) encode(dst []byte) []byte {
	dst = types.AppendValue(dst, types.NewDecimal(&a.sum))
	return binary.AppendVarint(dst, a.n)
}

func (a *decSumAcc) decode(b []byte) ([]byte, error) {
	v, rest, err := types.DecodeValue(b)
	if err != nil || v.Kind() != types.KindDecimal {
		return nil, types.ErrCorrupt
	}
	a.sum.Set(v.Decimal())
	n, rest, err := readVarint(rest)
	if err != nil {
		return nil, err
	}
	a.n = n
	return rest, nil
}

// extremeAcc is MIN/MAX over an insert-only input: just the extreme.
type extremeAcc struct {
	v    types.Value
	sign int
}

func (a *extremeAcc) add(v types.Value) error {
	if a.v.IsNull() || types.Compare(v, a.v)*a.sign > 0 {
		a.v = v
	}
	return nil
}

func (a *extremeAcc) retract(types.Value) error { return errInsertOnlyExtreme }

func (a *extremeAcc) result() types.Value      { return a.v }
func (a *extremeAcc) encode(dst []byte) []byte { return types.AppendValue(dst, a.v) }
func (a *extremeAcc) decode(b []byte) ([]byte, error) {
	v, rest, err := types.DecodeValue(b)
	if err != nil {
		return nil, err
	}
	a.v = v
	return rest, nil
}

// retractExtremeAcc is MIN/MAX over an input with retractions: it keeps a
// multiset of the live values so that retracting the current extreme
// finds the next one.
type retractExtremeAcc struct {
	sign int
	set  *multiset
	v    types.Value
}

func (a *retractExtremeAcc) add(v types.Value) error {
	a.set.add(v)
	if a.v.IsNull() || types.Compare(v, a.v)*a.sign > 0 {
		a.v = v
	}
	return nil
}

func (a *retractExtremeAcc) retract(v types.Value) error {
	if err := a.set.remove(v); err != nil {
		return err
	}
	if types.Compare(v, a.v) == 0 && a.set.count(v) == 0 {
		a.v = a.set.extreme(a.sign)
	}
	return nil
}

func (a *retractExtremeAcc) result() types.Value { return a.v }
func (a *retractExtremeAcc) encode(dst []byte) []byte {
	return a.set.encode(dst)
}
func (a *retractExtremeAcc) decode(b []byte) ([]byte, error) {
	a.set = newMultiset()
	rest, err := a.set.decode(b)
	if err != nil {
		return nil, err
	}
	a.v = a.set.extreme(a.sign)
	return rest, nil
}

// multiset counts values by their key encoding. Its map is made on the
// first value: a group holds one multiset per DISTINCT aggregate (and
// per retractable MIN/MAX or PERCENTILE), and many of them stay empty,
// e.g. the DISTINCT aggregates of the other arguments in a split
// distinct aggregation's partial groups.
type multiset struct {
	m map[string]*msEntry
}

type msEntry struct {
	v types.Value
	n int64
}

func newMultiset() *multiset { return &multiset{} }

func (s *multiset) add(v types.Value) int64 {
	var buf [32]byte
	k := types.AppendValue(buf[:0], v)
	e := s.m[string(k)]
	if e == nil {
		if s.m == nil {
			s.m = make(map[string]*msEntry, 1)
		}
		e = &msEntry{v: v}
		s.m[string(k)] = e
	}
	e.n++
	return e.n
}

func (s *multiset) count(v types.Value) int64 {
	var buf [32]byte
	if e := s.m[string(types.AppendValue(buf[:0], v))]; e != nil {
		return e.n
	}
	return 0
}

func (s *multiset) remove(v types.Value) error {
	var buf [32]byte
	k := types.AppendValue(buf[:0], v)
	e := s.m[string(k)]
	if e == nil {
		return fmt.Errorf("retraction of value %s that was never accumulated", types.Format(v, types.Type{}))
	}
	e.n--
	if e.n == 0 {
		delete(s.m, string(k))
	}
	return nil
}

// extreme returns the largest (sign 1) or smallest (sign -1) value, or
// NULL when the set is empty.
func (s *multiset) extreme(sign int) types.Value {
	var best types.Value
	for _, e := range s.m {
		if best.IsNull() || types.Compare(e.v, best)*sign > 0 {
			best = e.v
		}
	}
	return best
}

func (s *multiset) encode(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s.m)))
	for _, e := range s.m {
		dst = types.AppendValue(dst, e.v)
		dst = binary.AppendVarint(dst, e.n)
	}
	return dst
}

func (s *multiset) decode(b []byte) ([]byte, error) {
	return readCounted(b, func(n int) {
		if s.m == nil {
			s.m = make(map[string]*msEntry, n)
		}
	}, func(key []byte, v types.Value, c int64) {
		s.m[string(key)] = &msEntry{v: v, n: c}
	})
}

// readCounted reads the layout multiset.encode and valueCounts.encode
// write: an entry count, then each value's types.AppendValue bytes and its
// positive count. It calls start with the entry count when there are
// entries, then each with the value's bytes (its key in either set), the
// decoded value and its count.
func readCounted(b []byte, start func(n int), each func(key []byte, v types.Value, c int64)) ([]byte, error) {
	n, b, err := readCount(b)
	if err != nil {
		return nil, err
	}
	if n > 0 {
		start(int(n))
	}
	for i := uint64(0); i < n; i++ {
		v, rest, err := types.DecodeValue(b)
		if err != nil {
			return nil, err
		}
		c, k := binary.Varint(rest)
		if k <= 0 || c <= 0 { // a value's count is positive: it leaves the set at 0
			return nil, types.ErrCorrupt
		}
		each(b[:len(b)-len(rest)], v, c)
		b = rest[k:]
	}
	return b, nil
}
