package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/state"
)

// Config configures a job's checkpointing.
type Config struct {
	JobName string
	// Dir is the job's checkpoint store, a directory or a URL (see
	// OpenStore): state.checkpoints.dir/<job name>.
	Dir      string
	Interval time.Duration // execution.checkpointing.interval
	Timeout  time.Duration // execution.checkpointing.timeout
	MinPause time.Duration // execution.checkpointing.min-pause
	Retained int           // state.checkpoints.num-retained
	// PlanHash identifies the job's plan; a checkpoint of another plan is
	// refused unless StartFresh is set.
	PlanHash string
	// RestoreFrom is a savepoint to start from, a directory or a URL
	// (execution.savepoint.path); empty means the newest checkpoint in Dir.
	RestoreFrom string
	// StartFresh ignores existing checkpoints of a different plan.
	StartFresh bool
	// Backend is the state backend of stateful nodes: "hashmap" or
	// "pebble" (state.backend.type, with 'auto' resolved).
	Backend string
	Pebble  state.PebbleOptions
	Log     *slog.Logger
	// Scratch marks a directory that only holds the running job's state
	// (Pebble without checkpoints); it is removed when the job stops.
	Scratch bool
	// Owned marks the store of a task whose owner can change while a
	// former owner still runs (a cluster task): the run claims an owner
	// epoch and keeps its checkpoints in a folder of that epoch, fenced
	// against other runs (owner.go). Owner names the run in its claim.
	Owned bool
	Owner string
	// CrashInCheckpoint is the kill -9 tests' crash point
	// (test.crash.in-checkpoint): k > 0 exits the process with status 137
	// in this run's k-th checkpoint, between the snapshots and the
	// metadata. Zero in production.
	CrashInCheckpoint int
}

// Stats summarises a coordinator's checkpoints.
type Stats struct {
	Completed, Failed int
	LastID            int64
	LastDuration      time.Duration
	LastTotalBytes    int64
	LastNewBytes      int64
	LastCompleted     time.Time
	RestoredFrom      string // the checkpoint or savepoint the job started from (redacted)
}

// Coordinator coordinates the checkpoints of one job run. Create it with
// New before the job starts, pass it as the job's Checkpointer, NewStore
// and RestorePosition, then call Start with the running job.
type Coordinator struct {
	cfg   Config
	g     *dataflow.Graph
	log   *slog.Logger
	work  string
	store Store     // where the job's checkpoints are kept
	restr *Metadata // what the job restores from; nil for a fresh start
	rdir  string    // the local directory of restr's state
	// others are stores opened for savepoints, closed with the job.
	others []Store
	// epoch is the run's owner epoch and folder its folder of the store
	// (Config.Owned); zero and "" otherwise. base is the checkpoint the
	// claim chose to restore from.
	epoch  int64
	folder string
	base   *ckptRef

	mu      sync.Mutex
	job     Job
	nextID  int64
	pending *pending
	stats   Stats
	stores  map[[2]int]state.Store
	waiters map[int64]chan error
	stopped bool
	closed  chan struct{}
	runDone int // checkpoints that reached completion in this run
	// inflight counts completions still running (metadata, pruning).
	inflight sync.WaitGroup
	// writes counts the asynchronous parts of subtask snapshots still
	// being written.
	writes sync.WaitGroup
	// The final checkpoint, taken once every source is at the end of its
	// input (dataflow.Options.FinalCheckpoint): the attempts that were
	// aborted, and whether the sources have been released.
	finalFails int
	released   bool
	// next is when the loop triggers the next periodic checkpoint.
	next time.Time
	// clock is time.Now, or a test's clock.
	clock func() time.Time
}

// Job is the coordinator's view of a running job (*dataflow.Job). A
// checkpoint's whole life is driven through it, so tests can drive the
// coordinator through any interleaving with a job of their own.
type Job interface {
	// TriggerBarrier asks every source subtask to inject the barrier; the
	// sources may acknowledge or decline it before TriggerBarrier returns.
	TriggerBarrier(b dataflow.Barrier) error
	// SourcesAtEnd reports whether every source waits at the end of its
	// input for the final checkpoint.
	SourcesAtEnd() bool
	// ReleaseFinishedSources lets those sources end their streams.
	ReleaseFinishedSources()
	// NotifyCheckpointComplete tells every operator that a checkpoint
	// completed.
	NotifyCheckpointComplete(id int64) error
	// Fail stops the job with err (a run found itself fenced).
	Fail(err error)
	// Done is closed when the job has stopped.
	Done() <-chan struct{}
}

var _ Job = (*dataflow.Job)(nil)

// maxFinalFails is how many aborted final checkpoints are retried before
// the sources are released anyway (the two-phase-commit sinks then
// commit their last transactions when the input ends).
const maxFinalFails = 3

// crashHook lets the kill -9 test die at the worst moment: after every
// subtask has written its snapshot and before the metadata that makes
// the checkpoint count. Config.CrashInCheckpoint = k exits the process
// during this run's k-th checkpoint.
func (c *Coordinator) crashHook(p *pending) {
	c.mu.Lock()
	c.runDone++
	n := c.runDone
	c.mu.Unlock()
	if c.cfg.CrashInCheckpoint > 0 && n == c.cfg.CrashInCheckpoint {
		c.log.Warn("test hook: exiting inside a checkpoint", "checkpoint", p.id)
		os.Exit(137)
	}
}

type pending struct {
	id        int64
	completed bool   // metadata written; only the notices are outstanding
	store     Store  // the job's store, or a savepoint's
	rel       string // the checkpoint in store: chk-<n>, or "" for a savepoint
	dir       string // the local directory the snapshots are written to
	started   time.Time
	savept    bool
	// final marks the final checkpoint: its completion releases the
	// sources waiting at the end of their input. It is set when the
	// checkpoint is created, under mu, so a decline or a completion that
	// races with the trigger sees it.
	final    bool
	expected int
	acks     map[[2]int]Subtask
	failed   error
}

// New prepares checkpointing for a job: it finds what to restore from
// and clears the working directory of any earlier run.
func New(cfg Config, g *dataflow.Graph) (*Coordinator, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Retained < 1 {
		cfg.Retained = 1
	}
	ctx := context.Background()
	st, err := OpenStore(ctx, cfg.Dir)
	if err != nil {
		return nil, err
	}
	if !IsURL(cfg.Dir) {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("checkpoint: the checkpoint store %s: %w", cfg.Dir, err)
		}
	}
	// A store that cannot be written fails the job now, not at its
	// first checkpoint.
	if err := st.Probe(ctx); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("checkpoint: the checkpoint store %s is not writable: %v", st, err)
	}
	c := &Coordinator{cfg: cfg, g: g, log: cfg.Log.With("job", cfg.JobName), store: st,
		stores: map[[2]int]state.Store{}, waiters: map[int64]chan error{}, closed: make(chan struct{}), clock: time.Now}
	fail := func(err error) (*Coordinator, error) {
		for _, o := range c.others {
			_ = o.Close()
		}
		_ = st.Close()
		return nil, err
	}
	if cfg.Owned {
		e, base, err := claim(ctx, st, cfg.Owner)
		if err != nil {
			return fail(err)
		}
		c.epoch, c.base, c.folder = e, base, epochDir(e)
		c.log = c.log.With("epoch", e)
		c.log.Info("claimed owner epoch", "epoch", e, "base", base)
	}
	c.work = filepath.Join(st.Local(), filepath.FromSlash(c.folder), "work")
	if err := os.RemoveAll(c.work); err != nil {
		return fail(fmt.Errorf("checkpoint: clearing %s: %w", c.work, err))
	}
	if err := c.findRestore(ctx); err != nil {
		return fail(err)
	}
	ids, err := st.List(ctx, c.folder)
	if err != nil {
		return fail(fmt.Errorf("checkpoint: %w", err))
	}
	if len(ids) > 0 {
		c.nextID = ids[0] // new checkpoints continue the numbering
	}
	if c.restr != nil && c.restr.CheckpointID > c.nextID {
		c.nextID = c.restr.CheckpointID
	}
	return c, nil
}

// findRestore picks the savepoint or the newest valid checkpoint, and
// brings its state to the local disk.
func (c *Coordinator) findRestore(ctx context.Context) error {
	if c.cfg.RestoreFrom != "" {
		sp, err := OpenStore(ctx, c.cfg.RestoreFrom)
		if err != nil {
			return fmt.Errorf("checkpoint: cannot restore from savepoint: %w", err)
		}
		c.others = append(c.others, sp)
		m, err := sp.Read(ctx, "")
		if err != nil {
			return fmt.Errorf("checkpoint: cannot restore from savepoint: %w", err)
		}
		if m.PlanHash != c.cfg.PlanHash && !c.cfg.StartFresh {
			return fmt.Errorf("checkpoint: savepoint %s was taken from a different query plan; restore it into the same query", sp)
		}
		dir, err := sp.Fetch(ctx, "", m)
		if err != nil {
			return fmt.Errorf("checkpoint: cannot restore from savepoint: %w", err)
		}
		c.restr, c.rdir = m, dir
		c.stats.RestoredFrom = sp.String()
		return nil
	}
	damaged, seen := 0, 0
	// try restores checkpoint r if it can: done when it is restored or
	// refused for good.
	try := func(r ckptRef) (done bool, err error) {
		seen++
		rel := r.rel()
		m, err := c.store.Read(ctx, rel)
		if err != nil {
			c.log.Warn("skipping checkpoint", "checkpoint", rel, "reason", err)
			if !errors.Is(err, errIncomplete) {
				damaged++ // it completed once, and is now unreadable
			}
			return false, nil
		}
		if m.PlanHash != c.cfg.PlanHash {
			if c.cfg.StartFresh {
				c.log.Warn("ignoring checkpoints of a different plan (start fresh)", "checkpoint", rel)
				return true, nil
			}
			return true, fmt.Errorf("checkpoint: the newest checkpoint of job '%s' (%s) belongs to a different query plan; "+
				"use another pipeline.name, or SET 'state.checkpoints.start-fresh' = 'true' to ignore it", c.cfg.JobName, Join(c.store.String(), rel))
		}
		dir, err := c.store.Fetch(ctx, rel, m)
		if err != nil {
			c.log.Warn("skipping checkpoint", "checkpoint", rel, "reason", err)
			damaged++
			return false, nil
		}
		c.restr, c.rdir = m, dir
		c.stats.RestoredFrom = Join(c.store.String(), rel)
		c.log.Info("restoring from checkpoint", "checkpoint", rel)
		return true, nil
	}
	if c.cfg.Owned {
		// The base the claim chose, and what is older in its history.
		if c.base != nil {
			if err := historyFrom(ctx, c.store, *c.base, try); err != nil {
				return err
			}
		}
	} else {
		ids, err := c.store.List(ctx, "")
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		for _, id := range ids {
			if done, err := try(ckptRef{ID: id}); done || err != nil {
				return err
			}
		}
	}
	if c.restr != nil {
		return nil
	}
	if damaged > 0 && !c.cfg.StartFresh {
		return fmt.Errorf("checkpoint: job '%s' has completed checkpoints in %s but none is readable; refusing to start from scratch "+
			"(SET 'state.checkpoints.start-fresh' = 'true' to do so)", c.cfg.JobName, c.store)
	}
	if seen > 0 {
		// Only checkpoints that never completed: no position was ever
		// committed, so starting from the beginning loses nothing.
		c.log.Warn("no completed checkpoint; starting from the beginning", "incomplete", seen)
	}
	return nil
}

// RestoredFrom returns the local directory of the checkpoint or
// savepoint the job starts from, or "".
func (c *Coordinator) RestoredFrom() string { return c.rdir }

// NewStore returns the state store of a node subtask: one of the
// configured backend for stateful nodes, restored from the checkpoint
// when there is one.
func (c *Coordinator) NewStore(n *dataflow.Node, subtask int) state.Store {
	id := fmt.Sprintf("%d-%s/%d", n.ID, n.Name, subtask)
	if !n.Stateful {
		return state.NewMemoryStore(id)
	}
	st, err := c.openStore(n, subtask)
	if err != nil {
		return &state.FailedStore{ID: id, Err: err}
	}
	c.mu.Lock()
	c.stores[[2]int{n.ID, subtask}] = st
	c.mu.Unlock()
	return st
}

func (c *Coordinator) openStore(n *dataflow.Node, subtask int) (state.Store, error) {
	kgs := state.RangeFor(subtask, n.Parallelism)
	opts := c.cfg.Pebble
	if !n.StateTTL {
		opts.TTL = 0 // table.exec.state.ttl applies to some operators only
	}
	var srcs []state.RestoreSource
	if c.restr != nil {
		for _, s := range c.restr.Subtasks {
			if s.Node != n.ID || s.StateDir == "" {
				continue
			}
			r := state.KeyGroupRange{Start: s.KeyGroups[0], End: s.KeyGroups[1]}
			if r.Start < kgs.End && kgs.Start < r.End {
				srcs = append(srcs, state.RestoreSource{Dir: filepath.Join(c.rdir, s.StateDir), KeyGroups: r})
			}
		}
	}
	id := fmt.Sprintf("%d", n.ID)
	if c.cfg.Backend == "hashmap" {
		var hm *state.HashMapStore
		var err error
		if len(srcs) > 0 {
			hm, err = state.RestoreHashMap(id, srcs, kgs, opts.Clock)
		} else {
			hm, err = state.NewHashMapStore(id, kgs, opts.Clock)
		}
		if err != nil {
			return nil, fmt.Errorf("checkpoint: restoring %s subtask %d: %w", n.Name, subtask, err)
		}
		return state.WithTTL(hm, opts.TTL, opts.Clock), nil
	}
	work := filepath.Join(c.work, fmt.Sprintf("node-%d-%d", n.ID, subtask))
	if len(srcs) > 0 {
		if err := state.RestorePebble(work, srcs, kgs, opts); err != nil {
			return nil, fmt.Errorf("checkpoint: restoring %s subtask %d: %w", n.Name, subtask, err)
		}
	}
	return state.OpenPebbleStore(work, id, kgs, opts)
}

// RestorePosition returns a source subtask's saved position.
func (c *Coordinator) RestorePosition(n *dataflow.Node, subtask int) []byte {
	if c.restr == nil {
		return nil
	}
	for _, s := range c.restr.Subtasks {
		if s.Node == n.ID && s.Subtask == subtask && s.Parallelism == n.Parallelism {
			return s.Position
		}
	}
	return nil
}

// CheckSources verifies that every source of the graph can resume from
// the restored positions: source parallelism must not change.
func (c *Coordinator) CheckSources() error {
	if c.restr == nil {
		return nil
	}
	for _, n := range c.g.Nodes {
		if n.NewSource == nil {
			continue
		}
		for _, s := range c.restr.Subtasks {
			if s.Node == n.ID && s.Parallelism != n.Parallelism {
				return fmt.Errorf("checkpoint: source %s ran with parallelism %d in %s but has %d now; sources cannot be rescaled",
					n.Name, s.Parallelism, c.rdir, n.Parallelism)
			}
		}
	}
	return nil
}

// Start begins periodic checkpoints of the running job. It returns at
// once; checkpointing stops when the job does.
func (c *Coordinator) Start(j Job) {
	c.mu.Lock()
	c.job = j
	c.mu.Unlock()
	if c.cfg.Interval <= 0 {
		go func() {
			<-j.Done()
			c.closeStores()
		}()
		return
	}
	go c.loop(j)
}

// Closed is closed once the job has stopped and its state is closed; a
// new run of the same job may then open the directories.
func (c *Coordinator) Closed() <-chan struct{} { return c.closed }

func (c *Coordinator) loop(j Job) {
	c.next = c.clock().Add(c.cfg.Interval)
	tick := time.NewTicker(min(c.cfg.Interval/4+time.Millisecond, 50*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-j.Done():
			c.closeStores()
			return
		case now := <-tick.C:
			c.tick(now)
		}
	}
}

// tick is one beat of the loop: it expires a checkpoint that took too
// long, triggers the final checkpoint once every source is at its end,
// and otherwise the next periodic checkpoint when it is due.
func (c *Coordinator) tick(now time.Time) {
	c.expire(now)
	if c.job.SourcesAtEnd() {
		c.triggerFinal()
		return
	}
	if now.Before(c.next) {
		return
	}
	c.mu.Lock()
	// A checkpoint in flight, or min-pause not yet over since the last
	// completion: wait for a later tick.
	busy := c.pending != nil || c.stats.LastCompleted.Add(c.cfg.MinPause).After(now)
	c.mu.Unlock()
	if busy {
		return
	}
	if _, err := c.trigger(nil, false); err != nil {
		if errors.Is(err, dataflow.ErrSourceFinished) {
			c.log.Debug("sources finishing; no further checkpoints")
			// Keep waiting for the job to end.
			c.next = now.Add(24 * time.Hour)
			return
		}
		c.log.Warn("checkpoint not triggered", "err", err)
	}
	c.next = now.Add(c.cfg.Interval)
}

// triggerFinal triggers the final checkpoint once no other is pending
// and the sources have not been released yet; its completion releases
// the sources (see complete), and its abort lets the next tick try
// again (see abort).
func (c *Coordinator) triggerFinal() {
	c.mu.Lock()
	busy := c.pending != nil || c.released
	c.mu.Unlock()
	if busy {
		return
	}
	id, err := c.trigger(nil, true)
	if err != nil {
		c.log.Debug("final checkpoint not triggered yet", "err", err)
		return
	}
	c.log.Debug("final checkpoint triggered", "checkpoint", id)
}

// trigger starts checkpoint n+1 (into the store sp for a savepoint;
// final for the final checkpoint).
func (c *Coordinator) trigger(sp Store, final bool) (int64, error) {
	savepoint := sp != nil
	c.mu.Lock()
	if c.released {
		c.mu.Unlock()
		return 0, dataflow.ErrSourceFinished
	}
	if c.pending != nil {
		id := c.pending.id
		c.mu.Unlock()
		return 0, fmt.Errorf("checkpoint: checkpoint %d is still in progress", id)
	}
	if c.stats.LastCompleted.Add(c.cfg.MinPause).After(c.clock()) && !savepoint {
		c.mu.Unlock()
		return 0, fmt.Errorf("checkpoint: min-pause not over")
	}
	c.nextID++
	id := c.nextID
	st, rel := c.store, c.rel(id)
	if savepoint {
		st, rel = sp, ""
	}
	dir := filepath.Join(st.Local(), filepath.FromSlash(rel))
	expected := 0
	for _, n := range c.g.Nodes {
		expected += n.Parallelism
	}
	c.pending = &pending{id: id, store: st, rel: rel, dir: dir, started: c.clock(), savept: savepoint, final: final, expected: expected, acks: map[[2]int]Subtask{}}
	j := c.job
	c.mu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.abort(id, err)
		return 0, err
	}
	if err := j.TriggerBarrier(dataflow.Barrier{CheckpointID: id, Savepoint: savepoint}); err != nil {
		c.abort(id, err)
		return 0, err
	}
	return id, nil
}

// SourceBarrier implements dataflow.Checkpointer.
func (c *Coordinator) SourceBarrier(b dataflow.Barrier, n *dataflow.Node, subtask int, pos []byte) {
	c.ack(b.CheckpointID, Subtask{Node: n.ID, Name: n.Name, Subtask: subtask, Parallelism: n.Parallelism,
		Position: append([]byte(nil), pos...)})
}

// SnapshotSubtask implements dataflow.Checkpointer.
func (c *Coordinator) SnapshotSubtask(b dataflow.Barrier, n *dataflow.Node, subtask int, st state.Store, sized func(bytes int64)) error {
	kgs := state.RangeFor(subtask, n.Parallelism)
	s := Subtask{Node: n.ID, Name: n.Name, Subtask: subtask, Parallelism: n.Parallelism, KeyGroups: [2]int{kgs.Start, kgs.End}}
	c.mu.Lock()
	p := c.pending
	c.mu.Unlock()
	if p == nil || p.id != b.CheckpointID {
		return nil // aborted meanwhile: nothing to save, nobody to tell
	}
	rel := fmt.Sprintf("node-%d-%d", n.ID, subtask)
	// A savepoint is written in the canonical format, which either
	// backend restores.
	write, err := st.Snapshot(filepath.Join(p.dir, rel), p.savept)
	if err != nil {
		return err
	}
	// The operator goes on while the snapshot is written; the subtask
	// acknowledges once it is, or declines.
	c.writes.Add(1)
	go func() {
		defer c.writes.Done()
		info, err := write()
		if err != nil {
			c.Decline(b, n, subtask, fmt.Errorf("%s: %w", n.Name, err))
			return
		}
		if info.Dir != "" {
			// A bucket store uploads the snapshot; until the metadata is
			// written after every subtask's, it does not count.
			files, err := p.store.PutState(context.Background(), p.rel, rel)
			if err != nil {
				c.Decline(b, n, subtask, fmt.Errorf("%s: %w", n.Name, err))
				return
			}
			s.StateDir, s.TotalBytes, s.NewBytes, s.Files = rel, info.TotalBytes, info.NewBytes, files
		}
		sized(s.TotalBytes)
		c.ack(b.CheckpointID, s)
	}()
	return nil
}

// Decline implements dataflow.Checkpointer.
func (c *Coordinator) Decline(b dataflow.Barrier, n *dataflow.Node, subtask int, err error) {
	c.log.Warn("checkpoint declined", "checkpoint", b.CheckpointID, "node", n.Name, "subtask", subtask, "err", err)
	c.abort(b.CheckpointID, err)
}

func (c *Coordinator) ack(id int64, s Subtask) {
	c.mu.Lock()
	p := c.pending
	if p == nil || p.id != id {
		c.mu.Unlock()
		return // a late ack of an aborted checkpoint
	}
	p.acks[[2]int{s.Node, s.Subtask}] = s
	done := len(p.acks) == p.expected
	c.mu.Unlock()
	if done {
		// Completing writes and fsyncs the metadata and queues the notice
		// at every source: never on a task or source goroutine, which
		// could then wait on itself.
		c.inflight.Add(1)
		go func() {
			defer c.inflight.Done()
			c.complete(p)
		}()
	}
}

// complete writes the metadata of p; from then on the checkpoint counts.
// Checkpoints complete one at a time (a new one is triggered only once
// the previous one is no longer pending), so notifications stay in order.
func (c *Coordinator) complete(p *pending) {
	m := &Metadata{Version: 1, Job: c.cfg.JobName, PlanHash: c.cfg.PlanHash, CheckpointID: p.id, Savepoint: p.savept,
		Time: c.clock().UTC(), DurationMs: c.clock().Sub(p.started).Milliseconds()}
	var total, fresh int64
	for _, n := range c.g.Nodes {
		for s := 0; s < n.Parallelism; s++ {
			a := p.acks[[2]int{n.ID, s}]
			m.Subtasks = append(m.Subtasks, a)
			total += a.TotalBytes
			fresh += a.NewBytes
		}
	}
	c.crashHook(p)
	err := p.store.Commit(context.Background(), p.rel, m)
	if err == nil && c.cfg.Owned && !p.savept {
		// Nothing of the checkpoint commits, and nothing is pruned, before
		// the run knows it is still the task's owner (owner.go).
		if ferr := checkOwner(context.Background(), c.store, c.epoch); ferr != nil {
			c.unconfirmed(p, ferr)
			return
		}
	}
	c.mu.Lock()
	if err != nil {
		if c.pending == p {
			c.pending = nil
		}
	} else {
		// p stays pending until every source has the completion notice
		// queued, ahead of the next barrier, so that the notice reaches
		// every operator before barrier n+1: two-phase-commit sinks must
		// commit n before they pre-commit n+1. completed keeps a timeout
		// from aborting it meanwhile.
		p.completed = true
	}
	if err != nil {
		c.stats.Failed++
	} else {
		c.stats.Completed++
		c.stats.LastID = p.id
		c.stats.LastDuration = c.clock().Sub(p.started)
		c.stats.LastTotalBytes, c.stats.LastNewBytes = total, fresh
		c.stats.LastCompleted = c.clock()
	}
	w := c.waiters[p.id]
	delete(c.waiters, p.id)
	j := c.job
	c.mu.Unlock()
	if err != nil {
		c.log.Warn("checkpoint metadata not written", "checkpoint", p.id, "err", err)
		if p.savept {
			_ = os.RemoveAll(p.dir)
		} else {
			_ = p.store.Remove(context.Background(), p.rel, nil) // nothing refers to an uncommitted checkpoint
		}
	} else {
		c.log.Debug("checkpoint complete", "checkpoint", p.id, "duration", time.Since(p.started), "bytes", total, "new", fresh)
		if !p.savept {
			c.retain()
			if c.cfg.Owned {
				if perr := pruneEpochs(context.Background(), c.store, c.epoch); perr != nil {
					c.log.Warn("former owners' checkpoints not pruned", "err", perr)
				}
			}
		}
		if nerr := j.NotifyCheckpointComplete(p.id); nerr != nil && err == nil {
			err = nerr
		}
		c.mu.Lock()
		if c.pending == p {
			c.pending = nil
		}
		c.released = c.released || p.final
		c.mu.Unlock()
		if p.final {
			// Every source has the notice queued before it ends its
			// stream, so every sink commits the input's tail on this
			// checkpoint, and a restart from it replays nothing.
			j.ReleaseFinishedSources()
		}
	}
	if w != nil {
		w <- err
	}
}

// unconfirmed ends checkpoint p, whose metadata is written, without its
// completion notice: the owner check failed. A fenced run stops the job;
// after another error (the store could not be listed) the job goes on,
// and the next checkpoint's notice commits what p pre-committed.
func (c *Coordinator) unconfirmed(p *pending, err error) {
	c.mu.Lock()
	if c.pending == p {
		c.pending = nil
	}
	c.stats.Failed++
	w := c.waiters[p.id]
	delete(c.waiters, p.id)
	j := c.job
	c.mu.Unlock()
	if errors.Is(err, ErrFenced) {
		c.log.Warn("a newer owner runs this task: stopping without committing", "checkpoint", p.id, "err", err)
		if j != nil {
			j.Fail(err)
		}
	} else {
		c.log.Warn("checkpoint written, but its owner could not be confirmed: not committed yet", "checkpoint", p.id, "err", err)
	}
	if w != nil {
		w <- err
	}
}

// rel is checkpoint id's place in the store: chk-<id>, in the run's
// epoch folder when it has one.
func (c *Coordinator) rel(id int64) string {
	if c.folder == "" {
		return chkRel(id)
	}
	return c.folder + "/" + chkRel(id)
}

// Epoch is the run's owner epoch (Config.Owned), or 0.
func (c *Coordinator) Epoch() int64 { return c.epoch }

// abort drops checkpoint id; the job goes on.
func (c *Coordinator) abort(id int64, reason error) {
	c.mu.Lock()
	p := c.pending
	if p == nil || p.id != id || p.completed {
		c.mu.Unlock()
		return
	}
	c.pending = nil
	c.stats.Failed++
	w := c.waiters[id]
	delete(c.waiters, id)
	release := false
	if p.final {
		// The next tick tries again, up to maxFinalFails attempts.
		c.finalFails++
		release = c.finalFails >= maxFinalFails && !c.released
		c.released = c.released || release
	}
	j := c.job
	c.mu.Unlock()
	if release && j != nil {
		c.log.Warn("final checkpoint failed; the sinks commit at the end of input instead", "attempts", maxFinalFails, "reason", reason)
		j.ReleaseFinishedSources()
	}
	if !p.savept {
		_ = p.store.Remove(context.Background(), p.rel, nil) // nothing refers to an uncommitted checkpoint
	}
	if w != nil {
		w <- fmt.Errorf("checkpoint %d aborted: %w", id, reason)
	}
}

func (c *Coordinator) expire(now time.Time) {
	c.mu.Lock()
	p := c.pending
	c.mu.Unlock()
	if p != nil && c.cfg.Timeout > 0 && now.Sub(p.started) > c.cfg.Timeout {
		c.log.Warn("checkpoint timed out", "checkpoint", p.id, "timeout", c.cfg.Timeout)
		c.abort(p.id, fmt.Errorf("timed out after %s", c.cfg.Timeout))
	}
}

// retain deletes completed checkpoints beyond the newest Retained, and
// half-written ones of earlier runs. Deleting an old checkpoint never
// touches a newer one's data: Pebble checkpoints share files by hard
// link in a local store, and a bucket store keeps the objects a kept
// checkpoint refers to.
func (c *Coordinator) retain() {
	ctx := context.Background()
	ids, err := c.store.List(ctx, c.folder)
	if err != nil {
		c.log.Warn("old checkpoints not pruned", "err", err)
		return
	}
	var kept, doomed []string
	for _, id := range ids {
		rel := c.rel(id)
		done, err := c.store.Exists(ctx, rel+"/"+MetadataFile)
		if err != nil {
			c.log.Warn("old checkpoints not pruned", "err", err)
			return
		}
		if !done {
			c.mu.Lock()
			inFlight := c.pending != nil && c.pending.id == id
			c.mu.Unlock()
			if !inFlight {
				doomed = append(doomed, rel) // a half-written checkpoint of an earlier run
			}
			continue
		}
		if len(kept) < c.cfg.Retained {
			kept = append(kept, rel)
		} else {
			doomed = append(doomed, rel)
		}
	}
	for _, rel := range doomed {
		if err := c.store.Remove(ctx, rel, kept); err != nil {
			c.log.Warn("old checkpoint not pruned", "checkpoint", rel, "err", err)
		}
	}
}

// Savepoint takes a checkpoint into dir, a directory or a URL (a
// portable savepoint), and waits for it to complete.
func (c *Coordinator) Savepoint(dir string) error {
	ctx := context.Background()
	sp, err := OpenStore(ctx, dir)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.others = append(c.others, sp) // closed with the job: a snapshot may still be uploading
	c.mu.Unlock()
	if found, err := sp.Exists(ctx, ""); err != nil || found {
		if err != nil {
			return err
		}
		return fmt.Errorf("checkpoint: savepoint directory %s already exists", sp)
	}
	var id int64
	for i := 0; i < 200; i++ { // wait out a checkpoint in flight
		if id, err = c.trigger(sp, false); err == nil {
			break
		}
		if errors.Is(err, dataflow.ErrSourceFinished) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	w := make(chan error, 1)
	c.mu.Lock()
	if c.pending == nil || c.pending.id != id || c.pending.completed {
		// Already completed or aborted: read the outcome from the store.
		c.mu.Unlock()
		_, err := sp.Read(ctx, "")
		return err
	}
	c.waiters[id] = w
	c.mu.Unlock()
	return <-w
}

// Stats returns the coordinator's figures.
func (c *Coordinator) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

func (c *Coordinator) closeStores() {
	// A snapshot may still be being written, and a completion may still
	// be writing its metadata or pruning old checkpoints; Closed promises
	// the directories are left alone.
	c.writes.Wait()
	c.inflight.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	c.stopped = true
	for k, st := range c.stores {
		if err := st.Close(); err != nil {
			c.log.Warn("closing state", "node", k[0], "subtask", k[1], "err", err)
		}
	}
	for _, o := range append(c.others, c.store) {
		if err := o.Close(); err != nil {
			c.log.Warn("closing the checkpoint store", "store", o.String(), "err", err)
		}
	}
	if c.cfg.Scratch {
		_ = os.RemoveAll(c.cfg.Dir)
	}
	close(c.closed)
}
