package kafka

import (
	"context"
	"slices"
	"time"

	kafkago "github.com/segmentio/kafka-go"
)

// Committing offsets to the consumer group when a checkpoint completes,
// for monitoring (Flink's KafkaSource does the same). Restores read the
// checkpoint, never the group.

// savedPosition is the position stored in checkpoint id.
type savedPosition struct {
	id      int64
	offsets []int64
}

// maxSavedPositions bounds the positions of checkpoints that never
// complete (declined, expired) kept while waiting.
const maxSavedPositions = 16

// positionSaved keeps the offsets checkpoint id stores, to commit them
// when it completes. s.mu is held.
func (s *Source) positionSaved(id int64) {
	if s.sc.cfg.group == "" {
		return
	}
	if len(s.saved) == maxSavedPositions {
		s.saved = s.saved[1:]
	}
	s.saved = append(s.saved, savedPosition{id: id, offsets: append([]int64(nil), s.pos...)})
}

// NotifyCheckpointComplete implements dataflow.Source: the offsets stored
// in checkpoint id are handed to commitLoop, which commits them to
// 'properties.group.id' (Flink's KafkaSource does the same, for
// monitoring: a restore reads the checkpoint, not the group). It runs on
// the source's goroutine and never blocks.
func (s *Source) NotifyCheckpointComplete(id int64) error {
	if s.sc.cfg.group == "" {
		return nil
	}
	s.mu.Lock()
	for len(s.saved) > 0 && s.saved[0].id <= id {
		if s.saved[0].id == id {
			s.toCommit = s.saved[0].offsets
		}
		s.saved = s.saved[1:]
	}
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return nil
}

// commitLoop commits completed checkpoints' offsets until ctx ends. A
// failed commit is logged and left to the next checkpoint.
func (s *Source) commitLoop(ctx context.Context) {
	var last []int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		}
		s.mu.Lock()
		offs := s.toCommit
		s.mu.Unlock()
		if offs == nil || slices.Equal(offs, last) {
			continue
		}
		req := &kafkago.OffsetCommitRequest{GroupID: s.sc.cfg.group, GenerationID: -1, Topics: map[string][]kafkago.OffsetCommit{}}
		for i, sp := range s.splits {
			if offs[i] >= 0 {
				req.Topics[sp.topic] = append(req.Topics[sp.topic], kafkago.OffsetCommit{Partition: int(sp.partition), Offset: offs[i]})
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		res, err := s.client.OffsetCommit(cctx, req)
		cancel()
		if err == nil {
		check:
			for _, ps := range res.Topics {
				for _, p := range ps {
					if p.Error != nil {
						err = p.Error
						break check
					}
				}
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("kafka source: committing offsets to the consumer group failed (monitoring only; the checkpoint holds the position)",
					"group", s.sc.cfg.group, "error", err)
			}
			continue
		}
		last = offs
	}
}
