package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/engine"
	nexmarkq "github.com/streamsql/streamsql/examples/nexmark"
	"github.com/streamsql/streamsql/internal/s3test"
	"github.com/streamsql/streamsql/parser"
)

// BenchmarkCheckpointStore runs Nexmark q4 (a join and two aggregations:
// the state grows with every event) over b.N events with a checkpoint
// every 2 s into each kind of checkpoint store: a local directory, a
// file:// bucket (the shared-volume case) and S3 (gofakes3 in process,
// in memory, so the figure is the cost of the S3 protocol and the copy,
// not of a network):
//
//	go test -run=NONE -bench=CheckpointStore -benchtime=500000x ./bench
//
// It reports the checkpoints' figures from the job's checkpoint stats
// (what SHOW JOBS and /jobs show): the last checkpoint's duration, its
// size, the bytes it added to the job's local snapshot directory, and,
// for a bucket, the bytes it uploaded (from its metadata: the files not
// shared with an earlier checkpoint).
func BenchmarkCheckpointStore(b *testing.B) {
	text, err := nexmarkq.Query("q4")
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"dir", "file", "s3"} {
		b.Run(kind, func(b *testing.B) {
			var root string
			switch kind {
			case "dir":
				root = b.TempDir()
			case "file":
				root = "file://" + b.TempDir()
			case "s3":
				root = s3test.Start(b, "bench").Location("ckpt")
			}
			n := max(b.N, 50)
			ddl := strings.ReplaceAll(nexmarkq.DDL(), "'events.num' = '10000000'", fmt.Sprintf("'events.num' = '%d'", n))
			ddl = strings.ReplaceAll(ddl, "'first-event.rate' = '1000000'", fmt.Sprintf("'first-event.rate' = '%d'", max(n/10, 1)))
			sql := fmt.Sprintf("SET 'pipeline.name' = 'q4';\nSET 'state.backend.type' = 'pebble';\n"+
				"SET 'execution.checkpointing.interval' = '2 s';\nSET 'state.checkpoints.dir' = '%s';\n", root) + ddl + "\n" + text
			s := engine.NewSession(io.Discard)
			stmts, err := parser.Parse(sql)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			var job *engine.Job
			for _, st := range stmts {
				r, err := s.Execute(context.Background(), st)
				if err != nil {
					b.Fatal(err)
				}
				if r.Job != nil {
					job = r.Job
					if err := r.Job.Wait(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
			st, ok := job.CheckpointStats()
			if !ok || st.Completed == 0 {
				b.Fatal("no checkpoint completed")
			}
			b.ReportMetric(float64(st.Completed), "checkpoints")
			b.ReportMetric(float64(st.LastDuration)/float64(time.Millisecond), "ckpt-ms")
			b.ReportMetric(float64(st.LastTotalBytes)/(1<<20), "ckpt-MiB")
			b.ReportMetric(float64(st.LastNewBytes)/(1<<20), "ckpt-new-MiB")
			if kind != "dir" {
				b.ReportMetric(uploaded(b, checkpoint.Join(root, "q4"), st.LastID)/(1<<20), "upload-MiB")
			}
		})
	}
}

// uploaded is the size of the files checkpoint id of the store at loc
// uploaded itself.
func uploaded(b *testing.B, loc string, id int64) float64 {
	ctx := context.Background()
	st, err := checkpoint.OpenStore(ctx, loc)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	m, err := st.Read(ctx, fmt.Sprintf("chk-%d", id))
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, s := range m.Subtasks {
		for _, f := range s.Files {
			if f.Object == "" {
				n += f.Size
			}
		}
	}
	return float64(n)
}
