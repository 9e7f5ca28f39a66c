package kafka

import (
	"context"
	"errors"
	"fmt"

	kafkago "github.com/segmentio/kafka-go"
)

// Where a subtask starts and ends in each partition: the startup and
// bounded modes resolved against the brokers.

// resolve returns, per split, the offset spec names.
func (s *Source) resolve(ctx context.Context, spec offsetSpec, key string) ([]int64, error) {
	out := make([]int64, len(s.splits))
	switch spec.mode {
	case modeEarliest:
		return s.listOffsets(ctx, kafkago.FirstOffset)
	case modeLatest:
		return s.listOffsets(ctx, kafkago.LastOffset)
	case modeTimestamp:
		return s.listOffsets(ctx, spec.millis)
	case modeSpecific:
		// Partitions the option does not name: the earliest offset (as
		// 'scan.startup'); for an end, the latest.
		def := kafkago.FirstOffset
		if key == "scan.bounded.mode" {
			def = kafkago.LastOffset
		}
		defs, err := s.listOffsets(ctx, def)
		if err != nil {
			return nil, err
		}
		for i, sp := range s.splits {
			if off, ok := spec.specific[sp.partition]; ok {
				out[i] = off
			} else {
				out[i] = defs[i]
			}
		}
		return out, nil
	case modeGroup:
		return s.groupOffsets(ctx)
	}
	return nil, fmt.Errorf("kafka source: option '%s': mode '%s' cannot be resolved", key, spec.mode)
}

// listOffsets asks the brokers for each split's first offset
// (kafkago.FirstOffset), end (kafkago.LastOffset: the last stable offset
// under read_committed), or first offset at or after a time in ms (the
// end when there is none).
func (s *Source) listOffsets(ctx context.Context, ts int64) ([]int64, error) {
	req := &kafkago.ListOffsetsRequest{Topics: map[string][]kafkago.OffsetRequest{}, IsolationLevel: kafkago.IsolationLevel(s.sc.cfg.isolation)}
	for _, sp := range s.splits {
		req.Topics[sp.topic] = append(req.Topics[sp.topic], kafkago.OffsetRequest{Partition: int(sp.partition), Timestamp: ts})
	}
	res, err := s.client.ListOffsets(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("kafka source: listing offsets of %s: %w", s.topicsText(), err)
	}
	got := map[topicPartition]kafkago.PartitionOffsets{}
	for t, ps := range res.Topics {
		for _, p := range ps {
			got[topicPartition{t, int32(p.Partition)}] = p
		}
	}
	out := make([]int64, len(s.splits))
	var atEnd []int
	for i, sp := range s.splits {
		p, ok := got[topicPartition{sp.topic, sp.partition}]
		if !ok {
			return nil, fmt.Errorf("kafka source: no offsets listed for topic '%s' partition %d", sp.topic, sp.partition)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("kafka source: listing offsets of topic '%s' partition %d: %w", sp.topic, sp.partition, p.Error)
		}
		switch ts {
		case kafkago.FirstOffset:
			out[i] = p.FirstOffset
		case kafkago.LastOffset:
			out[i] = p.LastOffset
		default:
			out[i] = -1
			for off := range p.Offsets {
				out[i] = off
			}
			if out[i] < 0 {
				atEnd = append(atEnd, i) // no record at or after ts yet
			}
		}
	}
	if len(atEnd) > 0 {
		ends, err := s.listOffsets(ctx, kafkago.LastOffset)
		if err != nil {
			return nil, err
		}
		for _, i := range atEnd {
			out[i] = ends[i]
		}
	}
	return out, nil
}

// groupOffsets reads the group's committed offsets; a partition without
// one follows 'properties.auto.offset.reset'.
func (s *Source) groupOffsets(ctx context.Context) ([]int64, error) {
	cfg := s.sc.cfg
	req := &kafkago.OffsetFetchRequest{GroupID: cfg.group, Topics: map[string][]int{}}
	for _, sp := range s.splits {
		req.Topics[sp.topic] = append(req.Topics[sp.topic], int(sp.partition))
	}
	res, err := s.client.OffsetFetch(ctx, req)
	if err == nil && res.Error != nil {
		err = res.Error
	}
	got := map[topicPartition]int64{}
	if errors.Is(err, kafkago.GroupIdNotFound) {
		// A group that never committed (some brokers say so): no offsets.
		err, res = nil, &kafkago.OffsetFetchResponse{}
	}
	if err != nil {
		return nil, fmt.Errorf("kafka source: reading the offsets of group '%s': %w", cfg.group, err)
	}
	for t, ps := range res.Topics {
		for _, p := range ps {
			if p.Error != nil {
				return nil, fmt.Errorf("kafka source: reading the offset of group '%s' for topic '%s' partition %d: %w", cfg.group, t, p.Partition, p.Error)
			}
			got[topicPartition{t, int32(p.Partition)}] = p.CommittedOffset
		}
	}
	out := make([]int64, len(s.splits))
	var missing []int
	for i, sp := range s.splits {
		off, ok := got[topicPartition{sp.topic, sp.partition}]
		if !ok || off < 0 {
			missing = append(missing, i)
			continue
		}
		out[i] = off
	}
	if len(missing) == 0 {
		return out, nil
	}
	var def []int64
	switch cfg.reset {
	case "earliest":
		def, err = s.listOffsets(ctx, kafkago.FirstOffset)
	case "latest":
		def, err = s.listOffsets(ctx, kafkago.LastOffset)
	default:
		sp := s.splits[missing[0]]
		return nil, fmt.Errorf("kafka source: group '%s' has no committed offset for topic '%s' partition %d; set 'properties.auto.offset.reset' to 'earliest' or 'latest', or choose another 'scan.startup.mode'",
			cfg.group, sp.topic, sp.partition)
	}
	if err != nil {
		return nil, err
	}
	for _, i := range missing {
		out[i] = def[i]
	}
	return out, nil
}

// resolveStarts fills in the start offsets a restore did not give.
func (s *Source) resolveStarts(ctx context.Context) error {
	var need, earliest bool
	for _, st := range s.start {
		need = need || st == -1
		earliest = earliest || st == -2
	}
	rctx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if need {
		starts, err := s.resolve(rctx, s.sc.cfg.startup, "scan.startup.mode")
		if err != nil {
			return err
		}
		for i := range s.start {
			if s.start[i] == -1 {
				s.start[i] = starts[i]
			}
		}
	}
	if earliest {
		firsts, err := s.listOffsets(rctx, kafkago.FirstOffset)
		if err != nil {
			return err
		}
		for i := range s.start {
			if s.start[i] == -2 {
				s.start[i] = firsts[i]
			}
		}
	}
	for i := range s.splits {
		if stop := s.splits[i].stop; stop >= 0 && s.start[i] > stop {
			// Flink: a start after the end reads nothing.
			s.start[i] = stop
		}
	}
	return nil
}
