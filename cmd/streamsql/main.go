// Command streamsql runs continuous SQL queries over dynamic tables.
//
//	streamsql                    interactive SQL client
//	streamsql -f job.sql         run a script
//	streamsql -e "SELECT ..."    run one statement
//	streamsql test [paths]       run golden SQL test files
//	streamsql options            print the session options reference
//	streamsql version            print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/repl"
	"github.com/streamsql/streamsql/sqltest"
	"golang.org/x/term"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "0.1.0-dev"

const usage = `streamsql runs continuous SQL queries over dynamic tables.

Usage:
  streamsql [flags]              open the interactive SQL client
  streamsql -f job.sql [flags]   run a script statement by statement
  streamsql -e "<sql>" [flags]   run one statement (or several, separated by ;)
  streamsql test [-rewrite] [files or dirs...]
                                 run golden SQL tests (default: tests/sql)
  streamsql options              print every session option with its default
  streamsql version              print the version

Scripts: an INSERT INTO ... starts a job; when its sources are bounded the
script waits for it to finish before the next statement. A bare SELECT
prints its changelog (+I, -U, +U, -D rows) as it arrives. The first failing
statement stops the script with its file:line and a non-zero exit status,
unless --continue-on-error is given.

Flags:
`

type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, ",") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "test":
			return runTests(args[1:], stdout, stderr)
		case "version":
			fmt.Fprintf(stdout, "streamsql %s\n", Version)
			return 0
		case "options":
			fmt.Fprint(stdout, config.Markdown())
			return 0
		}
	}
	fs := flag.NewFlagSet("streamsql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "run the SQL script `file`")
	stmt := fs.String("e", "", "run the `sql` statement(s)")
	init := fs.String("i", "", "run the init script `file` before the client opens")
	cont := fs.Bool("continue-on-error", false, "keep running a script after a failing statement; exit non-zero at the end")
	detach := fs.Bool("detach", false, "submit the script's INSERT jobs and return without waiting")
	var sets setFlags
	fs.Var(&sets, "set", "set a session option, `key=value`; may be repeated")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "streamsql: unexpected argument %q; see streamsql --help\n", fs.Arg(0))
		return 2
	}
	s := engine.NewSession(stdout)
	for _, kv := range sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			fmt.Fprintf(stderr, "streamsql: --set wants key=value, got %q\n", kv)
			return 2
		}
		if err := s.Conf.Set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			fmt.Fprintf(stderr, "streamsql: --set: %v\n", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	runFile := func(name, sql string) int {
		err := repl.RunScript(ctx, s, sql, repl.ScriptOptions{Name: name, ContinueOnError: *cont, Detach: *detach, Out: stdout, Err: stderr})
		switch {
		case err == nil:
			return 0
		case errors.Is(err, context.Canceled):
			fmt.Fprintln(stderr, "streamsql: interrupted")
			return 130
		}
		return 1
	}
	if *init != "" {
		data, err := os.ReadFile(*init)
		if err != nil {
			fmt.Fprintf(stderr, "streamsql: %v\n", err)
			return 1
		}
		if code := runFile(*init, string(data)); code != 0 {
			return code
		}
	}
	switch {
	case *file != "":
		data, err := os.ReadFile(*file)
		if err != nil {
			fmt.Fprintf(stderr, "streamsql: %v\n", err)
			return 1
		}
		return runFile(*file, string(data))
	case *stmt != "":
		return runFile("<-e>", *stmt)
	}
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		stop() // the REPL handles Ctrl-C itself
		if err := repl.Run(s, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "streamsql: %v\n", err)
			return 1
		}
		return 0
	}
	// Not a terminal: read statements from stdin, no prompts.
	data, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "streamsql: %v\n", err)
		return 1
	}
	return runFile("<stdin>", string(data))
}

func runTests(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("streamsql test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rewrite := fs.Bool("rewrite", false, "refill the expected output of every query block (review the diff!)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	paths := fs.Args()
	if len(paths) == 0 {
		paths = []string{"tests/sql"}
	}
	res, err := sqltest.RunPaths(paths, sqltest.Options{Rewrite: *rewrite, Log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "streamsql test: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", res.Passed, res.Failed)
	if res.Failed > 0 {
		return 1
	}
	return 0
}
