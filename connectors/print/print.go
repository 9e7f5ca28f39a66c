// Package print is a sink that writes each change to standard output the
// way Flink's print connector does: +I[1, abc]. With a parallelism above
// one each line is prefixed by the subtask number ("2> "), and with
// 'print-identifier' by that identifier.
package print

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func init() { connectors.Register(connector{}) }

type connector struct{}

func (connector) Name() string { return "print" }

func (connector) Options() []connectors.OptionDef {
	return []connectors.OptionDef{
		{Key: "print-identifier", Description: "a prefix for every line"},
		{Key: "standard-error", Kind: config.Bool, Default: "false", Description: "accepted for Flink compatibility; output always goes to standard output"},
		{Key: "sink.parallelism", Kind: config.Int, Min: 1, Description: "the sink's parallelism"},
	}
}

func (connector) NewSink(t *connectors.Table, env *connectors.Env) (connectors.TableSink, error) {
	if err := connectors.CheckOptions(connector{}, t.Options); err != nil {
		return nil, err
	}
	p, err := connectors.Int(t.Options, "sink.parallelism", 0, 1)
	if err != nil {
		return nil, err
	}
	return &sink{t: t, w: env.Stdout, id: t.Options["print-identifier"], p: p, zone: env.LocalZone()}, nil
}

// lockedWriter serializes lines of parallel print subtasks.
var writeMu sync.Mutex

type sink struct {
	t    *connectors.Table
	w    io.Writer
	id   string
	p    int
	zone *time.Location // TIMESTAMP_LTZ values are shown in it
}

func (s *sink) Encoding() dyntable.SinkEncoding { return dyntable.RetractEncoding }
func (s *sink) Parallelism() int                { return s.p }
func (s *sink) Create(subtask, parallelism int) (dataflow.Operator, error) {
	prefix := ""
	switch {
	case s.id != "" && parallelism > 1:
		prefix = fmt.Sprintf("%s:%d> ", s.id, subtask+1)
	case s.id != "":
		prefix = s.id + "> "
	case parallelism > 1:
		prefix = fmt.Sprintf("%d> ", subtask+1)
	}
	return &op{s: s, prefix: prefix, types: s.t.Types()}, nil
}

type op struct {
	dataflow.BaseOperator
	s      *sink
	prefix string
	types  []types.Type
	buf    []byte
}

func (o *op) ProcessChunk(_ int, c *dyntable.Chunk, _ dataflow.Collector) error {
	o.buf = o.buf[:0]
	for _, ch := range c.Changes {
		o.buf = append(o.buf, o.prefix...)
		o.buf = append(o.buf, ch.Kind.String()...)
		o.buf = append(o.buf, '[')
		for i, v := range ch.Row {
			if i > 0 {
				o.buf = append(o.buf, ", "...)
			}
			o.buf = types.AppendFormatIn(o.buf, v, o.types[i], o.s.zone)
		}
		o.buf = append(o.buf, "]\n"...)
	}
	writeMu.Lock()
	defer writeMu.Unlock()
	w := bufio.NewWriter(o.s.w)
	if _, err := w.Write(o.buf); err != nil {
		return err
	}
	return w.Flush()
}
