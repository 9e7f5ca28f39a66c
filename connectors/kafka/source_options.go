package kafka

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/internal/metrics"
)

// sourceOptionDefs are the source's options, Flink's names.
var sourceOptionDefs = []connectors.OptionDef{
	{Key: "topic", Description: "the topic to read, or several separated by ';' (this or 'topic-pattern')"},
	{Key: "topic-pattern", Description: "a regular expression: every topic whose whole name matches is read"},
	{Key: "properties.bootstrap.servers", Required: true, Description: "comma-separated host:port of Kafka brokers"},
	{Key: "properties.group.id", Description: "the consumer group: 'group-offsets' starts from its offsets; checkpoints commit to it (monitoring only)"},
	{Key: "properties.isolation.level", Kind: config.Enum, Enum: []string{"read_committed", "read_uncommitted"}, Default: "read_committed", Description: "'read_committed' hides records of aborted and open transactions; 'read_uncommitted' reads everything"},
	{Key: "properties.auto.offset.reset", Kind: config.Enum, Enum: []string{"earliest", "latest", "none"}, Default: "none", Description: "where 'group-offsets' starts a partition the group has no offset for: 'earliest', 'latest' or 'none' (fail)"},
	{Key: "properties.#", Prefix: true, Description: "other Kafka client properties are accepted and ignored"},
	{Key: "scan.startup.mode", Default: "group-offsets", Description: "'earliest-offset', 'latest-offset', 'group-offsets', 'timestamp' or 'specific-offsets'"},
	{Key: "scan.startup.timestamp-millis", Description: "with 'timestamp': start at the first record at or after this time (ms since the epoch)"},
	{Key: "scan.startup.specific-offsets", Description: "with 'specific-offsets': 'partition:0,offset:42;partition:1,offset:300'; other partitions start at the earliest offset"},
	{Key: "scan.bounded.mode", Default: "unbounded", Description: "'unbounded', or where the source ends: 'latest-offset' (the end when the job starts), 'group-offsets', 'timestamp' or 'specific-offsets'"},
	{Key: "scan.bounded.timestamp-millis", Description: "with bounded mode 'timestamp': end before the first record at or after this time"},
	{Key: "scan.bounded.specific-offsets", Description: "with bounded mode 'specific-offsets': 'partition:0,offset:42;...'; end before these offsets"},
	{Key: "format", Description: "the value format: 'json', 'csv', 'raw' or 'debezium-json' (or 'value.format')"},
	{Key: "value.format", Description: "the value format, as 'format'"},
	{Key: "scan.parallelism", Kind: config.Int, Min: 1, Description: "the source's parallelism; partition i of a topic goes to subtask i mod parallelism"},
	{Key: "source.parallelism", Kind: config.Int, Min: 1, Description: "the source's parallelism, as 'scan.parallelism'"},
}

// Startup and bounded modes.
const (
	modeEarliest  = "earliest-offset"
	modeLatest    = "latest-offset"
	modeGroup     = "group-offsets"
	modeTimestamp = "timestamp"
	modeSpecific  = "specific-offsets"
	modeUnbounded = "unbounded"
)

// offsetSpec says where to start (or end) in each partition.
type offsetSpec struct {
	mode     string
	millis   int64           // modeTimestamp
	specific map[int32]int64 // modeSpecific
}

// sourceConfig is the validated source options of a table.
type sourceConfig struct {
	servers   []string
	topics    []string       // explicit topics, in the option's order
	pattern   *regexp.Regexp // or a pattern
	group     string
	isolation int8
	reset     string // properties.auto.offset.reset
	startup   offsetSpec
	bounded   offsetSpec // mode "" when unbounded
	format    string
	ignore    bool // <format>.ignore-parse-errors
	parallel  int
}

func parseSourceConfig(o map[string]string) (*sourceConfig, error) {
	c := &sourceConfig{}
	for _, s := range strings.Split(o["properties.bootstrap.servers"], ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.servers = append(c.servers, s)
		}
	}
	if len(c.servers) == 0 {
		return nil, fmt.Errorf("option 'properties.bootstrap.servers' names no broker")
	}
	topic, hasTopic := o["topic"]
	pattern, hasPattern := o["topic-pattern"]
	switch {
	case hasTopic && hasPattern:
		return nil, fmt.Errorf("options 'topic' and 'topic-pattern' cannot both be set")
	case hasTopic:
		seen := map[string]bool{}
		for _, t := range strings.Split(topic, ";") {
			if t = strings.TrimSpace(t); t != "" && !seen[t] {
				seen[t] = true
				c.topics = append(c.topics, t)
			}
		}
		if len(c.topics) == 0 {
			return nil, fmt.Errorf("option 'topic' names no topic")
		}
	case hasPattern:
		re, err := regexp.Compile("^(?:" + pattern + ")$")
		if err != nil {
			return nil, fmt.Errorf("option 'topic-pattern': %v", err)
		}
		c.pattern = re
	default:
		return nil, fmt.Errorf("connector 'kafka' requires option 'topic' or 'topic-pattern' to read a table")
	}
	c.group = o["properties.group.id"]
	switch v := connectors.Option(o, "properties.isolation.level", "read_committed"); v {
	case "read_committed":
		c.isolation = isoReadCommitted
	case "read_uncommitted":
		c.isolation = isoReadUncommitted
	default:
		return nil, fmt.Errorf("option 'properties.isolation.level' must be 'read_committed' or 'read_uncommitted', got '%s'", v)
	}
	switch c.reset = connectors.Option(o, "properties.auto.offset.reset", "none"); c.reset {
	case "earliest", "latest", "none":
	default:
		return nil, fmt.Errorf("option 'properties.auto.offset.reset' must be 'earliest', 'latest' or 'none', got '%s'", c.reset)
	}
	var err error
	if c.startup, err = parseOffsetSpec(o, "scan.startup", modeGroup, false); err != nil {
		return nil, err
	}
	if c.bounded, err = parseOffsetSpec(o, "scan.bounded", modeUnbounded, true); err != nil {
		return nil, err
	}
	if c.group == "" && (c.startup.mode == modeGroup || c.bounded.mode == modeGroup) {
		// Wrapped with ErrWriteOnly: a table declared only to be written
		// (a sink) needs no consumer group; reading it reports this.
		return nil, fmt.Errorf("option 'properties.group.id' is required with 'group-offsets' (the default 'scan.startup.mode'); or set 'scan.startup.mode' = 'earliest-offset' (%w)", connectors.ErrWriteOnly)
	}
	f, hasF := o["format"]
	vf, hasVF := o["value.format"]
	switch {
	case hasF && hasVF && f != vf:
		return nil, fmt.Errorf("options 'format' ('%s') and 'value.format' ('%s') disagree", f, vf)
	case hasVF:
		f = vf
	case !hasF:
		return nil, fmt.Errorf("connector 'kafka' requires option 'format' ('json', 'csv' or 'debezium-json') to read a table")
	}
	c.format = f
	for _, key := range []string{"scan.parallelism", "source.parallelism"} {
		if _, ok := o[key]; ok {
			p, err := connectors.Int(o, key, 0, 1)
			if err != nil {
				return nil, err
			}
			if c.parallel != 0 && c.parallel != p {
				return nil, fmt.Errorf("options 'scan.parallelism' and 'source.parallelism' disagree")
			}
			c.parallel = p
		}
	}
	return c, nil
}

// parseOffsetSpec reads '<prefix>.mode' and its companion options.
func parseOffsetSpec(o map[string]string, prefix, def string, bounded bool) (offsetSpec, error) {
	key := prefix + ".mode"
	s := offsetSpec{mode: connectors.Option(o, key, def)}
	tsKey, specKey := prefix+".timestamp-millis", prefix+".specific-offsets"
	switch s.mode {
	case modeUnbounded:
		if !bounded {
			return s, fmt.Errorf("option '%s' must be 'earliest-offset', 'latest-offset', 'group-offsets', 'timestamp' or 'specific-offsets', got '%s'", key, s.mode)
		}
		s.mode = ""
	case modeEarliest:
		if bounded {
			return s, fmt.Errorf("option '%s' must be 'unbounded', 'latest-offset', 'group-offsets', 'timestamp' or 'specific-offsets', got '%s'", key, s.mode)
		}
	case modeLatest, modeGroup:
	case modeTimestamp:
		v, ok := o[tsKey]
		if !ok {
			return s, fmt.Errorf("option '%s' is required when '%s' is 'timestamp'", tsKey, key)
		}
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			return s, fmt.Errorf("option '%s' must be milliseconds since the epoch, got '%s'", tsKey, v)
		}
		s.millis = ms
	case modeSpecific:
		v, ok := o[specKey]
		if !ok {
			return s, fmt.Errorf("option '%s' is required when '%s' is 'specific-offsets'", specKey, key)
		}
		m, err := parseSpecificOffsets(specKey, v)
		if err != nil {
			return s, err
		}
		s.specific = m
	default:
		if bounded {
			return s, fmt.Errorf("option '%s' must be 'unbounded', 'latest-offset', 'group-offsets', 'timestamp' or 'specific-offsets', got '%s'", key, s.mode)
		}
		return s, fmt.Errorf("option '%s' must be 'earliest-offset', 'latest-offset', 'group-offsets', 'timestamp' or 'specific-offsets', got '%s'", key, s.mode)
	}
	if _, ok := o[tsKey]; ok && s.mode != modeTimestamp {
		return s, fmt.Errorf("option '%s' applies only when '%s' is 'timestamp'", tsKey, key)
	}
	if _, ok := o[specKey]; ok && s.mode != modeSpecific {
		return s, fmt.Errorf("option '%s' applies only when '%s' is 'specific-offsets'", specKey, key)
	}
	return s, nil
}

// parseSpecificOffsets reads Flink's 'partition:0,offset:42;partition:1,offset:300'.
func parseSpecificOffsets(key, v string) (map[int32]int64, error) {
	m := map[int32]int64{}
	bad := func(part string) error {
		return fmt.Errorf("option '%s': '%s' is not 'partition:<n>,offset:<n>' (e.g. 'partition:0,offset:42;partition:1,offset:300')", key, part)
	}
	for _, part := range strings.Split(v, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, off, ok := strings.Cut(part, ",")
		if !ok {
			return nil, bad(part)
		}
		ps, ok1 := strings.CutPrefix(strings.TrimSpace(p), "partition:")
		os, ok2 := strings.CutPrefix(strings.TrimSpace(off), "offset:")
		if !ok1 || !ok2 {
			return nil, bad(part)
		}
		pn, err1 := strconv.ParseInt(strings.TrimSpace(ps), 10, 32)
		on, err2 := strconv.ParseInt(strings.TrimSpace(os), 10, 64)
		if err1 != nil || err2 != nil || pn < 0 || on < 0 {
			return nil, bad(part)
		}
		if _, dup := m[int32(pn)]; dup {
			return nil, fmt.Errorf("option '%s' names partition %d twice", key, pn)
		}
		m[int32(pn)] = on
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("option '%s' names no partition", key)
	}
	return m, nil
}

// topicPartition names a partition.
type topicPartition struct {
	topic     string
	partition int32
}

// assign returns the partitions of subtask of parallelism, sorted: the
// i-th topic of 'topic' (or, for a pattern, a hash of the topic's name)
// shifts its partitions so that several single-partition topics spread
// over the subtasks; partition p of a topic with shift k goes to subtask
// (k + p) mod parallelism. With one topic that is Flink's "partition i to
// subtask i mod p". The assignment depends only on (topic, partition), so
// partitions added later never move existing ones.
func (c *sourceConfig) assign(parts []topicPartition, subtask, parallelism int) []topicPartition {
	shift := map[string]int{}
	for i, t := range c.topics {
		shift[t] = i
	}
	var out []topicPartition
	for _, tp := range parts {
		k, ok := shift[tp.topic]
		if !ok {
			k = int(fnv32(tp.topic) % uint32(parallelism))
		}
		if (k+int(tp.partition))%parallelism == subtask {
			out = append(out, tp)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].topic != out[j].topic {
			return out[i].topic < out[j].topic
		}
		return out[i].partition < out[j].partition
	})
	return out
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// skippedRecords counts malformed records skipped with
// '<format>.ignore-parse-errors', per topic (exported by /metrics).
var skippedRecords = metrics.KafkaSkippedRecords
