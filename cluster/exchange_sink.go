package cluster

import (
	"context"

	"github.com/streamsql/streamsql/connectors/kafka"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
)

// stageSink writes a task's output of one exchange into the exchange's
// topic, exactly once: the Kafka sink's two-phase-commit handler
// (kafka.ExchangeSink in a twophase.Operator) pre-commits a transaction
// at each checkpoint and commits it when the checkpoint completes, so
// the next stage, reading read_committed, sees the rows of completed
// checkpoints only.
//
// Watermarks and end-of-input go into the same transactions as marker
// records, to every partition. A watermark is written lazily, before
// the next rows, before a pre-commit and at the end, so that a stream of
// watermarks costs one marker per partition per chunk at most, and the
// markers keep their order with the rows.
type stageSink struct {
	*twophase.Operator
	h    *kafka.ExchangeSink
	ctx  context.Context
	task int // this task's partition: the upstream task number downstream

	wm, written int64 // the input watermark, and the last one written
}

func newStageSink(h *kafka.ExchangeSink, name string, task int) *stageSink {
	return &stageSink{Operator: twophase.NewOperator(name, h, twophase.DefaultOptions()), h: h, task: task,
		wm: dataflow.MinWatermark, written: dataflow.MinWatermark}
}

func (s *stageSink) Open(oc *dataflow.OpContext) error {
	s.ctx = oc.Context()
	return s.Operator.Open(oc)
}

func (s *stageSink) ProcessChunk(input int, c *dyntable.Chunk, out dataflow.Collector) error {
	if err := s.writeWatermark(); err != nil {
		return err
	}
	return s.Operator.ProcessChunk(input, c, out)
}

func (s *stageSink) ProcessWatermark(wm int64, _ dataflow.Collector) error {
	s.wm = wm
	return nil
}

// ProcessIdle tells downstream that this task is idle, or, with a
// watermark, that it is active again.
func (s *stageSink) ProcessIdle(idle bool, _ dataflow.Collector) error {
	if !idle {
		s.written = dataflow.MinWatermark // write it again: it marks the task active
		return s.writeWatermark()
	}
	if err := s.writeWatermark(); err != nil {
		return err
	}
	return s.mark(encodeMarker(recIdle, s.task, 0))
}

func (s *stageSink) SnapshotState(b dataflow.Barrier) error {
	if err := s.writeWatermark(); err != nil {
		return err
	}
	return s.Operator.SnapshotState(b)
}

// Finish writes the final watermark and this task's end-of-input, then
// commits what is left.
func (s *stageSink) Finish(out dataflow.Collector) error {
	if err := s.writeWatermark(); err != nil {
		return err
	}
	if err := s.mark(encodeMarker(recEnd, s.task, 0)); err != nil {
		return err
	}
	return s.Operator.Finish(out)
}

// writeWatermark writes the watermark if it advanced since it was last
// written.
func (s *stageSink) writeWatermark() error {
	if s.wm <= s.written {
		return nil
	}
	if err := s.mark(encodeMarker(recWatermark, s.task, s.wm)); err != nil {
		return err
	}
	s.written = s.wm
	return nil
}

// mark writes a marker into every partition, in the open transaction.
func (s *stageSink) mark(v []byte) error {
	txn, err := s.Operator.Transaction()
	if err != nil {
		return err
	}
	for p := range s.h.Partitions() {
		if err := s.h.WriteRecord(s.ctx, txn, p, nil, v); err != nil {
			return err
		}
	}
	return nil
}
