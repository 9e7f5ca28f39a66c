package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// The Kafka source reads topic partitions with kafka-go's low-level API:
// Fetch requests sent through Transport.RoundTrip at the configured
// isolation level, the filtering of aborted transactions done here (see
// fetcher.readPartition), because kafka-go's Reader returns aborted
// records and transaction markers even under ReadCommitted.
//
//	Open: metadata → this subtask's partitions (i mod p) → end offsets if bounded
//	Run:  start offsets (restored, or by 'scan.startup.mode')
//	      fetcher goroutine ──fetchResult──▶ decode into chunks ──▶ Emit
//	      (one round of fetches prefetched while the previous decodes)
//
// Positions. A subtask's position is the next offset of each of its
// partitions after the last row handed to Emit, records of aborted
// transactions and control records passed over included. It is what a
// checkpoint stores and a restore resumes from, so a restored job reads
// no record twice and skips none. Offsets committed to the consumer group
// are for monitoring only; restoring never reads them.

// sourceChunkRows is the most changes a chunk carries.
const sourceChunkRows = 1024

// openTimeout bounds the metadata and offset look-ups of Open and Run.
const openTimeout = 30 * time.Second

type scan struct {
	t      *connectors.Table
	cfg    *sourceConfig
	newDec func() valueDecoder
	cmode  dyntable.ChangelogMode
	// The pushed-down watermark strategy (source_watermark.go), set by
	// the planner before subtasks are created; wm is nil without one. A
	// session's scans outlive jobs, so mu guards them against a later
	// plan's push while a job creates its subtasks.
	mu   sync.Mutex
	wm   func(types.Row) (int64, bool, error)
	idle time.Duration
}

func newScan(t *connectors.Table) (*scan, error) {
	cfg, err := parseSourceConfig(t.Options)
	if err != nil {
		return nil, err
	}
	newDec, ignore, err := newValueDecoder(t, cfg.format)
	if err != nil {
		return nil, err
	}
	cfg.ignore = ignore
	return &scan{t: t, cfg: cfg, newDec: newDec, cmode: newDec().mode()}, nil
}

func (s *scan) ChangelogMode() dyntable.ChangelogMode { return s.cmode }
func (s *scan) Parallelism() int                      { return s.cfg.parallel }
func (s *scan) Bounded() bool                         { return s.cfg.bounded.mode != "" }

// Create makes the source of one subtask; it is a *Source.
func (s *scan) Create(subtask, parallelism int) (dataflow.Source, error) {
	if parallelism < 1 || subtask < 0 || subtask >= parallelism {
		return nil, fmt.Errorf("kafka source: subtask %d of %d", subtask, parallelism)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &Source{sc: s, subtask: subtask, parallelism: parallelism, wm: s.wm, idle: s.idle}, nil
}

// Source reads the partitions of one subtask.
type Source struct {
	dataflow.BaseSource
	sc          *scan
	subtask     int
	parallelism int
	log         *slog.Logger
	tr          *kafkago.Transport
	client      *kafkago.Client
	addr        net.Addr
	splits      []srcSplit
	start       []int64 // where Run starts each split; -1: by the startup mode
	opened      bool
	sharedWM    *sharedWatermarks // with a pushed-down watermark and a job context
	wm          func(types.Row) (int64, bool, error)
	idle        time.Duration

	mu  sync.Mutex // guards pos
	pos []int64    // next offset of each split after the last emitted row

	skipped  atomic.Int64
	firstErr error // the first skipped record's error

	// Offsets committed to the consumer group on checkpoint completion,
	// for monitoring (see commitLoop). Guarded by mu.
	saved    []savedPosition // positions of checkpoints not yet complete
	toCommit []int64         // the latest completed checkpoint's offsets
	kick     chan struct{}   // wakes commitLoop
}

var ()

// Open finds the subtask's partitions and, for a bounded source, where
// each ends. The source does not read before Run.
func (s *Source) Open(ctx *dataflow.OpContext) error {
	s.log = ctx.Logger()
	base := ctx.Context()
	if ctx != nil {
		if ctx.Shared != nil && s.wm != nil {
			p := s.parallelism
			s.sharedWM = ctx.Shared.Get(fmt.Sprintf("kafka.watermarks/%p", s.sc), func() any {
				w := &sharedWatermarks{wm: make([]int64, p), idle: make([]bool, p)}
				for i := range w.wm {
					w.wm[i] = dataflow.MinWatermark // active at the start, until it says otherwise
				}
				return w
			}).(*sharedWatermarks)
		}
	}
	cfg := s.sc.cfg
	s.addr = kafkago.TCP(cfg.servers...)
	s.tr = &kafkago.Transport{ClientID: "streamsql", MetadataTTL: 2 * time.Second}
	s.client = &kafkago.Client{Addr: s.addr, Transport: s.tr, Timeout: openTimeout}
	octx, cancel := context.WithTimeout(base, openTimeout)
	defer cancel()
	parts, leaders, err := s.partitions(octx)
	if err != nil {
		return err
	}
	for _, tp := range cfg.assign(parts, s.subtask, s.parallelism) {
		s.splits = append(s.splits, srcSplit{topic: tp.topic, partition: tp.partition, leader: leaders[tp], stop: -1})
	}
	s.start = make([]int64, len(s.splits))
	s.pos = make([]int64, len(s.splits))
	s.kick = make(chan struct{}, 1)
	for i := range s.start {
		s.start[i], s.pos[i] = -1, -1
	}
	if cfg.bounded.mode != "" && len(s.splits) > 0 {
		stops, err := s.resolve(octx, cfg.bounded, "scan.bounded.mode")
		if err != nil {
			return err
		}
		for i := range s.splits {
			s.splits[i].stop = stops[i]
		}
	}
	s.opened = true
	return nil
}

// partitions lists the partitions of the table's topics and their leaders.
func (s *Source) partitions(ctx context.Context) ([]topicPartition, map[topicPartition]int, error) {
	cfg := s.sc.cfg
	type result struct {
		parts   []topicPartition
		leaders map[topicPartition]int
	}
	var last error
	r, err := backoff.Retry(ctx, func() (result, error) {
		md, err := s.client.Metadata(ctx, &kafkago.MetadataRequest{Topics: cfg.topics})
		if last = err; err != nil {
			return result{}, err
		}
		var missing error
		r := result{leaders: map[topicPartition]int{}}
		found := map[string]bool{}
		for _, t := range md.Topics {
			if t.Internal || (cfg.pattern != nil && !cfg.pattern.MatchString(t.Name)) {
				continue
			}
			if t.Error != nil {
				missing = fmt.Errorf("topic '%s': %v", t.Name, t.Error)
				continue
			}
			found[t.Name] = true
			for _, p := range t.Partitions {
				tp := topicPartition{t.Name, int32(p.ID)}
				r.parts = append(r.parts, tp)
				r.leaders[tp] = p.Leader.ID
			}
		}
		for _, t := range cfg.topics {
			if !found[t] && missing == nil {
				missing = fmt.Errorf("topic '%s' does not exist", t)
			}
		}
		last = missing
		return r, missing
	}, backoff.WithBackOff(&backoff.ExponentialBackOff{InitialInterval: 50 * time.Millisecond, Multiplier: 2, MaxInterval: time.Second}),
		backoff.WithMaxElapsedTime(0))
	if err != nil {
		// Only the end of ctx stops the retries.
		return nil, nil, fmt.Errorf("kafka source: reading the metadata of %s from %v: %w", s.topicsText(), cfg.servers, last)
	}
	return r.parts, r.leaders, nil
}

func (s *Source) topicsText() string {
	if s.sc.cfg.pattern != nil {
		return fmt.Sprintf("topic-pattern '%s'", s.sc.cfg.pattern)
	}
	return fmt.Sprintf("topic %q", s.sc.cfg.topics)
}

// Close releases the connections.
func (s *Source) Close() error {
	if s.tr != nil {
		s.tr.CloseIdleConnections()
	}
	return nil
}

// SkippedRecords returns the number of malformed records skipped so far
// (with '<format>.ignore-parse-errors'), those before a restored position
// included.
func (s *Source) SkippedRecords() int64 { return s.skipped.Load() }

// position is the JSON form of a subtask's position.
type position struct {
	Version int              `json:"v"`
	Offsets []positionOffset `json:"offsets"`
	Skipped int64            `json:"skipped"`
}

type positionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"` // the next record to read
}

const positionVersion = 1

// SnapshotPosition implements dataflow.Source: the next offset
// of each partition after the last row handed to Emit, as JSON:
// {"v":1,"offsets":[{"topic":"t","partition":0,"offset":42},...],"skipped":0}.
func (s *Source) SnapshotPosition(checkpointID int64) ([]byte, error) {
	if !s.opened {
		return nil, errors.New("kafka source: position asked before Open")
	}
	p := position{Version: positionVersion, Skipped: s.skipped.Load(), Offsets: []positionOffset{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, sp := range s.splits {
		off := s.pos[i]
		if off < 0 {
			off = s.start[i] // not resolved yet: only a restored start is known
		}
		if off < 0 {
			return nil, fmt.Errorf("kafka source: the position of %s is not known yet", sp.String())
		}
		p.Offsets = append(p.Offsets, positionOffset{Topic: sp.topic, Partition: sp.partition, Offset: off})
	}
	s.positionSaved(checkpointID)
	return json.Marshal(p)
}

// RestorePosition implements dataflow.Source. Partitions the
// position names must be this subtask's; partitions of this subtask it
// does not name (added to the topic since) start at the earliest offset,
// as Flink starts newly discovered partitions.
func (s *Source) RestorePosition(b []byte) error {
	if !s.opened {
		return errors.New("kafka source: RestorePosition before Open")
	}
	var p position
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("kafka source: malformed position %q: %v", b, err)
	}
	if p.Version != positionVersion {
		return fmt.Errorf("kafka source: position version %d is not supported (want %d)", p.Version, positionVersion)
	}
	at := map[topicPartition]int{}
	for i, sp := range s.splits {
		at[topicPartition{sp.topic, sp.partition}] = i
	}
	start := make([]int64, len(s.splits))
	for i := range start {
		start[i] = -2 // earliest
	}
	for _, o := range p.Offsets {
		i, ok := at[topicPartition{o.Topic, o.Partition}]
		if !ok {
			return fmt.Errorf("kafka source: the restored position names topic '%s' partition %d, which subtask %d of %d does not read (did the topics change?)",
				o.Topic, o.Partition, s.subtask, s.parallelism)
		}
		if o.Offset < 0 {
			return fmt.Errorf("kafka source: the restored position of topic '%s' partition %d is negative", o.Topic, o.Partition)
		}
		start[i] = o.Offset
	}
	copy(s.start, start)
	s.skipped.Store(p.Skipped)
	return nil
}

// RecordError is a malformed record.
type RecordError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
	Record    string // the record's start, quoted
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("kafka source: malformed record in topic '%s' partition %d at offset %d: %v; the record: %s",
		e.Topic, e.Partition, e.Offset, e.Err, e.Record)
}

func (e *RecordError) Unwrap() error { return e.Err }

// snippet quotes the start of a record for an error message.
func snippet(b []byte) string {
	const limit = 80
	if len(b) > limit {
		return strconv.Quote(string(b[:limit])) + "..."
	}
	return strconv.Quote(string(b))
}

// Run reads from the start offsets until the end offsets (bounded) or
// until the job is cancelled.
func (s *Source) Run(ctx context.Context, out dataflow.SourceOutput) error {
	if !s.opened {
		return errors.New("kafka source: Run before Open")
	}
	if err := s.resolveStarts(ctx); err != nil {
		return err
	}
	next := make([]int64, len(s.splits))
	s.mu.Lock()
	copy(s.pos, s.start)
	copy(next, s.start)
	s.mu.Unlock()

	f := &fetcher{tr: s.tr, addr: s.addr, isolation: s.sc.cfg.isolation, bounded: s.sc.Bounded(), splits: s.splits,
		next: append([]int64(nil), next...), log: s.log, free: make(chan []byte, 4),
		freeRecs: make(chan []fetchedRecord, 4*max(1, len(s.splits))),
		leaders:  make([]int, len(s.splits)),
		refresh: func(ctx context.Context) (map[topicPartition]int, error) {
			_, leaders, err := s.partitions(ctx)
			return leaders, err
		}}
	for i, sp := range s.splits {
		f.leaders[i] = sp.leader
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.sc.cfg.group != "" {
		go s.commitLoop(fctx)
	}
	results := make(chan fetchResult, 1)
	ferr := make(chan error, 1)
	go func() { ferr <- f.run(fctx, results) }()

	if len(s.splits) == 0 && !s.sc.Bounded() {
		// Nothing to read, for ever (more subtasks than partitions): the
		// subtask must not hold back the watermark downstream. In one
		// process the other subtasks' shared watermarks would also lift
		// it; a cluster task (package cluster) has no other subtask.
		if err := out.Idle(); err != nil {
			return err
		}
	}
	r := &runState{s: s, out: out, next: next, dec: s.sc.newDec(),
		b: newChunkBuilder(len(s.sc.t.Columns), sourceChunkRows), wms: newWatermarks(s)}
	// Between fetches, barriers and notices are taken at once, so an idle
	// source checkpoints without waiting for a record.
	for done := false; !done; {
		select {
		case res, ok := <-results:
			if !ok {
				done = true
				break
			}
			if err := r.process(&res); err != nil {
				cancel()
				for range results { // let the fetcher end
				}
				return err
			}
			f.recycle(&res)
		case e := <-out.Control():
			if err := out.Handle(e); err != nil {
				cancel()
				for range results {
				}
				return err
			}
		}
	}
	if err := <-ferr; err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if err := r.flush(); err != nil {
		return err
	}
	if n := s.skipped.Load(); n > 0 {
		attrs := []any{"topics", s.topicsText(), "skipped", n}
		if s.firstErr != nil {
			attrs = append(attrs, "first_error", s.firstErr.Error())
		}
		s.log.Warn("kafka source skipped malformed records", attrs...)
	}
	return nil
}

// runState is the decoding side of one Run.
type runState struct {
	s    *Source
	out  dataflow.SourceOutput
	dec  valueDecoder
	b    *chunkBuilder
	next []int64 // per split, past every record decoded into b or emitted
	wms  *watermarks
}

// process decodes one round of fetches.
func (r *runState) process(res *fetchResult) error {
	s := r.s
	now := time.Now()
	for pi := range res.parts {
		pd := &res.parts[pi]
		sp := &s.splits[pd.split]
		for ri := range pd.recs {
			rec := &pd.recs[ri]
			if sp.stop >= 0 && rec.offset >= sp.stop {
				break
			}
			if rec.offset < r.next[pd.split] {
				continue // already read (cannot happen: the fetcher starts where we are)
			}
			if r.b.full() {
				if err := r.flush(); err != nil {
					return err
				}
				if err := r.emitWatermark(); err != nil {
					return err
				}
			}
			nd, readsNull := r.dec.(nullDecoder)
			if !rec.null || readsNull {
				before := r.b.len()
				var err error
				if rec.null {
					nd.decodeNull(r.b)
				} else {
					err = r.dec.decode(rec.value, r.b)
				}
				if err == nil && len(s.sc.t.Metadata) > 0 {
					appendMetadata(s.sc.t.Metadata, r.b.chunk.Changes[before:], sp, rec)
				}
				if err == nil && r.wms != nil {
					err = r.wms.observe(pd.split, r.b.chunk.Changes[before:], now)
					if err != nil {
						return err // the expression failed: not the record's fault
					}
				}
				if err != nil {
					rerr := &RecordError{Topic: sp.topic, Partition: sp.partition, Offset: rec.offset, Err: err, Record: snippet(rec.value)}
					if !s.sc.cfg.ignore {
						return rerr
					}
					if s.skipped.Add(1) == 1 {
						s.firstErr = rerr
					}
					skippedRecords.WithLabelValues(sp.topic).Inc()
				}
			}
			r.next[pd.split] = rec.offset + 1
		}
		n := pd.next
		if sp.stop >= 0 && n > sp.stop {
			n = sp.stop
		}
		r.next[pd.split] = max(r.next[pd.split], n)
		if r.wms != nil {
			r.wms.seen(pd.split, now, len(pd.recs) > 0, sp.stop >= 0 && r.next[pd.split] >= sp.stop)
		}
	}
	// flush publishes the position even without rows: records of aborted
	// transactions may have moved it.
	if err := r.flush(); err != nil {
		return err
	}
	return r.emitWatermark()
}

// emitWatermark emits the watermark the partitions allow; b is empty.
func (r *runState) emitWatermark() error {
	ts := int64(dataflow.MinWatermark)
	if r.wms != nil {
		ts = r.wms.current(time.Now())
	}
	return r.out.EmitWatermark(ts)
}

// publish makes the decoded position the one checkpoints see. Callers
// publish only when b is empty or about to be emitted.
func (r *runState) publish() {
	r.s.mu.Lock()
	copy(r.s.pos, r.next)
	r.s.mu.Unlock()
}

// flush emits the chunk, if it has rows, after advancing the position.
func (r *runState) flush() error {
	if r.b.len() == 0 {
		r.publish()
		return nil
	}
	r.publish()
	return r.out.Emit(r.b.take())
}

// appendMetadata appends the values of the table's METADATA columns
// (connector.MetadataKeys) to the rows decoded from rec, each row copied
// (a decoder may slice its rows out of one array).
func appendMetadata(md []connectors.MetadataColumn, changes []dyntable.Change, sp *srcSplit, rec *fetchedRecord) {
	for i := range changes {
		row := make(types.Row, len(changes[i].Row), len(changes[i].Row)+len(md))
		copy(row, changes[i].Row)
		for _, m := range md {
			var v types.Value
			switch m.Key {
			case "topic":
				v = types.NewString(sp.topic)
			case "partition":
				v = types.NewInt(int64(sp.partition))
			case "offset":
				v = types.NewInt(rec.offset)
			case "timestamp":
				v = types.NewTimestamp(rec.timestamp * int64(time.Millisecond))
			case "headers":
				v = headersValue(rec.headers)
			default:
				v = types.NullValue // MetadataKeys lists no other key; the planner checked
			}
			row = append(row, v)
		}
		changes[i].Row = row
	}
}

// headersValue is the 'headers' metadata of a record: a MAP<STRING,
// BYTES> of its headers, never NULL (empty without headers), as in
// Flink. A key that repeats keeps its last value, as Flink's reading
// into a hash map does; a null header value is a NULL.
func headersValue(hs []protocol.Header) types.Value {
	entries := make([]types.Value, 0, 2*len(hs))
	at := make(map[string]int, len(hs))
	for _, h := range hs {
		v := types.NullValue
		if h.Value != nil {
			v = types.NewBytes(h.Value)
		}
		if i, ok := at[h.Key]; ok {
			entries[i+1] = v
			continue
		}
		at[h.Key] = len(entries)
		entries = append(entries, types.NewString(h.Key), v)
	}
	return types.NewMap(entries)
}
