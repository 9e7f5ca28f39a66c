package planner

import "github.com/streamsql/streamsql/dataflow"

// SetPlan is a statement set (EXECUTE STATEMENT SET, BEGIN STATEMENT SET
// ... END): several INSERT plans that run as one job. Every table the
// plans read is read by one scan, which feeds all of them, as Flink
// reuses a source shared by the statements of a set.
type SetPlan struct {
	Plans []*Plan
}

// PlanSet makes the plans share their sources (shareSources): per
// table, one scan reads the union of the columns the plans read, the
// table's computed columns, ChangelogNormalize and watermark assigner
// above it are shared where the plans have the same ones, and each plan
// gets a projection back to the columns it read. The plans given are not
// changed.
func PlanSet(plans []*Plan) *SetPlan {
	roots := make([]Node, len(plans))
	for i, p := range plans {
		roots[i] = p.Root
	}
	out := &SetPlan{}
	for i, r := range shareSources(roots) {
		out.Plans = append(out.Plans, &Plan{Root: r.(*SinkNode), Columns: plans[i].Columns})
	}
	return out
}

// Explain renders the plans one after the other (without blank lines
// between them, so a golden file can hold them), the shared nodes once, as Flink does:
// marked (reuse_id=[n]) the first time and Reused(reference_id=[n]) after.
func (sp *SetPlan) Explain() string {
	roots := make([]Node, len(sp.Plans))
	for i, p := range sp.Plans {
		roots[i] = p.Root
	}
	return explainRoots(roots)
}

// BuildSetGraph translates a statement set into one dataflow graph, each
// shared node once.
func (p *Planner) BuildSetGraph(name string, sp *SetPlan) (*dataflow.Graph, error) {
	t := p.newTranslator(name, nil)
	for _, pl := range sp.Plans {
		if _, err := t.node(pl.Root); err != nil {
			return nil, err
		}
	}
	return t.g, nil
}
