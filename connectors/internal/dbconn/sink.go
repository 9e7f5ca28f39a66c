package dbconn

import (
	"github.com/streamsql/streamsql/dyntable"
)

// SinkBase answers the questions the planner asks a database TableSink
// that both databases answer alike; a connector's sink embeds it and
// adds Create.
type SinkBase struct {
	Connector string // the connector's name in the hint: "mysql", "jdbc"
	Keyed     bool   // the table declares a primary key
	Semantic  Semantic
	Par       int // 'sink.parallelism'; 0: the job's
}

// Encoding is upsert by primary key, or append-only without one.
func (b *SinkBase) Encoding() dyntable.SinkEncoding {
	if b.Keyed {
		return dyntable.UpsertEncoding
	}
	return dyntable.AppendOnly
}

// UpdatesHint: with a primary key the sink upserts.
func (b *SinkBase) UpdatesHint() string {
	return "declare a PRIMARY KEY (... NOT ENFORCED) on the table, and the " + b.Connector + " sink upserts by it"
}

// Parallelism is 'sink.parallelism', or 0 for the job's.
func (b *SinkBase) Parallelism() int { return b.Par }

// KeepsState is true for the exactly-once sink, whose pending prepared
// (XA) transactions live in checkpoints.
func (b *SinkBase) KeepsState() bool { return b.Semantic == ExactlyOnce }
