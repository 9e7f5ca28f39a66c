// Package blackhole is a sink that discards everything, for benchmarks
// and for running a query only for its side effects.
package blackhole

import (
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
)

func init() { connectors.Register(connector{}) }

type connector struct{}

func (connector) Name() string                    { return "blackhole" }
func (connector) Options() []connectors.OptionDef { return nil }

func (connector) NewSink(t *connectors.Table, _ *connectors.Env) (connectors.TableSink, error) {
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	return sink{}, nil
}

type sink struct{}

func (sink) Encoding() dyntable.SinkEncoding { return dyntable.RetractEncoding }
func (sink) Parallelism() int                { return 0 }
func (sink) Create(int, int) (dataflow.Operator, error) {
	return op{}, nil
}

type op struct{ dataflow.BaseOperator }

func (op) ProcessChunk(int, *dyntable.Chunk, dataflow.Collector) error { return nil }
