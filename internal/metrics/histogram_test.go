package metrics

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestHistogramSnapshot(t *testing.T) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h", Buckets: []float64{1, 2, 4, 8}})
	if q := Snapshot(h).Quantile(0.5); !math.IsNaN(q) {
		t.Fatalf("empty quantile %v", q)
	}
	h.Observe(0.5)
	before := Snapshot(h)
	for _, v := range []float64{1.5, 1.5, 3, 7, 100} {
		h.Observe(v)
	}
	d := Snapshot(h).Since(before)
	// Five observations since before: 1.5, 1.5, 3, 7, 100. The median
	// (3rd) is in (2, 4]; the 80th percentile (4th) in (4, 8]; the last
	// beyond every bucket.
	if d.Count != 5 || d.Sum != 113 {
		t.Fatalf("since: count %d sum %v", d.Count, d.Sum)
	}
	for q, want := range map[float64]float64{0.2: 2, 0.5: 4, 0.8: 8, 1: math.Inf(1)} {
		if got := d.Quantile(q); got != want {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
}
