package kafka

// The 'kafka' and 'upsert-kafka' sinks, with Flink's option names.
//
// 'sink.delivery-guarantee' picks how rows reach the topic:
//
//   - none: kafka-go's Writer, asynchronous, acks=all; a failed write is
//     logged and fails the job at its next row or barrier;
//   - at-least-once (the default, as in Flink): the same Writer, whose
//     acknowledgements the checkpoint barrier waits for, so that
//     everything before it is in the topic when the checkpoint completes
//     (a restart may write later rows again);
//   - exactly-once: the transactional producer (producer.go) run by the
//     two-phase-commit framework (connectors/twophase, see sink_txn.go):
//     rows between two barriers form one Kafka transaction, pre-committed
//     at the barrier and committed when the checkpoint completes, so a
//     read_committed reader sees every row once.
//
// The 'kafka' sink is append-only (insert-only input), as in Flink;
// 'upsert-kafka' (upsert.go) writes a changelog by primary key.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// Delivery guarantees ('sink.delivery-guarantee').
const (
	guaranteeNone        = "none"
	guaranteeAtLeastOnce = "at-least-once"
	guaranteeExactlyOnce = "exactly-once"
)

// defaultTxnTimeout is 'properties.transaction.timeout.ms' when unset:
// 15 minutes, the default transaction.max.timeout.ms of Kafka brokers
// (and kfake's). Flink's default of 1 hour is rejected by a broker with
// default settings ("Invalid Transaction Timeout").
const defaultTxnTimeout = 15 * time.Minute

// sinkOptionDefs are the options of the 'kafka' connector's sink side.
// The connector's Options (connector.go) include them.
func sinkOptionDefs() []connectors.OptionDef {
	return []connectors.OptionDef{
		{Key: "topic", Required: true, Description: "the topic to write (a single topic)"},
		{Key: "properties.bootstrap.servers", Required: true, Description: "comma-separated host:port list of Kafka brokers"},
		{Key: "format", Description: "the value format: 'json', 'csv' or 'raw' (alias of 'value.format')"},
		{Key: "value.format", Description: "the value format: 'json', 'csv' or 'raw'"},
		{Key: "key.format", Description: "the key format: 'json', 'csv' or 'raw'; needs 'key.fields'"},
		{Key: "key.fields", Description: "';'-separated columns that form the record key; without it keys are null"},
		{Key: "value.fields-include", Kind: config.Enum, Enum: []string{"ALL", "EXCEPT_KEY"}, Default: "ALL", Description: "'ALL' or 'EXCEPT_KEY': whether the key columns are also in the value"},
		{Key: "sink.delivery-guarantee", Kind: config.Enum, Enum: []string{guaranteeNone, guaranteeAtLeastOnce, guaranteeExactlyOnce}, Default: guaranteeAtLeastOnce, Description: "'none', 'at-least-once' or 'exactly-once' (Kafka transactions committed on checkpoint completion)"},
		{Key: "sink.transactional-id-prefix", Description: "prefix of the transactional ids (<prefix>-<subtask>-<n>); required for exactly-once, unique per job"},
		{Key: "sink.partitioner", Kind: config.Enum, Enum: []string{"default", "fixed", "round-robin"}, Default: "default", Description: "'default' (murmur2 of the key as Kafka's partitioner, sticky for null keys), 'fixed' (subtask i writes partition i mod n) or 'round-robin'"},
		{Key: "sink.parallelism", Kind: config.Int, Min: 1, Description: "the sink's parallelism"},
		{Key: "properties.transaction.timeout.ms", Kind: config.Duration, Default: strconv.Itoa(int(defaultTxnTimeout / time.Millisecond)),
			Description: "the Kafka transaction timeout for exactly-once; at least twice 'execution.checkpointing.interval', at most the broker's transaction.max.timeout.ms"},
		{Key: "json.#", Prefix: true, Description: "options of the json format (accepted; the encoder has none)"},
		{Key: "csv.#", Prefix: true, Description: "options of the csv format: csv.field-delimiter, csv.quote-character, csv.disable-quote-character, csv.escape-character, csv.null-literal, csv.array-element-delimiter"},
		{Key: "key.csv.#", Prefix: true, Description: "csv options of the key format"},
		{Key: "value.csv.#", Prefix: true, Description: "csv options of the value format"},
		{Key: "key.json.#", Prefix: true, Description: "json options of the key format"},
		{Key: "value.json.#", Prefix: true, Description: "json options of the value format"},
		{Key: "key.raw.#", Prefix: true, Description: "raw options of the key format"},
		{Key: "value.raw.#", Prefix: true, Description: "raw options of the value format"},
	}
}

// sinkConfig is a validated Kafka sink table.
type sinkConfig struct {
	table     *connectors.Table
	topic     string
	servers   []string
	upsert    bool // upsert-kafka: key = primary key, -D = tombstone
	keyCols   []int
	valueCols []int
	keyFmt    string
	valueFmt  string
	keyCSV    format.CSVOptions
	valueCSV  format.CSVOptions
	keyRaw    format.RawOptions
	valueRaw  format.RawOptions
	// headersCol and timeCol are the positions, in the sink's rows, of
	// the written 'headers' and 'timestamp' metadata columns; -1 if none.
	headersCol, timeCol int

	guarantee   string
	prefix      string
	partitioner string
	parallelism int
	txnTimeout  time.Duration
}

// newSink is the 'kafka' connector's NewSink: it validates the table's
// sink options and returns its TableSink. connector.go calls it.
func newSink(t *connectors.Table, env *connectors.Env) (connectors.TableSink, error) {
	if c, err := connectors.Lookup("kafka"); err == nil {
		if err := connectors.CheckOptions(c, t.Options); err != nil {
			return nil, err
		}
	}
	cfg, err := parseSinkConfig(t, false)
	if err != nil {
		return nil, err
	}
	return &tableSink{cfg: cfg}, nil
}

// parseSinkConfig reads the options shared by 'kafka' and
// 'upsert-kafka'.
func parseSinkConfig(t *connectors.Table, upsert bool) (*sinkConfig, error) {
	o := t.Options
	cfg := &sinkConfig{table: t, topic: o["topic"], upsert: upsert}
	if cfg.topic == "" || strings.ContainsAny(cfg.topic, ";,") {
		return nil, fmt.Errorf("option 'topic' must name one topic, got '%s'", cfg.topic)
	}
	for _, s := range strings.Split(o["properties.bootstrap.servers"], ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.servers = append(cfg.servers, s)
		}
	}
	if len(cfg.servers) == 0 {
		return nil, fmt.Errorf("option 'properties.bootstrap.servers' is empty")
	}

	// Formats.
	cfg.valueFmt = o["value.format"]
	if f, ok := o["format"]; ok {
		if cfg.valueFmt != "" && cfg.valueFmt != f {
			return nil, fmt.Errorf("options 'format' and 'value.format' disagree ('%s' and '%s'); set one", f, cfg.valueFmt)
		}
		cfg.valueFmt = f
	}
	if cfg.valueFmt == "" {
		return nil, fmt.Errorf("option 'value.format' (or 'format') is required: 'json', 'csv' or 'raw'")
	}
	if err := checkFormat("value.format", cfg.valueFmt); err != nil {
		return nil, err
	}
	cfg.keyFmt = o["key.format"]
	if cfg.keyFmt != "" {
		if err := checkFormat("key.format", cfg.keyFmt); err != nil {
			return nil, err
		}
	}
	var err error
	if cfg.valueCSV, err = format.ParseCSVOptions(formatOptions(o, "value.")); err != nil {
		return nil, fmt.Errorf("value format: %w", err)
	}
	if cfg.keyCSV, err = format.ParseCSVOptions(formatOptions(o, "key.")); err != nil {
		return nil, fmt.Errorf("key format: %w", err)
	}

	// Key columns.
	if upsert {
		if len(t.PrimaryKey) == 0 {
			return nil, fmt.Errorf("'upsert-kafka' tables require a PRIMARY KEY: it is the record key, and a deletion is a tombstone for it")
		}
		if _, ok := o["key.fields"]; ok {
			return nil, fmt.Errorf("option 'key.fields' is not used by 'upsert-kafka': the record key is the PRIMARY KEY")
		}
		if cfg.keyFmt == "" {
			return nil, fmt.Errorf("'upsert-kafka' requires option 'key.format' ('json' or 'csv')")
		}
		cfg.keyCols = append([]int(nil), t.PrimaryKey...)
	} else if kf, ok := o["key.fields"]; ok {
		if cfg.keyFmt == "" {
			return nil, fmt.Errorf("option 'key.fields' needs 'key.format' ('json' or 'csv')")
		}
		for _, name := range strings.Split(kf, ";") {
			name = strings.TrimSpace(name)
			i := columnIndex(t, name)
			if i < 0 {
				return nil, fmt.Errorf("option 'key.fields': table '%s' has no column '%s'", t.Name, name)
			}
			cfg.keyCols = append(cfg.keyCols, i)
		}
	} else if cfg.keyFmt != "" {
		return nil, fmt.Errorf("option 'key.format' needs 'key.fields' (the columns of the record key)")
	}
	switch inc := strings.ToUpper(connectors.Option(o, "value.fields-include", "ALL")); inc {
	case "ALL":
		for i := range t.Columns {
			cfg.valueCols = append(cfg.valueCols, i)
		}
	case "EXCEPT_KEY":
		for i := range t.Columns {
			if !contains(cfg.keyCols, i) {
				cfg.valueCols = append(cfg.valueCols, i)
			}
		}
		if len(cfg.valueCols) == 0 {
			return nil, fmt.Errorf("option 'value.fields-include' = 'EXCEPT_KEY' leaves the value without columns")
		}
	default:
		return nil, fmt.Errorf("option 'value.fields-include' must be 'ALL' or 'EXCEPT_KEY', got '%s'", inc)
	}

	// Written metadata (connectors.Table.WrittenMetadata), after the
	// physical columns.
	cfg.headersCol, cfg.timeCol = -1, -1
	for k, m := range t.WrittenMetadata() {
		switch m.Key {
		case "headers":
			cfg.headersCol = len(t.Columns) + k
		case "timestamp":
			cfg.timeCol = len(t.Columns) + k
		}
	}

	pick := func(cols []int) []connectors.Column {
		var cs []connectors.Column
		for _, i := range cols {
			cs = append(cs, t.Columns[i])
		}
		return cs
	}
	if cfg.keyFmt == "csv" {
		if err := format.CheckCSVColumns(pick(cfg.keyCols)); err != nil {
			return nil, fmt.Errorf("key format: %w", err)
		}
	}
	if cfg.valueFmt == "csv" {
		if err := format.CheckCSVColumns(pick(cfg.valueCols)); err != nil {
			return nil, fmt.Errorf("value format: %w", err)
		}
	}
	if cfg.keyFmt == "raw" {
		if cfg.keyRaw, err = format.ParseRawOptions(formatOptions(o, "key."), pick(cfg.keyCols)); err != nil {
			return nil, fmt.Errorf("key format: %w", err)
		}
	}
	if cfg.valueFmt == "raw" {
		if cfg.valueRaw, err = format.ParseRawOptions(formatOptions(o, "value."), pick(cfg.valueCols)); err != nil {
			return nil, fmt.Errorf("value format: %w", err)
		}
	}

	// Delivery.
	cfg.guarantee = strings.ToLower(connectors.Option(o, "sink.delivery-guarantee", guaranteeAtLeastOnce))
	switch cfg.guarantee {
	case guaranteeNone, guaranteeAtLeastOnce, guaranteeExactlyOnce:
	default:
		return nil, fmt.Errorf("option 'sink.delivery-guarantee' must be 'none', 'at-least-once' or 'exactly-once', got '%s'", cfg.guarantee)
	}
	cfg.prefix = o["sink.transactional-id-prefix"]
	if cfg.guarantee == guaranteeExactlyOnce && cfg.prefix == "" {
		return nil, fmt.Errorf("'sink.delivery-guarantee' = 'exactly-once' requires option 'sink.transactional-id-prefix', unique to this job: its transactional ids fence older instances of the same job")
	}
	cfg.partitioner = strings.ToLower(connectors.Option(o, "sink.partitioner", "default"))
	if upsert {
		cfg.partitioner = "default" // by key, so that a key's changes stay in order
	}
	switch cfg.partitioner {
	case "default", "fixed", "round-robin":
	default:
		return nil, fmt.Errorf("option 'sink.partitioner' must be 'default', 'fixed' or 'round-robin', got '%s'", cfg.partitioner)
	}
	if cfg.parallelism, err = connectors.Int(o, "sink.parallelism", 0, 1); err != nil {
		return nil, err
	}
	if cfg.txnTimeout, err = connectors.Duration(o, "properties.transaction.timeout.ms", defaultTxnTimeout); err != nil {
		return nil, err
	}
	if cfg.txnTimeout < time.Millisecond {
		return nil, fmt.Errorf("option 'properties.transaction.timeout.ms' must be a positive number of milliseconds, got '%s'", o["properties.transaction.timeout.ms"])
	}
	return cfg, nil
}

func checkFormat(key, f string) error {
	switch f {
	case "json", "csv", "raw":
		return nil
	}
	return fmt.Errorf("option '%s': the Kafka sinks write 'json', 'csv' or 'raw', not '%s'", key, f)
}

// formatOptions returns the csv./json./raw. options of one side (prefix
// "key." or "value."): the prefixed ones, and for the value also the
// unprefixed ones, as Flink reads 'csv.field-delimiter' with 'format'.
func formatOptions(o map[string]string, prefix string) map[string]string {
	m := map[string]string{}
	if prefix == "value." {
		for k, v := range o {
			if strings.HasPrefix(k, "csv.") || strings.HasPrefix(k, "json.") || strings.HasPrefix(k, "raw.") {
				m[k] = v
			}
		}
	}
	for k, v := range o {
		if rest, ok := strings.CutPrefix(k, prefix); ok && (strings.HasPrefix(rest, "csv.") || strings.HasPrefix(rest, "json.") || strings.HasPrefix(rest, "raw.")) {
			m[rest] = v
		}
	}
	return m
}

func columnIndex(t *connectors.Table, name string) int {
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// CheckCheckpointInterval is called by the engine at job start with the
// job's execution.checkpointing.interval (0 without checkpointing) and
// whether its input is bounded. An exactly-once sink's transaction stays
// open from one barrier until the checkpoint after it completes, at
// least one interval and usually more; a broker aborts a transaction
// older than the timeout, which loses its rows. Flink's most reported
// exactly-once pitfall, caught here before any row is written.
func (c *sinkConfig) CheckCheckpointInterval(interval time.Duration, bounded bool) error {
	if c.guarantee != guaranteeExactlyOnce {
		return nil
	}
	if interval <= 0 {
		if bounded {
			return nil // one transaction per subtask, committed at the end of the input
		}
		return fmt.Errorf("'sink.delivery-guarantee' = 'exactly-once' commits on checkpoints, and this unbounded job has none: SET 'execution.checkpointing.interval'")
	}
	if c.txnTimeout < 2*interval {
		return fmt.Errorf("'properties.transaction.timeout.ms' (%d ms) must be at least twice 'execution.checkpointing.interval' (%s): a Kafka transaction stays open from one checkpoint barrier until the checkpoint after it completes, and the broker aborts it after the timeout, losing its rows",
			c.txnTimeout.Milliseconds(), interval)
	}
	return nil
}

// tableSink is the 'kafka' (and 'upsert-kafka') TableSink.
type tableSink struct{ cfg *sinkConfig }

var _ connectors.StatefulSink = (*tableSink)(nil)

func (s *tableSink) Encoding() dyntable.SinkEncoding {
	if s.cfg.upsert {
		return dyntable.UpsertEncoding
	}
	return dyntable.AppendOnly
}

// UpdatesHint: Flink's kafka connector is append-only; upsert-kafka
// writes updates.
func (s *tableSink) UpdatesHint() string {
	return "the 'upsert-kafka' connector, with a PRIMARY KEY (... NOT ENFORCED), writes an updating query to a topic"
}

func (s *tableSink) Parallelism() int { return s.cfg.parallelism }

// KeepsState: only the exactly-once sink keeps transactions in
// checkpoints.
func (s *tableSink) KeepsState() bool { return s.cfg.guarantee == guaranteeExactlyOnce }

// CheckCheckpointInterval: see sinkConfig.CheckCheckpointInterval.
func (s *tableSink) CheckCheckpointInterval(interval time.Duration, bounded bool) error {
	return s.cfg.CheckCheckpointInterval(interval, bounded)
}

func (s *tableSink) Create(subtask, parallelism int) (dataflow.Operator, error) {
	if s.cfg.guarantee == guaranteeExactlyOnce {
		return twophase.NewOperator(s.cfg.table.Name, newTxnHandler(s.cfg), twophase.Options{}), nil
	}
	return &writerOp{cfg: s.cfg, wait: s.cfg.guarantee == guaranteeAtLeastOnce}, nil
}

// recordEncoder turns changes into record keys and values.
type recordEncoder struct {
	cfg      *sinkConfig
	key, val format.Encoder
	keyRow   types.Row
	valRow   types.Row
	slab     []byte
}

func newRecordEncoder(cfg *sinkConfig) *recordEncoder {
	e := &recordEncoder{cfg: cfg}
	pick := func(cols []int) []connectors.Column {
		var cs []connectors.Column
		for _, i := range cols {
			cs = append(cs, cfg.table.Columns[i])
		}
		return cs
	}
	mk := func(f string, cs []connectors.Column, o format.CSVOptions, ro format.RawOptions) format.Encoder {
		switch f {
		case "csv":
			return format.NewCSVEncoder(cs, o)
		case "raw":
			return format.NewRawCodec(cs, ro)
		}
		return format.NewJSONEncoder(cs)
	}
	if len(cfg.keyCols) > 0 {
		e.key = mk(cfg.keyFmt, pick(cfg.keyCols), cfg.keyCSV, cfg.keyRaw)
		e.keyRow = make(types.Row, len(cfg.keyCols))
	}
	e.val = mk(cfg.valueFmt, pick(cfg.valueCols), cfg.valueCSV, cfg.valueRaw)
	e.valRow = make(types.Row, len(cfg.valueCols))
	return e
}

// slabSize is the size of the blocks records are encoded into: one
// allocation for many records, freed when the last record in it is sent.
const slabSize = 64 << 10

// appendTo encodes cols of row with enc into the current slab and
// returns the record's bytes, which stay valid (they are never
// overwritten: a full slab is replaced, not reused).
func (e *recordEncoder) appendTo(enc format.Encoder, scratch types.Row, cols []int, row types.Row) []byte {
	for j, i := range cols {
		scratch[j] = row[i]
	}
	if cap(e.slab)-len(e.slab) < 256 {
		e.slab = make([]byte, 0, slabSize)
	}
	start := len(e.slab)
	e.slab = enc.Append(e.slab, scratch)
	b := e.slab[start:len(e.slab):len(e.slab)]
	if len(e.slab) > slabSize {
		e.slab = nil // it outgrew the slab: the next record starts a new one
	}
	return b
}

// prepare rewrites a chunk for the sink: upsert-kafka drops a -U for its
// +U, or turns it into a deletion when none follows
// (dyntable.UpsertEncoding).
func (e *recordEncoder) prepare(c *dyntable.Chunk) *dyntable.Chunk {
	if e.cfg.upsert {
		c, _ = dyntable.UpsertEncoding.Encode(c, e.cfg.table.PrimaryKey)
	}
	return c
}

// encode returns the record of one change of a prepared chunk. A deletion
// is a tombstone (nil value) in upsert-kafka; an append-only sink
// receiving anything but +I, or a -U left in a chunk, is an internal
// error (the planner rejects such queries; prepare removes -U).
func (e *recordEncoder) encode(ch dyntable.Change) (key, value []byte, err error) {
	switch ch.Kind {
	case dyntable.Insert:
	case dyntable.UpdateAfter, dyntable.Delete:
		if !e.cfg.upsert {
			return nil, nil, fmt.Errorf("kafka: internal error: %s reached the append-only sink of table '%s'", ch.Kind, e.cfg.table.Name)
		}
	default:
		return nil, nil, fmt.Errorf("kafka: internal error: %s reached the sink of table '%s'", ch.Kind, e.cfg.table.Name)
	}
	if e.key != nil {
		key = e.appendTo(e.key, e.keyRow, e.cfg.keyCols, ch.Row)
		if raw, ok := e.key.(*format.RawCodec); ok && raw.IsNull(e.keyRow) {
			key = nil // the raw format writes NULL as a null key
		}
	}
	if ch.Kind != dyntable.Delete {
		value = e.appendTo(e.val, e.valRow, e.cfg.valueCols, ch.Row)
		if raw, ok := e.val.(*format.RawCodec); ok && raw.IsNull(e.valRow) {
			value = nil // a null value, as Flink's raw format writes NULL
		}
	}
	return key, value, nil
}

// metadata returns the record headers and timestamp a change's written
// metadata columns hold, as Flink's sink writes them: a NULL map is no
// headers, and an entry whose key or value is NULL is left out; a NULL
// (or no) timestamp is the zero time, which the producer replaces with
// the time of writing.
func (e *recordEncoder) metadata(row types.Row) (headers []kafka.Header, ts time.Time) {
	if c := e.cfg.headersCol; c >= 0 && !row[c].IsNull() {
		es := row[c].Elems()
		for i := 0; i+1 < len(es); i += 2 {
			if es[i].IsNull() || es[i+1].IsNull() {
				continue
			}
			headers = append(headers, kafka.Header{Key: es[i].Str(), Value: []byte(es[i+1].Str())})
		}
	}
	if c := e.cfg.timeCol; c >= 0 && !row[c].IsNull() {
		ts = time.Unix(0, row[c].Timestamp())
	}
	return headers, ts
}

// partitioner chooses a record's partition, as 'sink.partitioner' says.
// It is also a kafka-go Balancer, for the Writer of the non-transactional
// sinks. It is used from one goroutine.
type partitioner struct {
	mode    string
	subtask int
	next    int // round-robin and sticky: the current partition
	left    int // sticky: records left before moving on
	all     []int
}

// stickyRecords is how many null-key records go to one partition before
// the next, like Kafka's sticky partitioner moving on per batch.
const stickyRecords = 1000

func newPartitioner(mode string, subtask int) *partitioner {
	return &partitioner{mode: mode, subtask: subtask, next: subtask}
}

func (p *partitioner) partition(key []byte, n int) int {
	switch p.mode {
	case "fixed":
		return p.subtask % n
	case "round-robin":
		p.next = (p.next + 1) % n
		return p.next
	}
	if key != nil {
		// Kafka's default partitioner: murmur2 of the key bytes,
		// kafka-go's port of the Java function.
		for len(p.all) < n {
			p.all = append(p.all, len(p.all))
		}
		return kafka.Murmur2Balancer{Consistent: true}.Balance(kafka.Message{Key: key}, p.all[:n]...)
	}
	if p.left <= 0 {
		p.next = (p.next + 1) % n
		p.left = stickyRecords
	}
	p.left--
	return p.next % n
}

// Balance implements kafka.Balancer.
func (p *partitioner) Balance(msg kafka.Message, partitions ...int) int {
	return partitions[p.partition(msg.Key, len(partitions))]
}

// writerOp is the sink subtask of the 'none' and 'at-least-once'
// guarantees, on kafka-go's Writer (acks=all) in asynchronous mode: rows
// are handed to the Writer as they come, which batches them per
// partition and sends them in the background. The Writer reports each
// acknowledged (or failed) batch to Completion, which counts them.
//
// At-least-once: SnapshotState waits until every row handed over before
// the barrier is acknowledged, so that when the checkpoint completes its
// rows are in the topic (a restart from it may write later rows again).
// None: nothing waits. Either way a failed write fails the job at its
// next row, barrier or end, and at most maxInFlight rows are
// unacknowledged at a time (backpressure).
type writerOp struct {
	dataflow.BaseOperator
	cfg  *sinkConfig
	wait bool // at-least-once: the barrier waits for acknowledgements
	w    *kafka.Writer
	enc  *recordEncoder
	ctx  context.Context
	msgs []kafka.Message

	mu       sync.Mutex
	cond     *sync.Cond
	unwake   func() bool // stops the cancellation wake-up
	sent     int64       // rows handed to the Writer
	acked    int64       // rows the Writer reported done (acknowledged or failed)
	asyncErr error
}

// maxInFlight bounds the rows handed to the Writer and not yet
// acknowledged.
const maxInFlight = 1 << 17

var (
	_ dataflow.Operator = (*writerOp)(nil)
)

func (o *writerOp) Open(oc *dataflow.OpContext) error {
	o.ctx = oc.Context()
	log := oc.Logger()
	o.cond = sync.NewCond(&o.mu)
	o.enc = newRecordEncoder(o.cfg)
	o.w = &kafka.Writer{
		Addr:         kafka.TCP(o.cfg.servers...),
		Topic:        o.cfg.topic,
		Balancer:     newPartitioner(o.cfg.partitioner, oc.Subtask),
		RequiredAcks: kafka.RequireAll, // the Writer's default is none
		// A topic that does not exist yet is created by a broker that
		// creates topics on first use, as for Flink's producer.
		AllowAutoTopicCreation: true,
		BatchSize:              10000,
		BatchBytes:             maxBatchBytes,
		BatchTimeout:           5 * time.Millisecond,
		Async:                  true,
		Completion: func(msgs []kafka.Message, err error) {
			o.mu.Lock()
			defer o.mu.Unlock()
			if err != nil && o.asyncErr == nil {
				log.Error("kafka sink: write failed", "table", o.cfg.table.Name, "error", err)
				o.asyncErr = err
			}
			o.acked += int64(len(msgs))
			o.cond.Broadcast()
		},
	}
	// A cancelled job must not leave waitAcked blocked.
	o.unwake = context.AfterFunc(o.ctx, func() {
		o.mu.Lock()
		o.cond.Broadcast()
		o.mu.Unlock()
	})
	return nil
}

func (o *writerOp) errLocked() error {
	if o.asyncErr != nil {
		return fmt.Errorf("kafka sink '%s': writing to topic '%s': %w", o.cfg.table.Name, o.cfg.topic, o.asyncErr)
	}
	return nil
}

// waitAcked waits until at most limit rows are unacknowledged.
func (o *writerOp) waitAcked(limit int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for o.asyncErr == nil && o.sent-o.acked > limit {
		if err := o.ctx.Err(); err != nil {
			return err
		}
		o.cond.Wait()
	}
	return o.errLocked()
}

func (o *writerOp) ProcessChunk(_ int, c *dyntable.Chunk, _ dataflow.Collector) error {
	if err := o.waitAcked(maxInFlight); err != nil {
		return err
	}
	o.msgs = o.msgs[:0]
	for _, ch := range o.enc.prepare(c).Changes {
		k, v, err := o.enc.encode(ch)
		if err != nil {
			return err
		}
		hs, ts := o.enc.metadata(ch.Row)
		o.msgs = append(o.msgs, kafka.Message{Key: k, Value: v, Headers: hs, Time: ts})
	}
	if len(o.msgs) == 0 {
		return nil
	}
	o.mu.Lock()
	o.sent += int64(len(o.msgs))
	o.mu.Unlock()
	// The Writer keeps the messages until they are sent: hand it a copy.
	if err := o.w.WriteMessages(o.ctx, append([]kafka.Message(nil), o.msgs...)...); err != nil {
		return fmt.Errorf("kafka sink '%s': writing to topic '%s': %w", o.cfg.table.Name, o.cfg.topic, err)
	}
	return nil
}

// SnapshotState, at least once, waits until every row before the
// barrier is acknowledged by the broker.
func (o *writerOp) SnapshotState(dataflow.Barrier) error {
	if !o.wait {
		return o.waitAcked(maxInFlight)
	}
	return o.waitAcked(0)
}

// Finish waits for every write, whatever the guarantee: the job's end
// means its rows are in the topic.
func (o *writerOp) Finish(dataflow.Collector) error {
	if err := o.w.Close(); err != nil {
		return err
	}
	o.w = nil
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.errLocked()
}

func (o *writerOp) Close() error {
	if o.unwake != nil {
		o.unwake()
	}
	if o.w != nil {
		return o.w.Close()
	}
	return nil
}
