package kafka

import (
	"fmt"
	"sync"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Watermarks per partition (Flink's watermark push-down into the Kafka
// source). When the planner hands the table's WATERMARK strategy to the
// scan (connectors.WatermarkPushDown), each source subtask keeps, for
// each of its partitions, the largest watermark its rows gave, and emits
// the minimum over its partitions after each chunk. Rows of a partition
// read behind the others are then not late merely because another
// partition ran ahead.
//
// Idleness ('table.exec.source.idle-timeout' > 0): a partition without a
// record for that long stops holding the watermark back, until its next
// record. A subtask whose partitions are all idle (or that has none) is
// idle: the runtime has no idle status, so such a subtask emits the
// minimum over the subtasks that are not idle, which the subtasks publish
// in a job-scoped table (sharedWatermarks). The downstream minimum is
// then what Flink's, which ignores idle inputs, would be. When every
// subtask is idle the watermark stays where it is.

var _ connectors.WatermarkPushDown = (*scan)(nil)

// PushWatermark implements connectors.WatermarkPushDown.
func (s *scan) PushWatermark(wm func(types.Row) (int64, bool, error), idle time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wm, s.idle = wm, idle
	return true
}

// sharedWatermarks is where the subtasks of one source publish their
// watermarks, for idle subtasks to follow the others.
type sharedWatermarks struct {
	mu   sync.Mutex
	wm   []int64 // per subtask: the minimum over its active partitions
	idle []bool
}

func (w *sharedWatermarks) publish(subtask int, wm int64, idle bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wm[subtask], w.idle[subtask] = wm, idle
}

// minAll returns the minimum over every subtask, MinWatermark when none
// has an opinion yet.
func (w *sharedWatermarks) minAll() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := int64(dataflow.MaxWatermark)
	for _, x := range w.wm {
		m = min(m, x)
	}
	if m == dataflow.MaxWatermark {
		return dataflow.MinWatermark
	}
	return m
}

// active returns the minimum watermark of the subtasks that are not
// idle, and false when all are.
func (w *sharedWatermarks) active() (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m, any := int64(dataflow.MaxWatermark), false
	for i := range w.wm {
		if !w.idle[i] {
			m, any = min(m, w.wm[i]), true
		}
	}
	return m, any
}

// watermarks is the per-partition watermark state of one Run.
type watermarks struct {
	fn       func(types.Row) (int64, bool, error)
	idle     time.Duration
	split    []int64     // per split: the largest watermark its rows gave
	lastSeen []time.Time // per split: when it last had a record
	done     []bool      // per split: read to its bounded end
	shared   *sharedWatermarks
	subtask  int
}

func newWatermarks(s *Source) *watermarks {
	if s.wm == nil {
		return nil
	}
	w := &watermarks{fn: s.wm, idle: s.idle, split: make([]int64, len(s.splits)),
		lastSeen: make([]time.Time, len(s.splits)), done: make([]bool, len(s.splits)), shared: s.sharedWM, subtask: s.subtask}
	now := time.Now()
	for i, sp := range s.splits {
		w.split[i], w.lastSeen[i] = dataflow.MinWatermark, now
		w.done[i] = sp.stop >= 0 && s.start[i] >= sp.stop // bounded and empty
	}
	return w
}

// seen notes that split i had records at now; done, that it reached its
// bounded end (Flink drops finished splits from the watermark).
func (w *watermarks) seen(i int, now time.Time, records, done bool) {
	if records {
		w.lastSeen[i] = now
	}
	w.done[i] = done
}

// observe takes the rows of split i just decoded.
func (w *watermarks) observe(i int, rows []dyntable.Change, now time.Time) error {
	for _, ch := range rows {
		ts, ok, err := w.fn(ch.Row)
		if err != nil {
			return fmt.Errorf("kafka source: watermark: %w", err)
		}
		if ok && ts > w.split[i] {
			w.split[i] = ts
		}
	}
	return nil
}

// current is the watermark the subtask may emit now.
//
// The minimum over its active partitions (neither idle nor finished).
// When none is active, nothing of this subtask holds the watermark back
// beyond the largest it has seen, so it follows the subtasks that are
// active, or, when every subtask is idle, the smallest of what they have
// seen. (Flink ends up in the same place: an input whose splits are all
// idle stops counting downstream.)
func (w *watermarks) current(now time.Time) int64 {
	m, active := int64(dataflow.MaxWatermark), false
	own := int64(dataflow.MinWatermark)
	for i := range w.split {
		own = max(own, w.split[i])
		if w.done[i] || (w.idle > 0 && now.Sub(w.lastSeen[i]) >= w.idle) {
			continue // finished or idle: it holds nothing back
		}
		m, active = min(m, w.split[i]), true
	}
	if !active {
		m = own
		if own == dataflow.MinWatermark {
			// No partition (or none that ever had a row): no opinion,
			// rather than holding every other subtask at the start.
			m = dataflow.MaxWatermark
		}
	}
	if w.shared == nil {
		if m == dataflow.MaxWatermark {
			return dataflow.MinWatermark
		}
		return m
	}
	w.shared.publish(w.subtask, m, !active)
	if active {
		return m
	}
	if a, ok := w.shared.active(); ok {
		return a
	}
	return w.shared.minAll()
}
