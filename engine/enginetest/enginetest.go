// Package enginetest runs SQL scripts in an engine session for tests and
// benchmarks, so that each test states its SQL and its checks, not the
// loop that executes statements.
package enginetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

// Exec runs every statement of script in s and returns the jobs the
// INSERT statements started, in order, without waiting for them. Any
// error fails the test.
func Exec(t testing.TB, s *engine.Session, script string) []*engine.Job {
	t.Helper()
	jobs, err := TryExec(s, script)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// TryExec is Exec that returns the first error instead of failing; the
// jobs started before it are returned too.
func TryExec(s *engine.Session, script string) ([]*engine.Job, error) {
	stmts, err := parser.Parse(script)
	if err != nil {
		return nil, err
	}
	var jobs []*engine.Job
	for _, st := range stmts {
		r, err := s.Execute(context.Background(), st)
		if err != nil {
			return jobs, err
		}
		if r.Job != nil {
			jobs = append(jobs, r.Job)
		}
	}
	return jobs, nil
}

// Run runs script in a fresh session whose print output goes to the
// returned buffer, and waits for every job it starts (bounded jobs).
func Run(t testing.TB, script string) *bytes.Buffer {
	t.Helper()
	var out bytes.Buffer
	for _, j := range Exec(t, engine.NewSession(&out), script) {
		if err := j.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	return &out
}
