package format

import (
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dyntable"
)

// DebeziumJSONEncoder writes a change as a Debezium change event, as
// Flink's 'debezium-json' serializer does: +I and +U become
// {"before":null,"after":{row},"op":"c"}, -U and -D become
// {"before":{row},"after":null,"op":"d"}. A changelog thus fits an
// append-only medium (part files, a Kafka topic) and reads back, with a
// debezium-json decoder, as the same changes.
type DebeziumJSONEncoder struct {
	row *JSONEncoder
}

// NewDebeziumJSONEncoder returns the encoder of changes of rows with
// columns cs.
func NewDebeziumJSONEncoder(cs []connectors.Column) *DebeziumJSONEncoder {
	return &DebeziumJSONEncoder{row: NewJSONEncoder(cs)}
}

// AppendChange appends the event of ch to dst.
func (e *DebeziumJSONEncoder) AppendChange(dst []byte, ch dyntable.Change) []byte {
	switch ch.Kind {
	case dyntable.Insert, dyntable.UpdateAfter:
		dst = append(dst, `{"before":null,"after":`...)
		dst = e.row.Append(dst, ch.Row)
		return append(dst, `,"op":"c"}`...)
	default:
		dst = append(dst, `{"before":`...)
		dst = e.row.Append(dst, ch.Row)
		return append(dst, `,"after":null,"op":"d"}`...)
	}
}
