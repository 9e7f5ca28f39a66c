// Package sqltest runs golden SQL files: sqllogictest's format with one
// addition, `query changelog`, for the changelog a streaming query
// produces. `streamsql test` and `go test ./tests/sql/...` both run files
// through this package.
//
// A file is a fresh session at parallelism 1. Blocks are separated by
// blank lines; lines starting with # are comments:
//
//	statement ok
//	CREATE TABLE t (a INT) WITH ('connector' = 'values')
//
//	statement error <substring of the expected message>
//	SELECT nope FROM t
//
//	query changelog
//	SELECT a, COUNT(*) FROM t GROUP BY a
//	----
//	+I[1, 1]
//
//	query rowsort        (or nosort, valuesort; optional type letters: query IT rowsort)
//	SELECT a FROM t
//	----
//	1
//
// In a block's SQL, ${TESTDIR} is a directory of the file's own (empty
// at the start, removed at the end), for filesystem tables.
//
// changelog lists every change in order, as Flink's Row.toString writes
// it. rowsort, nosort and valuesort list the final materialized result:
// one row a line with values separated by one space (rowsort sorts the
// lines, nosort keeps the result's order, valuesort puts every value on
// its own line, sorted). INSERT INTO ... SELECT runs to completion
// before the next block.
package sqltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// BlockTimeout bounds one block, so a query over an unbounded source
// fails instead of hanging.
var BlockTimeout = 60 * time.Second

// Block is one test block of a file.
type Block struct {
	Line     int    // line of the block's header, 1-based
	Kind     string // "statement" or "query"
	Mode     string // statement: "ok" or "error"; query: "changelog", "rowsort", "nosort", "valuesort"
	ErrText  string // statement error: the expected substring
	SQL      string
	SQLLine  int
	Expected []string
	// span of the expected lines, for -rewrite: [start, end) line indexes
	expStart, expEnd int
	hasSep           bool
}

// ParseFile splits a golden file into blocks.
func ParseFile(text string) ([]*Block, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var blocks []*Block
	i := 0
	for i < len(lines) {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			i++
			continue
		}
		b := &Block{Line: i + 1}
		f := strings.Fields(l)
		switch f[0] {
		case "statement":
			b.Kind = "statement"
			if len(f) < 2 || (f[1] != "ok" && f[1] != "error") {
				return nil, fmt.Errorf("line %d: want 'statement ok' or 'statement error <text>', got %q", i+1, l)
			}
			b.Mode = f[1]
			if f[1] == "error" {
				b.ErrText = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(l, "statement")), "error"))
			} else if len(f) > 2 {
				return nil, fmt.Errorf("line %d: 'statement ok' takes nothing after it", i+1)
			}
		case "query":
			b.Kind = "query"
			b.Mode = "nosort"
			for _, w := range f[1:] {
				switch w {
				case "changelog", "rowsort", "nosort", "valuesort":
					b.Mode = w
				default:
					if strings.Trim(w, "ITRBD") != "" { // sqllogictest column-type letters
						return nil, fmt.Errorf("line %d: unknown query option %q", i+1, w)
					}
				}
			}
		default:
			return nil, fmt.Errorf("line %d: unknown block %q (want statement or query)", i+1, f[0])
		}
		i++
		b.SQLLine = i + 1
		var sql []string
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.TrimSpace(lines[i]) != "----" {
			sql = append(sql, lines[i])
			i++
		}
		b.SQL = strings.Join(sql, "\n")
		if b.SQL == "" {
			return nil, fmt.Errorf("line %d: block has no SQL", b.Line)
		}
		if i < len(lines) && strings.TrimSpace(lines[i]) == "----" {
			if b.Kind != "query" {
				return nil, fmt.Errorf("line %d: only query blocks have expected output", i+1)
			}
			b.hasSep = true
			i++
			b.expStart = i
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				b.Expected = append(b.Expected, lines[i])
				i++
			}
			b.expEnd = i
		} else if b.Kind == "query" {
			b.expStart, b.expEnd = i, i
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// Failure is one failing block.
type Failure struct {
	File string
	Line int
	Msg  string
}

func (f Failure) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Msg) }

// Result is the outcome of running files.
type Result struct {
	Passed, Failed int
	Failures       []Failure
}

// Options control a run.
type Options struct {
	Rewrite bool      // refill expected outputs instead of comparing
	Log     io.Writer // progress and failures; nil for none
}

// RunPaths runs every .test file under the given files or directories.
func RunPaths(paths []string, opts Options) (*Result, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".test") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	total := &Result{}
	for _, f := range files {
		r, err := RunFile(f, opts)
		if err != nil {
			return nil, err
		}
		total.Passed += r.Passed
		total.Failed += r.Failed
		total.Failures = append(total.Failures, r.Failures...)
	}
	return total, nil
}

// RunFile runs one golden file in a fresh session.
func RunFile(path string, opts Options) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return run(path, string(data), opts)
}

// RunText runs the golden file text in a fresh session, as RunFile runs
// a file; name stands for the file's path in failures. Rewrite is not
// available: there is no file to refill.
func RunText(name, text string, opts Options) (*Result, error) {
	opts.Rewrite = false
	return run(name, text, opts)
}

func run(path, data string, opts Options) (*Result, error) {
	blocks, err := ParseFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var stdout bytes.Buffer
	s := engine.NewSession(&stdout)
	// Each file gets its own checkpoint directory, so that a file may
	// turn checkpointing on with one SET.
	ckdir, err := os.MkdirTemp("", "streamsql-test-ckpt-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(ckdir)
	if err := s.Conf.Set("state.checkpoints.dir", ckdir); err != nil {
		return nil, err
	}
	// ${TESTDIR} in a block's SQL is a directory of the file's own, for
	// the files its filesystem tables write and read.
	testdir, err := os.MkdirTemp("", "streamsql-test-files-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(testdir)
	for _, b := range blocks {
		b.SQL = strings.ReplaceAll(b.SQL, "${TESTDIR}", testdir)
	}
	res := &Result{}
	lines := strings.Split(data, "\n")
	var edits []edit
	for _, b := range blocks {
		got, msg := runBlock(s, b)
		if opts.Rewrite && b.Kind == "query" && msg == "" {
			edits = append(edits, edit{b: b, lines: got})
			res.Passed++
			continue
		}
		if msg == "" && b.Kind == "query" {
			msg = compare(b.Expected, got)
		}
		if msg == "" {
			res.Passed++
			continue
		}
		res.Failed++
		f := Failure{File: path, Line: b.Line, Msg: msg}
		res.Failures = append(res.Failures, f)
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "FAIL %s\n", f)
		}
	}
	if opts.Rewrite && len(edits) > 0 {
		if err := os.WriteFile(path, []byte(applyEdits(lines, edits)), 0o644); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// runBlock executes a block and returns the query output lines, or a
// failure message.
func runBlock(s *engine.Session, b *Block) ([]string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), BlockTimeout)
	defer cancel()
	stmts, err := parser.Parse(b.SQL)
	if err == nil && len(stmts) != 1 {
		err = fmt.Errorf("a block must hold exactly one statement, found %d", len(stmts))
	}
	var out []string
	if err == nil {
		out, err = execute(ctx, s, stmts[0], b)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("timed out after %s (a query over an unbounded source?)", BlockTimeout)
	}
	switch {
	case b.Kind == "statement" && b.Mode == "error":
		if err == nil {
			return nil, fmt.Sprintf("expected an error containing %q, but the statement succeeded", b.ErrText)
		}
		if !strings.Contains(err.Error(), b.ErrText) {
			return nil, fmt.Sprintf("expected an error containing %q, got:\n%s", b.ErrText, err)
		}
		return nil, ""
	case err != nil:
		return nil, fmt.Sprintf("unexpected error:\n%s", err)
	}
	return out, ""
}

func execute(ctx context.Context, s *engine.Session, st *parser.Statement, b *Block) ([]string, error) {
	if b.Mode == "changelog" {
		// A changelog is only deterministic at parallelism 1.
		prev := s.Conf.Get("parallelism.default")
		if err := s.Conf.Set("parallelism.default", "1"); err != nil {
			return nil, err
		}
		defer func() { _ = s.Conf.Set("parallelism.default", prev) }()
	}
	r, err := s.Execute(ctx, st)
	if err != nil {
		return nil, err
	}
	if r.Job != nil {
		done := make(chan error, 1)
		go func() { done <- r.Job.Wait() }()
		select {
		case err := <-done:
			return nil, err
		case <-ctx.Done():
			r.Job.Cancel()
			return nil, ctx.Err()
		}
	}
	if b.Kind == "statement" {
		if r.Query != nil { // a SELECT as a statement: run it for errors
			return nil, r.Query.Run(ctx, func(*dyntable.Chunk) error { return nil })
		}
		return nil, nil
	}
	if r.Query == nil {
		// SHOW, DESCRIBE, EXPLAIN, SET: their text is the output.
		if r.Text != "" {
			return strings.Split(r.Text, "\n"), nil
		}
		var out []string
		for _, row := range r.Rows {
			out = append(out, strings.Join(row, " "))
		}
		if b.Mode == "rowsort" {
			sort.Strings(out)
		}
		return out, nil
	}
	ts := make([]types.Type, len(r.Query.Columns))
	for i, c := range r.Query.Columns {
		ts[i] = c.Type
	}
	var changes []string
	table := dyntable.NewTable(nil)
	err = r.Query.Run(ctx, func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			if b.Mode == "changelog" {
				changes = append(changes, dyntable.FormatChangeIn(ch, ts, r.Query.Zone))
				continue
			}
			if err := table.Apply(ch); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch b.Mode {
	case "changelog":
		return changes, nil
	case "valuesort":
		var vals []string
		for _, row := range table.Rows() {
			for i, v := range row {
				vals = append(vals, types.FormatIn(v, ts[i], r.Query.Zone))
			}
		}
		sort.Strings(vals)
		return vals, nil
	}
	var out []string
	for _, row := range table.Rows() {
		out = append(out, types.FormatRowIn(row, ts, " ", r.Query.Zone))
	}
	if b.Mode == "rowsort" {
		sort.Strings(out)
	}
	return out, nil
}

// compare returns "" when the lines match, else a diff. Trailing white
// space of each line is ignored, as editors strip it.
func compare(want, got []string) string {
	trim := func(ls []string) []string {
		out := make([]string, len(ls))
		for i, l := range ls {
			out[i] = strings.TrimRight(l, " \t")
		}
		return out
	}
	want, got = trim(want), trim(got)
	if strings.Join(want, "\n") == strings.Join(got, "\n") {
		return ""
	}
	var b strings.Builder
	b.WriteString("output differs (- expected, + actual):\n")
	b.WriteString(diff(want, got))
	return b.String()
}

// diff is a small LCS line diff.
func diff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			sb.WriteString("  " + a[i] + "\n")
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			sb.WriteString("+ " + b[j] + "\n")
			j++
		default:
			sb.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return sb.String()
}

type edit struct {
	b     *Block
	lines []string
}

// applyEdits replaces the expected output of each edited block.
func applyEdits(lines []string, edits []edit) string {
	var out []string
	pos := 0
	for _, e := range edits {
		if !e.b.hasSep {
			// Insert a separator after the SQL.
			out = append(out, lines[pos:e.b.expStart]...)
			out = append(out, "----")
		} else {
			out = append(out, lines[pos:e.b.expStart]...)
		}
		out = append(out, e.lines...)
		pos = e.b.expEnd
	}
	out = append(out, lines[pos:]...)
	return strings.Join(out, "\n")
}
