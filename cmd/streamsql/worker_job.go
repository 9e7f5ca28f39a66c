package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/streamsql/streamsql/cluster"
)

// loadClusterJob compiles the worker's job (init script, job file, --set
// options and --var values) into a cluster job.
func loadClusterJob(ctx context.Context, f *workerFlags, stderr io.Writer, log *slog.Logger) (*cluster.Job, error) {
	script, err := readJobScript(f, stderr)
	if err != nil {
		return nil, err
	}
	set := map[string]string{}
	for _, kv := range f.sets {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--set wants key=value, got %q", kv)
		}
		set[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return cluster.Compile(ctx, cluster.Config{Script: script, File: f.file,
		BootstrapServers: strings.Split(f.bootstrap, ","), Set: set, Log: log})
}
