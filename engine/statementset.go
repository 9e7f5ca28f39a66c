package engine

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/planner"
)

// Statement sets run several INSERTs as one job whose sources are shared
// (planner.PlanSet). Two forms, as in Flink:
//
//	EXECUTE STATEMENT SET BEGIN INSERT ...; INSERT ...; END;  one statement (parser.Statement.Set)
//	BEGIN STATEMENT SET; INSERT ...; INSERT ...; END;         the session buffers the INSERTs until END

// openSet is a BEGIN STATEMENT SET the session is buffering INSERTs for.
type openSet struct {
	inserts []*parser.Statement
}

// isSetCommand reports whether st is BEGIN STATEMENT SET or END.
func isSetCommand(st *parser.Statement) bool {
	return st.Command != nil && (st.Command.Kind == parser.CmdBeginSet || st.Command.Kind == parser.CmdEndSet)
}

// InStatementSet reports whether a BEGIN STATEMENT SET is open: a client
// may show it in its prompt.
func (s *Session) InStatementSet() bool { return s.set != nil }

// setCommand runs BEGIN STATEMENT SET and END.
func (s *Session) setCommand(st *parser.Statement, c *parser.Command) (*Result, error) {
	if c.Kind == parser.CmdBeginSet {
		if s.set != nil {
			return nil, st.ErrorAt(st.Line, st.Col, "a STATEMENT SET is already open; END it first")
		}
		s.set = &openSet{}
		return &Result{Message: "Begin a statement set; the INSERT statements that follow run as one job at END"}, nil
	}
	if s.set == nil {
		return nil, st.ErrorAt(st.Line, st.Col, "END without BEGIN STATEMENT SET")
	}
	inserts := s.set.inserts
	s.set = nil
	if len(inserts) == 0 {
		return &Result{Message: "No statement in the statement set; nothing submitted"}, nil
	}
	return s.runSet(st, inserts, false, nil)
}

// addToSet buffers an INSERT of an open BEGIN STATEMENT SET, after
// planning it so that its errors show now.
func (s *Session) addToSet(st *parser.Statement) (*Result, error) {
	ins, ok := st.Node.(*ast.InsertStmt)
	if !ok {
		return nil, st.ErrorAt(st.Line, st.Col, "only INSERT statements can be added to the open STATEMENT SET (END runs it)")
	}
	if _, err := s.planner.PlanInsert(st, ins); err != nil {
		return nil, err
	}
	s.set.inserts = append(s.set.inserts, st)
	return &Result{Message: fmt.Sprintf("INSERT added to the statement set (%d so far)", len(s.set.inserts))}, nil
}

// executeSet runs EXECUTE STATEMENT SET BEGIN ... END and EXPLAIN
// STATEMENT SET BEGIN ... END.
func (s *Session) executeSet(st *parser.Statement) (*Result, error) {
	if s.set != nil {
		return nil, st.ErrorAt(st.Line, st.Col, "a STATEMENT SET is already open; END it first")
	}
	return s.runSet(st, st.Set.Inserts, st.Set.Explain, st.ExplainDetails)
}

// planSet plans the INSERTs of a set.
func (s *Session) planSet(inserts []*parser.Statement) (*planner.SetPlan, error) {
	var plans []*planner.Plan
	for _, in := range inserts {
		p, err := s.planner.PlanInsert(in, in.Node.(*ast.InsertStmt))
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return planner.PlanSet(plans), nil
}

// runSet runs (or explains) the INSERTs as one job.
func (s *Session) runSet(st *parser.Statement, inserts []*parser.Statement, explain bool, details []string) (*Result, error) {
	sp, err := s.planSet(inserts)
	if err != nil {
		return nil, err
	}
	var sinks []string
	for _, p := range sp.Plans {
		sinks = append(sinks, p.Root.Table.Name)
	}
	name := s.jobName("insert-into-" + strings.Join(sinks, ","))
	if explain {
		return explainResult(sp.Explain(), details, func() (*dataflow.Graph, error) { return s.planner.BuildSetGraph(name, sp) })
	}
	if s.planOnly {
		return s.planJob(name, sp.Plans, func() (*dataflow.Graph, error) { return s.planner.BuildSetGraph(name, sp) })
	}
	g, err := s.planner.BuildSetGraph(name, sp)
	if err != nil {
		return nil, err
	}
	j, err := s.startJob(name, st, sp.Plans, g)
	if err != nil {
		return nil, err
	}
	return &Result{Job: j, Message: fmt.Sprintf("Job '%s' submitted (a statement set of %d INSERTs)", j.ID, len(sp.Plans))}, nil
}
