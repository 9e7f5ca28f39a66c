// Package repl owns the interactive SQL client and the running of SQL
// scripts: reading statements, executing them in a session, and showing
// results — tables, plans and the changelog of continuous queries.
package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/internal/secrets"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// ScriptOptions control RunScript.
type ScriptOptions struct {
	// Name is the script's file name, used in error messages.
	Name string
	// ContinueOnError runs every statement even after a failure; the
	// script still fails at the end.
	ContinueOnError bool
	// Detach returns as soon as every INSERT job is submitted: bounded
	// INSERTs are not waited for, and neither are the jobs at the end.
	Detach bool
	// Init marks a script that prepares a session which goes on (the REPL,
	// or statements from standard input): a bounded INSERT is waited for
	// before the next statement, but jobs still running at the end are
	// left running.
	Init bool
	Out  io.Writer // results
	Err  io.Writer // errors
}

// ErrScriptFailed is returned when at least one statement failed.
var ErrScriptFailed = errors.New("script failed")

// RunScript executes a script statement by statement in s. An INSERT
// whose sources are bounded is waited for before the next statement; a
// SELECT prints its changelog as it arrives.
func RunScript(ctx context.Context, s *engine.Session, sql string, o ScriptOptions) error {
	stmts, perr := parser.Parse(sql)
	failed := 0
	report := func(st *parser.Statement, err error) {
		failed++
		if st == nil {
			fmt.Fprintf(o.Err, "%s: %v\n", o.Name, err)
			return
		}
		var pe *parser.Error
		if errors.As(err, &pe) {
			fmt.Fprintf(o.Err, "%s:%d:%d: error in statement starting at line %d:\n%v\n", o.Name, pe.Line, pe.Col, st.Line, err)
			return
		}
		fmt.Fprintf(o.Err, "%s:%d: error in statement:\n  %s\n%v\n", o.Name, st.Line, firstLine(secrets.Mask(st.Text)), err)
	}
	for _, st := range stmts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := runOne(ctx, s, st, o); err != nil {
			report(st, err)
			if !o.ContinueOnError {
				return ErrScriptFailed
			}
		}
	}
	if perr != nil {
		failed++
		var pe *parser.Error
		if errors.As(perr, &pe) {
			fmt.Fprintf(o.Err, "%s:%d:%d: %v\n", o.Name, pe.Line, pe.Col, perr)
		} else {
			fmt.Fprintf(o.Err, "%s: %v\n", o.Name, perr)
		}
		if o.ContinueOnError {
			fmt.Fprintf(o.Err, "%s: statements after a syntax error are not run\n", o.Name)
		}
	}
	if !o.Detach && !o.Init && failed == 0 {
		// Unbounded jobs run until interrupted.
		if err := waitJobs(ctx, s); err != nil {
			fmt.Fprintf(o.Err, "%s: %v\n", o.Name, err)
			failed++
		}
	}
	if failed > 0 {
		if o.ContinueOnError {
			fmt.Fprintf(o.Err, "%s: %d statement(s) failed\n", o.Name, failed)
		}
		return ErrScriptFailed
	}
	return nil
}

func waitJobs(ctx context.Context, s *engine.Session) error {
	done := make(chan error, 1)
	go func() { done <- s.WaitAll() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		for _, j := range s.Jobs() {
			j.Cancel()
		}
		<-done
		return ctx.Err()
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// runOne executes one statement and prints its result.
func runOne(ctx context.Context, s *engine.Session, st *parser.Statement, o ScriptOptions) error {
	r, err := s.Execute(ctx, st)
	if err != nil {
		return err
	}
	switch {
	case r.Query != nil:
		return printChangelog(ctx, r.Query, o.Out)
	case r.Job != nil:
		fmt.Fprintf(o.Out, "[INFO] %s: %s\n", r.Message, r.Job.Name)
		// A bounded job is waited for; with table.dml-sync, as in Flink,
		// any job is.
		if (r.Job.Bounded || s.Conf.Bool("table.dml-sync")) && !o.Detach {
			select {
			case <-r.Job.Done():
			case <-ctx.Done():
				r.Job.Cancel()
			}
			_ = r.Job.Wait()
			msg, failed := r.Job.Outcome()
			if failed {
				return errors.New(msg)
			}
			fmt.Fprintf(o.Out, "[INFO] %s\n", msg)
		}
		return nil
	case r.Text != "":
		fmt.Fprintln(o.Out, r.Text)
	case r.Header != nil:
		printTable(o.Out, r.Header, r.Rows)
	case r.Message != "":
		fmt.Fprintf(o.Out, "[INFO] %s\n", r.Message)
	}
	return nil
}

// printChangelog streams a query's changes as +I[...] lines.
func printChangelog(ctx context.Context, q *engine.Query, w io.Writer) error {
	ts := make([]types.Type, len(q.Columns))
	var names []string
	for i, c := range q.Columns {
		ts[i] = c.Type
		names = append(names, c.Name)
	}
	fmt.Fprintf(w, "-- columns: %s\n", strings.Join(names, ", "))
	var buf []byte
	return q.Run(ctx, func(c *dyntable.Chunk) error {
		buf = buf[:0]
		for _, ch := range c.Changes {
			buf = append(buf, dyntable.FormatChangeIn(ch, ts, q.Zone)...)
			buf = append(buf, '\n')
		}
		_, err := w.Write(buf)
		return err
	})
}
