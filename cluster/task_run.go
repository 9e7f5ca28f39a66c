package cluster

import (
	"context"
	"fmt"

	"github.com/streamsql/streamsql/connectors/kafka"
	"github.com/streamsql/streamsql/dataflow"
)

// RunTask runs task id: the nodes of its stage, each at parallelism 1
// but seeing itself as subtask id.Partition of the stage's parallelism
// (a Kafka source task p reads the source partitions q with q mod P = p,
// a generator generates its share, keyed operators own key-group range
// p), fed by a stage source per input exchange and feeding a stage sink
// per output exchange:
//
//	StageSource(topic s1, partition p) ─▶ [GroupAggregate → Calc] ─▶ StageSink(topic s2)
//
// It checkpoints into <state.checkpoints.dir>/<job>/<task> every
// execution.checkpointing.interval, on its own, and restores from the
// latest complete checkpoint there. It returns nil when its input ended
// (and its output is committed), ctx.Err() when ctx was cancelled.
func (j *Job) RunTask(ctx context.Context, id TaskID) error {
	err := j.runTask(ctx, id)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (j *Job) runTask(ctx context.Context, id TaskID) error {
	if id.Stage < 0 || id.Stage >= len(j.stages) {
		return fmt.Errorf("cluster: job %s has no stage %d", j.name, id.Stage)
	}
	st := j.stages[id.Stage]
	if id.Partition < 0 || id.Partition >= st.Parallelism {
		return fmt.Errorf("cluster: stage %d of job %s has %d tasks, not partition %d", id.Stage, j.name, st.Parallelism, id.Partition)
	}
	for _, x := range append(append([]*Exchange(nil), st.Inputs...), st.Outputs...) {
		if err := kafka.EnsureTopic(ctx, j.servers, x.Topic, x.Partitions); err != nil {
			return err
		}
	}
	g, err := j.spec.Build()
	if err != nil {
		return err
	}
	if len(g.Nodes) != len(j.graph.Nodes) || g.String() != j.graph.String() {
		return fmt.Errorf("cluster: internal error: the job graph of %s changed between two builds", j.name)
	}
	tg, err := j.taskGraph(g, st, id)
	if err != nil {
		return err
	}
	opts, coord, err := j.session.TaskOptions(j.name, j.checkpointDir(id), j.spec.Explain+"\n"+tg.String(), tg, j.log.With("task", id.String()))
	if err != nil {
		return fmt.Errorf("cluster: task %s: %w", id, err)
	}
	opts.Shard = dataflow.Shard{Index: id.Partition, Count: st.Parallelism}
	dj, err := dataflow.Start(ctx, tg, opts)
	if err != nil {
		if coord != nil {
			coord.Abandon()
		}
		return fmt.Errorf("cluster: task %s: %w", id, err)
	}
	if coord != nil {
		coord.Start(dj)
	}
	err = dj.Wait()
	if coord != nil {
		<-coord.Closed()
	}
	if err != nil {
		return fmt.Errorf("cluster: task %s: %w", id, err)
	}
	return nil
}

// taskGraph builds the dataflow graph of task id of stage st from a
// fresh build g of the job graph.
func (j *Job) taskGraph(g *dataflow.Graph, st *Stage, id TaskID) (*dataflow.Graph, error) {
	tg := &dataflow.Graph{Name: j.name + "-" + id.String(), IdleTimeout: g.IdleTimeout}
	p := id.Partition
	mapped := map[int]*dataflow.Node{}
	inputs := map[[2]int]*Exchange{} // (to node, input) -> exchange
	for _, x := range st.Inputs {
		inputs[[2]int{x.To, x.Input}] = x
	}
	for _, nid := range st.Nodes {
		n := g.Nodes[nid]
		tn := &dataflow.Node{Name: n.Name, Parallelism: 1, GeneratesWatermarks: n.GeneratesWatermarks,
			Stateful: n.Stateful, StateTTL: n.StateTTL}
		if n.NewSource != nil {
			newSource := n.NewSource
			tn.NewSource = func(int) (dataflow.Source, error) { return newSource(p) }
		} else {
			newOperator := n.NewOperator
			tn.NewOperator = func(int) (dataflow.Operator, error) { return newOperator(p) }
		}
		for i, e := range n.Inputs {
			if x, ok := inputs[[2]int{nid, i}]; ok {
				src := tg.AddNode(&dataflow.Node{Name: "StageSource(" + x.Topic + ")", Parallelism: 1,
					NewSource: func(int) (dataflow.Source, error) { return newStageSource(j.servers, x, p), nil }})
				tn.Inputs = append(tn.Inputs, dataflow.Edge{From: src, Partition: dataflow.Forward})
				continue
			}
			from, ok := mapped[e.From.ID]
			if !ok || e.Partition != dataflow.Forward {
				return nil, fmt.Errorf("cluster: internal error: edge %q -> %q is neither in stage %d nor one of its exchanges", e.From.Name, n.Name, st.ID)
			}
			tn.Inputs = append(tn.Inputs, dataflow.Edge{From: from, Partition: dataflow.Forward})
		}
		mapped[nid] = tg.AddNode(tn)
	}
	for i, x := range st.Outputs {
		prefix := "streamsql-" + j.name + "-" + id.String()
		if i > 0 {
			prefix += fmt.Sprintf("-o%d", i)
		}
		name := "StageSink(" + x.Topic + ")"
		tg.AddNode(&dataflow.Node{Name: name, Parallelism: 1, Stateful: true,
			Inputs: []dataflow.Edge{{From: mapped[x.From], Partition: dataflow.Forward}},
			NewOperator: func(int) (dataflow.Operator, error) {
				rt := &router{kind: x.Kind, keys: x.Keys, rr: p}
				h := kafka.NewExchangeSink(kafka.ExchangeSinkConfig{Servers: j.servers, Topic: x.Topic,
					TransactionalIDPrefix: prefix, Name: "stage " + x.Topic, Records: rt.records})
				return newStageSink(h, name, p), nil
			}})
	}
	return tg, nil
}
