package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// JobSpec is a job planned but not started: the INSERT or statement set
// of a script that cluster mode (package cluster) runs as tasks on
// several processes instead of as one job of this session.
type JobSpec struct {
	// Name is the job's name: pipeline.name, or one made from the
	// statement.
	Name string
	// Explain is the job's plan, as EXPLAIN prints it.
	Explain string
	// Bounded is set when every source of the job ends by itself.
	Bounded bool
	// Sinks are the tables the job writes.
	Sinks []string

	s     *Session
	build func() (*dataflow.Graph, error)
}

// Build translates the plan into a new dataflow graph, with fresh
// operator and source factories. It may be called any number of times,
// from any goroutine.
func (j *JobSpec) Build() (*dataflow.Graph, error) {
	j.s.buildMu.Lock()
	defer j.s.buildMu.Unlock()
	return j.build()
}

// PlanJob executes st like Execute, except that the job an INSERT or a
// statement set would start is planned and returned instead of being
// run (nil for every other statement, which runs as usual: CREATE
// TABLE, SET, ...). A statement that would start a job of another kind
// (CREATE TABLE ... AS SELECT) is refused.
func (s *Session) PlanJob(ctx context.Context, st *parser.Statement) (*JobSpec, *Result, error) {
	s.planOnly, s.planned = true, nil
	defer func() { s.planOnly, s.planned = false, nil }()
	r, err := s.Execute(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	return s.planned, r, nil
}

// planJob records the job of an INSERT or a statement set in plan-only
// mode (PlanJob).
func (s *Session) planJob(name string, plans []*planner.Plan, build func() (*dataflow.Graph, error)) (*Result, error) {
	spec := &JobSpec{Name: name, Bounded: true, s: s, build: build}
	var explains []string
	for _, p := range plans {
		spec.Bounded = spec.Bounded && p.Bounded(s.env)
		explains = append(explains, p.Explain())
		if p.Root != nil && p.Root.Table != nil {
			spec.Sinks = append(spec.Sinks, p.Root.Table.Name)
		}
	}
	spec.Explain = strings.Join(explains, "\n")
	if err := s.checkSinkIntervals(plans, spec.Bounded); err != nil {
		return nil, err
	}
	s.planned = spec
	return &Result{Message: fmt.Sprintf("Job '%s' planned", name)}, nil
}

// planOnlyState is the part of a Session that PlanJob uses.
type planOnlyState struct {
	planOnly bool
	planned  *JobSpec
	// buildMu serialises graph builds of planned jobs: the planner is
	// not safe for concurrent use.
	buildMu sync.Mutex
}
