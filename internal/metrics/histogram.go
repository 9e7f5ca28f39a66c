package metrics

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// HistogramSnapshot is a histogram's observations at one moment: what
// tests and benchmarks read instead of keeping samples of their own.
type HistogramSnapshot struct {
	Count  uint64
	Sum    float64
	Bounds []float64 // upper bounds of the buckets, ascending
	Counts []uint64  // cumulative count of each bucket
}

// Snapshot reads h.
func Snapshot(h prometheus.Histogram) HistogramSnapshot {
	var m dto.Metric
	if err := h.Write(&m); err != nil || m.Histogram == nil {
		panic("metrics: a histogram that cannot be read") // a programming error
	}
	s := HistogramSnapshot{Count: m.Histogram.GetSampleCount(), Sum: m.Histogram.GetSampleSum()}
	for _, b := range m.Histogram.Bucket {
		s.Bounds = append(s.Bounds, b.GetUpperBound())
		s.Counts = append(s.Counts, b.GetCumulativeCount())
	}
	return s
}

// Since returns the observations made after prev, a snapshot of the same
// histogram.
func (s HistogramSnapshot) Since(prev HistogramSnapshot) HistogramSnapshot {
	d := HistogramSnapshot{Count: s.Count - prev.Count, Sum: s.Sum - prev.Sum, Bounds: s.Bounds}
	for i := range s.Counts {
		c := s.Counts[i]
		if i < len(prev.Counts) {
			c -= prev.Counts[i]
		}
		d.Counts = append(d.Counts, c)
	}
	return d
}

// Quantile estimates the q-quantile (0 < q <= 1) as the upper bound of
// the bucket that holds it; +Inf past the last bucket, NaN without
// observations.
func (s HistogramSnapshot) Quantile(q float64) float64 {
	if s.Count == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(s.Count)))
	for i, c := range s.Counts {
		if c >= rank {
			return s.Bounds[i]
		}
	}
	return math.Inf(1)
}
