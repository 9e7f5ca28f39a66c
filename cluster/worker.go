package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/streamsql/streamsql/checkpoint"
	connkafka "github.com/streamsql/streamsql/connectors/kafka"
	"github.com/streamsql/streamsql/internal/metrics"
)

// WorkerConfig configures RunWorker. Brokers, Job, Fingerprint and
// Runner are required.
type WorkerConfig struct {
	// Brokers are the Kafka bootstrap servers, host:port.
	Brokers []string
	// Job names the job: the group is GroupID(Job), the tasks topic
	// TasksTopic(Job).
	Job string
	// Fingerprint identifies the job's plan; every worker of the job must
	// have the same.
	Fingerprint string
	// Runner runs the job's tasks.
	Runner TaskRunner
	// Name is the worker's name in logs and in the group (the Kafka
	// client id); default host-pid.
	Name string
	// Log receives the worker's log; default slog.Default().
	Log *slog.Logger
	// ConnectTimeout bounds how long the worker tries to reach the
	// brokers and get into the group: at start, and after it lost the
	// group. Past it RunWorker fails. Default 30 s.
	ConnectTimeout time.Duration
	// SessionTimeout is how long the broker waits for a silent worker
	// (killed, or cut off) before its tasks go to others. Default 10 s.
	SessionTimeout time.Duration
	// HeartbeatInterval, default 1 s, must be well below SessionTimeout.
	HeartbeatInterval time.Duration
	// RebalanceTimeout is how long a rebalance waits for every member to
	// rejoin. Workers rejoin at once (their tasks keep running through a
	// rebalance), so it only matters for a worker that is slow to answer,
	// on a loaded machine: past it, the group goes on without it and it
	// has to rejoin. Default 30 s.
	RebalanceTimeout time.Duration
	// Observe, when set, is called after each generation is applied,
	// with the tasks now running on this worker (tests and tools).
	Observe func(generation int32, running []TaskID)
}

func (c *WorkerConfig) defaults() error {
	switch {
	case len(c.Brokers) == 0:
		return errors.New("cluster: worker: no Kafka bootstrap servers")
	case c.Job == "":
		return errors.New("cluster: worker: the job has no name")
	case c.Fingerprint == "":
		return errors.New("cluster: worker: the job has no plan fingerprint")
	case c.Runner == nil:
		return errors.New("cluster: worker: no task runner")
	}
	if c.Name == "" {
		host, _ := os.Hostname()
		c.Name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	c.Log = c.Log.With("worker", c.Name, "job", c.Job)
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.ConnectTimeout, 30*time.Second)
	def(&c.SessionTimeout, 10*time.Second)
	def(&c.HeartbeatInterval, time.Second)
	def(&c.RebalanceTimeout, 30*time.Second)
	return nil
}

// RunWorker runs one worker of a job until ctx ends (then it stops its
// tasks, leaves the group and returns nil) or something it cannot get
// past happens: the brokers unreachable for ConnectTimeout, a job whose
// plan differs from the other workers', a task that fails. Each
// generation of the group it runs the tasks assigned to it and stops
// the others, waiting until they have returned before the group may
// hand them to another worker (see assign).
func RunWorker(ctx context.Context, cfg WorkerConfig) error {
	if err := cfg.defaults(); err != nil {
		return err
	}
	w := &worker{cfg: cfg, log: cfg.Log, tasks: sortedTasks(cfg.Runner.Tasks()), running: map[int]*runningTask{},
		migrated: make(chan struct{}, 1)}
	if len(w.tasks) == 0 {
		return fmt.Errorf("cluster: job %s has no tasks", cfg.Job)
	}
	return w.run(ctx)
}

type worker struct {
	cfg   WorkerConfig
	log   *slog.Logger
	tasks []TaskID // sorted; index = partition of the tasks topic

	mu      sync.Mutex
	running map[int]*runningTask // by task index: running, finished, or stopping
	wg      sync.WaitGroup
	// migrated receives when a task found itself fenced: another worker
	// runs it, so this one's view of the group is stale.
	migrated chan struct{}
}

type runningTask struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// owned lists the task indexes running, finished or stopping here.
func (w *worker) owned() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]int, 0, len(w.running))
	for i := range w.running {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

func (w *worker) run(ctx context.Context) error {
	topic := TasksTopic(w.cfg.Job)
	brokers := strings.Join(w.cfg.Brokers, ",")
	client := &kafka.Client{Addr: kafka.TCP(w.cfg.Brokers...), Timeout: 10 * time.Second}
	cctx, cancel := context.WithTimeout(ctx, w.cfg.ConnectTimeout)
	err := ensureTasksTopic(cctx, client, topic, len(w.tasks))
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		var perm *permanentError
		if errors.As(err, &perm) {
			return fmt.Errorf("cluster: %w", err)
		}
		return fmt.Errorf("cluster: cannot reach the Kafka brokers %s within %s: %w", brokers, w.cfg.ConnectTimeout, err)
	}

	// Requests to the group coordinator time out after 30 s. A JoinGroup
	// waits up to the rebalance timeout plus this, and must outlast the
	// broker's wait for the other members on a loaded machine (a broker
	// restarts that wait whenever a member comes or goes): a member whose
	// join times out rejoins under a new id and leaves a ghost member
	// behind, which makes the next rebalance longer still.
	const reqTimeout = 30 * time.Second
	bal := &balancer{topic: topic, fp: w.cfg.Fingerprint, name: w.cfg.Name, tasks: w.tasks, log: w.log, owned: w.owned}
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                GroupID(w.cfg.Job),
		Brokers:           w.cfg.Brokers,
		Dialer:            &kafka.Dialer{ClientID: w.cfg.Name, Timeout: reqTimeout, DualStack: true},
		Topics:            []string{topic},
		GroupBalancers:    []kafka.GroupBalancer{bal},
		HeartbeatInterval: w.cfg.HeartbeatInterval,
		SessionTimeout:    w.cfg.SessionTimeout,
		RebalanceTimeout:  w.cfg.RebalanceTimeout,
		JoinGroupBackoff:  time.Second,
		Timeout:           reqTimeout,
	})
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	// Stop the tasks before leaving the group: leaving hands them to the
	// other workers at once.
	defer func() {
		w.stopAll()
		cg.Close()
		w.wg.Wait()
	}()

	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	w.log.Info("joining the job's group", "group", GroupID(w.cfg.Job), "brokers", brokers, "tasks", len(w.tasks), "fingerprint", w.cfg.Fingerprint)
	lastGood := time.Now()
	for {
		gen, err := cg.Next(runCtx)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return nil
		case runCtx.Err() != nil:
			return context.Cause(runCtx) // a task failed
		case errors.Is(err, kafka.InconsistentGroupProtocol):
			return fmt.Errorf("cluster: the job file differs from the one the running workers of job %s have (this worker's plan fingerprint is %s): "+
				"every worker of a job must run the same job file; to change the job, stop all its workers first", w.cfg.Job, w.cfg.Fingerprint)
		case errors.Is(err, kafka.RebalanceInProgress):
			continue // still a member; the tasks keep running
		default:
			// kafka-go left the group: another worker may get our tasks.
			if n := len(w.owned()); n > 0 {
				w.log.Warn("lost the group; stopping this worker's tasks", "tasks", n, "err", err)
			}
			w.stopAll()
			if time.Since(lastGood) > w.cfg.ConnectTimeout {
				return fmt.Errorf("cluster: cannot get into the group of job %s through the Kafka brokers %s for %s: %w",
					w.cfg.Job, brokers, w.cfg.ConnectTimeout, err)
			}
			w.log.Info("retrying to join the group", "err", err)
			continue
		}
		lastGood = time.Now()
		metrics.ClusterGenerations.Inc()
		rejoin, err := w.apply(runCtx, gen, topic, bal, fail)
		if err != nil {
			return err
		}
		gen.Start(func(gctx context.Context) {
			if rejoin {
				return // ends the generation: this worker rejoins at once
			}
			select {
			case <-gctx.Done():
			case <-w.migrated:
				// Kafka Streams' TaskMigrated: stop every task, since the
				// group may have given any of them away, and rejoin.
				w.log.Warn("a task was fenced by another worker running it; stopping this worker's tasks and rejoining the group")
				w.stopAll()
			}
		})
	}
}

// apply runs generation gen's assignment: it stops the tasks no longer
// assigned here, waits for them, and starts the new ones. It reports
// whether the worker must rejoin at once: when it released tasks the
// group still believes it owns (it said so when it joined), another
// worker can only get them in the next generation.
func (w *worker) apply(ctx context.Context, gen *kafka.Generation, topic string, bal *balancer, fail context.CancelCauseFunc) (bool, error) {
	want := map[int]bool{}
	for _, p := range gen.Assignments[topic] {
		if p.ID == refusedPartition {
			return false, fmt.Errorf("cluster: the group leader refused this worker: its job's plan (fingerprint %s) differs from the other workers' of job %s; "+
				"every worker of a job must run the same job file (the leader's log names both fingerprints)", w.cfg.Fingerprint, w.cfg.Job)
		}
		if p.ID >= 0 && p.ID < len(w.tasks) {
			want[p.ID] = true
		}
	}
	var stopped, started []int
	w.mu.Lock()
	var stopping []*runningTask
	for i, rt := range w.running {
		if !want[i] {
			rt.cancel()
			stopping = append(stopping, rt)
			stopped = append(stopped, i)
		}
	}
	w.mu.Unlock()
	w.wait(stopping)
	w.mu.Lock()
	for _, i := range stopped {
		delete(w.running, i)
	}
	for i := range want {
		if _, ok := w.running[i]; !ok {
			w.start(ctx, i, fail)
			started = append(started, i)
		}
	}
	w.mu.Unlock()

	now := w.owned()
	metrics.ClusterTasksRunning.Set(float64(len(now)))
	slices.Sort(stopped)
	slices.Sort(started)
	if len(now) == 0 {
		w.log.Info("idle: no task assigned to this worker; it stands by and takes over tasks when other workers leave",
			"generation", gen.ID, "job_tasks", len(w.tasks), "stopped", w.names(stopped))
	} else {
		w.log.Info("running tasks", "generation", gen.ID, "tasks", w.names(now), "started", w.names(started), "stopped", w.names(stopped))
	}
	if w.cfg.Observe != nil {
		ids := make([]TaskID, len(now))
		for k, i := range now {
			ids[k] = w.tasks[i]
		}
		w.cfg.Observe(gen.ID, ids)
	}
	rejoin := false
	for _, i := range bal.advertised() {
		if !slices.Contains(now, i) {
			rejoin = true
		}
	}
	return rejoin, nil
}

// start runs task i in its own goroutine; w.mu is held.
func (w *worker) start(ctx context.Context, i int, fail context.CancelCauseFunc) {
	tctx, cancel := context.WithCancel(ctx)
	rt := &runningTask{cancel: cancel, done: make(chan struct{})}
	w.running[i] = rt
	id := w.tasks[i]
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer close(rt.done)
		err := w.cfg.Runner.RunTask(tctx, id)
		switch {
		case tctx.Err() != nil:
			// Stopped: moved away, or the worker stops. A task that
			// failed while being stopped is restored from its checkpoint
			// wherever it runs next.
		case err == nil:
			// It stays owned here, so that it is not run again.
			w.log.Info("task finished: its input ended", "task", id.String())
		case errors.Is(err, connkafka.ErrFenced), errors.Is(err, checkpoint.ErrFenced):
			w.log.Warn("task fenced: another worker runs it now", "task", id.String(), "err", err)
			select {
			case w.migrated <- struct{}{}:
			default:
			}
		case strings.HasPrefix(err.Error(), "cluster: task "+id.String()+":"):
			fail(fmt.Errorf("cluster: job %s: %w", w.cfg.Job, err)) // RunTask named the task
		default:
			fail(fmt.Errorf("cluster: job %s: task %s: %w", w.cfg.Job, id, err))
		}
	}()
}

// wait waits until the given tasks have returned, logging the slow.
func (w *worker) wait(ts []*runningTask) {
	for _, rt := range ts {
		select {
		case <-rt.done:
			continue
		case <-time.After(10 * time.Second):
			w.log.Warn("waiting for a task to stop")
		}
		<-rt.done
	}
}

// stopAll stops every task and waits for them.
func (w *worker) stopAll() {
	w.mu.Lock()
	var ts []*runningTask
	for _, rt := range w.running {
		rt.cancel()
		ts = append(ts, rt)
	}
	w.mu.Unlock()
	w.wait(ts)
	w.mu.Lock()
	clear(w.running)
	w.mu.Unlock()
	metrics.ClusterTasksRunning.Set(0)
}

func (w *worker) names(idx []int) string {
	s := make([]string, len(idx))
	for k, i := range idx {
		s[k] = w.tasks[i].String()
	}
	return strings.Join(s, ",")
}
