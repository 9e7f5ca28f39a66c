package engine

import (
	"encoding/json"
	"strings"

	"github.com/streamsql/streamsql/dataflow"
)

// EXPLAIN's details, as Flink's EXPLAIN [CHANGELOG_MODE, JSON_EXECUTION_PLAN]:
// the plan tree always shows each node's changelog mode, so CHANGELOG_MODE
// changes nothing; JSON_EXECUTION_PLAN appends the job graph that would
// run, in the JSON form of Flink's execution plan.

// explainResult is the text of EXPLAIN: the plan, and the execution plan
// when the details ask for it (graph builds the job graph).
func explainResult(plan string, details []string, graph func() (*dataflow.Graph, error)) (*Result, error) {
	text := strings.TrimRight(plan, "\n")
	for _, d := range details {
		if d != "JSON_EXECUTION_PLAN" {
			continue
		}
		g, err := graph()
		if err != nil {
			return nil, err
		}
		js, err := executionPlanJSON(g)
		if err != nil {
			return nil, err
		}
		text += "\n== Physical Execution Plan ==\n" + js
	}
	return &Result{Text: text}, nil
}

type jsonPlan struct {
	Nodes []jsonNode `json:"nodes"`
}

type jsonNode struct {
	ID           int        `json:"id"`
	Type         string     `json:"type"`
	Pact         string     `json:"pact"`
	Contents     string     `json:"contents"`
	Parallelism  int        `json:"parallelism"`
	Predecessors []jsonEdge `json:"predecessors,omitempty"`
}

type jsonEdge struct {
	ID           int    `json:"id"`
	ShipStrategy string `json:"ship_strategy"`
}

// executionPlanJSON writes a job graph as Flink's JSON execution plan:
// one node per operator with its parallelism and its inputs' ship
// strategies (FORWARD, HASH, GLOBAL, REBALANCE).
func executionPlanJSON(g *dataflow.Graph) (string, error) {
	var p jsonPlan
	for _, n := range g.Nodes {
		jn := jsonNode{ID: n.ID + 1, Type: n.Name, Pact: "Operator", Contents: n.Name, Parallelism: n.Parallelism}
		if n.NewSource != nil {
			jn.Pact = "Data Source"
		}
		if strings.HasPrefix(n.Name, "Sink") {
			jn.Pact = "Data Sink"
		}
		for _, e := range n.Inputs {
			strategy := "FORWARD"
			switch e.Partition {
			case dataflow.Hash:
				strategy = "HASH"
			case dataflow.Single:
				strategy = "GLOBAL"
			case dataflow.Rebalance:
				strategy = "REBALANCE"
			}
			jn.Predecessors = append(jn.Predecessors, jsonEdge{ID: e.From.ID + 1, ShipStrategy: strategy})
		}
		p.Nodes = append(p.Nodes, jn)
	}
	b, err := json.MarshalIndent(p, "", "  ")
	return string(b), err
}
