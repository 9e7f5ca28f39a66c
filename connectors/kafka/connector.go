// Package kafka is the 'kafka' and 'upsert-kafka' connectors, on
// github.com/segmentio/kafka-go, the product's only Kafka client.
//
// The 'kafka' connector reads a table (source*.go, fetch.go, format*.go)
// and writes one (sink*.go, producer.go); 'upsert-kafka' writes an
// upsert table (upsert.go). Option names are Flink's.
//
// Reading:
//
//	CREATE TABLE bills (id BIGINT, user_id BIGINT, cents BIGINT, ts TIMESTAMP(3),
//	  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
//	) WITH (
//	  'connector' = 'kafka',
//	  'topic' = 'bills',                       -- or 'topic-pattern' = 'bills-.*'
//	  'properties.bootstrap.servers' = 'localhost:9092',
//	  'properties.group.id' = 'billing',       -- offsets committed for monitoring
//	  'scan.startup.mode' = 'earliest-offset', -- latest-offset, group-offsets (default),
//	                                           -- timestamp, specific-offsets
//	  'scan.bounded.mode' = 'latest-offset',   -- default unbounded
//	  'format' = 'json'                        -- csv, debezium-json
//	);
//
// The source reads under read_committed unless
// 'properties.isolation.level' = 'read_uncommitted': records of aborted
// transactions are dropped using the Fetch response's aborted-transaction
// list, and transaction markers never become rows. Partition i of a topic
// is read by source subtask i mod parallelism. Partition offsets live in
// checkpoints; the consumer group's offsets only start a job
// ('group-offsets') and show its progress: each completed checkpoint's
// offsets are committed to 'properties.group.id'. A table's WATERMARK is
// pushed down into the source, which keeps one watermark per partition
// and emits their minimum; 'table.exec.source.idle-timeout' lets an idle
// partition stop holding it back (source_watermark.go). A malformed
// record fails the job naming its topic, partition and offset, unless
// '<format>.ignore-parse-errors' = 'true' (then it is skipped and counted:
// Source.SkippedRecords, and the counter of Collectors).
//
// METADATA columns read 'topic', 'partition', 'offset', 'timestamp' and
// 'headers'; the sink writes 'timestamp' and 'headers' (the columns not
// declared VIRTUAL).
//
// Not supported: reading record keys
// ('key.fields' is for the sink), partition discovery after the start.
//
// The local broker for tests and demos is in connectors/kafka/broker;
// only tests and the `streamsql kafka` subcommand import it.
package kafka

import (
	"fmt"
	"github.com/streamsql/streamsql/types"

	"github.com/streamsql/streamsql/connectors"
)

func init() { connectors.Register(connector{}) }

// connector is 'connector' = 'kafka'.
type connector struct{}

func (connector) Name() string { return "kafka" }

// MetadataKeys implements connectors.MetadataConnector: the record
// metadata a kafka table's METADATA columns read, with Flink's keys.
func (connector) MetadataKeys() map[string]types.Type {
	return map[string]types.Type{
		"topic":     types.TypeString,
		"partition": types.TypeInt,
		"offset":    types.TypeBigInt,
		"timestamp": types.TimestampType(3),
		"headers":   headersType,
	}
}

// WritableMetadataKeys implements connectors.WritableMetadataConnector:
// the metadata the sink writes, as Flink's: the record's headers and its
// timestamp.
func (connector) WritableMetadataKeys() map[string]types.Type {
	return map[string]types.Type{
		"timestamp": types.TimestampType(3),
		"headers":   headersType,
	}
}

// headersType is the type of the 'headers' metadata, as in Flink.
var headersType = types.MapType(types.TypeString, types.TypeBytes)

// Options lists every option of the connector: the source's first (so
// that 'topic' is not required when 'topic-pattern' is set), then the
// formats', then the sink's (sink.go).
func (connector) Options() []connectors.OptionDef {
	return mergeOptions(sourceOptionDefs, formatOptionDefs, sinkOptionDefs())
}

// NewScan validates the table's source options and returns its source.
// It does not connect: the brokers are first asked in the source's Open.
func (connector) NewScan(t *connectors.Table, _ *connectors.Env) (connectors.ScanSource, error) {
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	if t.Options["value.fields-include"] == "EXCEPT_KEY" {
		return nil, fmt.Errorf("option 'value.fields-include' = 'EXCEPT_KEY': the kafka source reads the columns from the record value only, so the value must include them all")
	}
	return newScan(t)
}

// NewSink returns the table's sink (sink.go).
func (connector) NewSink(t *connectors.Table, env *connectors.Env) (connectors.TableSink, error) {
	return newSink(t, env)
}

// mergeOptions concatenates option lists, keeping the first of
// duplicate keys (source and sink share 'topic', 'format', ...).
func mergeOptions(lists ...[]connectors.OptionDef) []connectors.OptionDef {
	seen := map[string]bool{}
	var out []connectors.OptionDef
	for _, l := range lists {
		for _, d := range l {
			if !seen[d.Key] {
				seen[d.Key] = true
				out = append(out, d)
			}
		}
	}
	return out
}
