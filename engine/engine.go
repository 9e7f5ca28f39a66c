// Package engine owns a SQL session: it executes parsed statements
// against a catalog, keeps the session's options, plans queries and runs
// them as dataflow jobs. The command line, the REPL and the golden test
// runner are all thin clients of a Session.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	_ "github.com/streamsql/streamsql/connectors/all" // every built-in connector
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/expr"
	"github.com/streamsql/streamsql/internal/secrets"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// Session is one user's SQL session. It is not safe for concurrent
// Execute calls; the jobs it starts run concurrently with it.
type Session struct {
	Conf    *config.Config
	planner *planner.Planner
	env     *connectors.Env
	log     *slog.Logger

	mu     sync.Mutex
	jobs   []*Job
	nextID int
	set    *openSet // an open BEGIN STATEMENT SET (statementset.go)
	planOnlyState
}

// NewSession returns a session whose print sinks write to stdout.
func NewSession(stdout io.Writer) *Session {
	conf := config.New()
	env := &connectors.Env{Stdout: stdout, Session: dataflow.NewShared(), Zone: conf.Location}
	return &Session{Conf: conf, env: env, log: slog.Default(),
		planner: &planner.Planner{Cat: planner.NewCatalog(), Env: env, Conf: conf}}
}

// SetLogger sets the logger handed to jobs.
func (s *Session) SetLogger(l *slog.Logger) { s.log = l }

// Result is what a statement returns. Exactly one of its parts is set,
// except Message, which may accompany any.
type Result struct {
	Message string
	// A table of text, e.g. SHOW TABLES or DESCRIBE.
	Header []string
	Rows   [][]string
	// Text is multi-line output, e.g. EXPLAIN or SHOW CREATE TABLE.
	Text string
	// Query is a streaming SELECT, not yet running: call Run.
	Query *Query
	// Job is an INSERT job, already running.
	Job *Job
}

// Execute runs one statement. Its errors, and the text of its result
// (EXPLAIN, SHOW CREATE TABLE), hold no secret of the statement (package
// secrets): every client prints them as they are.
func (s *Session) Execute(ctx context.Context, st *parser.Statement) (*Result, error) {
	r, err := s.execute(ctx, st)
	if err != nil {
		return nil, maskError(err, secrets.Values(st.Text))
	}
	if r != nil {
		r.Text = secrets.Mask(r.Text)
	}
	return r, nil
}

// maskError returns err with the secrets of its text masked: known
// values and whatever looks like one. errors.Is and errors.As still see
// the original.
func maskError(err error, known secrets.Known) error {
	if err == nil {
		return nil
	}
	msg := known.Mask(err.Error())
	if msg == err.Error() {
		return err
	}
	return maskedError{msg: msg, err: err}
}

type maskedError struct {
	msg string
	err error
}

func (e maskedError) Error() string { return e.msg }
func (e maskedError) Unwrap() error { return e.err }

func (s *Session) execute(ctx context.Context, st *parser.Statement) (*Result, error) {
	if st.Set != nil {
		return s.executeSet(st) // statementset.go
	}
	if s.set != nil && !isSetCommand(st) {
		return s.addToSet(st) // statementset.go
	}
	if st.Command != nil {
		return s.command(st, st.Command)
	}
	switch n := st.Node.(type) {
	case *ast.CreateTableStmt:
		return s.createTable(st, n)
	case *ast.CreateViewStmt:
		return s.createView(st, n)
	case *ast.DropTableStmt:
		return s.drop(st, n)
	case *ast.ShowStmt:
		return s.show(st, n)
	case *ast.ExplainStmt:
		return s.explain(st, n)
	case *ast.InsertStmt:
		return s.insert(ctx, st, n)
	case *ast.SelectStmt, *ast.SetOprStmt:
		return s.query(st, n.(ast.ResultSetNode))
	case *ast.SetStmt:
		return nil, st.ErrorAtNode(n, "MySQL SET is not supported; set options with SET 'key' = 'value'")
	}
	return nil, st.ErrorAtNode(st.Node, "statement %s is not supported", stmtKind(st.Node))
}

func stmtKind(n ast.StmtNode) string {
	t := fmt.Sprintf("%T", n)
	t = strings.TrimPrefix(t, "*ast.")
	return strings.TrimSuffix(t, "Stmt")
}

func (s *Session) command(st *parser.Statement, c *parser.Command) (*Result, error) {
	switch c.Kind {
	case parser.CmdSet:
		if c.Key == "" {
			r := &Result{Header: []string{"key", "value"}}
			for _, e := range s.Conf.Entries() {
				r.Rows = append(r.Rows, []string{e[0], e[1]})
			}
			return r, nil
		}
		note, err := s.Conf.SetNote(c.Key, c.Value)
		if err != nil {
			return nil, err
		}
		if note != "" {
			return &Result{Message: "OK (" + note + ")"}, nil
		}
		return &Result{Message: "OK"}, nil
	case parser.CmdReset:
		if err := s.Conf.Reset(c.Key); err != nil {
			return nil, err
		}
		return &Result{Message: "OK"}, nil
	case parser.CmdShowJobs:
		return s.showJobs()
	case parser.CmdStopJob:
		return s.stopJob(c)
	case parser.CmdHelp:
		return &Result{Text: HelpText()}, nil
	case parser.CmdShowFunctions:
		return showFunctions(c)
	case parser.CmdBeginSet, parser.CmdEndSet:
		return s.setCommand(st, c) // statementset.go
	}
	if r, ok, err := s.catalogCommand(st, c); ok { // catalogs.go
		return r, err
	}
	return nil, fmt.Errorf("unknown command %s", c.Kind)
}

func (s *Session) createTable(st *parser.Statement, n *ast.CreateTableStmt) (*Result, error) {
	name := n.Table.Name.O
	path, err := s.objectPath(st, n.Table)
	if err != nil {
		return nil, err
	}
	if s.planner.Cat.Exists(path) {
		if n.IfNotExists {
			return &Result{Message: fmt.Sprintf("Table '%s' already exists; nothing done", name)}, nil
		}
		return nil, st.ErrorAtIdent(name, n.Table, "Table '%s' already exists", name)
	}
	if st.Like != nil {
		return s.createLike(st, n, path) // ddl.go
	}
	if n.Select != nil {
		t, plan, err := s.planner.CreateTableAs(st, n)
		if err != nil {
			return nil, err
		}
		jobName := s.jobName("ctas-" + t.Name)
		g, err := s.planner.BuildGraph(jobName, plan, nil)
		if err != nil {
			return nil, err
		}
		s.planner.Cat.AddTable(path, t)
		j, err := s.startJob(jobName, st, []*planner.Plan{plan}, g)
		if err != nil {
			s.planner.Cat.Drop(path, false)
			return nil, err
		}
		kind := "Table"
		if st.MaterializedView {
			kind = "Materialized view"
		}
		return &Result{Job: j, Message: fmt.Sprintf("%s '%s' created; job '%s' fills it", kind, t.Name, j.ID)}, nil
	}
	t, err := s.planner.CreateTable(st, n)
	if err != nil {
		return nil, err
	}
	s.planner.Cat.AddTable(path, t)
	return &Result{Message: fmt.Sprintf("Table '%s' created", t.Name)}, nil
}

func (s *Session) createView(st *parser.Statement, n *ast.CreateViewStmt) (*Result, error) {
	name := n.ViewName.Name.O
	path, err := s.objectPath(st, n.ViewName)
	if err != nil {
		return nil, err
	}
	if _, isView := s.planner.Cat.View(path); st.AlterView && !isView {
		return nil, st.ErrorAtIdent(name, n.ViewName, "View '%s' doesn't exist", name)
	}
	if s.planner.Cat.Exists(path) {
		if st.IfNotExists {
			return &Result{Message: fmt.Sprintf("View '%s' already exists; nothing done", name)}, nil
		}
		if _, isView := s.planner.Cat.View(path); !(isView && n.OrReplace) {
			return nil, st.ErrorAtIdent(name, n.ViewName, "Table '%s' already exists", name)
		}
	}
	v, err := s.planner.CreateView(st, n)
	if err != nil {
		return nil, err
	}
	s.planner.Cat.Drop(path, true)
	s.planner.Cat.AddView(path, v)
	if st.AlterView {
		return &Result{Message: fmt.Sprintf("View '%s' altered", v.Name)}, nil
	}
	return &Result{Message: fmt.Sprintf("View '%s' created", v.Name)}, nil
}

func (s *Session) drop(st *parser.Statement, n *ast.DropTableStmt) (*Result, error) {
	kind := "Table"
	if n.IsView {
		kind = "View"
	}
	var dropped []string
	for _, t := range n.Tables {
		path, err := s.objectPath(st, t)
		if err != nil {
			return nil, err
		}
		if !s.planner.Cat.Drop(path, n.IsView) {
			if n.IfExists {
				continue
			}
			if _, isView := s.planner.Cat.View(path); isView && !n.IsView {
				return nil, st.ErrorAtIdent(t.Name.O, t, "'%s' is a view; use DROP VIEW", t.Name.O)
			}
			if _, isTable := s.planner.Cat.Table(path); isTable && n.IsView {
				return nil, st.ErrorAtIdent(t.Name.O, t, "'%s' is a table; use DROP TABLE", t.Name.O)
			}
			return nil, st.ErrorAtIdent(t.Name.O, t, "%s '%s' doesn't exist", kind, t.Name.O)
		}
		dropped = append(dropped, t.Name.O)
	}
	if len(dropped) == 0 {
		return &Result{Message: "Nothing dropped"}, nil
	}
	return &Result{Message: fmt.Sprintf("%s '%s' dropped", kind, strings.Join(dropped, "', '"))}, nil
}

func (s *Session) show(st *parser.Statement, n *ast.ShowStmt) (*Result, error) {
	return nil, st.ErrorAtNode(n, "this SHOW statement is not supported; SHOW TABLES, VIEWS, COLUMNS, DATABASES, CATALOGS, CURRENT CATALOG, CURRENT DATABASE, CREATE TABLE, CREATE VIEW, FUNCTIONS and JOBS are")
}

func describe(cols []expr.Column, pk []int) *Result {
	r := &Result{Header: []string{"name", "type", "null", "key"}}
	for i, c := range cols {
		null, key := "true", ""
		if c.Type.NotNull {
			null = "false"
		}
		for _, k := range pk {
			if k == i {
				key = "PRI"
			}
		}
		r.Rows = append(r.Rows, []string{c.Name, c.Type.Nullable().String(), null, key})
	}
	return r
}

func (s *Session) explain(st *parser.Statement, n *ast.ExplainStmt) (*Result, error) {
	if show, ok := n.Stmt.(*ast.ShowStmt); ok {
		return s.show(st, show)
	}
	if n.Analyze {
		return nil, st.ErrorAtNode(n, "EXPLAIN ANALYZE is not supported")
	}
	var plan *planner.Plan
	var err error
	switch q := n.Stmt.(type) {
	case *ast.InsertStmt:
		plan, err = s.planner.PlanInsert(st, q)
	case ast.ResultSetNode:
		plan, err = s.planner.PlanQuery(st, q)
	default:
		return nil, st.ErrorAtNode(n, "EXPLAIN takes a query or an INSERT")
	}
	if err != nil {
		return nil, err
	}
	return explainResult(plan.Explain(), st.ExplainDetails, func() (*dataflow.Graph, error) {
		return s.planner.BuildGraph(s.jobName("explain"), plan, func(*dyntable.Chunk) error { return nil })
	})
}

func (s *Session) insert(ctx context.Context, st *parser.Statement, n *ast.InsertStmt) (*Result, error) {
	// INSERT INTO <values table> VALUES ... adds rows to the table itself.
	if n.Select == nil {
		if tn, ok := insertTarget(n); ok {
			path, _ := planner.PathOf(st.TablePath(tn))
			if t, ok := s.planner.Cat.Table(path); ok {
				if sc, err := t.Scan(s.env); err == nil {
					if vi, ok := sc.(connectors.ValuesInserter); ok {
						if len(n.Columns) > 0 {
							return nil, st.ErrorAtNode(n, "INSERT INTO %s (columns) VALUES is not supported for values tables; list every column", tn.Name.O)
						}
						rows, err := s.planner.EvalTuples(st, n.Lists, vi.ValuesColumns(), n)
						if err != nil {
							return nil, err
						}
						if err := vi.InsertValues(rows); err != nil {
							return nil, st.ErrorAtNode(n, "%v", err)
						}
						return &Result{Message: fmt.Sprintf("%d row(s) inserted into '%s'", len(rows), t.Name)}, nil
					}
				}
			}
		}
	}
	plan, err := s.planner.PlanInsert(st, n)
	if err != nil {
		return nil, err
	}
	name := s.jobName("insert-into-" + plan.Root.Table.Name)
	if s.planOnly {
		return s.planJob(name, []*planner.Plan{plan}, func() (*dataflow.Graph, error) { return s.planner.BuildGraph(name, plan, nil) })
	}
	g, err := s.planner.BuildGraph(name, plan, nil)
	if err != nil {
		return nil, err
	}
	j, err := s.startJob(name, st, []*planner.Plan{plan}, g)
	if err != nil {
		return nil, err
	}
	return &Result{Job: j, Message: fmt.Sprintf("Job '%s' submitted", j.ID)}, nil
}

func insertTarget(n *ast.InsertStmt) (*ast.TableName, bool) {
	if n.Table == nil || n.Table.TableRefs == nil || n.Table.TableRefs.Right != nil {
		return nil, false
	}
	ts, ok := n.Table.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, false
	}
	tn, ok := ts.Source.(*ast.TableName)
	return tn, ok
}

// transactionalSink returns the graph's two-phase-commit sink node, if
// any: the only sink nodes that keep state (connectors.StatefulSink).
func transactionalSink(g *dataflow.Graph) *dataflow.Node {
	for _, n := range g.Nodes {
		if n.Stateful && strings.HasPrefix(n.Name, "Sink(") {
			return n
		}
	}
	return nil
}

// checkNameFree refuses to start a job under the name of a running one
// when the name keys durable things: its checkpoint directory (with
// checkpointing on) or the transaction names of an exactly-once sink.
// Two such jobs would restore or abort each other's work.
func (s *Session) checkNameFree(name string, g *dataflow.Graph) error {
	durable := s.Conf.Duration("execution.checkpointing.interval") > 0
	if transactionalSink(g) != nil {
		durable = true
	}
	if !durable {
		return nil
	}
	for _, j := range s.Jobs() {
		if j.name == name && j.Status() == StatusRunning {
			return fmt.Errorf("job %s is already running under the name '%s', which keys its checkpoints and sink transactions; "+
				"SET 'pipeline.name' = '...' to a distinct name before this statement", j.ID, name)
		}
	}
	return nil
}

func (s *Session) jobName(def string) string {
	if n := s.Conf.Get("pipeline.name"); n != "" {
		return n
	}
	return def
}

func (s *Session) query(st *parser.Statement, q ast.ResultSetNode) (*Result, error) {
	plan, err := s.planner.PlanQuery(st, q)
	if err != nil {
		return nil, err
	}
	return &Result{Query: &Query{s: s, plan: plan, known: secrets.Values(st.Text), Columns: plan.Columns, Mode: plan.Root.Mode(), UpsertKey: plan.Root.UpsertKey(), Zone: s.Conf.Location()}}, nil
}

// Query is a planned SELECT.
type Query struct {
	s       *Session
	plan    *planner.Plan
	known   secrets.Known // of the statement, to mask in errors
	Columns []expr.Column
	Mode    dyntable.ChangelogMode
	// UpsertKey lists the result columns that identify a row across
	// updates; nil when no key does (the result is then a multiset).
	UpsertKey []int
	// Zone is the session time zone the query was planned in, in which
	// clients show its TIMESTAMP_LTZ values (types.FormatIn).
	Zone *time.Location
}

// Run runs the query until its input ends, its result is complete (LIMIT
// n over an insert-only input: see planner.Plan.RowLimit), ctx is
// cancelled, or fn returns an error. fn sees every change of the result in order, from one
// goroutine; it must not retain the chunk.
func (q *Query) Run(ctx context.Context, fn func(c *dyntable.Chunk) error) error {
	return maskError(q.run(ctx, fn), q.known)
}

func (q *Query) run(ctx context.Context, fn func(c *dyntable.Chunk) error) error {
	n, limited := q.plan.RowLimit()
	if !limited {
		return q.runJob(ctx, fn)
	}
	// LIMIT n over an insert-only input: the result is complete with its
	// n-th row, even when the input never ends; stop the job then.
	if n == 0 {
		return nil
	}
	jctx, stop := context.WithCancel(ctx)
	defer stop()
	var seen int64
	var complete atomic.Bool
	err := q.runJob(jctx, func(c *dyntable.Chunk) error {
		if err := fn(c); err != nil {
			return err
		}
		if seen += int64(len(c.Changes)); seen >= n {
			complete.Store(true)
			stop()
		}
		return nil
	})
	if complete.Load() && ctx.Err() == nil && (err == nil || errors.Is(err, context.Canceled)) {
		return nil
	}
	return err
}

func (q *Query) runJob(ctx context.Context, fn func(c *dyntable.Chunk) error) error {
	name := q.s.jobName("select")
	g, err := q.s.planner.BuildGraph(name, q.plan, fn)
	if err != nil {
		return err
	}
	opts, coord, cleanup, err := q.s.queryCheckpointOptions(name, q.plan, g)
	if err != nil {
		return err
	}
	defer cleanup()
	j, err := dataflow.Start(ctx, g, opts)
	if err != nil {
		return err
	}
	if coord != nil {
		coord.Start(j)
		defer func() { <-coord.Closed() }()
	}
	return j.Wait()
}

// Job is a running INSERT (or the job filling a CREATE TABLE ... AS).
// Its exported fields are set before the job is published and never
// change; see jobs.go for its snapshot, JobInfo.
type Job struct {
	// Bounded is set when every source of the job ends by itself.
	Bounded bool
	ID      string
	// Name is the job's name (pipeline.name or one made from the
	// statement), secrets masked: it is shown and exported as a metric
	// label. name is the one the job runs under.
	Name  string
	name  string
	Start time.Time
	// Sink is the table the job writes; the tables, joined by ", ", for
	// a statement set.
	Sink string
	// SQL is the statement that started the job, secrets masked.
	SQL      string
	known    secrets.Known // of the statement, to mask in the job's errors
	job      *dataflow.Job
	coord    *checkpoint.Coordinator // nil without checkpointing
	endNanos atomic.Int64            // when the job stopped; 0 while it runs
}

func (s *Session) startJob(name string, st *parser.Statement, plans []*planner.Plan, g *dataflow.Graph) (*Job, error) {
	if s.planOnly {
		return nil, st.ErrorAt(st.Line, st.Col, "a cluster job is one INSERT INTO ... SELECT or one statement set; this statement would start a job of its own")
	}
	bounded := true
	var sinks, explains []string
	for _, plan := range plans {
		bounded = bounded && plan.Bounded(s.env)
		explains = append(explains, plan.Explain())
		if plan.Root != nil && plan.Root.Table != nil {
			sinks = append(sinks, plan.Root.Table.Name)
		}
	}
	if !bounded && s.Conf.Duration("execution.checkpointing.interval") <= 0 {
		// A two-phase-commit sink (a stateful sink node) commits only when a
		// checkpoint completes; an unbounded job without checkpoints would
		// never make a row visible. Flink runs such a job silently; say so.
		if n := transactionalSink(g); n != nil {
			return nil, fmt.Errorf("%s writes exactly once, committing on completed checkpoints, and this job never ends: "+
				"enable checkpointing with SET 'execution.checkpointing.interval' = '10 s' (or use the sink's at-least-once mode)", n.Name)
		}
	}
	if err := s.checkSinkIntervals(plans, bounded); err != nil {
		return nil, err
	}
	if err := s.checkNameFree(name, g); err != nil {
		return nil, err
	}
	opts, coord, err := s.checkpointOptions(name, strings.Join(explains, "\n"), g)
	if err != nil {
		return nil, err
	}
	dj, err := dataflow.Start(context.Background(), g, opts)
	if err != nil {
		return nil, err
	}
	if coord != nil {
		coord.Start(dj)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	j := &Job{ID: fmt.Sprintf("job-%d", s.nextID), Name: secrets.Mask(name), name: name, Start: time.Now(),
		SQL: secrets.Mask(st.Text), known: secrets.Values(st.Text), Bounded: bounded, job: dj, coord: coord}
	j.Sink = strings.Join(sinks, ", ")
	go j.watch()
	s.jobs = append(s.jobs, j)
	return j, nil
}

// checkSinkIntervals is the hook for the exactly-once Kafka sinks
// (connectors/kafka): a sink whose transactions must outlive a
// checkpoint interval (Kafka's transaction timeout) validates it here,
// at job start, before any row is written. An optional ability, found by
// type assertion.
func (s *Session) checkSinkIntervals(plans []*planner.Plan, bounded bool) error {
	for _, plan := range plans {
		if plan.Root == nil || plan.Root.Table == nil {
			continue
		}
		if sk, err := plan.Root.Table.Sink(s.env); err == nil {
			if c, ok := sk.(interface {
				CheckCheckpointInterval(interval time.Duration, bounded bool) error
			}); ok {
				if err := c.CheckCheckpointInterval(s.Conf.Duration("execution.checkpointing.interval"), bounded); err != nil {
					return fmt.Errorf("table '%s': %w", plan.Root.Table.Name, err)
				}
			}
		}
	}
	return nil
}

// Jobs lists the session's jobs, oldest first.
func (s *Session) Jobs() []*Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Job(nil), s.jobs...)
}

// Job returns the job with the id, or nil.
func (s *Session) Job(id string) *Job {
	for _, j := range s.Jobs() {
		if j.ID == id {
			return j
		}
	}
	return nil
}

// Wait blocks until the job stops and returns its error. With
// checkpointing it also waits until the job's state is closed.
func (j *Job) Wait() error {
	err := j.job.Wait()
	if j.coord != nil {
		<-j.coord.Closed()
	}
	return maskError(err, j.known)
}

// Done is closed when the job stops.
func (j *Job) Done() <-chan struct{} { return j.job.Done() }

// Cancel stops the job.
func (j *Job) Cancel() { j.job.Cancel() }

// Status is RUNNING, FINISHED, CANCELED or FAILED.
func (j *Job) Status() string {
	select {
	case <-j.job.Done():
	default:
		return "RUNNING"
	}
	err := j.job.Wait()
	switch {
	case err == nil:
		return "FINISHED"
	case errors.Is(err, context.Canceled):
		return "CANCELED"
	}
	return "FAILED"
}

// Records returns the records read by sources and written by sinks.
func (j *Job) Records() (in, out int64) {
	ms := j.job.Metrics()
	for _, m := range ms {
		if strings.HasPrefix(m.Name, "TableSourceScan") || m.Name == "Values" {
			in += m.RecordsOut
		}
		if strings.HasPrefix(m.Name, "Sink") {
			out += m.RecordsIn
		}
	}
	return in, out
}

// WaitAll waits for every running job of the session.
func (s *Session) WaitAll() error {
	var errs []error
	for _, j := range s.Jobs() {
		if err := j.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, fmt.Errorf("%s: %w", j.ID, err))
		}
	}
	return errors.Join(errs...)
}

// Tables lists table and view names, for completion.
func (s *Session) Tables() []string { return s.planner.Cat.Names() }

// Columns lists the columns of every table, for completion.
func (s *Session) Columns() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range s.planner.Cat.Names() {
		cols, _, _ := s.planner.Describe(planner.Local(n))
		for _, c := range cols {
			if !seen[c.Name] {
				seen[c.Name] = true
				out = append(out, c.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// showFunctions lists the built-in functions (expr's catalog), as Flink's
// SHOW FUNCTIONS does; SHOW USER FUNCTIONS lists none, streamsql has no
// user-defined functions.
func showFunctions(c *parser.Command) (*Result, error) {
	r := &Result{Header: []string{"function name"}, Rows: [][]string{}}
	if c.User {
		return r, nil
	}
	for _, name := range expr.FunctionNames() {
		if c.HasLike {
			ok, err := expr.MatchLike(c.Like, name, c.ILike)
			if err != nil {
				return nil, err
			}
			if ok == c.NotLike {
				continue
			}
		}
		r.Rows = append(r.Rows, []string{name})
	}
	return r, nil
}
