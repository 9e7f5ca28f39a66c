package parser

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
)

// TestRewrite runs the golden files in testdata. Commands:
//
//	rewrite: parse the input; print per statement the text given to TiDB,
//	         TiDB's AST restored as SQL, and the side information.
//	error:   parse the input and print the rendered error.
//
// Refill expected outputs with: go test ./parser -run TestRewrite -rewrite
func TestRewrite(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "rewrite":
				stmts, err := Parse(d.Input)
				if err != nil {
					return "unexpected error:\n" + err.Error() + "\n"
				}
				return describeStatements(stmts)
			case "error":
				_, err := Parse(d.Input)
				if err == nil {
					return "no error\n"
				}
				if _, ok := err.(*Error); !ok {
					return fmt.Sprintf("error of type %T: %v\n", err, err)
				}
				return err.Error() + "\n"
			default:
				t.Fatalf("unknown command %q", d.Cmd)
				return ""
			}
		})
	})
}

func restore(n ast.Node) string {
	var sb strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.DefaultRestoreFlags|format.RestoreStringWithoutCharset, &sb)); err != nil {
		return "restore error: " + err.Error()
	}
	return sb.String()
}

func describeStatements(stmts []*Statement) string {
	var sb strings.Builder
	for i, s := range stmts {
		fmt.Fprintf(&sb, "statement %d at %d:%d: %s\n", i+1, s.Line, s.Col, s.Text)
		if s.Command != nil {
			c := s.Command
			fmt.Fprintf(&sb, "  command %s", c.Kind)
			switch c.Kind {
			case CmdSet, CmdReset:
				fmt.Fprintf(&sb, " key=%q value=%q", c.Key, c.Value)
			case CmdStopJob:
				fmt.Fprintf(&sb, " job=%q savepoint=%v", c.JobID, c.WithSavepoint)
			case CmdShowFunctions:
				fmt.Fprintf(&sb, " user=%v like=%v not=%v ilike=%v pattern=%q", c.User, c.HasLike, c.NotLike, c.ILike, c.Like)
			case CmdShow, CmdShowCreate:
				fmt.Fprintf(&sb, " object=%q path=%q", c.Object, c.Path)
				if c.HasLike {
					fmt.Fprintf(&sb, " not=%v ilike=%v pattern=%q", c.NotLike, c.ILike, c.Like)
				}
			case CmdCreateCatalog, CmdDropCatalog, CmdUseCatalog, CmdCreateDatabase, CmdDropDatabase, CmdUseDatabase:
				fmt.Fprintf(&sb, " path=%q at %d:%d if_exists=%v if_not_exists=%v cascade=%v comment=%q options=%d",
					c.Path, c.Line, c.Col, c.IfExists, c.IfNotExists, c.Cascade, c.Comment, len(s.Options))
			}
			sb.WriteString("\n")
			continue
		}
		if s.Set != nil {
			fmt.Fprintf(&sb, "  statement set explain=%v details=%v\n", s.Set.Explain, s.ExplainDetails)
			for _, in := range s.Set.Inserts {
				fmt.Fprintf(&sb, "    insert at %d:%d: %s\n", in.Line, in.Col, restore(in.Node))
			}
			continue
		}
		fmt.Fprintf(&sb, "  tidb:    %s\n", s.rewritten)
		fmt.Fprintf(&sb, "  ast:     %s\n", restore(s.Node))
		if s.MaterializedView {
			sb.WriteString("  materialized view\n")
		}
		if s.IfNotExists {
			sb.WriteString("  view if not exists\n")
		}
		if s.Temporary {
			sb.WriteString("  temporary\n")
		}
		if s.ExplainDetails != nil {
			fmt.Fprintf(&sb, "  explain details: %v\n", s.ExplainDetails)
		}
		var qs []string
		for k, q := range s.qualified {
			qs = append(qs, fmt.Sprintf("%s=%s.%s", k, q[0], q[1]))
		}
		sort.Strings(qs)
		for _, q := range qs {
			fmt.Fprintf(&sb, "  qualified %s\n", q)
		}
		if s.Options != nil {
			fmt.Fprintf(&sb, "  options: %d\n", len(s.Options))
		}
		for _, o := range s.Options {
			fmt.Fprintf(&sb, "    %d:%d %q = %q\n", o.Line, o.Col, o.Key, o.Value)
		}
		var cols []string
		for n := range s.ColumnTypes {
			cols = append(cols, n)
		}
		sort.Strings(cols)
		for _, n := range cols {
			fmt.Fprintf(&sb, "  column type %s: %s\n", n, s.ColumnTypes[n])
		}
		for _, w := range s.Watermarks {
			fmt.Fprintf(&sb, "  watermark %d:%d for %s: %s\n", w.Line, w.Col, w.Column, restore(w.Expr))
		}
		var names []string
		for n := range s.WindowTVFs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			w := s.WindowTVFs[n]
			fmt.Fprintf(&sb, "  tvf %s %d:%d: %s table=%s timecol=%s intervals=%v", n, w.Line, w.Col, w.Func, w.Table, w.TimeCol, w.Intervals)
			if w.Offset != 0 {
				fmt.Fprintf(&sb, " offset=%v", w.Offset)
			}
			if w.PartitionBy != nil {
				fmt.Fprintf(&sb, " partition by %v", w.PartitionBy)
			}
			sb.WriteString("\n")
		}
	}
	if len(stmts) == 0 {
		sb.WriteString("no statements\n")
	}
	return sb.String()
}
