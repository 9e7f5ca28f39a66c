package main

// `streamsql cluster`: a whole cluster on one machine, for trying cluster
// mode out: the embedded broker, a checkpoint directory and N `streamsql
// worker` processes (this binary, run again), all stopped by Ctrl-C.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/repl"
)

const clusterUsage = `Usage: streamsql cluster --workers 3 -f job.sql [flags]

Runs a cluster job on this machine: a local Kafka-protocol broker, a
checkpoint directory, and --workers 'streamsql worker' processes. It
prints where each task runs whenever that changes; Ctrl-C stops it all.
In the job file, ${bootstrap} is the broker's host:port and
${checkpoints} the checkpoint store (file://DIR), unless given with --var.

Flags:
`

func serveCluster(args []string, stdout, stderr io.Writer, stop <-chan os.Signal) int {
	fs := flag.NewFlagSet("streamsql cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("workers", 3, "worker processes to start")
	file := fs.String("f", "", "the job `file`")
	init := fs.String("i", "", "an init script `file` read before -f")
	port := fs.Int("kafka-port", 0, "the local broker's port (0 picks a free one)")
	ckpt := fs.String("checkpoints", "", "the checkpoint `directory` (default: a temporary one, removed at the end)")
	var sets setFlags
	fs.Var(&sets, "set", "set a session option on every worker, `key=value`; may be repeated")
	vars := repl.Vars{}
	fs.Var(vars, "var", "replace ${name} in the job file, `name=value`; may be repeated")
	fs.Usage = func() {
		fmt.Fprint(stderr, clusterUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "streamsql cluster: unexpected argument %q; see streamsql cluster -h\n", fs.Arg(0))
		return 2
	case *file == "":
		fmt.Fprintln(stderr, "streamsql cluster: -f job.sql is required")
		return 2
	case *n < 1:
		fmt.Fprintln(stderr, "streamsql cluster: --workers must be at least 1")
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "streamsql cluster:", err)
		return 1
	}
	dir := *ckpt
	if dir == "" {
		if dir, err = os.MkdirTemp("", "streamsql-cluster-"); err != nil {
			fmt.Fprintln(stderr, "streamsql cluster:", err)
			return 1
		}
		defer os.RemoveAll(dir)
	} else if dir, err = filepath.Abs(dir); err != nil {
		fmt.Fprintln(stderr, "streamsql cluster:", err)
		return 1
	}
	b, err := broker.Start(broker.Config{Port: *port})
	if err != nil {
		fmt.Fprintln(stderr, "streamsql cluster:", err)
		return 1
	}
	defer b.Close()
	if _, ok := vars["bootstrap"]; !ok {
		vars["bootstrap"] = b.Addr()
	}
	// The store as a file:// URL: each worker then keeps its tasks'
	// working state in a directory of its own, as on separate machines,
	// and only checkpoints go to the shared directory.
	store := "file://" + dir
	if _, ok := vars["checkpoints"]; !ok {
		vars["checkpoints"] = store
	}
	wf := &workerFlags{bootstrap: b.Addr(), file: *file, init: *init, sets: append(setFlags{"state.checkpoints.dir=" + store}, sets...), vars: vars}
	// Compiled here too: a job file error shows once, before any worker
	// starts, and the task list names the group's partitions below.
	job, err := loadClusterJob(context.Background(), wf, stderr, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		fmt.Fprintf(stderr, "streamsql cluster: %v\n", err)
		return 1
	}
	tasks := job.Tasks()
	slices.SortFunc(tasks, func(a, b cluster.TaskID) int {
		if a.Stage != b.Stage {
			return a.Stage - b.Stage
		}
		return a.Partition - b.Partition
	})
	fmt.Fprintf(stdout, "cluster: job %s, %d tasks, %d workers; broker %s, checkpoints %s; Ctrl-C stops it\n",
		job.Name(), len(tasks), *n, b.Addr(), store)

	wargs := []string{"worker", "--bootstrap-servers", b.Addr(), "-f", *file}
	if *init != "" {
		wargs = append(wargs, "-i", *init)
	}
	for _, s := range wf.sets {
		wargs = append(wargs, "--set", s)
	}
	for k, v := range vars {
		wargs = append(wargs, "--var", k+"="+v)
	}
	var out sync.Mutex // one line at a time on stdout
	type proc struct {
		name string
		cmd  *exec.Cmd
		done chan error
	}
	var procs []*proc
	exited := make(chan *proc, *n)
	for i := 1; i <= *n; i++ {
		p := &proc{name: fmt.Sprintf("worker-%d", i), done: make(chan error, 1)}
		p.cmd = exec.Command(self, append(slices.Clone(wargs), "--name", p.name)...)
		pipe, err := p.cmd.StderrPipe()
		if err != nil {
			fmt.Fprintln(stderr, "streamsql cluster:", err)
			return 1
		}
		p.cmd.Stdout = p.cmd.Stderr
		if err := p.cmd.Start(); err != nil {
			fmt.Fprintln(stderr, "streamsql cluster:", err)
			return 1
		}
		go func() {
			sc := bufio.NewScanner(pipe)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				out.Lock()
				fmt.Fprintf(stderr, "[%s] %s\n", p.name, sc.Text())
				out.Unlock()
			}
			p.done <- p.cmd.Wait()
			exited <- p
		}()
		procs = append(procs, p)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go watchTasks(ctx, b.Addr(), job.Name(), tasks, func(line string) {
		out.Lock()
		fmt.Fprintln(stdout, line)
		out.Unlock()
	})

	code, running := 0, len(procs)
	select {
	case <-stop:
		fmt.Fprintln(stdout, "cluster: stopping the workers")
	case p := <-exited:
		running--
		err := <-p.done
		fmt.Fprintf(stderr, "streamsql cluster: %s exited (%v); stopping the others\n", p.name, err)
		code = 1
	}
	cancel()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	deadline := time.After(time.Minute)
	for range running {
		select {
		case <-exited:
		case <-deadline:
			for _, p := range procs {
				_ = p.cmd.Process.Kill()
			}
			fmt.Fprintln(stderr, "streamsql cluster: workers did not stop within a minute; killed")
			return 1
		}
	}
	fmt.Fprintln(stdout, "cluster: stopped")
	return code
}

// watchTasks polls the job's consumer group every second and calls say
// with where each task runs, whenever that changes.
func watchTasks(ctx context.Context, addr, job string, tasks []cluster.TaskID, say func(string)) {
	c := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 5 * time.Second}
	topic := cluster.TasksTopic(job)
	last := ""
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		res, err := c.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{cluster.GroupID(job)}})
		if err != nil || len(res.Groups) != 1 || res.Groups[0].GroupState != "Stable" {
			continue
		}
		var lines []string
		for _, m := range res.Groups[0].Members {
			var names []string
			for _, mt := range m.MemberAssignments.Topics {
				if mt.Topic != topic {
					continue
				}
				for _, p := range mt.Partitions {
					if p >= 0 && p < len(tasks) {
						names = append(names, tasks[p].String())
					}
				}
			}
			if len(names) == 0 {
				names = []string{"(idle)"}
			}
			lines = append(lines, fmt.Sprintf("  %s: %s", m.ClientID, strings.Join(names, " ")))
		}
		slices.Sort(lines)
		now := strings.Join(lines, "\n")
		if now != last {
			last = now
			say("tasks:\n" + now)
		}
	}
}
