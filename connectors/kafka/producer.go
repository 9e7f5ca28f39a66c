package kafka

// The transactional producer, built on kafka-go's low-level Client
// without forking it. kafka-go's Writer has no transactions and its
// Client.Produce always writes producer id -1, so this file does what a
// transactional Kafka producer does, one protocol request at a time:
//
//	InitProducerID(id, -1, -1)         once per transactional id and process:
//	                                   gets (producer id, epoch), fences any
//	                                   older producer of the id and aborts its
//	                                   open transaction
//	AddPartitionsToTxn                 on a partition's first write in a
//	                                   transaction
//	RawProduce(v2 batch, acks=all)     the batch encoded by kafka-go's
//	                                   RecordSet, then producer id, epoch and
//	                                   base sequence patched in and the
//	                                   CRC32-C recomputed
//	EndTxn(commit | abort)             ends the transaction; with a stored
//	                                   (id, producer id, epoch) it commits
//	                                   from another process too (recovery)
//
// Lifecycle of a producer: newTxnProducer (InitProducerID) → any number
// of transactions (begin, add, flush, then endTxn) → drop it. One
// producer is used from one goroutine; flush sends the partitions'
// batches concurrently.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol"
	metadataAPI "github.com/segmentio/kafka-go/protocol/metadata"
)

// maxBatchBytes is when a partition's batch is sent before the
// transaction's pre-commit: just under the broker's default
// message.max.bytes (1,048,588), which bounds one record batch.
const maxBatchBytes = 1_000_000

// txnHandle is what commits a transaction from anywhere: the
// transactional id and the producer session that opened it. It is the
// Kafka sinks' two-phase-commit handle, stored in checkpoints as JSON.
type txnHandle struct {
	TransactionalID string `json:"tid"`
	ProducerID      int64  `json:"pid"`
	Epoch           int16  `json:"epoch"`
	// Subtask and Index locate the id in its subtask's pool
	// (<prefix>-<subtask>-<index>).
	Subtask int `json:"subtask"`
	Index   int `json:"index"`
	// Empty marks a transaction that wrote nothing: the broker never
	// opened it, so there is nothing to commit.
	Empty bool `json:"empty,omitempty"`
}

// ErrFenced is returned when a newer producer with the same
// transactional id took over: another instance of the job (a zombie, or
// this one restarted) owns the id now.
var ErrFenced = errors.New("kafka: producer fenced")

// ErrTxnLost is returned when a transaction the sink pre-committed can
// no longer be committed: the broker aborted it, typically because it
// stayed open longer than the transaction timeout.
var ErrTxnLost = errors.New("kafka: POSSIBLE DATA LOSS: a pre-committed transaction can no longer be committed")

// fencedError names the transactional id and explains what fencing
// means for the user.
func fencedError(tid string, err error) error {
	return fmt.Errorf("%w: transactional id '%s' is now used by a newer producer (another running instance of this job, or a restarted one, with the same 'sink.transactional-id-prefix'), or its transaction outlived the transaction timeout and was aborted by the broker: %v",
		ErrFenced, tid, err)
}

// isFencing reports the errors a broker returns to a producer whose
// epoch is no longer current, or whose transaction it no longer has
// (INVALID_TXN_STATE: kfake answers a fenced producer's produce with it,
// since its transaction was aborted when the newer producer came).
func isFencing(err error) bool {
	return errors.Is(err, kafka.ProducerFenced) || errors.Is(err, kafka.InvalidProducerEpoch) ||
		errors.Is(err, kafka.InvalidProducerIDMapping) || errors.Is(err, kafka.InvalidTransactionState)
}

// kafkaClient is a kafka-go Client for the bootstrap servers.
func kafkaClient(servers []string, timeout time.Duration) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(servers...), Timeout: timeout}
}

// partitionCount asks the cluster how many partitions topic has. A
// topic that does not exist yet is asked for again with auto-creation
// allowed, as Flink's (Java) producer asks: a broker that creates topics
// on first use (auto.create.topics.enable, or `streamsql kafka`) then
// creates it, so that CREATE TABLE ... AS SELECT can write a new topic.
func partitionCount(ctx context.Context, c *kafka.Client, topic string) (int, error) {
	n, err := partitionCountOnce(ctx, c, topic)
	if !errors.Is(err, kafka.UnknownTopicOrPartition) && !errors.Is(err, errNoTopic) {
		return n, err
	}
	tr := c.Transport
	if tr == nil {
		tr = kafka.DefaultTransport
	}
	if _, aerr := tr.RoundTrip(ctx, c.Addr, &metadataAPI.Request{TopicNames: []string{topic}, AllowAutoTopicCreation: true}); aerr != nil {
		return 0, err
	}
	// The topic's leader may take a moment to be known.
	for wait := 10 * time.Millisecond; ; wait *= 2 {
		if n, err = partitionCountOnce(ctx, c, topic); err == nil || wait > time.Second {
			return n, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// errNoTopic is partitionCountOnce's error for a topic the metadata does
// not list.
var errNoTopic = errors.New("topic does not exist")

func partitionCountOnce(ctx context.Context, c *kafka.Client, topic string) (int, error) {
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return 0, fmt.Errorf("kafka: reading metadata of topic '%s': %w", topic, err)
	}
	for _, t := range md.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return 0, fmt.Errorf("kafka: topic '%s': %w", topic, t.Error)
		}
		if len(t.Partitions) == 0 {
			return 0, fmt.Errorf("kafka: topic '%s' has no partitions", topic)
		}
		return len(t.Partitions), nil
	}
	return 0, fmt.Errorf("kafka: topic '%s': %w", topic, errNoTopic)
}

// retryConcurrent repeats fn while the coordinator answers
// CONCURRENT_TRANSACTIONS (the previous transaction of the id is still
// being completed) or another temporary error, for up to 10 s.
func retryConcurrent(ctx context.Context, fn func() error) error {
	var last error
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		last = fn()
		var ke kafka.Error
		if last != nil && !errors.Is(last, kafka.ConcurrentTransactions) && !(errors.As(last, &ke) && ke.Temporary()) {
			return struct{}{}, backoff.Permanent(last)
		}
		return struct{}{}, last
	}, backoff.WithBackOff(&backoff.ExponentialBackOff{InitialInterval: 5 * time.Millisecond, Multiplier: 2, MaxInterval: 200 * time.Millisecond}),
		backoff.WithMaxElapsedTime(10*time.Second))
	if err != nil {
		return last // the operation's error, also when ctx ended the wait
	}
	return nil
}

// initProducerID runs InitProducerID for a transactional id: it bumps
// the id's epoch, which fences older producers and aborts their open
// transaction.
func initProducerID(ctx context.Context, c *kafka.Client, tid string, timeout time.Duration) (pid int64, epoch int16, err error) {
	err = retryConcurrent(ctx, func() error {
		res, err := c.InitProducerID(ctx, &kafka.InitProducerIDRequest{
			TransactionalID:      tid,
			TransactionTimeoutMs: int(timeout / time.Millisecond),
			// -1/-1 asks for a new session; the zero values are rejected
			// with INVALID_PRODUCER_ID_MAPPING.
			ProducerID: -1, ProducerEpoch: -1,
		})
		if err != nil {
			return err
		}
		if res.Error != nil {
			return res.Error
		}
		pid, epoch = int64(res.Producer.ProducerID), int16(res.Producer.ProducerEpoch)
		return nil
	})
	if err != nil {
		if errors.Is(err, kafka.InvalidTransactionTimeout) {
			return 0, 0, fmt.Errorf("kafka: the broker rejects transaction timeout %s for transactional id '%s' (it must not exceed the broker's transaction.max.timeout.ms; lower 'properties.transaction.timeout.ms'): %w", timeout, tid, err)
		}
		return 0, 0, fmt.Errorf("kafka: InitProducerId for transactional id '%s': %w", tid, err)
	}
	return pid, epoch, nil
}

// endTxn commits or aborts the transaction of h. Committing a
// transaction that is already committed succeeds (the coordinator
// answers a retried EndTxn of the same epoch with success).
func endTxn(ctx context.Context, c *kafka.Client, h txnHandle, commit bool) error {
	return retryConcurrent(ctx, func() error {
		res, err := c.EndTxn(ctx, &kafka.EndTxnRequest{
			TransactionalID: h.TransactionalID,
			ProducerID:      int(h.ProducerID),
			ProducerEpoch:   int(h.Epoch),
			Committed:       commit,
		})
		if err != nil {
			return err
		}
		return res.Error
	})
}

// kv is one buffered record.
type kv struct {
	key, value []byte
	headers    []protocol.Header
	ts         time.Time
}

// partBatch is one partition's records of the open transaction, not
// yet sent.
type partBatch struct {
	records []kv
	bytes   int
}

// txnProducer is the producer session of one transactional id.
type txnProducer struct {
	c       *kafka.Client
	topic   string
	handle  txnHandle
	timeout time.Duration

	// seq is the next base sequence per partition. Sequences count the
	// records of one producer session (id, epoch) per partition, across
	// its transactions; the broker rejects a gap or a repeat.
	seq []int32
	// added marks the partitions added to the open transaction.
	added   []bool
	batches []partBatch
	inTxn   bool
	// broken is set after a failed request: the session's sequences are
	// unknown, so it must not be used again (its transaction is aborted
	// by whoever re-initialises the id).
	broken error

	buf  bytes.Buffer      // encoding scratch, reused
	recs []protocol.Record // encoding scratch, reused
}

// newTxnProducer initialises a session for tid with InitProducerID.
func newTxnProducer(ctx context.Context, c *kafka.Client, topic string, partitions int, tid string, timeout time.Duration) (*txnProducer, error) {
	pid, epoch, err := initProducerID(ctx, c, tid, timeout)
	if err != nil {
		return nil, err
	}
	return &txnProducer{c: c, topic: topic, timeout: timeout,
		handle: txnHandle{TransactionalID: tid, ProducerID: pid, Epoch: epoch},
		seq:    make([]int32, partitions), added: make([]bool, partitions), batches: make([]partBatch, partitions)}, nil
}

// begin opens a transaction. Kafka has no begin request: the
// transaction starts on the broker with the first AddPartitionsToTxn.
func (p *txnProducer) begin() error {
	if p.broken != nil {
		return p.broken
	}
	if p.inTxn {
		return fmt.Errorf("kafka: internal error: transaction of '%s' begun twice", p.handle.TransactionalID)
	}
	p.inTxn = true
	clear(p.added)
	return nil
}

// add buffers one record for partition; a batch that grows past
// maxBatchBytes is sent at once. key and value are kept, not copied.
func (p *txnProducer) add(ctx context.Context, partition int, key, value []byte, headers []protocol.Header, ts time.Time) error {
	b := &p.batches[partition]
	b.records = append(b.records, kv{key, value, headers, ts})
	for _, h := range headers {
		b.bytes += len(h.Key) + len(h.Value)
	}
	b.bytes += len(key) + len(value) + 24 // record overhead, roughly
	if b.bytes >= maxBatchBytes {
		return p.flush(ctx, partition)
	}
	return nil
}

// flush sends the buffered batches: of every partition if partition is
// -1, else of that one. After it returns nil every record is written to
// the broker's log (acks=all), inside the open transaction.
func (p *txnProducer) flush(ctx context.Context, partition int) error {
	if p.broken != nil {
		return p.broken
	}
	var parts []int
	for i := range p.batches {
		if (partition < 0 || i == partition) && len(p.batches[i].records) > 0 {
			parts = append(parts, i)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	if err := p.addPartitions(ctx, parts); err != nil {
		return p.fail(err)
	}
	// One RawProduce per partition (kafka-go sends one partition per raw
	// request), concurrently: the partitions are independent logs.
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for j, part := range parts {
		raw, err := p.encode(part)
		if err != nil {
			return p.fail(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[j] = p.produce(ctx, part, raw)
		}()
	}
	wg.Wait()
	for _, part := range parts {
		// Reuse the slice, but drop the references to sent records so
		// their encoding slabs can be freed.
		clear(p.batches[part].records)
		p.batches[part] = partBatch{records: p.batches[part].records[:0]}
	}
	if err := errors.Join(errs...); err != nil {
		return p.fail(err)
	}
	return nil
}

// fail poisons the session: after a failed request its sequences and
// its transaction's content are unknown.
func (p *txnProducer) fail(err error) error {
	if isFencing(err) {
		err = fencedError(p.handle.TransactionalID, err)
	}
	p.broken = err
	return err
}

// addPartitions adds the partitions not yet in the transaction.
func (p *txnProducer) addPartitions(ctx context.Context, parts []int) error {
	var add []kafka.AddPartitionToTxn
	for _, part := range parts {
		if !p.added[part] {
			add = append(add, kafka.AddPartitionToTxn{Partition: part})
		}
	}
	if len(add) == 0 {
		return nil
	}
	err := retryConcurrent(ctx, func() error {
		res, err := p.c.AddPartitionsToTxn(ctx, &kafka.AddPartitionsToTxnRequest{
			TransactionalID: p.handle.TransactionalID,
			ProducerID:      int(p.handle.ProducerID),
			ProducerEpoch:   int(p.handle.Epoch),
			Topics:          map[string][]kafka.AddPartitionToTxn{p.topic: add},
		})
		if err != nil {
			return err
		}
		for _, r := range res.Topics[p.topic] {
			if r.Error != nil {
				return fmt.Errorf("partition %d: %w", r.Partition, r.Error)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("kafka: AddPartitionsToTxn for transactional id '%s': %w", p.handle.TransactionalID, err)
	}
	for _, a := range add {
		p.added[a.Partition] = true
	}
	return nil
}

// Offsets in a v2 record batch (KIP-98), after the 4-byte size prefix
// that RecordSet.WriteTo writes before the batch.
const (
	batchStart     = 4
	offCRC         = batchStart + 17
	offAttributes  = batchStart + 21
	offProducerID  = batchStart + 43
	offEpoch       = batchStart + 51
	offBaseSeq     = batchStart + 53
	offRecordCount = batchStart + 57
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// encode renders partition's batch as a transactional v2 record batch
// of this session: kafka-go encodes it with producer id, epoch and
// sequence -1, so they are patched in here and the CRC-32C, which
// covers everything from the attributes on, is recomputed.
func (p *txnProducer) encode(part int) ([]byte, error) {
	b := &p.batches[part]
	p.buf.Reset()
	p.recs = p.recs[:0]
	for _, r := range b.records {
		p.recs = append(p.recs, protocol.Record{Time: r.ts, Key: protocol.NewBytes(r.key), Value: protocol.NewBytes(r.value), Headers: r.headers})
	}
	rs := protocol.RecordSet{Version: 2, Attributes: protocol.Transactional, Records: protocol.NewRecordReader(p.recs...)}
	if _, err := rs.WriteTo(&p.buf); err != nil {
		return nil, fmt.Errorf("kafka: encoding a record batch: %w", err)
	}
	clear(p.recs)
	raw := bytes.Clone(p.buf.Bytes())
	if len(raw) < offRecordCount+4 || raw[batchStart+16] != 2 {
		return nil, fmt.Errorf("kafka: internal error: kafka-go did not encode a v2 record batch")
	}
	if n := binary.BigEndian.Uint32(raw[offRecordCount:]); int(n) != len(b.records) {
		return nil, fmt.Errorf("kafka: internal error: batch holds %d records, want %d", n, len(b.records))
	}
	binary.BigEndian.PutUint64(raw[offProducerID:], uint64(p.handle.ProducerID))
	binary.BigEndian.PutUint16(raw[offEpoch:], uint16(p.handle.Epoch))
	binary.BigEndian.PutUint32(raw[offBaseSeq:], uint32(p.seq[part]))
	binary.BigEndian.PutUint32(raw[offCRC:], crc32.Checksum(raw[offAttributes:], castagnoli))
	// Sequences wrap to 0 after MaxInt32, as Kafka's producer does.
	p.seq[part] = int32((int64(p.seq[part]) + int64(len(b.records))) % (1 << 31))
	return raw, nil
}

// produce sends one encoded batch to partition with acks=all.
func (p *txnProducer) produce(ctx context.Context, part int, raw []byte) error {
	res, err := p.c.RawProduce(ctx, &kafka.RawProduceRequest{
		Topic:           p.topic,
		Partition:       part,
		RequiredAcks:    kafka.RequireAll,
		TransactionalID: p.handle.TransactionalID,
		RawRecords:      protocol.RawRecordSet{Reader: bytes.NewReader(raw)},
	})
	if err == nil && res != nil && res.Error != nil {
		err = res.Error
	}
	if err == nil && res != nil && len(res.RecordErrors) > 0 {
		var msgs []string
		for i, e := range res.RecordErrors {
			msgs = append(msgs, fmt.Sprintf("record %d: %v", i, e))
		}
		err = errors.New(strings.Join(msgs, "; "))
	}
	if err != nil {
		return fmt.Errorf("kafka: producing to %s/%d with transactional id '%s': %w", p.topic, part, p.handle.TransactionalID, err)
	}
	return nil
}

// preCommit flushes every batch and returns the handle that commits the
// transaction. The transaction stays open on the broker until endTxn.
func (p *txnProducer) preCommit(ctx context.Context) (txnHandle, error) {
	if err := p.flush(ctx, -1); err != nil {
		return txnHandle{}, err
	}
	p.inTxn = false
	h := p.handle
	h.Empty = true
	for _, a := range p.added {
		h.Empty = h.Empty && !a
	}
	return h, nil
}

// abort drops the buffered records and aborts the transaction, if the
// broker has one. A broken session is left to whoever re-initialises
// the id, which aborts its transaction.
func (p *txnProducer) abort(ctx context.Context) error {
	for i := range p.batches {
		p.batches[i] = partBatch{}
	}
	p.inTxn = false
	if p.broken != nil {
		return nil
	}
	started := false
	for _, a := range p.added {
		started = started || a
	}
	if !started {
		return nil // nothing reached the broker
	}
	if err := endTxn(ctx, p.c, p.handle, false); err != nil {
		return p.fail(fmt.Errorf("kafka: aborting the transaction of '%s': %w", p.handle.TransactionalID, err))
	}
	return nil
}
