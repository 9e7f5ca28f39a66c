package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// NotAvailable is what SHOW JOBS and the HTTP API show for what the
// engine cannot measure yet (the last checkpoint and its duration).
const NotAvailable = "n/a"

// ErrSavepointUnavailable is returned by STOP JOB ... WITH SAVEPOINT until
// checkpointing exists.
var ErrSavepointUnavailable = errors.New("STOP JOB ... WITH SAVEPOINT needs checkpointing, which is not available yet; STOP JOB 'id' without it stops the job")

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
	// Checkpoints is the checkpoint history, oldest first. It is always
	// empty until checkpointing exists; LastCheckpoint is nil with it.
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

// CheckpointInfo describes one checkpoint of a job. Nothing produces it
// yet: it is the shape the checkpoint work will fill.
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
		return err
	}
	return nil
}

// Metrics returns the counters of every dataflow node of the job.
func (j *Job) Metrics() []dataflow.NodeMetrics { return j.job.Metrics() }

// Checkpoints returns the job's checkpoint history, oldest first: always
// empty until checkpointing exists.
func (j *Job) Checkpoints() []CheckpointInfo { return []CheckpointInfo{} }

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
		last = fmt.Sprintf("%d (%s)", c.ID, c.StartTime.Format(time.TimeOnly))
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
	if c.WithSavepoint {
		return nil, ErrSavepointUnavailable
	}
	if st := j.Status(); st != StatusRunning {
		return &Result{Message: fmt.Sprintf("Job '%s' is already %s", j.ID, st)}, nil
	}
	j.Cancel()
	<-j.Done()
	return &Result{Message: fmt.Sprintf("Job '%s' stopped", j.ID)}, nil
}
