package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/streamsql/streamsql/connectors/kafka"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/internal/metrics"
)

// stageSource reads a task's partition of one exchange's topic,
// read_committed, through the Kafka source's fetch path
// (kafka.ExchangeReader). It keeps the watermark of each upstream task
// and emits their minimum; it ends, and so the runtime emits the final
// watermark and end-of-input, once every upstream task has sent
// end-of-input.
//
// Its position, which the task's checkpoints keep, is the next offset to
// read together with each upstream task's watermark and end: the markers
// before that offset are not read again after a restore.
type stageSource struct {
	dataflow.BaseSource
	servers   []string
	topic     string
	partition int
	log       *slog.Logger

	pos sourcePosition
}

// sourcePosition is a stage source's position, saved as JSON.
type sourcePosition struct {
	// Offset is the next offset to read; -1 before the first read.
	Offset int64   `json:"offset"`
	WM     []int64 `json:"wm"`
	Idle   []bool  `json:"idle"`
	Ended  []bool  `json:"ended"`
}

// sourceChunkRows is the most rows a chunk carries.
const sourceChunkRows = 1024

func newStageSource(servers []string, x *Exchange, partition int) *stageSource {
	s := &stageSource{servers: servers, topic: x.Topic, partition: partition,
		pos: sourcePosition{Offset: -1, WM: make([]int64, x.Upstream), Idle: make([]bool, x.Upstream), Ended: make([]bool, x.Upstream)}}
	for i := range s.pos.WM {
		s.pos.WM[i] = dataflow.MinWatermark
	}
	return s
}

func (s *stageSource) Open(ctx *dataflow.OpContext) error {
	s.log = ctx.Logger()
	return nil
}

func (s *stageSource) SnapshotPosition(int64) ([]byte, error) { return json.Marshal(s.pos) }

func (s *stageSource) RestorePosition(b []byte) error {
	var p sourcePosition
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("cluster: malformed position of %s/%d: %v", s.topic, s.partition, err)
	}
	if len(p.WM) != len(s.pos.WM) || len(p.Idle) != len(s.pos.Idle) || len(p.Ended) != len(s.pos.Ended) {
		return fmt.Errorf("cluster: the position of %s/%d counts %d upstream tasks, the job %d: did cluster.partitions change?",
			s.topic, s.partition, len(p.WM), len(s.pos.WM))
	}
	s.pos = p
	return nil
}

// done reports whether every upstream task has ended.
func (s *stageSource) done() bool {
	for _, e := range s.pos.Ended {
		if !e {
			return false
		}
	}
	return true
}

// watermark is the minimum watermark over the upstream tasks that are
// neither idle nor ended; when all that have not ended are idle, the
// largest of their watermarks, as the runtime combines its senders'
// (dataflow's node.advanceWatermark).
func (s *stageSource) watermark() int64 {
	m, active, maxIdle := int64(dataflow.MaxWatermark), false, int64(dataflow.MinWatermark)
	for i, w := range s.pos.WM {
		switch {
		case s.pos.Ended[i]:
		case s.pos.Idle[i]:
			maxIdle = max(maxIdle, w)
		default:
			m, active = min(m, w), true
		}
	}
	if !active {
		return maxIdle
	}
	return m
}

func (s *stageSource) Run(ctx context.Context, out dataflow.SourceOutput) error {
	if s.done() {
		return nil
	}
	r := kafka.NewExchangeReader(s.servers, s.topic, s.partition, s.pos.Offset, s.log)
	defer r.Close()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan kafka.ExchangeBatch, 1)
	rerr := make(chan error, 1)
	go func() { rerr <- r.Run(rctx, batches) }()
	stop := func() {
		cancel()
		for b := range batches {
			r.Recycle(&b)
		}
	}
	upstream := len(s.pos.WM)
	var chunk *dyntable.Chunk
	// flush emits the rows decoded so far, with the position just after
	// the last of them (set by the caller).
	flush := func() error {
		if chunk == nil {
			return nil
		}
		c := chunk
		chunk = nil
		return out.Emit(c)
	}
	for {
		select {
		case e := <-out.Control():
			if err := out.Handle(e); err != nil {
				stop()
				return err
			}
		case b, ok := <-batches:
			if !ok {
				if err := <-rerr; err != nil && ctx.Err() == nil {
					return err
				}
				return ctx.Err()
			}
			err := func() error {
				defer r.Recycle(&b)
				now := time.Now().UnixMilli()
				for _, rec := range b.Records {
					d, err := decodeRecord(rec.Value, upstream)
					if err != nil {
						return fmt.Errorf("cluster: topic '%s' partition %d offset %d: %w", s.topic, s.partition, rec.Offset, err)
					}
					if d.typ == recRow {
						metrics.StageExchangeLatency.Observe(float64(max(now-rec.Time, 0)) / 1e3)
						if chunk == nil {
							chunk = &dyntable.Chunk{Changes: make([]dyntable.Change, 0, 64)}
						}
						chunk.Changes = append(chunk.Changes, d.change)
						s.pos.Offset = rec.Offset + 1
						if len(chunk.Changes) >= sourceChunkRows {
							if err := flush(); err != nil {
								return err
							}
						}
						continue
					}
					if err := flush(); err != nil {
						return err
					}
					s.pos.Offset = rec.Offset + 1
					switch d.typ {
					case recWatermark:
						// A restarted upstream task may repeat older
						// watermarks: the newest counts.
						s.pos.WM[d.task] = max(s.pos.WM[d.task], d.wm)
						s.pos.Idle[d.task] = false
					case recIdle:
						s.pos.Idle[d.task] = true
					case recEnd:
						s.pos.Ended[d.task] = true
					}
					if s.done() {
						return nil
					}
					if err := out.EmitWatermark(s.watermark()); err != nil {
						return err
					}
				}
				s.pos.Offset = max(s.pos.Offset, b.Next)
				return flush()
			}()
			if err != nil {
				stop()
				return err
			}
			if s.done() {
				stop()
				return nil
			}
		}
	}
}
