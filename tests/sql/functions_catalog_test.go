package sql

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sqltest"
)

// TestFunctionExamples runs the example of every entry of the function
// catalog (what docs/functions.md shows) and checks its result, so every
// function SHOW FUNCTIONS lists resolves and does what its line says.
func TestFunctionExamples(t *testing.T) {
	var sb strings.Builder
	for _, s := range expr.ExampleTable {
		fmt.Fprintf(&sb, "statement ok\n%s\n\n", s)
	}
	lines := map[int]string{} // block line -> function, for the failures
	line := strings.Count(sb.String(), "\n") + 1
	for _, f := range expr.Functions() {
		q := f.Example
		switch {
		case strings.HasPrefix(q, "SELECT "):
		case f.Kind == expr.AggregateFunc:
			q = "SELECT " + q + " FROM t"
		default:
			q = "SELECT " + q
		}
		lines[line] = f.Name
		if f.Result == "" {
			fmt.Fprintf(&sb, "statement ok\n%s\n\n", q)
			line += 3
			continue
		}
		want := strings.Split(f.Result, "\n")
		sort.Strings(want)
		fmt.Fprintf(&sb, "query rowsort\n%s\n----\n%s\n\n", q, strings.Join(want, "\n"))
		line += 4 + len(want)
	}
	res, err := sqltest.RunText("function examples", sb.String(), sqltest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Failures {
		t.Errorf("%s: %s", lines[f.Line], f.Msg)
	}
	if res.Passed < len(expr.Functions()) {
		t.Errorf("only %d examples passed of %d", res.Passed, len(expr.Functions()))
	}
}

// TestShowFunctionsIsTheRegistry: SHOW FUNCTIONS lists exactly the
// catalog's functions; the catalog covers every function the binder and
// the planner resolve and nothing more; the Flink functions streamsql
// lacks are neither listed nor resolved, and calling one names it.
func TestShowFunctionsIsTheRegistry(t *testing.T) {
	// The binder's registry and the catalog name the same functions.
	reg, cat := expr.RegistryKeys(), expr.CatalogKeys()
	for _, k := range reg {
		if !slices.Contains(cat, k) {
			t.Errorf("function %s is resolved by the binder but missing from the catalog", k)
		}
	}
	for _, k := range cat {
		if !slices.Contains(reg, k) {
			t.Errorf("the catalog names %s, which the binder does not resolve", k)
		}
	}
	// The planner's aggregates and the catalog's.
	var catAggs []string
	for _, f := range expr.Functions() {
		if f.Kind == expr.AggregateFunc {
			catAggs = append(catAggs, f.Name)
		}
	}
	planAggs := append(planner.AggregateNames(), "STDDEV", "VARIANCE") // the parser renames these two
	for _, n := range planAggs {
		if !slices.Contains(catAggs, n) {
			t.Errorf("aggregate %s is computed by the planner but missing from the catalog", n)
		}
	}
	for _, n := range catAggs {
		if !slices.Contains(planAggs, n) {
			t.Errorf("the catalog lists aggregate %s, which the planner does not compute", n)
		}
	}
	// Every aggregate name the parser produces is computed or refused by name.
	for _, n := range parser.FlinkAggregateNames() {
		u := strings.ToUpper(n)
		if _, refused := expr.Unsupported(u); !slices.Contains(planAggs, u) && !refused {
			t.Errorf("the parser makes %s an aggregate, but it is neither computed nor refused", u)
		}
	}
	// SHOW FUNCTIONS prints the catalog's names, once each.
	names := showFunctions(t, "SHOW FUNCTIONS")
	if want := expr.FunctionNames(); !slices.Equal(names, want) {
		t.Errorf("SHOW FUNCTIONS = %v\nwant %v", names, want)
	}
	for i := 1; i < len(names); i++ {
		if names[i] == names[i-1] {
			t.Errorf("SHOW FUNCTIONS lists %s twice", names[i])
		}
	}
	if got := showFunctions(t, "SHOW USER FUNCTIONS"); len(got) != 0 {
		t.Errorf("SHOW USER FUNCTIONS = %v, want none", got)
	}
	if got := showFunctions(t, "SHOW FUNCTIONS ILIKE 'sha%'"); !slices.Equal(got, []string{"SHA1", "SHA2", "SHA224", "SHA256", "SHA384", "SHA512"}) {
		t.Errorf("SHOW FUNCTIONS ILIKE 'sha%%' = %v", got)
	}
	// The unsupported ones are not listed, and using one is an error
	// naming it.
	var text strings.Builder
	for _, s := range expr.ExampleTable {
		fmt.Fprintf(&text, "statement ok\n%s\n\n", s)
	}
	var unsupported []string
	for _, n := range expr.UnsupportedNames() {
		if slices.Contains(names, n) {
			t.Errorf("SHOW FUNCTIONS lists %s, which is unsupported", n)
		}
		unsupported = append(unsupported, n)
		q := "SELECT " + n + "(x) FROM t" // a scalar or an aggregate call
		if call, ok := windowOrNiladic[n]; ok {
			q = "SELECT " + call + " FROM t"
		}
		fmt.Fprintf(&text, "statement error %s is not supported\n%s\n\n", n, q)
	}
	res, err := sqltest.RunText("unsupported functions", text.String(), sqltest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Failures {
		t.Errorf("%s", f.Msg)
	}
	if len(unsupported) == 0 {
		t.Fatal("no unsupported functions to check")
	}
}

// windowOrNiladic are the calls that cannot take the form f(x).
var windowOrNiladic = map[string]string{
	"RANK": "RANK() OVER (ORDER BY ts)", "DENSE_RANK": "DENSE_RANK() OVER (ORDER BY ts)",
	"CUME_DIST": "CUME_DIST() OVER (ORDER BY ts)", "PERCENT_RANK": "PERCENT_RANK() OVER (ORDER BY ts)",
	"NTILE": "NTILE(2) OVER (ORDER BY ts)", "LEAD": "LEAD(x) OVER (ORDER BY ts)", "LAG": "LAG(x) OVER (ORDER BY ts)",
	"CURRENT_TIME": "CURRENT_TIME", "LOCALTIME": "LOCALTIME",
}

func showFunctions(t *testing.T, stmt string) []string {
	t.Helper()
	s := engine.NewSession(&bytes.Buffer{})
	sts, err := parser.Parse(stmt)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Execute(context.Background(), sts[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Header) != 1 || r.Header[0] != "function name" {
		t.Fatalf("%s: header %v, want [function name]", stmt, r.Header)
	}
	var out []string
	for _, row := range r.Rows {
		out = append(out, row[0])
	}
	return out
}
