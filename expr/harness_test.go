package expr

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/streamsql/streamsql/types"
)

// The test scope: a few typed columns and one row of values.
var testCols = []Column{
	{Name: "a", Table: "t", Type: types.TypeInt},                       // 0: 5
	{Name: "b", Table: "t", Type: types.TypeInt},                       // 1: -3
	{Name: "big", Table: "t", Type: types.TypeBigInt},                  // 2: 10000000000
	{Name: "d", Table: "t", Type: types.TypeDouble},                    // 3: 2.5
	{Name: "price", Table: "t", Type: types.DecimalType(10, 2)},        // 4: 12.34
	{Name: "s", Table: "t", Type: types.TypeString},                    // 5: 'Hello'
	{Name: "ts", Table: "t", Type: types.TimestampType(3)},             // 6: 2024-01-15 10:30:45.123
	{Name: "dt", Table: "t", Type: types.TypeDate},                     // 7: 2024-02-29
	{Name: "flag", Table: "t", Type: types.TypeBoolean},                // 8: true
	{Name: "n", Table: "t", Type: types.TypeInt},                       // 9: NULL
	{Name: "ns", Table: "t", Type: types.TypeString},                   // 10: NULL
	{Name: "nb", Table: "t", Type: types.TypeBoolean},                  // 11: NULL
	{Name: "id", Table: "t", Type: types.TypeBigInt},                   // 12: 1
	{Name: "id", Table: "u", Type: types.TypeBigInt},                   // 13: 2
	{Name: "maxi", Table: "t", Type: types.TypeInt},                    // 14: 2147483647
	{Name: "maxb", Table: "t", Type: types.TypeBigInt},                 // 15: 9223372036854775807
	{Name: "f", Table: "t", Type: types.TypeBoolean},                   // 16: false
	{Name: "zero", Table: "t", Type: types.TypeInt},                    // 17: 0
	{Name: "bigdec", Table: "t", Type: types.DecimalType(38, 0)},       // 18: 10^37
	{Name: "tsn", Table: "t", Type: types.TimestampType(9)},            // 19: NULL
	{Name: "us", Table: "t", Type: types.TypeString},                   // 20: 'héllo wörld'
	{Name: "mini", Table: "t", Type: types.TypeInt},                    // 21: -2147483648
	{Name: "tsstr", Table: "t", Type: types.TypeString},                // 22: '2024-03-01 12:00:00'
	{Name: "dneg", Table: "t", Type: types.DecimalType(5, 3)},          // 23: -1.255
	{Name: "minb", Table: "t", Type: types.TypeBigInt},                 // 24: -9223372036854775808
	{Name: "nd", Table: "t", Type: types.TypeDouble},                   // 25: NULL
	{Name: "Mixed", Table: "t", Type: types.TypeInt.WithNotNull(true)}, // 26: 7
}

func mustDec(s string) types.Value {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return types.NewDecimal(d)
}

func mustTS(s string) types.Value {
	ns, _, ok := parseTimestampText(s)
	if !ok {
		panic(s)
	}
	return types.NewTimestamp(ns)
}

func mustDate(s string) types.Value {
	d, ok := parseDateText(s)
	if !ok {
		panic(s)
	}
	return types.NewDate(d)
}

var testRow = types.Row{
	types.NewInt(5),
	types.NewInt(-3),
	types.NewInt(10000000000),
	types.NewFloat(2.5),
	mustDec("12.34"),
	types.NewString("Hello"),
	mustTS("2024-01-15 10:30:45.123"),
	mustDate("2024-02-29"),
	types.NewBool(true),
	types.NullValue,
	types.NullValue,
	types.NullValue,
	types.NewInt(1),
	types.NewInt(2),
	types.NewInt(2147483647),
	types.NewInt(9223372036854775807),
	types.NewBool(false),
	types.NewInt(0),
	mustDec("10000000000000000000000000000000000000"),
	types.NullValue,
	types.NewString("héllo wörld"),
	types.NewInt(-2147483648),
	types.NewString("2024-03-01 12:00:00"),
	mustDec("-1.255"),
	types.NewInt(-9223372036854775808),
	types.NullValue,
	types.NewInt(7),
}

func init() {
	// A fixed clock for NOW() and friends.
	nowFunc = func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC) }
}

// parseExpr parses "SELECT <sql> FROM t" and returns the field expression.
func parseExpr(t testing.TB, sql string) ast.ExprNode {
	t.Helper()
	p := parser.New()
	st, err := p.ParseOneStmt("SELECT "+sql+" FROM t", "", "")
	if err != nil {
		t.Fatalf("parse %q: %v", sql, err)
	}
	return st.(*ast.SelectStmt).Fields.Fields[0].Expr
}

// restore renders an AST node as SQL (no name quoting) to identify it.
func restore(n ast.Node) string {
	var sb strings.Builder
	flags := format.RestoreStringSingleQuotes | format.RestoreKeyWordUppercase | format.RestoreStringWithoutCharset
	if err := n.Restore(format.NewRestoreCtx(flags, &sb)); err != nil {
		return fmt.Sprintf("<%T>", n)
	}
	return sb.String()
}

// posErr is the error our test ErrorFunc makes: it remembers the node.
type posErr struct {
	node ast.Node
	msg  string
}

func (e *posErr) Error() string { return e.msg }

func testErrf(n ast.Node, format string, args ...any) error {
	return &posErr{node: n, msg: fmt.Sprintf(format, args...)}
}

func bindSQL(t testing.TB, sql string) (Expr, error) {
	t.Helper()
	return Bind(parseExpr(t, sql), &Scope{Columns: testCols}, testErrf)
}

func mustBind(t testing.TB, sql string) Expr {
	t.Helper()
	e, err := bindSQL(t, sql)
	if err != nil {
		t.Fatalf("bind %q: %v", sql, err)
	}
	return e
}

// evalSQL binds and evaluates sql over testRow, rendering the result.
func evalSQL(t testing.TB, sql string) (string, error) {
	t.Helper()
	e, err := bindSQL(t, sql)
	if err != nil {
		return "", fmt.Errorf("bind: %w", err)
	}
	v, err := e.Eval(testRow)
	if err != nil {
		return "", err
	}
	return types.Format(v, e.Type()), nil
}

type evalCase struct {
	sql  string
	want string
}

func runEval(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		got, err := evalSQL(t, c.sql)
		if err != nil {
			t.Errorf("%s: unexpected error: %v", c.sql, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s = %s, want %s", c.sql, got, c.want)
		}
	}
}

type typeCase struct {
	sql  string
	want string // Type.String()
}

func runTypes(t *testing.T, cases []typeCase) {
	t.Helper()
	for _, c := range cases {
		e, err := bindSQL(t, c.sql)
		if err != nil {
			t.Errorf("%s: bind error: %v", c.sql, err)
			continue
		}
		if got := e.Type().String(); got != c.want {
			t.Errorf("type of %s = %s, want %s", c.sql, got, c.want)
		}
	}
}

// runtimeErrCase: binding succeeds, evaluation fails with an error
// containing want (and naming the expression).
type runtimeErrCase struct {
	sql  string
	want string
}

func runRuntimeErrs(t *testing.T, cases []runtimeErrCase) {
	t.Helper()
	for _, c := range cases {
		e, err := bindSQL(t, c.sql)
		if err != nil {
			t.Errorf("%s: bind error: %v", c.sql, err)
			continue
		}
		v, err := e.Eval(testRow)
		if err == nil {
			t.Errorf("%s: no error, got %s", c.sql, types.Format(v, e.Type()))
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s: error %q, want %q", c.sql, err.Error(), c.want)
		}
		if _, ok := err.(*EvalError); !ok {
			t.Errorf("%s: error is %T, want *EvalError", c.sql, err)
		}
	}
}

// bindErrCase: binding fails with message msg positioned at node (the
// restored SQL of the node the ErrorFunc got).
type bindErrCase struct {
	sql  string
	msg  string
	node string
}

func runBindErrs(t *testing.T, cases []bindErrCase) {
	t.Helper()
	for _, c := range cases {
		e, err := bindSQL(t, c.sql)
		if err == nil {
			t.Errorf("%s: no bind error, got %s of type %s", c.sql, e, e.Type())
			continue
		}
		pe, ok := err.(*posErr)
		if !ok {
			t.Errorf("%s: error %v is not positioned (%T)", c.sql, err, err)
			continue
		}
		if pe.msg != c.msg {
			t.Errorf("%s: error %q, want %q", c.sql, pe.msg, c.msg)
		}
		if got := restore(pe.node); got != c.node {
			t.Errorf("%s: error positioned at %q, want %q", c.sql, got, c.node)
		}
	}
}
