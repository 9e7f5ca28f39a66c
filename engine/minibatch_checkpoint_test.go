package engine

import (
	"strings"
	"testing"
)

// miniBatchForever makes the aggregation of ckptJob mini-batched with a
// batch that neither the hour nor the size ever ends: only a checkpoint
// barrier (and the end of input) ends it.
var miniBatchForever = []string{
	"SET 'table.exec.mini-batch.enabled' = 'true';",
	"SET 'table.exec.mini-batch.allow-latency' = '1 h';",
	"SET 'table.exec.mini-batch.size' = '100000000';",
}

// TestMiniBatchCheckpointLosesNothing kills a mini-batched job after a
// checkpoint taken while rows were buffered and restores it: the
// barrier must end the batch before the snapshot (the source's saved
// position is past the buffered rows), so the two runs' output together
// equal an uninterrupted run's.
func TestMiniBatchCheckpointLosesNothing(t *testing.T) {
	dir := t.TempDir()
	const rows = 30000
	_, j1, out1 := startCkptJob(t, dir, 2, 10000, rows, miniBatchForever...)
	waitFor(t, "a quarter of the rows", func() bool { in, _ := j1.Records(); return in >= rows/4 })
	before := j1.coord.Stats().Completed
	waitFor(t, "a checkpoint mid-way", func() bool { return j1.coord.Stats().Completed > before })
	j1.Cancel()
	_ = j1.Wait()
	// Only barriers ended batches in the first run, and it emitted: the
	// flush before the barrier is what brought its rows out.
	first := out1.String()
	if !strings.Contains(first, "+I[") {
		t.Fatalf("the first run emitted nothing before its checkpoints:\n%s", first)
	}
	_, j2, out2 := startCkptJob(t, dir, 2, 0, rows, miniBatchForever...)
	if err := j2.Wait(); err != nil {
		t.Fatal(err)
	}
	if j2.coord.Stats().RestoredFrom == "" {
		t.Fatal("the second run did not restore")
	}
	if in, _ := j2.Records(); in <= 0 || in >= rows {
		t.Fatalf("the restored run read %d rows of %d", in, rows)
	}
	view := map[int64]gs{}
	applyOut(first, view)
	applyOut(out2.String(), view)
	compare(t, view, reference(rows))
	// The restored run ended its only batch with the input: one change
	// per group (97 groups, each already emitted by the first run: -U/+U).
	if n := strings.Count(out2.String(), "+U["); n != 97 {
		t.Fatalf("the restored run emitted %d +U rows, want one per group (97):\n%s", n, out2.String())
	}
}
