package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// checkpointOptions returns the dataflow options of a job (planText is
// its EXPLAIN, whose hash checkpoints keep), with a
// checkpoint coordinator when execution.checkpointing.interval is set or
// the job resumes from a savepoint.
func (s *Session) checkpointOptions(name, planText string, g *dataflow.Graph) (dataflow.Options, *checkpoint.Coordinator, error) {
	return s.checkpointOptionsIn(s.Conf.Get("state.checkpoints.dir"), "", name, planText, g, s.log, false)
}

// TaskOptions returns the dataflow options and the checkpoint
// coordinator of one task of a cluster job (package cluster): as for a
// job of this session, but with the checkpoints in dir, the task's own
// folder of state.checkpoints.dir, fenced by owner epochs (a task's
// former owner may still run it; see checkpoint/owner.go), and
// opts.Shard.Epoch set to the run's epoch.
// The task's runtime and coordinator log to log.
func (s *Session) TaskOptions(name, dir, planText string, g *dataflow.Graph, log *slog.Logger) (dataflow.Options, *checkpoint.Coordinator, error) {
	if dir == "" {
		return dataflow.Options{}, nil, fmt.Errorf("engine: a cluster task needs a checkpoint directory")
	}
	opts, coord, err := s.checkpointOptionsIn(dir, dir, name, planText, g, log, true)
	if err == nil && coord != nil {
		opts.Shard.Epoch = coord.Epoch()
	}
	return opts, coord, err
}

// checkpointOptionsIn is checkpointOptions with the checkpoint store's
// root given (state.checkpoints.dir, a path or a URL) and the checkpoints
// in dir, or in the job's folder of root when dir is "". owned fences
// the store by owner epochs (checkpoint.Config.Owned).
func (s *Session) checkpointOptionsIn(root, dir, name, planText string, g *dataflow.Graph, log *slog.Logger, owned bool) (dataflow.Options, *checkpoint.Coordinator, error) {
	opts := dataflow.Options{JobName: name, Log: log,
		Hooks: dataflow.TestHooks{CrashBeforeCommit: s.Conf.Int("test.crash.before-commit")}}
	interval := s.Conf.Duration("execution.checkpointing.interval")
	savepoint := s.Conf.Get("execution.savepoint.path")
	backend := s.Conf.Get("state.backend.type")
	checkpointing := interval > 0 || savepoint != ""
	if backend == "auto" {
		// As docs/state.md recommends when the state's size is unknown:
		// Pebble's checkpoints cost the change, whatever the state's size
		// and spread, and its memory is bounded.
		backend = "hashmap"
		if checkpointing {
			backend = "pebble"
		}
	}
	if !checkpointing && backend != "pebble" {
		if ttl := s.Conf.Duration("table.exec.state.ttl"); ttl > 0 {
			// In-memory state with table.exec.state.ttl: idle keys expire.
			opts.NewStore = func(n *dataflow.Node, sub int) state.Store {
				st := state.NewMemoryStore(fmt.Sprintf("%d-%s/%d", n.ID, n.Name, sub))
				if !n.StateTTL {
					return st // cleaned by time, or must never expire
				}
				return state.WithTTL(st, ttl, nil)
			}
		}
		return opts, nil, nil
	}
	if root == "" && checkpointing {
		return opts, nil, fmt.Errorf("checkpointing needs a directory: SET 'state.checkpoints.dir' = '/some/dir'")
	}
	scratch := root == ""
	if scratch {
		// Pebble state without checkpoints: a scratch directory.
		tmp, err := os.MkdirTemp("", "streamsql-state-")
		if err != nil {
			return opts, nil, err
		}
		root = tmp
	}
	sum := sha256.Sum256([]byte(planText))
	coord, err := checkpoint.New(checkpoint.Config{
		JobName:     name,
		Dir:         jobDir(root, dir, name),
		Interval:    interval,
		Timeout:     s.Conf.Duration("execution.checkpointing.timeout"),
		MinPause:    s.Conf.Duration("execution.checkpointing.min-pause"),
		Retained:    s.Conf.Int("state.checkpoints.num-retained"),
		PlanHash:    hex.EncodeToString(sum[:8]),
		RestoreFrom: savepoint,
		StartFresh:  s.Conf.Bool("state.checkpoints.start-fresh"),
		Backend:     backend,
		Pebble: state.PebbleOptions{
			CacheEntries:    s.Conf.Int("state.backend.cache-entries"),
			BlockCacheBytes: int64(s.Conf.Int("state.backend.pebble.block-cache-mb")) << 20,
			MemTableBytes:   uint64(s.Conf.Int("state.backend.pebble.memtable-mb")) << 20,
			TTL:             s.Conf.Duration("table.exec.state.ttl"),
		},
		Log:               log,
		Owned:             owned,
		Scratch:           scratch,
		CrashInCheckpoint: s.Conf.Int("test.crash.in-checkpoint"),
	}, g)
	if err != nil {
		return opts, nil, err
	}
	if err := coord.CheckSources(); err != nil {
		return opts, nil, err
	}
	opts.Checkpointer = coord
	opts.NewStore = coord.NewStore
	opts.RestorePosition = coord.RestorePosition
	// With periodic checkpoints, sources at the end of their input wait
	// for a final checkpoint (FLIP-147): exactly-once sinks commit the
	// tail on it, and other sources keep checkpointing meanwhile.
	opts.FinalCheckpoint = interval > 0
	return opts, coord, nil
}

// jobDir is the job's checkpoint folder: dir when given, else its
// folder of root.
func jobDir(root, dir, name string) string {
	if dir != "" {
		return dir
	}
	return checkpoint.Join(root, safeName(name))
}

// safeName turns a job name into a directory name.
func safeName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 || r == ':' {
			return '_'
		}
		return r
	}, name)
}

// queryCheckpointOptions checkpoints a SELECT like any job when the
// session enables checkpointing, but in a directory of its own that is
// removed afterwards: a query's result goes to the client, so there is
// nothing to resume, yet its barriers and snapshots run as for a job.
func (s *Session) queryCheckpointOptions(name string, plan *planner.Plan, g *dataflow.Graph) (dataflow.Options, *checkpoint.Coordinator, func(), error) {
	noop := func() {}
	if s.Conf.Duration("execution.checkpointing.interval") <= 0 || s.Conf.Get("state.checkpoints.dir") == "" {
		return dataflow.Options{JobName: name, Log: s.log}, nil, noop, nil
	}
	// A directory no other query of any session or process can have: a
	// query never restores from another's checkpoints, not even those a
	// killed process with the same pid left behind.
	root := s.Conf.Get("state.checkpoints.dir")
	if checkpoint.IsURL(root) {
		// Nothing to keep: the query checkpoints on the local disk.
		root = os.TempDir()
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return dataflow.Options{}, nil, noop, fmt.Errorf("state.checkpoints.dir: %w", err)
	}
	tmp, err := os.MkdirTemp(root, safeName(name)+"-query-")
	if err != nil {
		return dataflow.Options{}, nil, noop, fmt.Errorf("state.checkpoints.dir: %w", err)
	}
	unique := filepath.Base(tmp)
	saved := s.Conf.Get("execution.savepoint.path")
	if saved != "" {
		_ = s.Conf.Reset("execution.savepoint.path") // savepoints restore jobs, not queries
		defer func() { _ = s.Conf.Set("execution.savepoint.path", saved) }()
	}
	opts, coord, err := s.checkpointOptionsIn(root, "", unique, plan.Explain(), g, s.log, false)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return opts, nil, noop, err
	}
	return opts, coord, func() { _ = os.RemoveAll(tmp) }, nil
}
