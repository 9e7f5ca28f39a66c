package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/operators"
)

// miniBatch returns the session's mini-batch setting
// (table.exec.mini-batch.*), which group aggregations planned now take:
// off unless enabled, and then an error unless both the latency and the
// size are above 0, as Flink requires.
func (p *Planner) miniBatch() (operators.MiniBatch, error) {
	if p.Conf == nil || !p.Conf.Bool("table.exec.mini-batch.enabled") {
		return operators.MiniBatch{}, nil
	}
	mb := operators.MiniBatch{
		Latency: p.Conf.Duration("table.exec.mini-batch.allow-latency"),
		Size:    p.Conf.Int("table.exec.mini-batch.size"),
	}
	if mb.Latency <= 0 {
		return mb, fmt.Errorf("table.exec.mini-batch.enabled is true, so table.exec.mini-batch.allow-latency must be above 0 ms")
	}
	if mb.Size <= 0 {
		return mb, fmt.Errorf("table.exec.mini-batch.enabled is true, so table.exec.mini-batch.size must be above 0")
	}
	return mb, nil
}

// withMiniBatch gives a group aggregation the session's mini-batch
// setting; other nodes are returned as they are.
func (b *builder) withMiniBatch(n Node) (Node, error) {
	agg, ok := n.(*AggNode)
	if !ok {
		return n, nil
	}
	mb, err := b.p.miniBatch()
	if err != nil {
		return nil, err
	}
	agg.MiniBatch = mb
	return agg, nil
}
