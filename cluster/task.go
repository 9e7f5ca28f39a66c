package cluster

import (
	"context"
	"fmt"
)

// TaskID names one task of a cluster job: a stage and one partition of
// that stage's input.
type TaskID struct {
	Stage     int
	Partition int
}

// String is the task's name in logs, metrics, transactional ids and
// checkpoint folders: "s<stage>-p<partition>".
func (t TaskID) String() string { return fmt.Sprintf("s%d-p%d", t.Stage, t.Partition) }

// TaskRunner runs the tasks of one job. Membership depends only on this
// interface, so it can be tested with a fake.
type TaskRunner interface {
	// Tasks lists every task of the job, the same on every worker.
	Tasks() []TaskID
	// RunTask restores task id from its latest complete checkpoint and
	// runs it until ctx is cancelled (the task moved to another worker,
	// or the worker stops; a cancelled task returns ctx.Err()) or its
	// input ends (nil). It may be called again for the same task after
	// it returned, on this worker or another.
	RunTask(ctx context.Context, id TaskID) error
}
