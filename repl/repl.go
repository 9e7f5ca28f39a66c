package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/chzyer/readline"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/internal/secrets"
	"github.com/streamsql/streamsql/parser"
)

// The prompts.
const (
	Prompt             = "streamsql> "
	ContinuationPrompt = "     -> "
)

// HistoryName is the history file's name in the home directory.
const HistoryName = ".streamsql_history"

// ResultModeKey is the option choosing how the REPL shows query results.
const ResultModeKey = "sql-client.execution.result-mode"

// MaxTableRowsKey bounds the rows the table result mode keeps.
const MaxTableRowsKey = "sql-client.display.max-table-result-rows"

// ClientHelp follows the engine's HELP text in the REPL.
const ClientHelp = `Client:
  SET 'sql-client.execution.result-mode' = 'tableau'   show rows as they come, with an op column (default)
  SET 'sql-client.execution.result-mode' = 'changelog' show +I/-U/+U/-D rows
  SET 'sql-client.execution.result-mode' = 'table'     show a live table, updated in place (q leaves)
  STOP JOB 'id' WITH SAVEPOINT                            stop after a savepoint (the job must have checkpointing)
  EXIT / QUIT                                             leave; Ctrl-D on an empty line does too
Keys: Tab completes · Ctrl-R searches the history · Ctrl-C cancels the running query · Ctrl-D exits
      In table mode: Up/Down, PgUp/PgDn, Home/End scroll; q leaves the view.`

// Options configure Run.
type Options struct {
	// In is the terminal the REPL reads; Out is where it writes. Both
	// must be the terminal (Run puts In into raw and key-by-key modes).
	In  *os.File
	Out *os.File
	// HistoryFile defaults to ~/.streamsql_history; "-" keeps no history.
	HistoryFile string
	// Console, if set, is the writer the session's print sinks write to.
	// The REPL points it at readline while the prompt is shown, so output
	// of background jobs does not garble the line being typed.
	Console *Console
	// Color enables colours in messages.
	Color bool
	// Banner is printed when the REPL opens.
	Banner string
}

// Console is a writer whose destination can change: the session's print
// sinks write to it, and the REPL routes it around the prompt.
type Console struct {
	mu sync.Mutex
	w  io.Writer
}

// NewConsole returns a Console writing to w.
func NewConsole(w io.Writer) *Console { return &Console{w: w} }

// Write writes p to the current destination.
func (c *Console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.Write(p)
}

// Set changes the destination and returns the previous one.
func (c *Console) Set(w io.Writer) io.Writer {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.w
	c.w = w
	return old
}

type repl struct {
	s   *engine.Session
	o   Options
	in  *input
	rl  *readline.Instance
	out io.Writer

	mu       sync.Mutex
	cancel   context.CancelFunc // of the running statement; nil at the prompt
	atPrompt bool
	quitting bool     // SIGTERM or SIGHUP arrived
	notes    []string // job notices held back while a statement runs
	typed    string   // earlier lines of the statement being typed, for completion
}

// typedSoFar returns the earlier lines of the statement being typed.
func (r *repl) typedSoFar() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.typed
}

func (r *repl) setTyped(s string) {
	r.mu.Lock()
	r.typed = s
	r.mu.Unlock()
}

// Run opens the interactive client on a terminal and returns when the
// user types Ctrl-D on an empty line, EXIT or QUIT. Ctrl-C cancels the
// running query and returns to the prompt; it never exits. Jobs still
// running when the REPL closes are stopped.
func Run(s *engine.Session, o Options) error {
	r := &repl{s: s, o: o, out: o.Out}
	r.in = newInput(o.In)
	lr := r.in.lineReader()
	hist := o.HistoryFile
	if hist == "" {
		if home, err := os.UserHomeDir(); err == nil {
			hist = filepath.Join(home, HistoryName)
		}
	}
	if hist == "-" {
		hist = ""
	}
	if hist != "" {
		// readline creates the file world-readable; history holds
		// statements, which may hold secrets (connector options).
		if f, err := os.OpenFile(hist, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			f.Close()
		}
		_ = os.Chmod(hist, 0o600)
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 Prompt,
		HistoryFile:            hist,
		HistorySearchFold:      true,
		DisableAutoSaveHistory: true,
		AutoComplete:           completer{s: s, typed: r.typedSoFar},
		InterruptPrompt:        "^C",
		EOFPrompt:              "exit",
		Stdin:                  lr,
		Stdout:                 o.Out,
		Stderr:                 o.Out,
	})
	if err != nil {
		return err
	}
	r.rl = rl
	defer func() {
		lr.Close()
		rl.Close()
	}()

	// Ctrl-C: at the prompt readline sees it as a key (raw mode); while a
	// statement runs the terminal raises SIGINT, which cancels it. The
	// handler stays installed so that SIGINT never ends the process.
	// SIGTERM and SIGHUP (the terminal went away) end the REPL the way
	// Ctrl-D does, restoring the terminal and stopping the jobs.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	go func() {
		for s := range sig {
			r.mu.Lock()
			if s != os.Interrupt {
				r.quitting = true
				lr.Close() // readline's next read ends the prompt
			}
			if r.cancel != nil {
				r.cancel()
			}
			r.mu.Unlock()
		}
	}()

	if o.Banner != "" {
		fmt.Fprintln(r.out, o.Banner)
	}
	// Bracketed paste: pastes arrive marked, and bypass readline (input).
	io.WriteString(r.out, pasteOn)
	defer io.WriteString(r.out, pasteOff)
	r.loop()
	r.stopJobs()
	return nil
}

func (r *repl) loop() {
	// The statement being typed: its lines, its text and the scanner that
	// says when it is complete, fed each line once.
	var (
		lines []string
		text  strings.Builder
		sc    stmtScanner
	)
	reset := func() {
		lines, sc = nil, stmtScanner{}
		text.Reset()
		r.setTyped("")
	}
	// The lines of a paste still to run, and its last, unfinished line,
	// which the next prompt starts with (see input: pastes).
	var (
		queued []string
		rest   string
	)
	for {
		prompt := Prompt
		if len(lines) > 0 {
			prompt = ContinuationPrompt
		}
		var (
			line string
			err  error
		)
		if len(queued) > 0 {
			line, queued = queued[0], queued[1:]
			fmt.Fprintln(r.out, prompt+line) // shown as if typed
		} else {
			r.rl.SetPrompt(prompt)
			line, err = r.readLine(rest)
			rest = ""
			if err == nil && strings.HasSuffix(line, string(pasteMark)) {
				if p, ok := r.in.takePaste(); ok {
					queued, rest = r.pasted(prompt, strings.TrimSuffix(line, string(pasteMark)), p)
					continue
				}
			}
		}
		r.mu.Lock()
		quitting := r.quitting
		r.mu.Unlock()
		if quitting {
			return
		}
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			reset()
			continue
		case errors.Is(err, io.EOF):
			if len(lines) == 0 {
				return
			}
			r.info("statement discarded (Ctrl-D again exits)")
			reset()
			continue
		case err != nil:
			r.errorf("%v", err)
			return
		}
		if len(lines) == 0 {
			switch strings.ToUpper(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), ";"))) {
			case "EXIT", "QUIT":
				return
			case "HELP":
				// Accepted without ';' too.
				if !strings.HasSuffix(strings.TrimSpace(line), ";") {
					line += ";"
				}
			}
		}
		if len(lines) > 0 {
			text.WriteByte('\n')
			sc.feed("\n")
		}
		lines = append(lines, line)
		text.WriteString(line)
		sc.feed(line)
		r.setTyped(text.String())
		if sc.blank() {
			reset()
			continue
		}
		if !sc.complete() || parser.NeedsEnd(text.String()) { // EXECUTE STATEMENT SET BEGIN reads on to END;
			continue
		}
		_ = r.rl.SaveHistory(historyEntry(lines))
		sql := text.String()
		reset()
		r.execute(sql)
		r.flushNotes()
		r.mu.Lock()
		quitting = r.quitting
		r.mu.Unlock()
		if quitting {
			return
		}
	}
}

// pasted takes a paste that ended readline's line, typed: the text
// typed before it, then the paste. It erases readline's echo of that line
// and returns the whole lines to run and the unfinished last one.
func (r *repl) pasted(prompt, typed, paste string) (whole []string, rest string) {
	w, _, ok := termSize(int(r.o.Out.Fd()))
	if !ok {
		w = 80
	}
	// readline showed prompt, typed and the mark, then a newline.
	rows := utf8.RuneCountInString(prompt+typed)/max(w, 1) + 1
	fmt.Fprintf(r.out, "\x1b[%dA\r\x1b[J", rows)
	text := strings.ReplaceAll(strings.ReplaceAll(typed+paste, "\r\n", "\n"), "\r", "\n")
	whole = strings.Split(text, "\n")
	return whole[:len(whole)-1], whole[len(whole)-1]
}

// readLine shows the prompt with text already typed (rest of a paste),
// routing the session's console output through readline while it is
// shown.
func (r *repl) readLine(typed string) (string, error) {
	r.mu.Lock()
	r.atPrompt = true
	notes := r.notes
	r.notes = nil
	r.mu.Unlock()
	for _, n := range notes {
		fmt.Fprintln(r.out, n)
	}
	if r.o.Console != nil {
		r.o.Console.Set(r.rl.Stdout())
	}
	line, err := r.rl.ReadlineWithDefault(typed)
	if r.o.Console != nil {
		r.o.Console.Set(r.out)
	}
	r.mu.Lock()
	r.atPrompt = false
	r.mu.Unlock()
	return line, err
}

// execute runs the statements of one input. A failing statement stops
// the ones after it.
func (r *repl) execute(sql string) {
	stmts, perr := parser.Parse(sql)
	for i, st := range stmts {
		if !r.runStatement(st) {
			if rest := len(stmts) - i - 1; rest > 0 || perr != nil {
				r.info("the statements after the failing one were not run")
			}
			return
		}
	}
	if perr != nil {
		r.printError(perr)
	}
}

// runStatement runs one statement and shows its result; it returns false
// if the statement failed or was cancelled.
func (r *repl) runStatement(st *parser.Statement) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.cancel = nil
		r.mu.Unlock()
	}()
	res, err := r.s.Execute(ctx, st)
	if err != nil {
		r.printError(err)
		return false
	}
	switch {
	case res.Query != nil:
		return r.runQuery(ctx, res.Query)
	case res.Job != nil:
		j := res.Job
		if r.s.Conf.Bool("table.dml-sync") {
			// Flink's table.dml-sync: the INSERT returns when its job ends;
			// Ctrl-C cancels the job.
			r.info(fmt.Sprintf("%s (%s); waiting for it to finish (table.dml-sync), Ctrl-C cancels it", res.Message, j.Name))
			select {
			case <-j.Done():
			case <-ctx.Done():
				j.Cancel()
			}
			r.watchJob(j)
			return ctx.Err() == nil
		}
		r.info(fmt.Sprintf("%s (%s). SHOW JOBS lists it; STOP JOB '%s' stops it.", res.Message, j.Name, j.ID))
		go r.watchJob(j)
	case res.Text != "":
		fmt.Fprintln(r.out, res.Text)
		if st.Command != nil && st.Command.Kind == parser.CmdHelp {
			fmt.Fprintln(r.out, ClientHelp)
		}
	case res.Header != nil:
		printTable(r.out, res.Header, res.Rows)
	case res.Message != "":
		r.info(res.Message)
	}
	return true
}

// runQuery shows a query's result in the session's result mode until
// the query ends or Ctrl-C.
//
// Only the table view reads keys. In the other modes what is typed while
// the query runs is not echoed (it would garble the rows) but kept, as a
// shell keeps type-ahead: readline gets it at the next prompt.
func (r *repl) runQuery(ctx context.Context, q *engine.Query) bool {
	restore, _ := keysMode(int(r.o.In.Fd()))
	defer restore()

	// Flink's sql-client.display.max-column-width, or its older name.
	maxWidth := r.s.Conf.Int("sql-client.display.max-column-width")
	if r.s.Conf.IsSet("table.display.max-column-width") && !r.s.Conf.IsSet("sql-client.display.max-column-width") {
		maxWidth = r.s.Conf.Int("table.display.max-column-width")
	}
	start := time.Now()
	var (
		n    int64
		err  error
		what = "rows"
	)
	switch mode := r.s.Conf.Get(ResultModeKey); mode {
	case "table":
		keys := make(chan []byte, 16)
		r.in.setView(keys)
		defer r.in.setView(nil)
		maxRows := r.s.Conf.Int(MaxTableRowsKey)
		sum, verr := newTableView(r.out, int(r.o.Out.Fd()), q, maxWidth, maxRows).run(ctx, keys)
		// The view's rows are garbage now: give their memory back to the
		// system, not only to the heap, since the client may idle long.
		debug.FreeOSMemory()
		if verr != nil {
			r.printError(fmt.Errorf("query failed: %w", verr))
			return false
		}
		word := map[string]string{"FINISHED": "finished", "CANCELLED": "cancelled"}[sum.status]
		if word == "" {
			word = "stopped"
		}
		r.info(fmt.Sprintf("Query %s: %d row(s) in the result, from %d change(s) in %s.", word, sum.rows, sum.changes, time.Since(start).Round(time.Millisecond)))
		if sum.dropped > 0 {
			r.info(fmt.Sprintf("The %d oldest row(s) were dropped to keep %d: SET '%s' keeps more.", sum.dropped, maxRows, MaxTableRowsKey))
		}
		return ctx.Err() == nil
	case "changelog":
		what = "changes"
		n, err = runChangelog(ctx, q, r.out)
	default:
		n, err = runTableau(ctx, q, r.out, maxWidth)
	}
	switch {
	case ctx.Err() != nil:
		r.info(fmt.Sprintf("Query cancelled after %d %s.", n, what))
		return false
	case err != nil:
		r.printError(fmt.Errorf("query failed: %w", err))
		return false
	}
	fmt.Fprintf(r.out, "Received a total of %d %s\n", n, what)
	return true
}

// watchJob tells the user when a job started here finishes or fails, so
// no job ends unnoticed; a job stopped with STOP JOB ends silently.
func (r *repl) watchJob(j *engine.Job) {
	_ = j.Wait() // the outcome, once the job's state is closed too
	msg, failed := j.Outcome()
	switch {
	case msg == "":
		return
	case failed:
		msg = r.color("[ERROR]", "31;1") + " " + msg
	default:
		msg = r.color("[INFO]", "32") + " " + msg
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.atPrompt {
		fmt.Fprintln(r.rl.Stdout(), msg)
		return
	}
	r.notes = append(r.notes, msg)
}

func (r *repl) flushNotes() {
	r.mu.Lock()
	notes := r.notes
	r.notes = nil
	r.mu.Unlock()
	for _, n := range notes {
		fmt.Fprintln(r.out, n)
	}
}

// stopJobs stops the jobs still running when the REPL closes: they live
// in this process.
func (r *repl) stopJobs() {
	var running []*engine.Job
	var ids []string
	for _, j := range r.s.Jobs() {
		if j.Status() == engine.StatusRunning {
			running = append(running, j)
			ids = append(ids, j.ID)
		}
	}
	if len(running) == 0 {
		return
	}
	r.info(fmt.Sprintf("Stopping %d running job(s): %s", len(running), strings.Join(ids, ", ")))
	for _, j := range running {
		j.Cancel()
	}
	timeout := time.After(10 * time.Second)
	for _, j := range running {
		select {
		case <-j.Done():
		case <-timeout:
			return
		}
	}
}

func (r *repl) color(s, code string) string {
	if !r.o.Color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (r *repl) info(msg string) {
	fmt.Fprintln(r.out, r.color("[INFO]", "32")+" "+msg)
}

func (r *repl) errorf(format string, args ...any) {
	fmt.Fprintln(r.out, r.color("[ERROR]", "31;1")+" "+fmt.Sprintf(format, args...))
}

// printError prints an error; a *parser.Error carries its source line
// and a caret under the column. Errors of the session come masked;
// masking once more here covers errors of the client itself.
func (r *repl) printError(err error) {
	r.errorf("%s", secrets.Mask(err.Error()))
}

// historyEntry is the history line of a statement typed as lines: one
// line (the history file is line based), so that Up and Ctrl-R bring it
// back whole, with secret option values (passwords, user:pass@ in URLs)
// masked, since the file outlives the session.
func historyEntry(lines []string) string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = strings.TrimSpace(l)
	}
	return secrets.Mask(strings.Join(parts, " "))
}
