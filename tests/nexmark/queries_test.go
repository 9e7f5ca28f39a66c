package nexmark_test

import (
	"sync"
	"testing"
)

var (
	inputOnce sync.Once
	theInput  input
)

func testInput(t *testing.T) input {
	inputOnce.Do(func() { theInput = split(events(t)) })
	return theInput
}

func check(t *testing.T, q string, expect func(input) []string) {
	in := testInput(t)
	compare(t, q, runQuery(t, q), expect(in))
}

func TestQ0(t *testing.T)  { check(t, "q0", expectQ0) }
func TestQ1(t *testing.T)  { check(t, "q1", expectQ1) }
func TestQ2(t *testing.T)  { check(t, "q2", expectQ2) }
func TestQ3(t *testing.T)  { check(t, "q3", expectQ3) }
func TestQ4(t *testing.T)  { check(t, "q4", expectQ4) }
func TestQ5(t *testing.T)  { check(t, "q5", expectQ5) }
func TestQ6(t *testing.T)  { check(t, "q6", func(in input) []string { return expectQ6(t, in) }) }
func TestQ7(t *testing.T)  { check(t, "q7", expectQ7) }
func TestQ8(t *testing.T)  { check(t, "q8", expectQ8) }
func TestQ9(t *testing.T)  { check(t, "q9", func(in input) []string { return expectQ9(t, in) }) }
func TestQ10(t *testing.T) { check(t, "q10", expectQ10) }
func TestQ11(t *testing.T) { check(t, "q11", expectQ11) }

// TestQ12 checks what processing-time windows leave fixed: each bid is
// counted once, in a window of its bidder.
func TestQ12(t *testing.T) {
	in := testInput(t)
	compare(t, "q12", sumQ12(t, runQuery(t, "q12")), expectQ12(in))
}

func TestQ13(t *testing.T) { check(t, "q13", expectQ13) }
func TestQ14(t *testing.T) { check(t, "q14", expectQ14) }
func TestQ15(t *testing.T) { check(t, "q15", expectQ15) }
func TestQ16(t *testing.T) { check(t, "q16", expectQ16) }
func TestQ17(t *testing.T) { check(t, "q17", expectQ17) }
func TestQ18(t *testing.T) { check(t, "q18", func(in input) []string { return expectQ18(t, in) }) }
func TestQ19(t *testing.T) { check(t, "q19", func(in input) []string { return expectQ19(t, in) }) }
func TestQ20(t *testing.T) { check(t, "q20", expectQ20) }
func TestQ21(t *testing.T) { check(t, "q21", expectQ21) }
func TestQ22(t *testing.T) { check(t, "q22", expectQ22) }

// TestParallel runs a few queries with two subtasks per operator: two
// source subtasks interleave the event numbers, and keyed exchanges,
// window and join state and the watermark minimum all take part.
func TestParallel(t *testing.T) {
	in := testInput(t)
	for _, c := range []struct {
		q      string
		expect func(input) []string
	}{
		{"q3", expectQ3}, {"q5", expectQ5}, {"q8", expectQ8}, {"q11", expectQ11}, {"q17", expectQ17},
		{"q9", func(in input) []string { return expectQ9(t, in) }},
		{"q19", func(in input) []string { return expectQ19(t, in) }},
	} {
		t.Run(c.q, func(t *testing.T) { compare(t, c.q, runQueryPar(t, c.q, 2), c.expect(in)) })
	}
}

// TestSplitDistinct runs q15 and q16, whose COUNT(DISTINCT ...) with
// FILTER are what split distinct aggregation rewrites, with the split on:
// alone (8 buckets, so that buckets hold many values), and with
// mini-batch at parallelism 2, as the flink-reference bench profile runs
// them. The rows must be the independent computation's.
func TestSplitDistinct(t *testing.T) {
	in := testInput(t)
	split := []string{"table.optimizer.distinct-agg.split.enabled=true", "table.optimizer.distinct-agg.split.bucket-num=8"}
	miniBatch := append([]string{"table.exec.mini-batch.enabled=true",
		"table.exec.mini-batch.allow-latency=2s", "table.exec.mini-batch.size=1000"}, split...)
	for _, c := range []struct {
		q      string
		expect func(input) []string
	}{{"q15", expectQ15}, {"q16", expectQ16}} {
		t.Run(c.q, func(t *testing.T) { compare(t, c.q, runQueryWith(t, c.q, 1, split...), c.expect(in)) })
		t.Run(c.q+"/mini-batch", func(t *testing.T) { compare(t, c.q, runQueryWith(t, c.q, 2, miniBatch...), c.expect(in)) })
	}
}
