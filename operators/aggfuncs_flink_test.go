package operators

import (
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/streamsql/streamsql/types"
)

func decVal(t *testing.T, s string) types.Value {
	t.Helper()
	d, _, err := apd.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return types.NewDecimal(d)
}

// accRun adds the values, retracts the given ones, checks the result
// against want (as formatted in the result type), and checks that the
// state survives encode/decode.
func accRun(t *testing.T, c AggCall, retracts bool, add, retract []types.Value, want string) {
	t.Helper()
	a, err := newAccumulator(c, retracts)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range add {
		if err := a.add(v); err != nil {
			t.Fatalf("%s: add %v: %v", c.Kind, v, err)
		}
	}
	for _, v := range retract {
		if err := a.retract(v); err != nil {
			t.Fatalf("%s: retract %v: %v", c.Kind, v, err)
		}
	}
	if got := types.Format(a.result(), c.ResultType); got != want {
		t.Errorf("%s(%v) minus %v = %s, want %s", c.Kind, add, retract, got, want)
	}
	b, err := newAccumulator(c, retracts)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := b.decode(a.encode(nil))
	if err != nil || len(rest) != 0 {
		t.Fatalf("%s: decode: %v, %d bytes left", c.Kind, err, len(rest))
	}
	if got := types.Format(b.result(), c.ResultType); got != want {
		t.Errorf("%s after decode = %s, want %s", c.Kind, got, want)
	}
}

func ints(xs ...int64) []types.Value {
	var out []types.Value
	for _, x := range xs {
		out = append(out, types.NewInt(x))
	}
	return out
}

func strs(xs ...string) []types.Value {
	var out []types.Value
	for _, x := range xs {
		out = append(out, types.NewString(x))
	}
	return out
}

// TestVarianceAggregates checks Flink's reduction of the STDDEV and VAR
// aggregates to SUM(x*x), SUM(x) and COUNT(x), evaluated in the result
// type. Worked out by hand for 1, 2, 3, 4: SUM(x*x) = 30, SUM(x) = 10,
// COUNT = 4, so SUM*SUM/COUNT = 25 and the difference is 5.
func TestVarianceAggregates(t *testing.T) {
	intT, dblT := types.TypeInt, types.TypeDouble
	decT := types.DecimalType(10, 2)
	dec6 := types.DecimalType(38, 6)
	for _, c := range []struct {
		kind    AggKind
		typ, rt types.Type
		add     []types.Value
		retract []types.Value
		want    string
	}{
		// INT: integer arithmetic truncates: 5/4 = 1, 5/3 = 1.
		{AggVarPop, intT, intT, ints(1, 2, 3, 4), nil, "1"},
		{AggVarSamp, intT, intT, ints(1, 2, 3, 4), nil, "1"},
		{AggStddevPop, intT, intT, ints(1, 2, 3, 4), nil, "1"},
		{AggStddevSamp, intT, intT, ints(1, 2, 3, 4), nil, "1"},
		// 1, 2, 3 after retracting 4: 14 - 36/3 = 2; 2/3 = 0, 2/2 = 1.
		{AggVarPop, intT, intT, ints(1, 2, 3, 4), ints(4), "0"},
		{AggVarSamp, intT, intT, ints(1, 2, 3, 4), ints(4), "1"},
		// One value: VAR_SAMP divides by NULLIF(0, 0).
		{AggVarSamp, intT, intT, ints(7), nil, "NULL"},
		{AggVarPop, intT, intT, ints(7), nil, "0"},
		{AggVarPop, intT, intT, nil, nil, "NULL"},
		// DOUBLE: 5/4 = 1.25, 5/3, and their square roots.
		{AggVarPop, dblT, dblT, []types.Value{types.NewFloat(1), types.NewFloat(2), types.NewFloat(3), types.NewFloat(4)}, nil, "1.25"},
		{AggVarSamp, dblT, dblT, []types.Value{types.NewFloat(1), types.NewFloat(2), types.NewFloat(3), types.NewFloat(4)}, nil, "1.6666666666666667"},
		{AggStddevPop, dblT, dblT, []types.Value{types.NewFloat(1), types.NewFloat(2), types.NewFloat(3), types.NewFloat(4)}, nil, "1.118033988749895"},
		{AggStddevSamp, dblT, dblT, []types.Value{types.NewFloat(1), types.NewFloat(2), types.NewFloat(3), types.NewFloat(4)}, nil, "1.2909944487358056"},
		// DECIMAL(10, 2) -> DECIMAL(38, 6), each step rounded HALF_UP to
		// 6 places: 5/3 = 1.666667; its square root 1.29099457... ->
		// 1.290995; sqrt(1.25) = 1.11803398... -> 1.118034.
		{AggVarPop, decT, dec6, []types.Value{decVal(t, "1.00"), decVal(t, "2.00"), decVal(t, "3.00"), decVal(t, "4.00")}, nil, "1.250000"},
		{AggVarSamp, decT, dec6, []types.Value{decVal(t, "1.00"), decVal(t, "2.00"), decVal(t, "3.00"), decVal(t, "4.00")}, nil, "1.666667"},
		{AggStddevPop, decT, dec6, []types.Value{decVal(t, "1.00"), decVal(t, "2.00"), decVal(t, "3.00"), decVal(t, "4.00")}, nil, "1.118034"},
		{AggStddevSamp, decT, dec6, []types.Value{decVal(t, "1.00"), decVal(t, "2.00"), decVal(t, "3.00"), decVal(t, "4.00")}, nil, "1.290995"},
	} {
		accRun(t, AggCall{Kind: c.kind, ArgType: c.typ, ResultType: c.rt}, true, c.add, c.retract, c.want)
	}
	// INT arithmetic beyond 32 bits is an error, where Java would wrap.
	a, _ := newAccumulator(AggCall{Kind: AggVarPop, ArgType: intT, ResultType: intT}, false)
	if err := a.add(types.NewInt(50000)); err == nil || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("50000 * 50000 in INT: %v, want an overflow error", err)
	}
}

func TestOrderedAggregates(t *testing.T) {
	s := types.TypeString
	first := AggCall{Kind: AggFirstValue, ArgType: s, ResultType: s}
	last := AggCall{Kind: AggLastValue, ArgType: s, ResultType: s}
	list := AggCall{Kind: AggListAgg, ArgType: s, ResultType: s, Param: types.NewString(",")}
	arr := AggCall{Kind: AggJSONArrayAgg, ArgType: s, ResultType: s}
	for _, retracts := range []bool{false, true} {
		accRun(t, first, retracts, strs("a", "b", "c"), nil, "a")
		accRun(t, last, retracts, strs("a", "b", "c"), nil, "c")
		accRun(t, list, retracts, strs("a", "b", "c"), nil, "a,b,c")
		accRun(t, arr, retracts, strs(`1`, `"x"`), nil, `[1,"x"]`)
		accRun(t, list, retracts, nil, nil, "NULL")
		accRun(t, arr, retracts, nil, nil, "[]")
	}
	// A retraction removes the earliest copy; the next becomes first.
	accRun(t, first, true, strs("a", "b", "a", "c"), strs("a"), "b")
	accRun(t, last, true, strs("a", "b", "c"), strs("c"), "b")
	accRun(t, list, true, strs("a", "b", "a"), strs("a"), "b,a")
	accRun(t, first, true, strs("a"), strs("a"), "NULL")
}

func TestPercentileAndJSONObjectAgg(t *testing.T) {
	d := types.TypeDouble
	p := AggCall{Kind: AggPercentile, ArgType: types.TypeInt, ResultType: d, Param: types.NewFloat(0.25)}
	// Flink's example: PERCENTILE(age, 0.25) over 10, 20, 30, 40 is 17.5
	// (position 0.75 between 10 and 20).
	accRun(t, p, true, ints(40, 10, 30, 20), nil, "17.5")
	accRun(t, p, true, ints(40, 10, 30, 20), ints(10), "25") // 20, 30, 40: position 0.5
	accRun(t, p, true, ints(5, 5, 5), nil, "5")
	accRun(t, p, true, nil, nil, "NULL")
	o := AggCall{Kind: AggJSONObjectAgg, ArgType: types.TypeString, ResultType: types.TypeString}
	accRun(t, o, true, strs(`"b":2`, `"a":1`, `"c\"":null`), nil, `{"a":1,"b":2,"c\"":null}`)
	accRun(t, o, true, strs(`"b":2`, `"a":1`), strs(`"b":2`), `{"a":1}`)
	a, _ := newAccumulator(o, false)
	_ = a.add(types.NewString(`"k":1`))
	if err := a.add(types.NewString(`"k":2`)); err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Errorf("a duplicate key: %v, want an error", err)
	}
}

// TestArrayAggNulls: ARRAY_AGG without IGNORE NULLS accumulates NULLs
// (GroupAgg passes them to a KeepNulls call); they survive encode/decode
// and a retraction of NULL removes the earliest NULL. Under DISTINCT one
// NULL is kept once.
func TestArrayAggNulls(t *testing.T) {
	s := types.TypeString
	arr := AggCall{Kind: AggArrayAgg, ArgType: s, ResultType: types.ArrayType(s), KeepNulls: true}
	null := types.NullValue
	vals := []types.Value{types.NewString("a"), null, types.NewString("b"), null}
	for _, retracts := range []bool{false, true} {
		accRun(t, arr, retracts, vals, nil, "[a, NULL, b, NULL]")
		accRun(t, arr, retracts, []types.Value{null, null}, nil, "[NULL, NULL]")
		accRun(t, arr, retracts, nil, nil, "NULL")
	}
	accRun(t, arr, true, vals, []types.Value{null}, "[a, b, NULL]")
	accRun(t, arr, true, []types.Value{null}, []types.Value{null}, "NULL")
	d := arr
	d.Distinct = true
	accRun(t, d, true, vals, nil, "[a, NULL, b]")
	accRun(t, d, true, vals, []types.Value{null}, "[a, NULL, b]") // one NULL copy left
	accRun(t, d, true, vals, []types.Value{null, null}, "[a, b]") // the last NULL goes
	if _, err := planAgg(AggCall{Kind: AggListAgg, ArgType: s, ResultType: s, Param: types.NewString(","), KeepNulls: true}, false); err == nil {
		t.Error("LISTAGG with KeepNulls was accepted")
	}
}
