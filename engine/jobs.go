package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/parser"
)

// The job statuses, as Flink names them.
const (
	StatusRunning  = "RUNNING"
	StatusFinished = "FINISHED"
	StatusCanceled = "CANCELED"
	StatusFailed   = "FAILED"
)

// NotAvailable is what SHOW JOBS and the table view show for a
// checkpoint that does not exist: the job runs without checkpointing, or
// none has completed yet.
const NotAvailable = "n/a"

// ErrSavepointUnavailable is returned by STOP JOB ... WITH SAVEPOINT for a
// job that runs without checkpointing.
var ErrSavepointUnavailable = errors.New("STOP JOB ... WITH SAVEPOINT needs checkpointing, and this job runs without it: " +
	"SET 'execution.checkpointing.interval' and 'state.checkpoints.dir' before starting a job; STOP JOB 'id' without it stops the job")

// JobInfo is a snapshot of a job: what SHOW JOBS lists and what the HTTP
// API returns.
type JobInfo struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Status     string     `json:"status"`
	Error      string     `json:"error,omitempty"`
	SQL        string     `json:"sql,omitempty"`
	Bounded    bool       `json:"bounded"`
	StartTime  time.Time  `json:"start_time"`
	EndTime    *time.Time `json:"end_time"`
	RecordsIn  int64      `json:"records_in"`
	RecordsOut int64      `json:"records_out"`
	// Operators are the job's dataflow nodes, in graph order, with their
	// counters summed over subtasks.
	Operators []OperatorInfo `json:"operators"`
	// Checkpointing is set when the job takes checkpoints.
	Checkpointing        bool `json:"checkpointing"`
	CheckpointsCompleted int  `json:"checkpoints_completed"`
	CheckpointsFailed    int  `json:"checkpoints_failed"`
	// RestoredFrom is the checkpoint or savepoint the job started from.
	RestoredFrom string `json:"restored_from,omitempty"`
	// Checkpoints is the checkpoint history, oldest first (see
	// Job.Checkpoints); LastCheckpoint is its last entry, nil if none.
	Checkpoints    []CheckpointInfo `json:"checkpoints"`
	LastCheckpoint *CheckpointInfo  `json:"last_checkpoint"`
}

// OperatorInfo is one dataflow node of a job.
type OperatorInfo struct {
	ID         int    `json:"id"`
	Name       string `json:"name"`
	RecordsIn  int64  `json:"records_in"`
	RecordsOut int64  `json:"records_out"`
	// Watermark is the node's current watermark in milliseconds since the
	// epoch (the lowest over its subtasks); nil before the first one.
	// WatermarkTime is the same instant as text, "end of input" once the
	// input has ended.
	Watermark     *int64 `json:"watermark"`
	WatermarkTime string `json:"watermark_time,omitempty"`
}

// CheckpointInfo describes one completed checkpoint of a job.
type CheckpointInfo struct {
	ID             int64     `json:"id"`
	Status         string    `json:"status"` // COMPLETED, FAILED, IN_PROGRESS
	Savepoint      bool      `json:"savepoint"`
	StartTime      time.Time `json:"start_time"`
	DurationMillis int64     `json:"duration_ms"`
	SizeBytes      int64     `json:"size_bytes"`
	Path           string    `json:"path,omitempty"`
}

// watch records the end time of the job once it stops.
func (j *Job) watch() {
	<-j.job.Done()
	j.endNanos.CompareAndSwap(0, time.Now().UnixNano())
}

// EndTime returns when the job stopped, and false while it runs.
func (j *Job) EndTime() (time.Time, bool) {
	select {
	case <-j.job.Done():
	default:
		return time.Time{}, false
	}
	// watch may not have run yet.
	j.endNanos.CompareAndSwap(0, time.Now().UnixNano())
	return time.Unix(0, j.endNanos.Load()), true
}

// Err returns the error the job failed with; nil while it runs, when it
// finished, and when it was stopped.
func (j *Job) Err() error {
	select {
	case <-j.job.Done():
	default:
		return nil
	}
	if err := j.job.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return maskError(err, j.known)
	}
	return nil
}

// Outcome says how the job ended, as the clients print it: "Job 'job-1'
// finished: 10 rows written to 'sink'" or "Job 'job-1' failed: ...", with
// failed set; "" while the job runs and when it was stopped (STOP JOB
// says so itself).
func (j *Job) Outcome() (msg string, failed bool) {
	switch j.Status() {
	case StatusFinished:
		_, out := j.Records()
		return fmt.Sprintf("Job '%s' finished: %d rows written to '%s'", j.ID, out, j.Sink), false
	case StatusFailed:
		return fmt.Sprintf("Job '%s' failed: %v", j.ID, j.Err()), true
	}
	return "", false
}

// Metrics returns the counters of every dataflow node of the job.
func (j *Job) Metrics() []dataflow.NodeMetrics { return j.job.Metrics() }

// CheckpointStats returns the figures of the job's checkpoint
// coordinator, and false when the job runs without checkpointing.
func (j *Job) CheckpointStats() (checkpoint.Stats, bool) {
	if j.coord == nil {
		return checkpoint.Stats{}, false
	}
	return j.coord.Stats(), true
}

// Checkpoints returns the job's completed checkpoints, oldest first. The
// coordinator keeps the figures of the last one only, so the list holds
// at most that one; it is empty (not nil) without checkpointing or
// before the first checkpoint completes.
func (j *Job) Checkpoints() []CheckpointInfo {
	st, ok := j.CheckpointStats()
	if !ok || st.LastID == 0 {
		return []CheckpointInfo{}
	}
	return []CheckpointInfo{{ID: st.LastID, Status: "COMPLETED", StartTime: st.LastCompleted.Add(-st.LastDuration),
		DurationMillis: st.LastDuration.Milliseconds(), SizeBytes: st.LastTotalBytes}}
}

// Info returns a snapshot of the job.
func (j *Job) Info() JobInfo {
	in, out := j.Records()
	info := JobInfo{ID: j.ID, Name: j.Name, Status: j.Status(), SQL: j.SQL, Bounded: j.Bounded,
		StartTime: j.Start, RecordsIn: in, RecordsOut: out, Checkpoints: j.Checkpoints()}
	if err := j.Err(); err != nil {
		info.Error = err.Error()
	}
	if t, ok := j.EndTime(); ok {
		info.EndTime = &t
	}
	if st, ok := j.CheckpointStats(); ok {
		info.Checkpointing = true
		info.CheckpointsCompleted, info.CheckpointsFailed, info.RestoredFrom = st.Completed, st.Failed, st.RestoredFrom
	}
	for _, m := range j.Metrics() {
		op := OperatorInfo{ID: m.ID, Name: m.Name, RecordsIn: m.RecordsIn, RecordsOut: m.RecordsOut}
		switch m.Watermark {
		case dataflow.MinWatermark:
		case dataflow.MaxWatermark:
			op.WatermarkTime = "end of input"
		default:
			ms := m.Watermark / int64(time.Millisecond)
			op.Watermark = &ms
			op.WatermarkTime = time.Unix(0, m.Watermark).UTC().Format("2006-01-02 15:04:05.000")
		}
		info.Operators = append(info.Operators, op)
	}
	if n := len(info.Checkpoints); n > 0 {
		info.LastCheckpoint = &info.Checkpoints[n-1]
	}
	return info
}

// JobHeader is the header of SHOW JOBS.
var JobHeader = []string{"id", "name", "status", "start time", "records in", "records out", "last checkpoint", "ckpt duration"}

// Row renders the info as a SHOW JOBS row.
func (info JobInfo) Row() []string {
	last, dur := NotAvailable, NotAvailable
	if c := info.LastCheckpoint; c != nil {
		end := c.StartTime.Add(time.Duration(c.DurationMillis) * time.Millisecond)
		last = fmt.Sprintf("#%d at %s", c.ID, end.Format(time.TimeOnly))
		dur = fmt.Sprintf("%d ms", c.DurationMillis)
	}
	return []string{info.ID, info.Name, info.Status, info.StartTime.Format(time.DateTime),
		fmt.Sprint(info.RecordsIn), fmt.Sprint(info.RecordsOut), last, dur}
}

func (s *Session) showJobs() (*Result, error) {
	r := &Result{Header: JobHeader, Rows: [][]string{}}
	for _, j := range s.Jobs() {
		r.Rows = append(r.Rows, j.Info().Row())
	}
	return r, nil
}

func (s *Session) stopJob(c *parser.Command) (*Result, error) {
	j := s.Job(c.JobID)
	if j == nil {
		return nil, fmt.Errorf("no job with id '%s'; SHOW JOBS lists them", c.JobID)
	}
	if st := j.Status(); st != StatusRunning {
		if c.WithSavepoint {
			return nil, fmt.Errorf("job '%s' is already %s: there is nothing to take a savepoint of", j.ID, st)
		}
		return &Result{Message: fmt.Sprintf("Job '%s' is already %s", j.ID, st)}, nil
	}
	if c.WithSavepoint {
		return s.stopWithSavepoint(j)
	}
	j.Cancel()
	_ = j.Wait() // also waits until the job's state is closed
	return &Result{Message: fmt.Sprintf("Job '%s' stopped", j.ID)}, nil
}

// stopWithSavepoint takes a savepoint of j under
// <state.checkpoints.dir>/savepoints/, then stops it. If the savepoint
// fails the job goes on.
func (s *Session) stopWithSavepoint(j *Job) (*Result, error) {
	if j.coord == nil {
		return nil, ErrSavepointUnavailable
	}
	root := s.Conf.Get("state.checkpoints.dir")
	if root == "" {
		return nil, fmt.Errorf("STOP JOB ... WITH SAVEPOINT writes under 'state.checkpoints.dir', which is not set: SET it first")
	}
	dir := checkpoint.Join(root, "savepoints", safeName(j.name)+"-"+time.Now().Format("20060102-150405.000"))
	if err := j.coord.Savepoint(dir); err != nil {
		return nil, fmt.Errorf("the savepoint of job '%s' failed, and the job goes on: %w", j.ID, err)
	}
	j.Cancel()
	_ = j.Wait() // also waits until the job's state is closed
	shown := checkpoint.Redact(dir)
	return &Result{Message: fmt.Sprintf("Job '%s' stopped with a savepoint in %s; SET 'execution.savepoint.path' = '%s' resumes from it", j.ID, shown, shown)}, nil
}
