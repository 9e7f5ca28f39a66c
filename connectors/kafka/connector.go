// A2: NewScan goes here (and add the source's options to Options).
//
// Package kafka is the 'kafka' and 'upsert-kafka' connectors, on
// github.com/segmentio/kafka-go, the product's only Kafka client.
package kafka

import "github.com/streamsql/streamsql/connectors"

func init() { connectors.Register(connector{}) }

// connector is 'connector' = 'kafka'.
type connector struct{}

func (connector) Name() string { return "kafka" }

// Options lists every option of the connector (sink side: sink.go).
func (connector) Options() []connectors.OptionDef { return mergeOptions(sinkOptionDefs()) }

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
