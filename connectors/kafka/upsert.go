package kafka

// 'connector' = 'upsert-kafka': a changelog written by primary key, as
// Flink's upsert-kafka sink does. The record key is the PRIMARY KEY in
// 'key.format'; +I and +U write the new row as the value; -D writes a
// tombstone (the key with a null value), which log compaction and
// upsert readers take as a deletion; -U is dropped, since the +U that
// follows replaces the row. Records are partitioned by key (murmur2, as
// Kafka's default partitioner), so all changes of a key stay in order
// in one partition. 'sink.delivery-guarantee' = 'exactly-once' writes
// through the same transactional producer as the 'kafka' sink.

import (
	"github.com/streamsql/streamsql/connectors"
)

func init() { connectors.Register(upsertConnector{}) }

type upsertConnector struct{}

func (upsertConnector) Name() string { return "upsert-kafka" }

func (upsertConnector) Options() []connectors.OptionDef {
	var out []connectors.OptionDef
	for _, d := range sinkOptionDefs() {
		switch d.Key {
		case "key.fields", "sink.partitioner":
			continue // the key is the primary key, and partitions follow it
		case "key.format", "value.format":
			d.Required = true
		}
		out = append(out, d)
	}
	return out
}

// NewSink validates the table and returns its sink.
func (upsertConnector) NewSink(t *connectors.Table, _ *connectors.Env) (connectors.TableSink, error) {
	if err := connectors.CheckOptions(upsertConnector{}, t.Options); err != nil {
		return nil, err
	}
	cfg, err := parseSinkConfig(t, true)
	if err != nil {
		return nil, err
	}
	return &tableSink{cfg: cfg}, nil
}
