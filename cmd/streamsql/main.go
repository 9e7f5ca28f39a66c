// Command streamsql runs continuous SQL queries over dynamic tables.
//
//	streamsql                    interactive SQL client
//	streamsql -f job.sql         run a script
//	streamsql -e "SELECT ..."    run one statement
//	streamsql test [paths]       run golden SQL test files
//	streamsql options            print the session and connector options reference
//	streamsql bench / kafka      benchmark a Nexmark query / run a local broker
//	streamsql worker / cluster   run one worker of a cluster job / a local cluster
//	streamsql functions          print the built-in functions reference
//	streamsql version            print the version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/internal/httpapi"
	"github.com/streamsql/streamsql/internal/secrets"
	"github.com/streamsql/streamsql/repl"
	"github.com/streamsql/streamsql/sqltest"
	"golang.org/x/term"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "0.1.0-dev"

// usage is the --help text; its subcommand lines come from subcommands,
// so that every subcommand run dispatches is listed.
func usage() string {
	var b strings.Builder
	b.WriteString(usageHead)
	for _, c := range subcommands {
		line := "  streamsql " + c.name
		if c.args != "" {
			line += " " + c.args
		}
		if len(line) > 32 {
			fmt.Fprintf(&b, "%s\n%33s%s\n", line, "", c.help)
		} else {
			fmt.Fprintf(&b, "%-33s%s\n", line, c.help)
		}
	}
	b.WriteString(usageTail)
	return b.String()
}

// subcommand is a first argument that selects a command of its own.
type subcommand struct {
	name, args, help string
	run              func(args []string, stdout, stderr io.Writer) int
}

// untilSignal makes a command that runs until stop receives (serveKafka,
// serveCluster; their tests send on stop themselves) a subcommand that
// stops on SIGINT or SIGTERM.
func untilSignal(serve func(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int) func([]string, io.Writer, io.Writer) int {
	return func(args []string, stdout, stderr io.Writer) int {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sig)
		return serve(args, stdout, stderr, sig)
	}
}

// subcommands are dispatched by run and listed by --help.
var subcommands []subcommand

func init() {
	subcommands = []subcommand{
		{"test", "[-rewrite] [files or dirs...]", "run golden SQL tests (default: tests/sql)", runTests},
		{"bench", "nexmark --query qN [flags]", "run a Nexmark query over generated events and print its throughput (bench -h)", runBench},
		{"kafka", "[--port 9092] [flags]", "run a local Kafka-protocol broker for development (kafka -h)", untilSignal(serveKafka)},
		{"worker", "--bootstrap-servers host:port -f job.sql", "run one worker of a cluster job; N of them share its tasks (worker -h)", runWorker},
		{"cluster", "--workers 3 -f job.sql", "run a cluster job on this machine: a local broker and N workers (cluster -h)", untilSignal(serveCluster)},
		{"options", "", "print every session and connector option with its default (docs/options.md)", func(_ []string, stdout, _ io.Writer) int {
			fmt.Fprint(stdout, optionsMarkdown())
			return 0
		}},
		{"functions", "", "print every built-in function (docs/functions.md)", func(_ []string, stdout, _ io.Writer) int {
			fmt.Fprint(stdout, expr.FunctionsMarkdown())
			return 0
		}},
		{"version", "", "print the version", func(_ []string, stdout, _ io.Writer) int {
			fmt.Fprintln(stdout, versionString())
			return 0
		}},
	}
}

// optionsMarkdown is docs/options.md: the session options, then each
// connector's.
func optionsMarkdown() string { return config.Markdown() + "\n" + connectors.Markdown() }

const usageHead = `streamsql runs continuous SQL queries over dynamic tables.

Usage:
  streamsql [flags]              open the interactive SQL client (HELP; lists what it takes)
  streamsql -f job.sql [flags]   run a script statement by statement
  streamsql -e "<sql>" [flags]   run one statement (or several, separated by ;); not with -f
                                 (-i file -e "<sql>" runs a file first)
`

const usageTail = `
Scripts: an INSERT INTO ... starts a job; when its sources are bounded the
script waits for it to finish before the next statement. A bare SELECT
prints its changelog (+I, -U, +U, -D rows) as it arrives. The first failing
statement stops the script with its file:line, the statement and the error,
and a non-zero exit status; with --continue-on-error every statement runs
and a summary ends the run, still with a non-zero status.

--detach submits a script's INSERT jobs without waiting for them, then
opens the interactive client (when run from a terminal) where SHOW JOBS and
STOP JOB manage them; without a terminal, statements are read from
standard input and the process stays until its jobs end. Jobs run inside
the streamsql process: when it exits, they stop.

When standard input is not a terminal, statements are read from it, with
no prompts and no colours.

Flags:
`

// httpTokenEnv holds the HTTP endpoint's bearer token when --http-token
// is not given.
const httpTokenEnv = "STREAMSQL_HTTP_TOKEN"

type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, ",") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func versionString() string {
	v := "streamsql " + Version
	if bi, ok := debug.ReadBuildInfo(); ok {
		v += " (" + bi.GoVersion
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += ", " + s.Value[:12]
			}
		}
		v += ")"
	}
	return v
}

func isTerminal(f any) (*os.File, bool) {
	file, ok := f.(*os.File)
	return file, ok && term.IsTerminal(int(file.Fd()))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		for _, c := range subcommands {
			if args[0] == c.name {
				return c.run(args[1:], stdout, stderr)
			}
		}
	}
	fs := flag.NewFlagSet("streamsql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "run the SQL script `file`")
	stmt := fs.String("e", "", "run the `sql` statement(s)")
	init := fs.String("i", "", "run the init script `file` first (before the client opens, or before -f/-e/stdin)")
	cont := fs.Bool("continue-on-error", false, "keep running a script after a failing statement; exit non-zero at the end with a summary")
	detach := fs.Bool("detach", false, "submit the script's INSERT jobs without waiting for them; manage them in the client that opens")
	httpAddr := fs.String("http", "", "serve GET /jobs, /jobs/{id} and /metrics on `address` (a bare port binds to 127.0.0.1)")
	httpToken := fs.String("http-token", "", "require `token` on every HTTP request (Authorization: Bearer token); "+
		"the environment variable "+httpTokenEnv+" does the same without showing it in the process list")
	showVersion := fs.Bool("version", false, "print the version")
	var sets setFlags
	fs.Var(&sets, "set", "set a session option, `key=value`; may be repeated")
	vars := repl.Vars{}
	fs.Var(vars, "var", "replace ${name} in scripts by value, `name=value`; may be repeated")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage())
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, versionString())
		return 0
	}
	if *file != "" && *stmt != "" {
		// One of them would be ignored; running both raises which runs
		// first. -i runs a file before -e.
		fmt.Fprintln(stderr, "streamsql: -e and -f cannot be used together: put the statements in the file, or run the file first with -i file -e \"...\"")
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "streamsql: unexpected argument %q; see streamsql --help\n", fs.Arg(0))
		return 2
	}
	inFile, inTerm := isTerminal(stdin)
	outFile, outTerm := isTerminal(stdout)
	interactive := inTerm && outTerm

	// Logs go to standard error with their secrets masked.
	slog.SetDefault(slog.New(secrets.Handler(slog.NewTextHandler(stderr, nil))))
	console := repl.NewConsole(stdout)
	s := engine.NewSession(console)
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
	if *httpToken == "" {
		*httpToken = os.Getenv(httpTokenEnv)
	} else if *httpAddr == "" {
		fmt.Fprintln(stderr, "streamsql: --http-token needs --http")
		return 2
	}
	if *httpAddr != "" {
		srv, err := httpapi.Start(*httpAddr, s, httpapi.Options{Token: *httpToken, ErrLog: stderr})
		if err != nil {
			fmt.Fprintf(stderr, "streamsql: --http: %v\n", err)
			return 2
		}
		defer srv.Close()
		auth := ""
		if *httpToken != "" {
			auth = " (bearer token required)"
		}
		fmt.Fprintf(stderr, "[INFO] HTTP endpoint on %s: GET /jobs, /jobs/{id}, /metrics%s\n", srv.URL(), auth)
		if w := srv.Warning(); w != "" {
			fmt.Fprintf(stderr, "[WARN] %s\n", w)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runFile := func(name, sql string, o repl.ScriptOptions) int {
		sql = repl.Substitute(sql, vars, stderr, name)
		o.Name, o.ContinueOnError, o.Out, o.Err = name, *cont, stdout, stderr
		err := repl.RunScript(ctx, s, sql, o)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, context.Canceled):
			fmt.Fprintln(stderr, "streamsql: interrupted")
			return 130
		}
		return 1
	}
	readFile := func(name string) (string, bool) {
		data, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "streamsql: %v\n", err)
			return "", false
		}
		return string(data), true
	}
	if *init != "" {
		sql, ok := readFile(*init)
		if !ok {
			return 1
		}
		if code := runFile(*init, sql, repl.ScriptOptions{Init: true}); code != 0 {
			return code
		}
	}
	name, script := "", ""
	switch {
	case *file != "":
		sql, ok := readFile(*file)
		if !ok {
			return 1
		}
		name, script = *file, sql
	case *stmt != "":
		name, script = "<-e>", *stmt
	}
	if name != "" {
		if !*detach {
			return runFile(name, script, repl.ScriptOptions{})
		}
		if code := runFile(name, script, repl.ScriptOptions{Detach: true}); code != 0 {
			return code
		}
		n := running(s)
		if n > 0 {
			fmt.Fprintf(stderr, "[INFO] %d job(s) running in the background; SHOW JOBS lists them, STOP JOB 'id' stops one\n", n)
		}
		if n > 0 && !interactive {
			fmt.Fprintln(stderr, "[INFO] Without a terminal, statements are read from standard input; the jobs run in this process, which stays until they end (Ctrl-C stops them)")
		}
	}
	if interactive {
		stop() // the REPL handles Ctrl-C itself
		err := repl.Run(s, repl.Options{In: inFile, Out: outFile, Console: console,
			Color: os.Getenv("NO_COLOR") == "", Banner: banner()})
		if err != nil {
			fmt.Fprintf(stderr, "streamsql: %v\n", err)
			return 1
		}
		return 0
	}
	// Not a terminal: read statements from stdin, no prompts, no colours.
	data, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "streamsql: %v\n", err)
		return 1
	}
	return runFile("<stdin>", string(data), repl.ScriptOptions{})
}

func banner() string {
	return versionString() + ", the interactive SQL client.\nEnd statements with ';'. HELP; lists what it takes, Ctrl-D exits.\n"
}

// running counts the session's running jobs.
func running(s *engine.Session) int {
	n := 0
	for _, j := range s.Jobs() {
		if j.Status() == engine.StatusRunning {
			n++
		}
	}
	return n
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
