package filesystem_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// writeFiles creates files (name -> content) under a new directory.
func writeFiles(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type result struct {
	rows []string // in arrival order, values joined by " | "
	log  string
}

// query runs DDL then a SELECT through the engine.
func query(t *testing.T, ddl, sel string, parallelism int) (result, error) {
	t.Helper()
	var logBuf bytes.Buffer
	s := engine.NewSession(io.Discard)
	s.SetLogger(slog.New(slog.NewTextHandler(&logBuf, nil)))
	if err := s.Conf.Set("parallelism.default", fmt.Sprint(parallelism)); err != nil {
		t.Fatal(err)
	}
	stmts, err := parser.Parse(ddl + ";" + sel)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Execute(context.Background(), stmts[0]); err != nil {
		return result{}, err
	}
	r, err := s.Execute(context.Background(), stmts[1])
	if err != nil {
		return result{}, err
	}
	var ts []types.Type
	for _, c := range r.Query.Columns {
		ts = append(ts, c.Type)
	}
	tbl := dyntable.NewTable(nil)
	err = r.Query.Run(context.Background(), func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			if err := tbl.Apply(ch); err != nil {
				return err
			}
		}
		return nil
	})
	var res result
	for _, row := range tbl.Rows() {
		res.rows = append(res.rows, types.FormatRow(row, ts, " | "))
	}
	res.log = logBuf.String()
	return res, err
}

func mustQuery(t *testing.T, ddl, sel string, parallelism int) result {
	t.Helper()
	r, err := query(t, ddl, sel, parallelism)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func checkRows(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const allTypes = `(b BOOLEAN, i INT, bi BIGINT, d DOUBLE, m DECIMAL(6, 2), s STRING, v VARCHAR(3), dt DATE, ts TIMESTAMP(3))`

func ddl(table, cols, path, format string, extra ...string) string {
	opts := fmt.Sprintf("'connector' = 'filesystem', 'path' = '%s', 'format' = '%s'", path, format)
	for _, e := range extra {
		opts += ", " + e
	}
	return fmt.Sprintf("CREATE TABLE %s %s WITH (%s)", table, cols, opts)
}

func TestJSONEveryTypeAndNulls(t *testing.T) {
	// The file starts with a UTF-8 byte order mark.
	dir := writeFiles(t, map[string]string{"t.json": "\xef\xbb\xbf" + `{"b":true,"i":1,"bi":9007199254740993,"d":2.5,"m":12.345,"s":"h\u00e9llo \"q\" \ud83d\ude00","v":"abcdef","dt":"2024-02-29","ts":"2024-01-01 00:00:01.123"}
{"ts":1704067201123,"i":"42","s":{"x": [1, 2]},"extra":{"deep":[{"a":null},"}"]},"b":"false","d":"1e3","m":-0.005,"bi":-0}

  {"b":null,"i":null,"bi":-5,"d":-0.5,"m":0,"s":"","v":null,"dt":"2024-1-5","ts":"2024-01-01T23:59:59.9999","s2":[]}
{}` + "\r\n" + `{"i":-2147483648,"ts":-1,"dt":"1969-12-31","s":"tab\there","m":"9999.994","d":1.5e-3,"v":7}`,
	})
	r := mustQuery(t, ddl("t", allTypes, filepath.Join(dir, "t.json"), "json"), "SELECT * FROM t", 1)
	checkRows(t, r.rows,
		`true | 1 | 9007199254740993 | 2.5 | 12.35 | héllo "q" 😀 | abc | 2024-02-29 | 2024-01-01 00:00:01.123`,
		`false | 42 | 0 | 1000 | -0.01 | {"x": [1, 2]} | NULL | NULL | 2024-01-01 00:00:01.123`,
		`NULL | NULL | -5 | -0.5 | 0.00 |  | NULL | 2024-01-05 | 2024-01-01 23:59:59.999`,
		`NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL`,
		"NULL | -2147483648 | NULL | 0.0015 | 9999.99 | tab\there | 7 | 1969-12-31 | 1969-12-31 23:59:59.999",
	)
}

func TestCSVEveryTypeAndNulls(t *testing.T) {
	dir := writeFiles(t, map[string]string{"t.csv": `true,1,9007199254740993,2.5,12.345,"a,""b""",abcdef,2024-02-29,2024-01-01 00:00:01.123
false, 42 ,,1e3,-0.005,,,2024-1-5,2024-01-01T23:59:59.9999

,,,,,"multi` + "\r\n" + `line, ""quoted""",,,` + "\r\n" + `N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A
yes,-7,-8,-inf,0.1,N/A ,"",1970-01-01,1970-01-01 00:00:00`,
	})
	r := mustQuery(t, ddl("t", allTypes, filepath.Join(dir, "t.csv"), "csv", "'csv.null-literal' = 'N/A'"), "SELECT * FROM t", 1)
	checkRows(t, r.rows,
		`true | 1 | 9007199254740993 | 2.5 | 12.35 | a,"b" | abc | 2024-02-29 | 2024-01-01 00:00:01.123`,
		`false | 42 | NULL | 1000 | -0.01 |  |  | 2024-01-05 | 2024-01-01 23:59:59.999`,
		"NULL | NULL | NULL | NULL | NULL | multi\r\nline, \"quoted\" |  | NULL | NULL",
		`NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL | NULL`,
		`true | -7 | -8 | -Infinity | 0.10 | N/A  |  | 1970-01-01 | 1970-01-01 00:00:00.000`,
	)
}

func TestCSVOptions(t *testing.T) {
	dir := writeFiles(t, map[string]string{"t.csv": "# a comment\n1\t'x\t''y'\n2\tp\\\tq\n3\t'it\\'s'\n"})
	r := mustQuery(t, ddl("t", "(k INT, s STRING)", filepath.Join(dir, "t.csv"), "csv",
		`'csv.field-delimiter' = '\t'`, `'csv.quote-character' = ''''`, `'csv.allow-comments' = 'true'`,
		`'csv.escape-character' = '\'`), "SELECT * FROM t", 1)
	checkRows(t, r.rows, "1 | x\t'y", "2 | p\tq", "3 | it's")

	// Without quoting, quotes are text; without comments, '#' starts a field.
	dir = writeFiles(t, map[string]string{"t.csv": "#1;\"a\n2;b\"\n"})
	r = mustQuery(t, ddl("t", "(k STRING, s STRING)", filepath.Join(dir, "t.csv"), "csv",
		`'csv.field-delimiter' = ';'`, `'csv.disable-quote-character' = 'true'`), "SELECT * FROM t", 1)
	checkRows(t, r.rows, `#1 | "a`, `2 | b"`)
}

func TestDirectoryInNameOrderSkippingHiddenFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"b.json":          `{"k":"b1"}` + "\n" + `{"k":"b2"}`,
		"a.json":          `{"k":"a1"}` + "\n",
		"sub/c.json":      `{"k":"sub/c1"}`,
		"sub/.x.json":     `{"k":"hidden in sub"}`,
		"_tmp/d.json":     `{"k":"in a hidden directory"}`,
		".hidden.json":    `{"k":"hidden"}`,
		"_SUCCESS":        "not json",
		"empty.json":      "",
		"sub.json":        `{"k":"sub.json"}`,
		"z/y/deep.json":   `{"k":"z/y/deep"}`,
		"Upper.json":      `{"k":"Upper"}`,
		"a.json.inprogre": `{"k":"a.json.inprogre"}`,
	})
	r := mustQuery(t, ddl("t", "(k STRING)", dir, "json"), "SELECT k FROM t", 1)
	// Byte-wise order of relative paths: "Upper.json" < "a.json" < ... and
	// "sub.json" < "sub/c.json" since '.' < '/'.
	checkRows(t, r.rows, "Upper", "a1", "a.json.inprogre", "b1", "b2", "sub.json", "sub/c1", "z/y/deep")
}

func TestParseErrorsFailWithFileLineAndOffset(t *testing.T) {
	good := `{"i":1}` + "\n"
	dir := writeFiles(t, map[string]string{
		"a.json": good + `{"i": 1,}` + "\n" + good,
		"b.json": good + good + `{"i":"x"}` + "\n",
		"c.csv":  "1,a\n2\n",
		"d.csv":  "1,a\n2,\"open\nstill open\n",
		"e.csv":  "1,\"x\"y\n",
		"f.csv":  "1,\"a\nb\"\n2\n",
	})
	for _, c := range []struct{ file, format, cols, want string }{
		{"a.json", "json", "(i INT)", `a.json:2 (byte offset 8): invalid JSON at column 9: expected a field name, found '}'`},
		{"b.json", "json", "(i INT)", `b.json:3 (byte offset 16): column 'i': cannot cast 'x' to INT`},
		{"c.csv", "csv", "(i INT, s STRING)", `c.csv:2 (byte offset 4): row length mismatch: 2 fields expected but found 1`},
		{"d.csv", "csv", "(i INT, s STRING)", `d.csv:2 (byte offset 4): quoted field not closed before the end of the file`},
		{"e.csv", "csv", "(i INT, s STRING)", `e.csv:1 (byte offset 0): expected a delimiter after the closing quote at byte 6 of the record, found 'y'`},
		{"f.csv", "csv", "(i INT, s STRING)", `f.csv:3 (byte offset 8): row length mismatch: 2 fields expected but found 1`},
	} {
		_, err := query(t, ddl("t", c.cols, filepath.Join(dir, c.file), c.format), "SELECT * FROM t", 1)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, c.want)) {
			t.Errorf("%s: err = %v\nwant it to contain %s", c.file, err, c.want)
		}
	}
}

func TestIgnoreParseErrorsSkipsAndCounts(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"t.json": `{"i":1}` + "\n" + `{"i": 1,}` + "\n" + `[1]` + "\n" + `{"i":3}` + "\n" + `{"i":"x"}` + "\n" + `{"i":4} x`,
		"t.csv":  "1,a\n2\nx,b\n3,c\n4,\"d\n",
	})
	r := mustQuery(t, ddl("t", "(i INT)", filepath.Join(dir, "t.json"), "json", "'json.ignore-parse-errors' = 'true'"), "SELECT * FROM t", 1)
	checkRows(t, r.rows, "1", "3")
	if !strings.Contains(r.log, "skipped=4") || !strings.Contains(r.log, "t.json:2 (byte offset 8)") {
		t.Errorf("log does not report 4 skipped records and the first one:\n%s", r.log)
	}
	r = mustQuery(t, ddl("t", "(i INT, s STRING)", filepath.Join(dir, "t.csv"), "csv", "'csv.ignore-parse-errors' = 'true'"), "SELECT * FROM t", 1)
	checkRows(t, r.rows, "1 | a", "3 | c")
	if !strings.Contains(r.log, "skipped=3") {
		t.Errorf("log does not report 3 skipped records:\n%s", r.log)
	}
	// Nothing skipped, nothing logged.
	r = mustQuery(t, ddl("t", "(i INT)", filepath.Join(dir, "t.json"), "json", "'json.ignore-parse-errors' = 'true'"), "SELECT * FROM t WHERE i > 100", 1)
	if len(r.rows) != 0 || !strings.Contains(r.log, "skipped=4") {
		t.Errorf("rows %v log %s", r.rows, r.log)
	}
}

func TestFailOnMissingField(t *testing.T) {
	dir := writeFiles(t, map[string]string{"t.json": `{"i":1,"s":null}` + "\n" + `{"i":2}` + "\n"})
	_, err := query(t, ddl("t", "(i INT, s STRING)", filepath.Join(dir, "t.json"), "json", "'json.fail-on-missing-field' = 'true'"), "SELECT * FROM t", 1)
	if err == nil || !strings.Contains(err.Error(), "t.json:2 (byte offset 17): field 's' is missing") {
		t.Fatalf("err = %v", err)
	}
}

func TestParallelismGivesEveryRowOnce(t *testing.T) {
	files := map[string]string{}
	want := []string{}
	id := 0
	for f, n := range []int{1500, 7, 2100} {
		var b strings.Builder
		for range n {
			id++
			fmt.Fprintf(&b, "{\"id\":%d,\"f\":%d}\n", id, f)
			want = append(want, fmt.Sprint(id))
		}
		files[fmt.Sprintf("part-%d.json", f)] = b.String()
	}
	sort.Strings(want)
	dir := writeFiles(t, files)
	for _, c := range []struct {
		extra []string
		p     int
	}{{nil, 2}, {[]string{"'scan.parallelism' = '2'"}, 1}, {[]string{"'scan.parallelism' = '5'"}, 1}} {
		tbl := ddl("t", "(id BIGINT, f INT)", dir, "json", c.extra...)
		r := mustQuery(t, tbl, "SELECT id FROM t", c.p)
		sort.Strings(r.rows)
		checkRows(t, r.rows, want...)
		r = mustQuery(t, tbl, "SELECT COUNT(*), COUNT(DISTINCT id), SUM(id) FROM t", c.p)
		// 1..3607 sums to 3607 * 3608 / 2.
		checkRows(t, r.rows, "3607 | 3607 | 6507028")
	}
}

func TestBadOptions(t *testing.T) {
	dir := writeFiles(t, map[string]string{"t.json": "{}\n", "sub/x.json": "{}\n"})
	p := filepath.Join(dir, "t.json")
	for _, c := range []struct{ opts, want string }{
		{"'path' = '" + p + "'", "requires option 'format'"},
		{"'format' = 'json'", "requires option 'path'"},
		{"'path' = '" + p + "', 'format' = 'avro'", "option 'format' must be 'json' or 'csv'"},
		{"'path' = '" + p + "', 'format' = 'json', 'csv.field-delimiter' = ';'", "option 'csv.field-delimiter' does not apply to 'format' = 'json'"},
		{"'path' = '" + p + "', 'format' = 'csv', 'csv.field-delimiter' = ';;'", "must be a single ASCII character"},
		{"'path' = '" + p + "', 'format' = 'csv', 'csv.quote-character' = ';', 'csv.disable-quote-character' = 'true'", "cannot be set when"},
		{"'path' = '" + p + "', 'format' = 'json', 'json.ignore-parse-errors' = 'yes'", "must be 'true' or 'false'"},
		{"'path' = '" + p + "', 'format' = 'json', 'source.monitor-interval' = '1s'", "reads its files once"},
		{"'path' = '" + p + "', 'format' = 'json', 'scan.parallelism' = '0'", "positive integer"},
		{"'path' = 's3://bucket/x', 'format' = 'json'", "scheme 's3' is not supported"},
		{"'path' = '" + filepath.Join(dir, "nope") + "', 'format' = 'json'", "nope: no such file or directory"},
		{"'path' = 'file://" + p + "', 'format' = 'json', 'bogus' = '1'", "unsupported option(s) for connector 'filesystem': 'bogus'"},
	} {
		_, err := query(t, "CREATE TABLE t (k INT) WITH ('connector' = 'filesystem', "+c.opts+")", "SELECT k FROM t", 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.opts, err, c.want)
		}
	}
	// A file:// URI is a local path.
	r := mustQuery(t, "CREATE TABLE t (k INT) WITH ('connector' = 'filesystem', 'format' = 'json', 'path' = 'file://"+dir+"')", "SELECT COUNT(*) FROM t", 1)
	checkRows(t, r.rows, "2")
}

// A query that reads some columns gets them from the decoder alone
// (projection push-down): the values of the other columns are not
// converted, so one that would not convert is no error, and the row
// holds the read columns in the query's order.
func TestProjectionReadsOnlyTheQueriedColumns(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"t.json": `{"a":1,"b":"not a number","c":"x","d":"2024-13-99"}` + "\n" + `{"c":"y","a":2,"b":7}` + "\n",
		"t.csv":  "1,not a number,x,2024-13-99\n2,7,\"y,z\",2024-01-01\n",
	})
	cols := "(a INT, b BIGINT, c STRING, d DATE)"
	r := mustQuery(t, ddl("t", cols, filepath.Join(dir, "t.json"), "json"), "SELECT c, a FROM t", 1)
	checkRows(t, r.rows, "x | 1", "y | 2")
	r = mustQuery(t, ddl("t", cols, filepath.Join(dir, "t.csv"), "csv"), "SELECT c, a FROM t", 1)
	checkRows(t, r.rows, "x | 1", "y,z | 2")
	// Reading b still fails on the first line, naming it.
	for _, f := range []string{"t.json", "t.csv"} {
		_, err := query(t, ddl("t", cols, filepath.Join(dir, f), strings.TrimPrefix(filepath.Ext(f), ".")), "SELECT a, b FROM t", 1)
		if err == nil || !strings.Contains(err.Error(), f+":1 (byte offset 0): column 'b': cannot cast 'not a number' to BIGINT") {
			t.Errorf("%s: err = %v", f, err)
		}
	}
	// A CSV record still needs every column's field.
	dir = writeFiles(t, map[string]string{"t.csv": "1,2,x\n"})
	_, err := query(t, ddl("t", cols, filepath.Join(dir, "t.csv"), "csv"), "SELECT a FROM t", 1)
	if err == nil || !strings.Contains(err.Error(), "row length mismatch: 4 fields expected but found 3") {
		t.Errorf("err = %v", err)
	}
	// 'json.fail-on-missing-field' checks the read columns.
	dir = writeFiles(t, map[string]string{"t.json": `{"a":1}` + "\n"})
	r = mustQuery(t, ddl("t", cols, filepath.Join(dir, "t.json"), "json", "'json.fail-on-missing-field' = 'true'"), "SELECT a FROM t", 1)
	checkRows(t, r.rows, "1")
}
