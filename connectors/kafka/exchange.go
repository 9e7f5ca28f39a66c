package kafka

// The Kafka side of a cluster stage exchange (package cluster): a stage
// writes its output rows into an internal topic through the exactly-once
// sink's transactional producer and two-phase-commit handler
// (sink_txn.go), and the next stage reads one partition of it
// read_committed through the source's fetch path (fetch.go). The
// cluster package owns what the records mean (its row encoding, its
// watermark and end-of-input markers, which partition a row goes to);
// this file only moves records.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dyntable"
)

// RecordsFunc turns a chunk into records of a topic of partitions
// partitions, handing each to add. add keeps key and value without
// copying them: each record needs slices of its own.
type RecordsFunc func(c *dyntable.Chunk, partitions int, add func(partition int, key, value []byte) error) error

// ExchangeSinkConfig configures the writer of an internal topic.
type ExchangeSinkConfig struct {
	Servers []string
	Topic   string
	// TransactionalIDPrefix names the writer's transactional ids,
	// <prefix>-<subtask>-<k> (see sink_txn.go): one prefix per task, so
	// that a task restarted elsewhere fences its former owner.
	TransactionalIDPrefix string
	TxnTimeout            time.Duration
	// Name names the writer in errors and logs.
	Name    string
	Records RecordsFunc
}

// ExchangeSink is the two-phase-commit handler of a stage's writer. Wrap
// it in a twophase.Operator; WriteRecord adds records that are not rows
// (markers) to the operator's open transaction.
type ExchangeSink struct {
	*txnHandler
}

var (
	_ twophase.Handler = (*ExchangeSink)(nil)
	_ twophase.Extras  = (*ExchangeSink)(nil)
)

// NewExchangeSink returns the handler; it connects in Open.
func NewExchangeSink(c ExchangeSinkConfig) *ExchangeSink {
	timeout := c.TxnTimeout
	if timeout <= 0 {
		timeout = 15 * time.Minute
	}
	cfg := &sinkConfig{table: &connectors.Table{Name: c.Name}, topic: c.Topic, servers: c.Servers,
		guarantee: "exactly-once", prefix: c.TransactionalIDPrefix, txnTimeout: timeout}
	h := newTxnHandler(cfg)
	h.records = c.Records
	return &ExchangeSink{h}
}

// Partitions is the topic's partition count, known after Open.
func (s *ExchangeSink) Partitions() int { return s.nparts }

// WriteRecord adds one record to transaction txn (from
// twophase.Operator.Transaction). key and value are kept, not copied.
func (s *ExchangeSink) WriteRecord(ctx context.Context, txn twophase.Transaction, partition int, key, value []byte) error {
	if partition < 0 || partition >= s.nparts {
		return fmt.Errorf("kafka: internal error: record for partition %d of topic '%s' of %d partitions", partition, s.cfg.topic, s.nparts)
	}
	return txn.(*kafkaTxn).p.add(ctx, partition, key, value, nil, time.Now())
}

// EnsureTopic creates topic with partitions partitions if it does not
// exist, and fails with an error that says what to do if it exists with
// another partition count.
func EnsureTopic(ctx context.Context, servers []string, topic string, partitions int) error {
	c := kafkaClient(servers, 30*time.Second)
	n, err := partitionCountOnce(ctx, c, topic)
	if err != nil && !errors.Is(err, kafkago.UnknownTopicOrPartition) && !errors.Is(err, errNoTopic) {
		return err
	}
	if err != nil {
		res, cerr := c.CreateTopics(ctx, &kafkago.CreateTopicsRequest{Topics: []kafkago.TopicConfig{{
			Topic: topic, NumPartitions: partitions, ReplicationFactor: -1}}})
		if cerr == nil {
			cerr = res.Errors[topic]
		}
		if cerr != nil && !errors.Is(cerr, kafkago.TopicAlreadyExists) {
			return fmt.Errorf("kafka: creating topic '%s' with %d partitions: %w", topic, partitions, cerr)
		}
		// Created here or by another task: wait until it is known.
		for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
			if n, err = partitionCountOnce(ctx, c, topic); err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("kafka: waiting for topic '%s': %w", topic, err)
			case <-time.After(wait):
			}
		}
	}
	if n != partitions {
		return fmt.Errorf("kafka: internal topic '%s' has %d partitions, but the job needs %d (cluster.partitions): "+
			"the partition count is fixed when a job first starts; delete the job's internal topics and checkpoints to change it, or set it back",
			topic, n, partitions)
	}
	return nil
}

// ExchangeRecord is one committed record of an internal topic. Key and
// Value alias the batch's memory: they are valid until Recycle.
type ExchangeRecord struct {
	Offset int64
	// Time is the record's timestamp, in ms since the epoch: when the
	// writer added it to its transaction.
	Time       int64
	Key, Value []byte
}

// ExchangeBatch is one fetch of a partition: its readable records, and
// Next, the offset to continue from (past aborted records and
// transaction markers too), which is the position a checkpoint stores.
type ExchangeBatch struct {
	Records []ExchangeRecord
	Next    int64
	res     fetchResult
}

// ExchangeReader reads one partition of an internal topic,
// read_committed, from a given offset on.
//
// Lifecycle: NewExchangeReader, then Run once (in a goroutine), Recycle
// each batch once decoded, and Close after Run returned.
type ExchangeReader struct {
	servers []string
	topic   string
	part    int32
	from    int64
	log     *slog.Logger
	tr      *kafkago.Transport
	f       *fetcher
}

// NewExchangeReader prepares a reader of topic's partition from offset
// from; from < 0 starts at the partition's first offset.
func NewExchangeReader(servers []string, topic string, partition int, from int64, log *slog.Logger) *ExchangeReader {
	if log == nil {
		log = slog.Default()
	}
	return &ExchangeReader{servers: servers, topic: topic, part: int32(partition), from: from, log: log,
		tr: &kafkago.Transport{ClientID: "streamsql", MetadataTTL: 2 * time.Second}}
}

// Run fetches until ctx ends, sending a batch per fetch on out (empty
// ones too, about every 100 ms while there is nothing to read), and
// closes out when it returns. It returns ctx's error, or a permanent
// fetch error.
func (r *ExchangeReader) Run(ctx context.Context, out chan<- ExchangeBatch) error {
	defer close(out)
	addr := kafkago.TCP(r.servers...)
	from := r.from
	if from < 0 {
		c := &kafkago.Client{Addr: addr, Transport: r.tr, Timeout: openTimeout}
		res, err := c.ListOffsets(ctx, &kafkago.ListOffsetsRequest{IsolationLevel: kafkago.ReadCommitted,
			Topics: map[string][]kafkago.OffsetRequest{r.topic: {kafkago.FirstOffsetOf(int(r.part))}}})
		if err != nil {
			return fmt.Errorf("kafka: listing the first offset of topic '%s' partition %d: %w", r.topic, r.part, err)
		}
		from = 0
		for _, p := range res.Topics[r.topic] {
			if p.Partition == int(r.part) {
				if p.Error != nil {
					return fmt.Errorf("kafka: listing the first offset of topic '%s' partition %d: %w", r.topic, r.part, p.Error)
				}
				from = p.FirstOffset
			}
		}
	}
	r.f = &fetcher{tr: r.tr, addr: addr, isolation: isoReadCommitted,
		splits: []srcSplit{{topic: r.topic, partition: r.part, stop: -1}},
		next:   []int64{from}, leaders: []int{0}, log: r.log,
		free: make(chan []byte, 4), freeRecs: make(chan []fetchedRecord, 4)}
	results := make(chan fetchResult, 1)
	ferr := make(chan error, 1)
	go func() { ferr <- r.f.run(ctx, results) }()
	next := from
	for res := range results {
		b := ExchangeBatch{Next: next, res: res}
		for _, pd := range res.parts {
			for _, rec := range pd.recs {
				b.Records = append(b.Records, ExchangeRecord{Offset: rec.offset, Time: rec.timestamp, Key: rec.key, Value: rec.value})
			}
			b.Next = max(b.Next, pd.next)
		}
		next = b.Next
		select {
		case out <- b:
		case <-ctx.Done():
			r.f.recycle(&b.res)
		}
	}
	return <-ferr
}

// Recycle gives a decoded batch's memory back to the reader.
func (r *ExchangeReader) Recycle(b *ExchangeBatch) {
	if r.f != nil {
		r.f.recycle(&b.res)
	}
	b.Records = nil
}

// Close releases the connections.
func (r *ExchangeReader) Close() { r.tr.CloseIdleConnections() }
