package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/parser"
)

// Config is what Compile needs besides the script.
type Config struct {
	// Script is the job file's text: CREATE TABLEs, SET options, and one
	// INSERT INTO ... SELECT or one statement set. File is its name; the
	// job is named after it (without its extension) unless the script
	// sets pipeline.name.
	Script string
	File   string
	// BootstrapServers is the Kafka cluster of the internal topics.
	BootstrapServers []string
	// Set holds options applied before the script, as SET would (a
	// worker's command-line overrides, tests).
	Set map[string]string
	Log *slog.Logger
}

// Job is a compiled cluster job: the job graph of the script's INSERT,
// cut into stages. It implements TaskRunner.
type Job struct {
	name        string
	partitions  int
	servers     []string
	ckptRoot    string
	fingerprint string
	spec        *engine.JobSpec
	session     *engine.Session
	graph       *dataflow.Graph // as first built: stages refer to its node IDs
	stages      []*Stage
	log         *slog.Logger
}

var _ TaskRunner = (*Job)(nil)

// Compile runs the script's statements in a session of its own (CREATE
// TABLE, SET, ...) and plans its INSERT or statement set as one job,
// with cluster.partitions as the parallelism of every operator the
// connectors do not fix, then cuts the job graph into stages at its
// hash, rebalance and single edges. The planner is the single-process
// one: every operator and query runs unchanged in a task.
//
// A cluster job needs execution.checkpointing.interval and
// state.checkpoints.dir: a task's output reaches the next stage when a
// checkpoint of the task completes, and a task resumes from its own
// checkpoints.
func Compile(ctx context.Context, cfg Config) (*Job, error) {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	if len(cfg.BootstrapServers) == 0 {
		return nil, fmt.Errorf("cluster: no bootstrap servers for the internal topics")
	}
	s := engine.NewSession(io.Discard)
	s.SetLogger(log)
	for k, v := range cfg.Set {
		if err := s.Conf.Set(k, v); err != nil {
			return nil, fmt.Errorf("cluster: option '%s': %w", k, err)
		}
	}
	stmts, err := parser.Parse(cfg.Script)
	if err != nil {
		return nil, err
	}
	var spec *engine.JobSpec
	for _, st := range stmts {
		if spec != nil {
			return nil, st.ErrorAt(st.Line, st.Col, "a cluster job file ends with its INSERT (or statement set); nothing may follow it")
		}
		if st.Node == nil && st.Command == nil && st.Set == nil {
			continue
		}
		if st.Node != nil && isQuery(st) {
			return nil, st.ErrorAt(st.Line, st.Col, "a cluster job writes into a table: use INSERT INTO ... SELECT, not a bare SELECT")
		}
		if isSetOption(st, "parallelism.default") {
			return nil, st.ErrorAt(st.Line, st.Col, "in cluster mode the parallelism is 'cluster.partitions'; do not set 'parallelism.default'")
		}
		spec, _, err = s.PlanJob(ctx, st)
		if err != nil {
			return nil, err
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("cluster: the job file %s has no INSERT INTO ... SELECT or statement set", cfg.File)
	}
	if s.Conf.Duration("execution.checkpointing.interval") <= 0 {
		return nil, fmt.Errorf("cluster: a cluster job needs checkpoints: SET 'execution.checkpointing.interval' (a task's output reaches the next stage when its checkpoint completes)")
	}
	root := s.Conf.Get("state.checkpoints.dir")
	if root == "" {
		return nil, fmt.Errorf("cluster: a cluster job needs SET 'state.checkpoints.dir' (a shared volume or an object store): each task checkpoints into its own folder of it")
	}
	if !checkpoint.IsURL(root) {
		// A plain path is a file:// store: a task's working state (its
		// Pebble databases) then stays on its worker's local disk, and
		// only checkpoints go to the shared folder, each owner epoch's in
		// a folder of its own. Worked on in the shared folder, the state of
		// a task that moved would be open in two workers at once while its
		// former owner has not yet noticed.
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, fmt.Errorf("cluster: state.checkpoints.dir %s: %w", root, err)
		}
		root = (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	}
	// Every operator the connectors do not fix runs at cluster.partitions.
	if err := s.Conf.Set("parallelism.default", strconv.Itoa(s.Conf.Int("cluster.partitions"))); err != nil {
		return nil, err
	}
	j := &Job{partitions: s.Conf.Int("cluster.partitions"), servers: cfg.BootstrapServers, ckptRoot: root,
		spec: spec, session: s, log: log}
	j.name = topicSafe(s.Conf.Get("pipeline.name"))
	if j.name == "" {
		base := filepath.Base(cfg.File)
		j.name = topicSafe(strings.TrimSuffix(base, filepath.Ext(base)))
	}
	if j.name == "" {
		return nil, fmt.Errorf("cluster: the job needs a name: SET 'pipeline.name'")
	}
	g, err := spec.Build()
	if err != nil {
		return nil, err
	}
	j.graph = g
	if j.stages, err = cutStages(j.name, g); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(spec.Explain + "\n" + g.String() + describe(g, j.stages) + "partitions=" + strconv.Itoa(j.partitions)))
	j.fingerprint = hex.EncodeToString(sum[:16])
	return j, nil
}

// isQuery reports whether st is a bare SELECT.
func isQuery(st *parser.Statement) bool {
	switch st.Node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return true
	}
	return false
}

// isSetOption reports whether st is SET 'key' = ... .
func isSetOption(st *parser.Statement, key string) bool {
	return st.Command != nil && st.Command.Kind == parser.CmdSet && st.Command.Key == key
}

// topicSafe maps a job name to the characters Kafka allows in topic
// names and transactional ids.
func topicSafe(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, name)
}

// Name is the job's name: pipeline.name, or the job file's base name.
// Internal topics, transactional ids and checkpoint folders carry it.
func (j *Job) Name() string { return j.name }

// Fingerprint identifies the job's plan and partitioning: workers
// compare it to detect a job file that differs between them.
func (j *Job) Fingerprint() string { return j.fingerprint }

// Partitions is cluster.partitions.
func (j *Job) Partitions() int { return j.partitions }

// Stages returns the job's stages.
func (j *Job) Stages() []*Stage { return j.stages }

// Describe lists the stages, one a line.
func (j *Job) Describe() string { return describe(j.graph, j.stages) }

// Tasks lists every task: each stage's partitions below its parallelism.
func (j *Job) Tasks() []TaskID {
	var ts []TaskID
	for _, st := range j.stages {
		for p := range st.Parallelism {
			ts = append(ts, TaskID{Stage: st.ID, Partition: p})
		}
	}
	return ts
}

// Topics lists the job's internal topics with their partition counts.
func (j *Job) Topics() map[string]int {
	m := map[string]int{}
	for _, st := range j.stages {
		for _, x := range st.Inputs {
			m[x.Topic] = x.Partitions
		}
	}
	return m
}

// checkpointDir is task id's checkpoint folder:
// <state.checkpoints.dir>/<job>/<task>, a path or a URL (checkpoint.Join
// keeps a URL's query, such as an S3 region, after the path).
func (j *Job) checkpointDir(id TaskID) string {
	return checkpoint.Join(j.ckptRoot, j.name, id.String())
}
