package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/cluster"
	"github.com/streamsql/streamsql/connectors/kafka/broker"
)

// clusterScript is a small cluster job: a bounded generator, a keyed
// aggregate (so two stages), a blackhole sink. agg varies it.
func clusterScript(dir, agg string) string {
	return `SET 'execution.checkpointing.interval' = '1 s';
SET 'state.checkpoints.dir' = '` + dir + `';
SET 'cluster.partitions' = '2';
SET 'pipeline.name' = 'wtest';
CREATE TABLE src (k INT, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '50',
  'fields.k.min' = '1', 'fields.k.max' = '5', 'fields.v.min' = '1', 'fields.v.max' = '100');
CREATE TABLE sink (k INT, s INT) WITH ('connector' = 'blackhole');
INSERT INTO sink SELECT k, ` + agg + `(v) FROM src GROUP BY k;
`
}

func TestWorkerFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worker", "-f", "job.sql"}, "--bootstrap-servers is required"},
		{[]string{"worker", "--bootstrap-servers", "h:1"}, "-f job.sql is required"},
		{[]string{"worker", "--bootstrap-servers", "h:1", "-f", "job.sql", "extra"}, `unexpected argument "extra"`},
		{[]string{"cluster", "--workers", "0", "-f", "job.sql"}, "--workers must be at least 1"},
	} {
		code, _, errOut := runCLI(t, "", c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

func TestWorkerUnreachableBroker(t *testing.T) {
	job := writeFile(t, "job.sql", clusterScript(t.TempDir(), "SUM"))
	start := time.Now()
	code, _, errOut := runCLI(t, "", "worker", "--bootstrap-servers", "127.0.0.1:1", "--connect-timeout", "2s", "-f", job)
	if code != 1 || !strings.Contains(errOut, "cannot reach the Kafka brokers 127.0.0.1:1 within 2s") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("gave up after %s", d)
	}
}

func TestWorkerJobFileMismatch(t *testing.T) {
	b, err := broker.Start(broker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dir := t.TempDir()
	load := func(agg string) *cluster.Job {
		f := &workerFlags{bootstrap: b.Addr(), file: writeFile(t, "job.sql", clusterScript(dir, agg))}
		j, err := loadClusterJob(context.Background(), f, io.Discard, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	a1, a2, other := load("SUM"), load("SUM"), load("MAX")
	if a1.Fingerprint() != a2.Fingerprint() {
		t.Fatalf("the same job file compiled twice has two fingerprints: %s, %s", a1.Fingerprint(), a2.Fingerprint())
	}
	if a1.Fingerprint() == other.Fingerprint() {
		t.Fatal("two different jobs have one fingerprint")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	observed := make(chan struct{}, 16)
	first := make(chan error, 1)
	go func() {
		first <- cluster.RunWorker(ctx, cluster.WorkerConfig{Brokers: []string{b.Addr()}, Job: a1.Name(), Fingerprint: a1.Fingerprint(),
			Runner: a1, Name: "a", Log: log, Observe: func(int32, []cluster.TaskID) { observed <- struct{}{} }})
	}()
	select {
	case <-observed:
	case err := <-first:
		t.Fatalf("the first worker ended: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the first worker got no assignment")
	}
	err = cluster.RunWorker(ctx, cluster.WorkerConfig{Brokers: []string{b.Addr()}, Job: other.Name(), Fingerprint: other.Fingerprint(),
		Runner: other, Name: "b", Log: log})
	if err == nil || !strings.Contains(err.Error(), "the job file differs from the one the running workers of job wtest have") {
		t.Fatalf("want the mismatch refused, got %v", err)
	}
	cancel()
	if err := <-first; err != nil {
		t.Fatalf("the first worker: %v", err)
	}
}

// A checkpoint store the worker cannot write to stops it with an error
// that names the store. (Tests run as root here, so the store is made
// unwritable by putting it under a regular file, not by permissions.)
func TestWorkerCheckpointStoreNotWritable(t *testing.T) {
	b, err := broker.Start(broker.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	blocker := writeFile(t, "not-a-dir", "x")
	job := writeFile(t, "job.sql", clusterScript(blocker+"/ckpt", "SUM"))
	code, _, errOut := runCLI(t, "", "worker", "--bootstrap-servers", b.Addr(), "-f", job)
	if code != 1 || !strings.Contains(errOut, "streamsql worker: cluster: job wtest: cluster: task s") ||
		!strings.Contains(errOut, "checkpoint") || !strings.Contains(errOut, blocker) {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	t.Log(errOut[strings.LastIndex(errOut, "streamsql worker:"):])
}
