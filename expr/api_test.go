package expr

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/streamsql/streamsql/types"
)

func TestString(t *testing.T) {
	cases := []struct{ sql, want string }{
		{"a * 2 + b", "((a * 2) + b)"},
		{"price * 2", "(price * 2)"},
		{"UPPER(s)", "UPPER(s)"},
		{"a > 10 AND b < 100", "((a > 10) AND (b < 100))"},
		{"10 < a", "(a > 10)"},
		{"NOT flag OR nb", "((NOT flag) OR nb)"},
		{"a MOD 3", "(a % 3)"},
		{"a DIV 3", "(a DIV 3)"},
		{"-a", "-a"},
		{"1 + 2", "3"},
		{"-1.5", "-1.5"},
		{"'it''s'", "'it''s'"},
		{"1e3", "1000E0"},
		{"TRUE", "TRUE"},
		{"NULL", "NULL"},
		{"CAST(a AS CHAR)", "CAST(a AS STRING)"},
		{"__cast(a, 'BIGINT')", "CAST(a AS BIGINT)"},
		{"__try_cast(s, 'INT')", "TRY_CAST(s AS INT)"},
		{"a + d", "(a + d)"},
		{"s LIKE 'H%'", "(s LIKE 'H%')"},
		{"s NOT LIKE 'H!%' ESCAPE '!'", "(s NOT LIKE 'H!%' ESCAPE '!')"},
		{"a IN (1, 2)", "(a IN (1, 2))"},
		{"a NOT BETWEEN 1 AND 2", "(a NOT BETWEEN 1 AND 2)"},
		{"n IS NOT NULL", "(n IS NOT NULL)"},
		{"flag IS NOT TRUE", "(flag IS NOT TRUE)"},
		{"CASE WHEN a > 1 THEN 'x' END", "CASE WHEN (a > 1) THEN 'x' END"},
		{"CASE a WHEN 1 THEN 'x' ELSE 'y' END", "CASE a WHEN 1 THEN 'x' ELSE 'y' END"},
		{"COALESCE(n, 1)", "COALESCE(n, 1)"},
		{"IF(flag, 1, 2)", "IF(flag, 1, 2)"},
		{"ts - INTERVAL '5' SECOND", "DATE_SUB(ts, INTERVAL '5' SECOND)"},
		{"ts > '2024-01-01'", "(ts > TIMESTAMP '2024-01-01 00:00:00')"},
		{"EXTRACT(YEAR FROM ts)", "EXTRACT(YEAR FROM ts)"},
		{"__floor_to(ts, 'HOUR')", "FLOOR(ts TO HOUR)"},
		{"__ceil_to(ts, 'minute')", "CEIL(ts TO MINUTE)"},
		{"TRIM(BOTH 'x' FROM s)", "TRIM(BOTH 'x' FROM s)"},
		{"TRIM(s)", "TRIM(s)"},
		{"POSITION('l' IN s)", "POSITION('l' IN s)"},
		{"TIMESTAMPDIFF(SECOND, ts, ts)", "TIMESTAMPDIFF(SECOND, ts, ts)"},
		{"CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP"},
		{"NOW()", "NOW()"},
		{"ts + __interval(a, 'SECOND')", "(ts + INTERVAL a SECOND)"},
		{"DATE '2024-01-01'", "DATE '2024-01-01'"},
	}
	for _, c := range cases {
		if got := mustBind(t, c.sql).String(); got != c.want {
			t.Errorf("%s renders as %s, want %s", c.sql, got, c.want)
		}
	}
}

// Scope.Replace turns planner-known sub-expressions (aggregates, group
// keys) into column references.
func TestReplace(t *testing.T) {
	cols := append(slices.Clone(testCols), Column{Name: "SUM(a)", Type: types.TypeBigInt})
	aggIdx := len(cols) - 1
	s := &Scope{Columns: cols, Replace: func(n ast.ExprNode) (int, bool) {
		if agg, ok := n.(*ast.AggregateFuncExpr); ok && strings.EqualFold(agg.F, "sum") {
			return aggIdx, true
		}
		return 0, false
	}}
	e, err := Bind(parseExpr(t, "SUM(a) * 2 + 1"), s, testErrf)
	if err != nil {
		t.Fatal(err)
	}
	row := append(slices.Clone(testRow), types.NewInt(20))
	v, err := e.Eval(row)
	if err != nil || types.Format(v, e.Type()) != "41" {
		t.Fatalf("got %v, %v", v, err)
	}
	if e.String() != "((SUM(a) * 2) + 1)" || e.Type().ID != types.BigInt {
		t.Fatalf("got %s of %s", e, e.Type())
	}
	// COUNT is not replaced: an error positioned at it.
	_, err = Bind(parseExpr(t, "SUM(a) + COUNT(a)"), s, testErrf)
	if pe, ok := err.(*posErr); !ok || pe.msg != "aggregate function COUNT is not allowed here" || restore(pe.node) != "COUNT(a)" {
		t.Fatalf("got %v", err)
	}
	// Replace sees a group-by expression before its parts.
	s2 := &Scope{Columns: cols, Replace: func(n ast.ExprNode) (int, bool) {
		if restore(n) == "a+1" {
			return aggIdx, true
		}
		return 0, false
	}}
	e, err = Bind(parseExpr(t, "(a + 1) * 10"), s2, testErrf)
	if err != nil {
		t.Fatal(err)
	}
	if idx, ok := ColumnIndex(e.(node).children()[0]); !ok || idx != aggIdx {
		t.Fatalf("replacement not used: %s", e)
	}
}

func TestWalkAndRemap(t *testing.T) {
	e := mustBind(t, "a - b * 4 > price AND s LIKE 'H%' AND a > 3")
	var cols []int
	Walk(e, func(x Expr) bool {
		if i, ok := ColumnIndex(x); ok {
			cols = append(cols, i)
		}
		return true
	})
	slices.Sort(cols)
	cols = slices.Compact(cols)
	if !slices.Equal(cols, []int{0, 1, 4, 5}) {
		t.Fatalf("columns %v", cols)
	}
	// Skipping children.
	n := 0
	Walk(e, func(Expr) bool { n++; return false })
	if n != 1 {
		t.Fatalf("walk visited %d", n)
	}
	// Project the row down to (s, price, b, a) and remap.
	m := map[int]int{5: 0, 4: 1, 1: 2, 0: 3}
	r := RemapColumns(e, m)
	small := types.Row{testRow[5], testRow[4], testRow[1], testRow[0]}
	want, err := EvalBool(e, testRow)
	if err != nil || !want {
		t.Fatalf("original: %v %v", want, err)
	}
	got, err := EvalBool(r, small)
	if err != nil || got != want {
		t.Fatalf("remapped: %v %v", got, err)
	}
	if r.String() != e.String() {
		t.Fatalf("remap changed rendering: %s vs %s", r, e)
	}
	// The original is untouched.
	if got, _ := EvalBool(e, testRow); !got {
		t.Fatal("original changed")
	}
	// A specialized column-literal comparison is remapped too.
	c := RemapColumns(mustBind(t, "a > 3"), map[int]int{0: 1})
	if ok, _ := EvalBool(c, types.Row{types.NewInt(0), types.NewInt(5)}); !ok {
		t.Fatal("remapped a > 3 is false on 5")
	}
	if ok, _ := EvalBool(c, types.Row{types.NewInt(5), types.NewInt(0)}); ok {
		t.Fatal("remapped a > 3 still reads column 0")
	}
	// Every node kind survives a remap.
	for _, sql := range []string{
		"CASE a WHEN 1 THEN s ELSE UPPER(s) END", "COALESCE(n, a)", "a IN (1, 2, 3, 4, b)",
		"a BETWEEN b AND 10", "IF(flag, a, b)", "NULLIF(a, b)", "-a", "__cast(a, 'BIGINT')",
		"s LIKE s", "s REGEXP 'l'", "ts + INTERVAL a SECOND", "n IS NULL", "flag IS TRUE", "NOT flag",
		"a * 2", "a + b", "CASE WHEN flag THEN a END",
	} {
		e := mustBind(t, sql)
		id := map[int]int{}
		for i := range testCols {
			id[i] = i
		}
		r := RemapColumns(e, id)
		v1, err1 := e.Eval(testRow)
		v2, err2 := r.Eval(testRow)
		if err1 != nil || err2 != nil || types.Format(v1, e.Type()) != types.Format(v2, r.Type()) || r.String() != e.String() {
			t.Errorf("%s: remap differs: %v %v / %v %v", sql, v1, err1, v2, err2)
		}
	}
}

func TestDeterminism(t *testing.T) {
	for sql, want := range map[string]bool{
		"a + 1":              true,
		"UPPER(s)":           true,
		"NOW() > ts":         false,
		"RAND()":             false,
		"CURRENT_TIMESTAMP":  false,
		"PROCTIME()":         false,
		"UNIX_TIMESTAMP()":   false,
		"UNIX_TIMESTAMP(ts)": true,
		"CURRENT_DATE":       false,
	} {
		if got := IsDeterministic(mustBind(t, sql)); got != want {
			t.Errorf("IsDeterministic(%s) = %v", sql, got)
		}
	}
}

func TestConstructors(t *testing.T) {
	c := NewColumnRef(2, "x", types.TypeBigInt)
	if i, ok := ColumnIndex(c); !ok || i != 2 || c.String() != "x" || c.Type().ID != types.BigInt {
		t.Fatal("column ref")
	}
	if v, _ := c.Eval(testRow); v.Int() != 10000000000 {
		t.Fatal("column ref eval")
	}
	l := NewLiteral(types.NewInt(3), types.TypeInt)
	if v, ok := IsLiteral(l); !ok || v.Int() != 3 || !l.Type().NotNull {
		t.Fatal("literal")
	}
	if _, ok := IsLiteral(c); ok {
		t.Fatal("column is not a literal")
	}
	if _, ok := ColumnIndex(l); ok {
		t.Fatal("literal is not a column")
	}
	// __interval folds to an INTERVAL literal the planner can read.
	for sql, want := range map[string]time.Duration{
		"__interval('5', 'SECOND')":                 5 * time.Second,
		"__interval(5, 'MINUTE')":                   5 * time.Minute,
		"__interval('1.5', 'SECOND')":               1500 * time.Millisecond,
		"__interval('10', 'MILLISECOND')":           10 * time.Millisecond,
		"__interval('1 02:00:00', 'DAY TO SECOND')": 26 * time.Hour,
		"__interval('2', 'HOURS')":                  2 * time.Hour,
		"__interval('-1', 'DAY')":                   -24 * time.Hour,
	} {
		v, ok := IsLiteral(mustBind(t, sql))
		if !ok || v.Kind() != types.KindInterval || v.Interval() != want {
			t.Errorf("%s = %v (literal %v)", sql, v, ok)
		}
	}
	// A non-constant interval is evaluated per row.
	e := mustBind(t, "__interval(a, 'MINUTE')")
	if v, err := e.Eval(testRow); err != nil || v.Interval() != 5*time.Minute {
		t.Fatalf("%v %v", v, err)
	}
}

func TestAndHelper(t *testing.T) {
	e := And(mustBind(t, "a > 1"), mustBind(t, "nb"))
	if v, err := e.Eval(testRow); err != nil || !v.IsNull() {
		t.Fatalf("TRUE AND NULL = %v %v", v, err)
	}
	if ok, _ := EvalBool(And(mustBind(t, "a > 1"), mustBind(t, "flag")), testRow); !ok {
		t.Fatal("TRUE AND TRUE is not true")
	}
	if e.String() != "((a > 1) AND nb)" {
		t.Fatal(e.String())
	}
}

func TestEvalBoolPlain(t *testing.T) {
	for sql, want := range map[string]bool{"flag": true, "f": false, "nb": false, "COALESCE(nb, flag)": true} {
		got, err := EvalBool(mustBind(t, sql), testRow)
		if err != nil || got != want {
			t.Errorf("EvalBool(%s) = %v %v", sql, got, err)
		}
	}
}

func TestIntervalArithmetic(t *testing.T) {
	for sql, want := range map[string]time.Duration{
		"__interval('1', 'MINUTE') + __interval('30', 'SECOND')": 90 * time.Second,
		"__interval('1', 'MINUTE') - __interval('30', 'SECOND')": 30 * time.Second,
		"-__interval('1', 'MINUTE')":                             -time.Minute,
	} {
		v, ok := IsLiteral(mustBind(t, sql))
		if !ok || v.Interval() != want {
			t.Errorf("%s = %v", sql, v)
		}
	}
	e := mustBind(t, "__interval(a, 'SECOND') + __interval(b, 'SECOND')")
	if v, err := e.Eval(testRow); err != nil || v.Interval() != 2*time.Second {
		t.Fatalf("%v %v", v, err)
	}
}

func TestEvalErrorType(t *testing.T) {
	e := mustBind(t, "(maxi + 1) * 2")
	_, err := e.Eval(testRow)
	var ee *EvalError
	if !errors.As(err, &ee) || ee.Expr != "(maxi + 1)" || ee.Msg != "INT overflow (2147483647 + 1)" {
		t.Fatalf("got %#v", err)
	}
	// EvalBool propagates errors and treats NULL as not true.
	if _, err := EvalBool(mustBind(t, "maxi + 1 > 0"), testRow); err == nil {
		t.Fatal("EvalBool swallowed an error")
	}
	if ok, err := EvalBool(mustBind(t, "n > 0"), testRow); ok || err != nil {
		t.Fatal("NULL is not true")
	}
}

func TestCastAPI(t *testing.T) {
	ok := []struct {
		v        types.Value
		from, to types.Type
		want     string
	}{
		{types.NewString("42"), types.TypeString, types.TypeInt, "42"},
		{types.NewString(" -7 "), types.TypeString, types.TypeBigInt, "-7"},
		{types.NewString("2024-01-01 10:00:00.5"), types.TypeString, types.TimestampType(3), "2024-01-01 10:00:00.500"},
		{types.NewString("2024-01-01"), types.TypeString, types.TypeDate, "2024-01-01"},
		{types.NewString("3.14159"), types.TypeString, types.DecimalType(5, 2), "3.14"},
		{types.NewString("t"), types.TypeString, types.TypeBoolean, "true"},
		{types.NewString("NaN"), types.TypeString, types.TypeDouble, "NaN"},
		{types.NewInt(5), types.TypeInt, types.TypeDouble, "5"},
		{types.NullValue, types.TypeString, types.TypeInt, "NULL"},
		{types.NewFloat(2.5), types.TypeDouble, types.TypeString, "2.5"},
	}
	for _, c := range ok {
		v, err := CastValue(c.v, c.from, c.to)
		if err != nil || types.Format(v, c.to) != c.want {
			t.Errorf("CastValue(%v, %s, %s) = %v, %v; want %s", c.v, c.from, c.to, v, err, c.want)
		}
	}
	bad := []struct {
		v        types.Value
		from, to types.Type
		want     string
	}{
		{types.NewString("x"), types.TypeString, types.TypeInt, "cannot cast 'x' to INT"},
		{types.NewString("3000000000"), types.TypeString, types.TypeInt, "cannot cast '3000000000' to INT: out of range"},
		{types.NewString("123.456"), types.TypeString, types.DecimalType(4, 2), "cannot cast '123.456' to DECIMAL(4, 2): overflow"},
		{types.NewString("Infinity"), types.TypeString, types.DecimalType(4, 2), "cannot cast 'Infinity' to DECIMAL(4, 2)"},
		{types.NewBool(true), types.TypeBoolean, types.TypeDate, "cannot cast BOOLEAN to DATE"},
		{types.NewInt(1), types.TypeInt, types.TypeTimestamp, "cannot cast INT to TIMESTAMP(3)"},
	}
	for _, c := range bad {
		_, err := CastValue(c.v, c.from, c.to)
		if err == nil || err.Error() != c.want {
			t.Errorf("CastValue(%v, %s, %s) error %v, want %s", c.v, c.from, c.to, err, c.want)
		}
	}

	// Cast / TryCast on expressions.
	col := NewColumnRef(5, "s", types.TypeString)
	c, err := Cast(col, types.TypeInt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Eval(testRow); err == nil || err.Error() != "cannot cast 'Hello' to INT in CAST(s AS INT)" {
		t.Fatalf("got %v", err)
	}
	tc, _ := TryCast(col, types.TypeInt)
	if v, err := tc.Eval(testRow); err != nil || !v.IsNull() {
		t.Fatalf("TRY_CAST: %v %v", v, err)
	}
	if _, err := Cast(NewColumnRef(8, "flag", types.TypeBoolean), types.TypeDate); err == nil {
		t.Fatal("CAST(BOOLEAN AS DATE) accepted")
	}
	if l, err := Cast(NewLiteral(types.NewString("12"), types.TypeString), types.TypeInt); err != nil {
		t.Fatal(err)
	} else if v, ok := IsLiteral(l); !ok || v.Int() != 12 {
		t.Fatal("CAST of a literal is not folded")
	}
}

func TestImplicitCast(t *testing.T) {
	a := NewColumnRef(0, "a", types.TypeInt)
	for _, to := range []types.Type{types.TypeInt, types.TypeBigInt, types.TypeDouble, types.DecimalType(12, 2)} {
		e, err := ImplicitCast(a, to)
		if err != nil {
			t.Fatalf("INT -> %s: %v", to, err)
		}
		if !e.Type().Equal(to) {
			t.Fatalf("INT -> %s typed %s", to, e.Type())
		}
		v, err := e.Eval(testRow)
		if err != nil || types.Format(v, to) != map[types.TypeID]string{types.Int: "5", types.BigInt: "5", types.Double: "5", types.Decimal: "5.00"}[to.ID] {
			t.Fatalf("INT -> %s: %v %v", to, v, err)
		}
		if e.String() != "a" {
			t.Fatalf("implicit cast renders as %s", e)
		}
	}
	okCases := []struct {
		e  Expr
		to types.Type
	}{
		{NewColumnRef(7, "dt", types.TypeDate), types.TimestampType(3)},
		{NewColumnRef(6, "ts", types.TimestampType(3)), types.TimestampType(0)},
		{NewColumnRef(4, "price", types.DecimalType(10, 2)), types.DecimalType(4, 1)},
		{NewColumnRef(4, "price", types.DecimalType(10, 2)), types.TypeDouble},
		{NewColumnRef(5, "s", types.TypeString), types.VarcharType(10)},
		{NewLiteral(types.NullValue, types.TypeNull), types.TypeDate},
	}
	for _, c := range okCases {
		if _, err := ImplicitCast(c.e, c.to); err != nil {
			t.Errorf("%s -> %s: %v", c.e.Type(), c.to, err)
		}
	}
	// VARCHAR lengths change without truncating.
	v5, _ := ImplicitCast(NewColumnRef(5, "s", types.TypeString), types.VarcharType(3))
	if v, _ := v5.Eval(testRow); v5.Type().String() != "VARCHAR(3)" || v.Str() != "Hello" {
		t.Fatalf("STRING -> VARCHAR(3): %s %v", v5.Type(), v)
	}
	// String literals convert to DATE / TIMESTAMP, now.
	e, err := ImplicitCast(NewLiteral(types.NewString("2024-01-02 03:04:05"), types.TypeString), types.TimestampType(3))
	if v, ok := IsLiteral(e); err != nil || !ok || types.Format(v, e.Type()) != "2024-01-02 03:04:05.000" {
		t.Fatalf("string literal -> TIMESTAMP: %v %v", e, err)
	}
	badCases := []struct {
		e    Expr
		to   types.Type
		want string
	}{
		{NewColumnRef(2, "big", types.TypeBigInt), types.TypeInt, "cannot implicitly convert BIGINT to INT"},
		{NewColumnRef(3, "d", types.TypeDouble), types.DecimalType(10, 2), "cannot implicitly convert DOUBLE to DECIMAL(10, 2)"},
		{NewColumnRef(5, "s", types.TypeString), types.TypeInt, "cannot implicitly convert STRING to INT"},
		{NewColumnRef(5, "s", types.TypeString), types.TypeTimestamp, "cannot implicitly convert STRING to TIMESTAMP(3)"},
		{NewColumnRef(0, "a", types.TypeInt), types.TypeString, "cannot implicitly convert INT to STRING"},
		{NewColumnRef(6, "ts", types.TimestampType(3)), types.TypeDate, "cannot implicitly convert TIMESTAMP(3) to DATE"},
		{NewLiteral(types.NewString("nope"), types.TypeString), types.TypeDate, "cannot cast 'nope' to DATE"},
		{NewLiteral(types.NewInt(1000), types.TypeInt), types.DecimalType(3, 1), "cannot cast 1000 to DECIMAL(3, 1): overflow"},
	}
	for _, c := range badCases {
		_, err := ImplicitCast(c.e, c.to)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s -> %s: error %v, want %s", c.e.Type(), c.to, err, c.want)
		}
	}
	// A DECIMAL that does not fit fails at run time.
	e, _ = ImplicitCast(NewColumnRef(4, "price", types.DecimalType(10, 2)), types.DecimalType(2, 1))
	if _, err := e.Eval(testRow); err == nil {
		t.Fatal("DECIMAL overflow in implicit cast not reported")
	}
}

func TestCommonType(t *testing.T) {
	cases := []struct {
		a, b types.Type
		want string // "" = none
	}{
		{types.TypeInt, types.TypeInt, "INT"},
		{types.TypeInt, types.TypeBigInt, "BIGINT"},
		{types.TypeInt, types.DecimalType(5, 2), "DECIMAL(12, 2)"},
		{types.TypeBigInt, types.DecimalType(38, 10), "DECIMAL(38, 10)"},
		{types.TypeBigInt, types.DecimalType(38, 30), "DECIMAL(38, 19)"},
		{types.DecimalType(5, 2), types.DecimalType(10, 0), "DECIMAL(12, 2)"},
		{types.TypeDouble, types.DecimalType(5, 2), "DOUBLE"},
		{types.TypeInt, types.TypeDouble, "DOUBLE"},
		{types.TypeDate, types.TimestampType(3), "TIMESTAMP(3)"},
		{types.TimestampType(3), types.TimestampType(6), "TIMESTAMP(6)"},
		{types.VarcharType(5), types.VarcharType(10), "VARCHAR(10)"},
		{types.VarcharType(5), types.TypeString, "STRING"},
		{types.TypeNull, types.TypeString, "STRING"},
		{types.TypeBoolean, types.TypeNull, "BOOLEAN"},
		{types.TypeInt.WithNotNull(true), types.TypeInt.WithNotNull(true), "INT NOT NULL"},
		{types.TypeInt.WithNotNull(true), types.TypeBigInt, "BIGINT"},
		{types.TypeString, types.TypeInt, ""},
		{types.TypeBoolean, types.TypeInt, ""},
		{types.TypeTimestamp, types.TypeString, ""},
		{types.TypeDate, types.TypeInt, ""},
	}
	for _, c := range cases {
		got, ok := CommonType(c.a, c.b)
		switch {
		case c.want == "" && ok:
			t.Errorf("CommonType(%s, %s) = %s, want none", c.a, c.b, got)
		case c.want != "" && (!ok || got.String() != c.want):
			t.Errorf("CommonType(%s, %s) = %s %v, want %s", c.a, c.b, got, ok, c.want)
		}
	}
}

// With PIPES_AS_CONCAT (Flink's ||), TiDB produces CONCAT.
func TestPipesAsConcat(t *testing.T) {
	p := parser.New()
	p.SetSQLMode(mysql.ModePipesAsConcat)
	st, err := p.ParseOneStmt("SELECT s || '!' || s FROM t", "", "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Bind(st.(*ast.SelectStmt).Fields.Fields[0].Expr, &Scope{Columns: testCols}, testErrf)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := e.Eval(testRow); err != nil || v.Str() != "Hello!Hello" {
		t.Fatalf("%v %v", v, err)
	}
}

// Evaluation of a bound expression is safe from several goroutines (the
// nodes are immutable).
func TestConcurrentEval(t *testing.T) {
	e := mustBind(t, "CONCAT(UPPER(s), '-', DATE_FORMAT(ts, 'yyyy')) LIKE 'HELLO-2%' AND a * 2 + b > 0")
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			ok := true
			for i := 0; i < 1000; i++ {
				v, err := EvalBool(e, testRow)
				ok = ok && v && err == nil
			}
			done <- ok
		}()
	}
	for g := 0; g < 4; g++ {
		if !<-done {
			t.Fatal("concurrent evaluation failed")
		}
	}
}
