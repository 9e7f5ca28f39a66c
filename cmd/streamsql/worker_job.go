package main

import (
	"context"
	"errors"
	"io"
)

// loadClusterJob compiles the worker's job file into a cluster job.
func loadClusterJob(ctx context.Context, f *workerFlags, stderr io.Writer) (clusterJob, error) {
	if _, err := readJobScript(f, stderr); err != nil {
		return nil, err
	}
	return nil, errors.New("cluster mode: the stage compiler is not merged yet")
}
