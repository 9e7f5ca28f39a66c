package parser

import (
	"errors"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

func tokenTexts(t *testing.T, src string) (toks, comments []string) {
	t.Helper()
	lr, perr := lex(src)
	if perr != nil {
		t.Fatalf("lex(%q): %s at %d", src, perr.msg, perr.off)
	}
	for _, tk := range lr.toks {
		toks = append(toks, src[tk.start:tk.end])
	}
	for _, c := range lr.comments {
		comments = append(comments, src[c.start:c.end])
	}
	return toks, comments
}

func TestLexTokens(t *testing.T) {
	for _, tc := range []struct {
		src, toks, comments string
	}{
		{`SELECT a,b FROM t;`, `SELECT|a|,|b|FROM|t|;`, ``},
		// A backslash is an ordinary character, as in Flink: 'a\' ends at its second quote.
		{`'it''s' 'a\' b 'c\\' "x""y" "q\" ` + "`a``b`", `'it''s'|'a\'|b|'c\\'|"x""y"|"q\"|` + "`a``b`", ``},
		{`1 1.5 .5 1e-3 2E+10 0x1F 1abc t.a t.5`, `1|1.5|.5|1e-3|2E+10|0x1F|1abc|t|.|a|t|.|5`, ``},
		{`a<=>b x=>y a<=b c->>'$.k' a||b := @@v`, `a <=> b x => y a <= b c ->> '$.k' a || b := @ @ v`, ``},
		{"a -- c ; d\nb # e\nc /* f\n; */ d --", `a|b|c|d`, `-- c ; d|# e|/* f` + "\n" + `; */|--`},
		{"a--b", `a`, `--b`},
		{"ünï 'é' `ß`", "ünï|'é'|`ß`", ``},
	} {
		toks, comments := tokenTexts(t, tc.src)
		if got := strings.Join(toks, "|"); got != tc.toks && strings.Join(toks, " ") != tc.toks {
			t.Errorf("lex(%q) tokens = %s, want %s", tc.src, got, tc.toks)
		}
		if got := strings.Join(comments, "|"); got != tc.comments {
			t.Errorf("lex(%q) comments = %q, want %q", tc.src, got, tc.comments)
		}
	}
}

func TestLexErrors(t *testing.T) {
	for _, tc := range []struct {
		src  string
		off  int
		want string
	}{
		{`SELECT 'abc`, 7, "unterminated string literal"},
		{`SELECT 'abc\''`, 7, "unterminated string literal"},
		{`SELECT "abc''`, 7, "unterminated string literal"},
		{"SELECT `a``", 7, "unterminated quoted identifier"},
		{`SELECT 1 /* x *`, 9, "unterminated comment"},
		{`SELECT 1 /*/`, 9, "unterminated comment"},
	} {
		_, perr := lex(tc.src)
		if perr == nil || perr.off != tc.off || perr.msg != tc.want {
			t.Errorf("lex(%q) = %+v, want %q at %d", tc.src, perr, tc.want, tc.off)
		}
	}
}

func TestUnquote(t *testing.T) {
	for in, want := range map[string]string{
		`'it''s'`:         "it's",
		`'a''b\\c\n\t\%'`: `a'b\\c\n\t\%`,
		`"x""y\z"`:        `x"y\z`,
		"`a``b\\n`":       "a`b\\n",
		`''`:              "",
	} {
		if got := unquote(in); got != want {
			t.Errorf("unquote(%s) = %q, want %q", in, got, want)
		}
		if got := unquote(quoteString(want)); got != want && in[0] != '`' {
			t.Errorf("unquote(quoteString(%q)) = %q", want, got)
		}
	}
}

func TestSplitStatements(t *testing.T) {
	src := "SELECT ';' -- ;\n; ;\n  /* ; */ SELECT `;`\n;\n\tSELECT 3"
	stmts, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range stmts {
		got = append(got, s.Text)
	}
	want := []string{"SELECT ';'", "SELECT `;`", "SELECT 3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("texts = %q, want %q", got, want)
	}
	if s := stmts[1]; s.Line != 3 || s.Col != 11 {
		t.Errorf("statement 2 at %d:%d, want 3:11", s.Line, s.Col)
	}
	if s := stmts[2]; s.Line != 5 || s.Col != 2 {
		t.Errorf("statement 3 at %d:%d, want 5:2", s.Line, s.Col)
	}
}

// TestOffsetMap checks every offset of a rewritten statement: copied text
// maps one to one, synthesized text maps to the construct it replaced.
func TestOffsetMap(t *testing.T) {
	src := "SELECT CAST(a AS BIGINT) /* c */ FROM t"
	stmts, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	s := stmts[0]
	if want := "SELECT __cast(a, 'BIGINT')   FROM t"; s.rewritten != want {
		t.Fatalf("rewritten = %q, want %q", s.rewritten, want)
	}
	castAt := strings.Index(src, "CAST")
	asAt := strings.Index(src, "AS ")
	commentAt := strings.Index(src, "/*")
	for r := 0; r <= len(s.rewritten); r++ {
		var want int
		switch {
		case r < 7: // "SELECT "
			want = r
		case r < 13: // "__cast" -> CAST
			want = castAt
		case r < 15: // "(a"
			want = castAt + 4 + (r - 13)
		case r < 25: // ", 'BIGINT'" -> AS
			want = asAt
		case r == 25: // ")"
			want = strings.Index(src, ")")
		case r == 26: // " " before the comment
			want = 24
		case r == 27: // the comment's blank
			want = commentAt
		default: // " FROM t" and the end
			want = commentAt + len("/* c */") + (r - 28)
		}
		if got := s.offsets.toOrig(r); got != want {
			t.Errorf("toOrig(%d) (%q) = %d, want %d", r, s.rewritten[r:], got, want)
		}
	}
}

// firstField returns the expression of the first SELECT field.
func selectFields(t *testing.T, s *Statement) []*ast.SelectField {
	t.Helper()
	var sel *ast.SelectStmt
	switch n := s.Node.(type) {
	case *ast.SelectStmt:
		sel = n
	case *ast.CreateTableStmt:
		sel = n.Select.(*ast.SelectStmt)
	default:
		t.Fatalf("unexpected node %T", s.Node)
	}
	return sel.Fields.Fields
}

func errPos(t *testing.T, err error) (int, int) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is %T, not *Error", err, err)
	}
	return e.Line, e.Col
}

// TestErrorAtNode places planner errors on nodes that sit after or inside
// rewritten text and checks they land on the original line and column.
func TestErrorAtNode(t *testing.T) {
	src := "CREATE TABLE t (\n" +
		"  a STRING,\n" +
		"  ts TIMESTAMP_LTZ(3),\n" +
		"  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND\n" +
		") WITH ('connector' = 'kafka');\n" +
		"SELECT CAST(x AS BIGINT) + y, f(INTERVAL '1' MINUTE, z) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE)) w;\n" +
		"CREATE TABLE u WITH ('k' = 'v') AS SELECT q FROM s"
	stmts, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 3 {
		t.Fatalf("got %d statements", len(stmts))
	}

	// The watermark expression starts at "ts - INTERVAL" on line 4.
	if l, c := errPos(t, stmts[0].ErrorAtNode(stmts[0].Watermarks[0].Expr, "bad")); l != 4 || c != 23 {
		t.Errorf("watermark expr at %d:%d, want 4:23", l, c)
	}

	s := stmts[1]
	fields := selectFields(t, s)
	plus := fields[0].Expr.(*ast.BinaryOperationExpr)
	cast := plus.L.(*ast.FuncCallExpr)
	if cast.FnName.L != CastFunc {
		t.Fatalf("expected %s, got %s", CastFunc, cast.FnName.L)
	}
	fcall := fields[1].Expr.(*ast.FuncCallExpr)
	for _, tc := range []struct {
		name     string
		node     ast.Node
		line, co int
	}{
		{"cast call", cast, 6, 8},
		{"cast operand x", cast.Args[0], 6, 13},
		{"cast type string", cast.Args[1], 6, 15}, // the AS
		{"y after the cast", plus.R, 6, 28},
		{"interval arg", fcall.Args[0], 6, 33},
		{"z after the interval", fcall.Args[1], 6, 54},
		{"nil node", nil, 6, 1},
	} {
		err := s.ErrorAtNode(tc.node, "unknown column")
		if l, c := errPos(t, err); l != tc.line || c != tc.co {
			t.Errorf("%s at %d:%d, want %d:%d\n%v", tc.name, l, c, tc.line, tc.co, err)
		}
		if strings.Contains(err.Error(), "__") {
			t.Errorf("%s: error shows rewritten text: %v", tc.name, err)
		}
	}

	// After a removed WITH clause.
	q := selectFields(t, stmts[2])[0].Expr
	if l, c := errPos(t, stmts[2].ErrorAtNode(q, "unknown column q")); l != 7 || c != 43 {
		t.Errorf("q at %d:%d, want 7:43", l, c)
	}
	// Offsets past the end clamp to the statement end.
	if l, c := errPos(t, stmts[2].Errorf(1<<20, "x")); l != 7 || c != 51 {
		t.Errorf("end at %d:%d, want 7:51", l, c)
	}
	if l, c := errPos(t, stmts[2].Errorf(-5, "x")); l != 7 || c != 1 {
		t.Errorf("negative offset at %d:%d, want 7:1", l, c)
	}
}

func TestErrorRendering(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want string
	}{
		{Error{Line: 1, Col: 1, Msg: "m", SourceLine: "abc"}, "line 1, column 1: m\nabc\n^"},
		{Error{Line: 2, Col: 3, Msg: "m", SourceLine: "\tab"}, "line 2, column 3: m\n\tab\n\t ^"},
		{Error{Line: 1, Col: 3, Msg: "m", SourceLine: "éa"}, "line 1, column 3: m\néa\n  ^"},
		{Error{Line: 1, Col: 5, Msg: "end", SourceLine: "ab"}, "line 1, column 5: end\nab\n    ^"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got\n%s\nwant\n%s", got, tc.want)
		}
	}
	// Columns count characters, not bytes.
	_, err := Parse("SELECT 'ééé', FROM t")
	if l, c := errPos(t, err); l != 1 || c != 15 {
		t.Errorf("got %d:%d, want 1:15: %v", l, c, err)
	}
}

// TestLongStatementError makes TiDB cut the quoted text at 2048 bytes.
func TestLongStatementError(t *testing.T) {
	src := "SELECT * FROMM t WHERE a IN (" + strings.Repeat("1, ", 2000) + "1)"
	_, err := Parse(src)
	if l, c := errPos(t, err); l != 1 || c != 10 {
		t.Fatalf("got %d:%d, want 1:10: %v", l, c, err)
	}
	if !strings.Contains(err.Error(), `near "FROMM"`) {
		t.Errorf("unexpected message: %v", err)
	}
}

func TestPlaceholdersAndFullJoin(t *testing.T) {
	stmts, err := Parse("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND)) a FULL OUTER JOIN b ON a.k = b.k")
	if err != nil {
		t.Fatal(err)
	}
	s := stmts[0]
	join := s.Node.(*ast.SelectStmt).From.TableRefs
	if !IsFullJoin(join) || join.On == nil {
		t.Fatalf("not a full join with ON: %+v", join)
	}
	left := join.Left.(*ast.TableSource).Source.(*ast.TableName)
	if !IsPlaceholderTable(left.Name.O) || s.WindowTVFs[left.Name.O] == nil {
		t.Errorf("left side %s is not a known placeholder", left.Name.O)
	}
	if IsPlaceholderTable("b") || IsFullJoin(nil) {
		t.Error("false positive")
	}

	stmts, err = Parse("SELECT * FROM a LEFT JOIN b ON a.k = b.k JOIN c ON c.k = a.k")
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n ast.ResultSetNode)
	walk = func(n ast.ResultSetNode) {
		if j, ok := n.(*ast.Join); ok {
			if IsFullJoin(j) {
				t.Errorf("join %+v taken for a full join", j)
			}
			walk(j.Left)
			if j.Right != nil {
				walk(j.Right)
			}
		}
	}
	walk(stmts[0].Node.(*ast.SelectStmt).From.TableRefs)
}

func TestScaleDecimal(t *testing.T) {
	for in, want := range map[string]string{"5": "5000", "1.5": "1500", "-2": "-2000", ".001": "1", " 7 ": "7000"} {
		if got, ok := scaleDecimal(in, 1000); !ok || got != want {
			t.Errorf("scaleDecimal(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "x", "1e3", "0.0001", "1/2"} {
		if got, ok := scaleDecimal(in, 1000); ok {
			t.Errorf("scaleDecimal(%q) = %q, want failure", in, got)
		}
	}
}

// TestNoInternalNamesInErrors checks that errors never quote rewritten text.
func TestNoInternalNamesInErrors(t *testing.T) {
	for _, src := range []string{
		"SELECT CAST(a AS BIGINT) FROM t WHERE",
		"SELECT CAST(a AS BIGINT) BIGINT FROM t t t",
		"SELECT f(INTERVAL '1' SECOND) g h FROM t",
		"SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND)) a b c",
		"SELECT * FROM a FULL JOIN b ON",
		"CREATE TABLE t (ts INT, WATERMARK FOR ts AS ts +) WITH ('a' = 'b')",
		"CREATE TABLE t (ts INT, WATERMARK FOR ts AS ts) WITH ('a' = 'b') x",
		"CREATE MATERIALIZED VIEW v AS",
		"CREATE MATERIALIZED VIEW AS SELECT 1",
	} {
		_, err := Parse(src)
		if err == nil {
			t.Errorf("%q: no error", src)
			continue
		}
		if mentionsInternalName(err.Error()) || strings.Contains(err.Error(), "STRAIGHT_JOIN") {
			t.Errorf("%q: error shows rewritten text:\n%v", src, err)
		}
	}
}

// TestPositioner checks the incremental positioner against errorAt, going
// forwards and backwards, on multi-line text with tabs, multi-byte and
// invalid UTF-8.
func TestPositioner(t *testing.T) {
	src := "ab\n\tcé\xff\xe2\x82\n\nxyz€"
	p := newPositioner(src)
	offs := []int{}
	for i := -1; i <= len(src)+1; i++ {
		offs = append(offs, i)
	}
	offs = append(offs, 5, 2, 9, 0, len(src))
	for _, off := range offs {
		l, c := p.at(off)
		e := errorAt(src, off, "")
		if l != e.Line || c != e.Col {
			t.Errorf("at(%d) = %d:%d, errorAt says %d:%d", off, l, c, e.Line, e.Col)
		}
	}
}

// TestFirstErrorWins: statements are checked in order, so an error in an
// earlier statement is reported before a later unterminated string, and
// the statements before the failing one are returned.
func TestFirstErrorWins(t *testing.T) {
	_, err := Parse("SELECT 1;\nSELECT * FROMM t;\nSELECT 'abc")
	if l, c := errPos(t, err); l != 2 || c != 10 {
		t.Errorf("got %d:%d, want 2:10: %v", l, c, err)
	}
	stmts, err := Parse("SELECT 1;\nSELECT 2; SELECT 'abc")
	if l, c := errPos(t, err); l != 2 || c != 18 {
		t.Errorf("got %d:%d, want 2:18: %v", l, c, err)
	}
	if len(stmts) != 2 || stmts[1].Text != "SELECT 2" {
		t.Errorf("statements before the error: %d", len(stmts))
	}
}

// TestErrorAt: errors at the positions of options and watermarks show the
// real source line, even when the statement starts mid-line.
func TestErrorAt(t *testing.T) {
	stmts, err := Parse("SELECT 1; CREATE TABLE t (ts INT,\n\tWATERMARK FOR ts AS ts) WITH ('k' = 'v')")
	if err != nil {
		t.Fatal(err)
	}
	s := stmts[1]
	w, o := s.Watermarks[0], s.Options[0]
	if got, want := s.ErrorAt(w.Line, w.Col, "bad watermark").Error(),
		"line 2, column 2: bad watermark\n\tWATERMARK FOR ts AS ts) WITH ('k' = 'v')\n\t^"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got, want := s.ErrorAt(o.Line, o.Col, "bad option").Error(),
		"line 2, column 32: bad option\n\tWATERMARK FOR ts AS ts) WITH ('k' = 'v')\n\t                              ^"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got, want := s.ErrorAt(s.Line, s.Col, "bad table").Error(),
		"line 1, column 11: bad table\nSELECT 1; CREATE TABLE t (ts INT,\n          ^"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
