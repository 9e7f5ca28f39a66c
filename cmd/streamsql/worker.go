package main

// `streamsql worker`: one worker of a cluster job. Run the same command
// (same job file) N times, on any machines that reach the Kafka brokers
// and the checkpoint store, and the N processes share the job's tasks
// through a Kafka consumer group (package cluster).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/internal/httpapi"
	"github.com/streamsql/streamsql/internal/secrets"
	"github.com/streamsql/streamsql/repl"
)

const workerUsage = `Usage: streamsql worker --bootstrap-servers host:port -f job.sql [flags]

Runs one worker of a cluster job. Every worker of a job runs the same job
file (CREATE TABLEs, SETs, then one INSERT or one statement set); the
workers join the Kafka consumer group "streamsql-<job>" and the group
spreads the job's tasks over them. A worker that joins or leaves moves
tasks; a moved task restores its latest checkpoint where it now runs.
A worker whose job file differs from the running workers' is refused.
SIGTERM or Ctrl-C stops the worker's tasks and leaves the group.

Flags:
`

// workerFlags are the flags of `streamsql worker`, parsed.
type workerFlags struct {
	bootstrap, file, init, metricsAddr, name string
	sets                                     setFlags
	vars                                     repl.Vars
	connectTimeout, sessionTimeout           time.Duration
}

func parseWorkerFlags(args []string, stderr io.Writer) (*workerFlags, int) {
	f := &workerFlags{vars: repl.Vars{}}
	fs := flag.NewFlagSet("streamsql worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.bootstrap, "bootstrap-servers", "", "the Kafka brokers, `host:port[,host:port...]`: group membership and the job's internal topics")
	fs.StringVar(&f.file, "f", "", "the job `file`: the same on every worker")
	fs.StringVar(&f.init, "i", "", "an init script `file` read before -f (e.g. the table declarations); part of the job")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve GET /metrics on `address` (a bare port binds to 127.0.0.1; 0.0.0.0:9249 for a scraper on other machines)")
	fs.StringVar(&f.name, "name", "", "the worker's `name` in logs and in the group (default host-pid)")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", 30*time.Second, "give up when the brokers cannot be reached, or the group joined, for this `long`")
	fs.DurationVar(&f.sessionTimeout, "session-timeout", 10*time.Second, "a worker silent for this `long` (killed, cut off) loses its tasks to the others")
	fs.Var(&f.sets, "set", "set a session option, `key=value`; may be repeated (the same on every worker)")
	fs.Var(f.vars, "var", "replace ${name} in the job file by value, `name=value`; may be repeated")
	fs.Usage = func() {
		fmt.Fprint(stderr, workerUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0
		}
		return nil, 2
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "streamsql worker: unexpected argument %q; see streamsql worker -h\n", fs.Arg(0))
		return nil, 2
	case f.bootstrap == "":
		fmt.Fprintln(stderr, "streamsql worker: --bootstrap-servers is required: the Kafka brokers the workers meet through")
		return nil, 2
	case f.file == "":
		fmt.Fprintln(stderr, "streamsql worker: -f job.sql is required")
		return nil, 2
	}
	return f, -1
}

func runWorker(args []string, stdout, stderr io.Writer) int {
	f, code := parseWorkerFlags(args, stderr)
	if f == nil {
		return code
	}
	log := slog.New(secrets.Handler(slog.NewTextHandler(stderr, nil)))
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	job, err := loadClusterJob(ctx, f, stderr, log)
	if err != nil {
		fmt.Fprintf(stderr, "streamsql worker: %v\n", err)
		return 1
	}
	if f.metricsAddr != "" {
		srv, err := httpapi.Start(f.metricsAddr, noJobs{}, httpapi.Options{ErrLog: stderr})
		if err != nil {
			fmt.Fprintf(stderr, "streamsql worker: --metrics-addr: %v\n", err)
			return 2
		}
		defer srv.Close()
		log.Info("metrics endpoint", "url", srv.URL()+"/metrics")
	}
	err = cluster.RunWorker(ctx, cluster.WorkerConfig{
		Brokers:        strings.Split(f.bootstrap, ","),
		Job:            job.Name(),
		Fingerprint:    job.Fingerprint(),
		Runner:         job,
		Name:           f.name,
		Log:            log,
		ConnectTimeout: f.connectTimeout,
		SessionTimeout: f.sessionTimeout,
	})
	if err != nil {
		fmt.Fprintf(stderr, "streamsql worker: %v\n", err)
		return 1
	}
	log.Info("worker stopped")
	return 0
}

// readJobScript reads the init script (if any) and the job file, with
// their ${vars} replaced: the text every worker must have the same.
func readJobScript(f *workerFlags, stderr io.Writer) (string, error) {
	var b strings.Builder
	for _, name := range []string{f.init, f.file} {
		if name == "" {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return "", err
		}
		b.WriteString(repl.Substitute(string(data), f.vars, stderr, name))
		b.WriteString("\n")
	}
	return b.String(), nil
}

// noJobs is the metrics endpoint's job list: a worker's tasks are not
// session jobs; its figures are the process-wide instruments.
type noJobs struct{}

func (noJobs) Jobs() []*engine.Job    { return nil }
func (noJobs) Job(string) *engine.Job { return nil }
