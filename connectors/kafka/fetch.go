package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"sort"
	"time"

	"github.com/cenkalti/backoff/v5"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	fetchapi "github.com/segmentio/kafka-go/protocol/fetch"
)

// Isolation levels of the Fetch and ListOffsets requests.
const (
	isoReadUncommitted int8 = 0
	isoReadCommitted   int8 = 1
)

// Fetch sizes (variables for tests). A fetch asks for up to
// partitionMaxBytes per partition, less when the subtask reads many
// partitions of one leader, so that one response holds at most about
// fetchMaxBytes: large enough that a backlog is read in a few round trips,
// small enough that two responses in flight (one decoding, one
// prefetched) stay within tens of megabytes per subtask.
//
// The request's own MaxBytes is set well above the sum of the partition
// limits (see fetchSizes), so that the partition limits are what cut a
// response. kfake (the local broker) leaves the aborted-transaction list
// of a partition out of a response that it cuts at the request's
// MaxBytes: its fetch handler breaks out of the partition loop before
// looking the list up. Records of aborted transactions would then look
// committed. With Apache Kafka the list is always complete.
var (
	fetchMaxBytes     int32 = 16 << 20
	partitionMaxBytes int32 = 4 << 20
)

// batchSlack is the most a partition's share of a response may exceed
// its limit by: kfake counts the batch it refuses against the request's
// MaxBytes; Kafka's default max.message.bytes is about 1 MB.
const batchSlack = 2 << 20

// fetchSizes returns the per-partition and per-request MaxBytes of a fetch
// of n partitions.
func fetchSizes(n int) (part, total int32) {
	part = partitionMaxBytes
	if n > 0 && int64(n)*int64(part) > int64(fetchMaxBytes) {
		part = max(fetchMaxBytes/int32(n), min(partitionMaxBytes, 64<<10))
	}
	t := int64(n)*(int64(part)+batchSlack) + batchSlack
	return part, int32(min(t, math.MaxInt32))
}

// fetchMaxWait is how long the broker may hold a fetch when it has no
// data. It also bounds how late a checkpoint barrier is injected into an
// idle source (see source.Run).
const fetchMaxWait = 100 * time.Millisecond

// srcSplit is one topic partition read by a source subtask.
type srcSplit struct {
	topic     string
	partition int32
	leader    int // broker id when the source opened
	// stop is the offset before which a bounded read ends (the record at
	// stop is not read); -1 when unbounded.
	stop int64
}

func (s *srcSplit) String() string { return fmt.Sprintf("%s-%d", s.topic, s.partition) }

// fetchedRecord is one record of a fetch that a reader may see: under
// read_committed, records of aborted transactions are already gone, and
// control records never appear. key and value alias the result's arena.
type fetchedRecord struct {
	offset    int64
	timestamp int64 // ms since the epoch
	key       []byte
	value     []byte
	null      bool // the value is null (a tombstone)
	// headers are the record's headers, as kafka-go decoded them (fresh
	// slices, not pooled: kept without copying).
	headers []protocol.Header
}

// partitionData is what one fetch returned for one split: the readable
// records from the fetch offset on, and next, the offset to continue
// from, which is past every record the response held, the dropped ones
// (aborted, control) included.
type partitionData struct {
	split int // index into the subtask's splits
	recs  []fetchedRecord
	next  int64
	// dropped counts the records of aborted transactions left out.
	dropped int
}

// fetchResult is one round of fetches over every unfinished split.
type fetchResult struct {
	parts  []partitionData
	arenas [][]byte // to give back with fetcher.recycle once decoded
}

// recycle gives a result's arenas and record slices back to the
// fetcher; it never blocks.
func (f *fetcher) recycle(r *fetchResult) {
	for _, a := range r.arenas {
		select {
		case f.free <- a[:0]:
		default:
		}
	}
	for i := range r.parts {
		if recs := r.parts[i].recs; cap(recs) > 0 {
			select {
			case f.freeRecs <- recs[:0]:
			default:
			}
		}
	}
	r.arenas, r.parts = nil, nil
}

// newArena starts a new arena array, reusing a recycled one if any.
func (f *fetcher) newArena(size int) {
	var a []byte
	select {
	case a = <-f.free:
	default:
	}
	if cap(a) < size {
		a = make([]byte, 0, max(size, 1<<20))
	}
	f.arena = a
	f.arenas = append(f.arenas, a)
}

// fetcher fetches the splits of one source subtask, in a goroutine of
// its own, one round ahead of the decoding (see source.Run).
//
// Lifecycle: run is called once; it sends results on out until every
// split has reached its stop offset (bounded) or ctx ends, then closes out.
// The fetcher owns its fetch offsets: they advance as soon as a response
// is received, independent of what the decoder has emitted, which is what
// a checkpoint records.
type fetcher struct {
	tr        *kafkago.Transport
	addr      net.Addr
	isolation int8
	bounded   bool // the scan ends (every split has a stop offset)
	splits    []srcSplit
	next      []int64 // fetch offset of each split
	// leaders is the broker id leading each split, for grouping fetches;
	// refresh looks them up again after a failed fetch (a leader moved).
	leaders []int
	refresh func(context.Context) (map[topicPartition]int, error)
	log     *slog.Logger

	// arena holds the keys and values of the round being fetched; arenas
	// lists every array the round used, handed to the reader with the
	// result and given back through free once decoded.
	arena  []byte
	arenas [][]byte
	free   chan []byte
	// freeRecs holds record slices given back, so that a steady stream
	// does not grow new ones every round.
	freeRecs chan []fetchedRecord
}

// errOffsetOutOfRange is the partition error that means the position no
// longer exists (deleted by retention, or beyond the end after the topic
// was recreated).
const errOffsetOutOfRange = 1

// run fetches until done; the error is nil when every split is finished.
func (f *fetcher) run(ctx context.Context, out chan<- fetchResult) error {
	defer close(out)
	// The delay after a failed round: 50 ms, doubling, at most 5 s; a
	// round without failures resets it.
	bo := &backoff.ExponentialBackOff{InitialInterval: 50 * time.Millisecond, Multiplier: 2, MaxInterval: 5 * time.Second}
	bo.Reset()
	delay := bo.NextBackOff()
	for {
		groups := f.groups()
		if len(groups) == 0 && f.bounded {
			return nil // every bounded split is finished
		}
		if len(groups) == 0 {
			// An unbounded subtask without partitions (more subtasks than
			// partitions) must not end: a finished source ends the job's
			// checkpoints. It idles, sending empty rounds so that barriers
			// are still injected.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(fetchMaxWait):
			}
			select {
			case out <- fetchResult{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		var res fetchResult
		f.arenas = nil
		f.newArena(0)
		failed := false
		for _, g := range groups {
			parts, err := f.fetch(ctx, g)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				var perm *fatalFetchError
				if errors.As(err, &perm) {
					return err
				}
				// Brokers restart, leaders move, metadata lags behind a
				// new topic: all of it is transient. Log and retry.
				f.log.Warn("kafka source: fetch failed; retrying", "error", err, "backoff", delay)
				failed = true
				continue
			}
			res.parts = append(res.parts, parts...)
		}
		if failed {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(delay):
			}
			delay = bo.NextBackOff()
			f.refreshLeaders(ctx)
		} else if delay != bo.InitialInterval {
			bo.Reset()
			delay = bo.NextBackOff()
		}
		res.arenas = f.arenas
		// An empty result still goes out: it lets the decoder notice that
		// the source is idle (and inject pending barriers).
		select {
		case out <- res:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// refreshLeaders asks the brokers again who leads each split.
func (f *fetcher) refreshLeaders(ctx context.Context) {
	if f.refresh == nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	leaders, err := f.refresh(rctx)
	if err != nil {
		return // the next failure tries again
	}
	for i, sp := range f.splits {
		if l, ok := leaders[topicPartition{sp.topic, sp.partition}]; ok {
			f.leaders[i] = l
		}
	}
}

// groups returns the indexes of the unfinished splits, grouped by leader:
// one Fetch request may only name partitions of one broker.
func (f *fetcher) groups() [][]int {
	byLeader := map[int][]int{}
	for i := range f.splits {
		s := &f.splits[i]
		if s.stop >= 0 && f.next[i] >= s.stop {
			continue
		}
		byLeader[f.leaders[i]] = append(byLeader[f.leaders[i]], i)
	}
	leaders := make([]int, 0, len(byLeader))
	for l := range byLeader {
		leaders = append(leaders, l)
	}
	sort.Ints(leaders)
	out := make([][]int, 0, len(leaders))
	for _, l := range leaders {
		out = append(out, byLeader[l])
	}
	return out
}

// fatalFetchError fails the job instead of being retried.
type fatalFetchError struct{ err error }

func (e *fatalFetchError) Error() string { return e.err.Error() }
func (e *fatalFetchError) Unwrap() error { return e.err }

// fetch sends one Fetch request for the splits idx and advances their
// fetch offsets past what it returned.
func (f *fetcher) fetch(ctx context.Context, idx []int) ([]partitionData, error) {
	pmax, total := fetchSizes(len(idx))
	req := &fetchapi.Request{
		ReplicaID:      -1,
		MaxWaitTime:    int32(fetchMaxWait / time.Millisecond),
		MinBytes:       1,
		MaxBytes:       total,
		IsolationLevel: f.isolation,
		SessionID:      -1,
		SessionEpoch:   -1,
	}
	topicAt := map[string]int{}
	for _, i := range idx {
		s := &f.splits[i]
		t, ok := topicAt[s.topic]
		if !ok {
			t = len(req.Topics)
			topicAt[s.topic] = t
			req.Topics = append(req.Topics, fetchapi.RequestTopic{Topic: s.topic})
		}
		req.Topics[t].Partitions = append(req.Topics[t].Partitions, fetchapi.RequestPartition{
			Partition:          s.partition,
			CurrentLeaderEpoch: -1,
			FetchOffset:        f.next[i],
			LogStartOffset:     -1,
			PartitionMaxBytes:  pmax,
		})
	}
	// The broker may hold the request for MaxWaitTime; allow for that.
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second+fetchMaxWait)
	defer cancel()
	m, err := f.tr.RoundTrip(rctx, f.addr, req)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	res, ok := m.(*fetchapi.Response)
	if !ok {
		return nil, fmt.Errorf("fetch: unexpected response %T", m)
	}
	if res.ErrorCode != 0 {
		return nil, fmt.Errorf("fetch: %w", kafkago.Error(res.ErrorCode))
	}
	splitOf := map[[2]any]int{}
	for _, i := range idx {
		splitOf[[2]any{f.splits[i].topic, f.splits[i].partition}] = i
	}
	var out []partitionData
	var retry error
	for ti := range res.Topics {
		rt := &res.Topics[ti]
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			i, ok := splitOf[[2]any{rt.Topic, rp.Partition}]
			if !ok {
				continue // not asked for; ignore
			}
			s := &f.splits[i]
			if rp.ErrorCode != 0 {
				kerr := kafkago.Error(rp.ErrorCode)
				if rp.ErrorCode == errOffsetOutOfRange {
					// Silently jumping elsewhere would lose or repeat rows;
					// a restored position whose data is gone needs a human.
					return nil, &fatalFetchError{fmt.Errorf("kafka source: topic '%s' partition %d has no offset %d any more (log start %d, end %d): %v",
						s.topic, s.partition, f.next[i], rp.LogStartOffset, rp.HighWatermark, kerr)}
				}
				if !kerr.Temporary() && rp.ErrorCode != 3 /* unknown topic or partition: metadata may lag */ {
					return nil, &fatalFetchError{fmt.Errorf("kafka source: fetching topic '%s' partition %d: %v", s.topic, s.partition, kerr)}
				}
				retry = fmt.Errorf("topic '%s' partition %d: %v", s.topic, s.partition, kerr)
				continue
			}
			end := rp.HighWatermark
			if f.isolation == isoReadCommitted && rp.LastStableOffset >= 0 {
				end = rp.LastStableOffset
			}
			pd, err := f.readPartition(i, f.next[i], rp)
			if err != nil {
				return nil, &fatalFetchError{fmt.Errorf("kafka source: topic '%s' partition %d at offset %d: %w", s.topic, s.partition, f.next[i], err)}
			}
			if s.stop >= 0 && pd.next < s.stop && len(pd.recs) == 0 && pd.next == f.next[i] && end >= s.stop {
				// Nothing is left below stop although the partition
				// reaches it: the offsets in between hold no records
				// (compaction).
				pd.next = s.stop
			}
			f.next[i] = pd.next
			out = append(out, pd)
		}
	}
	if retry != nil && len(out) == 0 {
		return nil, retry
	}
	return out, nil
}

// readPartition copies the readable records of one partition of a
// response into the fetcher's arena, dropping control batches and, under
// read_committed, the batches of aborted transactions. It follows the
// Java consumer (Fetcher / CompletedFetch): the broker lists the aborted
// transactions overlapping the fetched range as (producer id, first
// offset); walking the batches in offset order, a producer is "aborting"
// from its first offset until its ABORT control marker, and every
// transactional batch of an aborting producer is dropped.
func (f *fetcher) readPartition(i int, from int64, rp *fetchapi.ResponsePartition) (partitionData, error) {
	pd := partitionData{split: i, next: from}
	select {
	case pd.recs = <-f.freeRecs:
	default:
	}
	var batches []protocol.RecordReader
	if st, ok := rp.RecordSet.Records.(*protocol.RecordStream); ok {
		batches = st.Records
	} else if rp.RecordSet.Records != nil {
		batches = []protocol.RecordReader{rp.RecordSet.Records}
	}
	aborted := rp.AbortedTransactions
	var aborting map[int64]bool
	// activate marks the producers whose aborted transaction starts at or
	// before offset last.
	activate := func(last int64) {
		for len(aborted) > 0 && aborted[0].FirstOffset <= last {
			if aborting == nil {
				aborting = map[int64]bool{}
			}
			aborting[aborted[0].ProducerID] = true
			aborted = aborted[1:]
		}
	}
	for _, b := range batches {
		switch b := b.(type) {
		case *protocol.ControlBatch:
			last := int64(-1)
			abort := false
			for {
				r, err := b.Records.ReadRecord()
				if err == io.EOF {
					break
				}
				if err != nil {
					return pd, err
				}
				last = max(last, r.Offset)
				cr, err := protocol.ReadControlRecord(r) // closes r's key and value
				if err != nil {
					return pd, fmt.Errorf("control record at offset %d: %w", r.Offset, err)
				}
				abort = abort || cr.Type == 0 // 0 ABORT, 1 COMMIT
			}
			if f.isolation == isoReadCommitted && b.ProducerID >= 0 {
				activate(last)
				if abort {
					delete(aborting, b.ProducerID)
				}
			}
			pd.next = max(pd.next, last+1)
		case *protocol.RecordBatch:
			mark, amark, arenas := len(pd.recs), len(f.arena), len(f.arenas)
			last, err := f.copyRecords(&pd, b.Records, from)
			if err != nil {
				return pd, err
			}
			pd.next = max(pd.next, last+1)
			if f.isolation == isoReadCommitted && b.ProducerID >= 0 {
				activate(last)
				if b.Attributes.Transactional() && aborting[b.ProducerID] {
					pd.dropped += len(pd.recs) - mark
					pd.recs = pd.recs[:mark]
					if len(f.arenas) == arenas { // the arena did not move: reuse the space
						f.arena = f.arena[:amark]
					}
				}
			}
		default: // v0/v1 message sets: no transactions
			last, err := f.copyRecords(&pd, b, from)
			if err != nil {
				return pd, err
			}
			pd.next = max(pd.next, last+1)
		}
	}
	return pd, nil
}

// copyRecords appends the records of r at or after offset from to pd,
// copying keys and values into the arena, and returns the last offset
// seen (-1 for none).
func (f *fetcher) copyRecords(pd *partitionData, r protocol.RecordReader, from int64) (int64, error) {
	last := int64(-1)
	for {
		rec, err := r.ReadRecord()
		if err == io.EOF {
			return last, nil
		}
		if err != nil {
			return last, err
		}
		last = max(last, rec.Offset)
		if rec.Offset < from {
			// The broker returns whole batches; skip what precedes the
			// fetch offset.
			closeBytes(rec.Key)
			closeBytes(rec.Value)
			continue
		}
		out := fetchedRecord{offset: rec.Offset, timestamp: rec.Time.UnixMilli(), null: rec.Value == nil, headers: rec.Headers}
		if out.key, err = f.copyBytes(rec.Key); err != nil {
			return last, err
		}
		if out.value, err = f.copyBytes(rec.Value); err != nil {
			return last, err
		}
		pd.recs = append(pd.recs, out)
	}
}

// copyBytes copies b into the arena and closes it (returning its pages
// to kafka-go's pool).
func (f *fetcher) copyBytes(b protocol.Bytes) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	defer b.Close()
	n := b.Len()
	start := len(f.arena)
	if cap(f.arena)-start < n {
		// A new array: earlier records keep pointing into the old one.
		f.newArena(max(2*cap(f.arena), n))
		start = 0
	}
	f.arena = f.arena[:start+n]
	if _, err := io.ReadFull(b, f.arena[start:start+n]); err != nil {
		return nil, err
	}
	return f.arena[start : start+n : start+n], nil
}

func closeBytes(b protocol.Bytes) {
	if b != nil {
		b.Close()
	}
}
