package kafka

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// debeziumDecoder reads Flink's 'debezium-json' format: each record value
// is a Debezium change event
//
//	{"before": {...} | null, "after": {...} | null, "op": "c" | "r" | "u" | "d", ...}
//
// or, with 'debezium-json.schema-include' = 'true', the same envelope
// under "payload" next to a "schema" field. As in Flink:
//
//	op c (create), r (snapshot read)  →  +I after
//	op u (update)                     →  -U before, then +U after
//	op d (delete)                     →  -D before
//
// An update or delete without "before" is malformed (Debezium writes no
// old row for a Postgres table without REPLICA IDENTITY FULL; Flink says
// so too). A null value (Debezium's tombstone after a delete) is skipped.
// Other envelope fields (source, ts_ms, transaction) are ignored.
//
// The envelope is read by the same JSON decoder as the rows, with STRING
// columns for before, after, op and payload: the decoder gives an object
// held by a STRING column as its JSON text, which the row decoder then
// reads. No second JSON parser.
type debeziumDecoder struct {
	schema   bool
	envelope format.Decoder
	env      types.Row
	rows     format.Decoder
}

// The envelope's columns, in this order.
const (
	dbzBefore = iota
	dbzAfter
	dbzOp
	dbzPayload
	dbzFields
)

func newDebeziumDecoder(cols []connectors.Column, schema bool) *debeziumDecoder {
	env := []connectors.Column{
		{Name: "before", Type: types.TypeString},
		{Name: "after", Type: types.TypeString},
		{Name: "op", Type: types.TypeString},
		{Name: "payload", Type: types.TypeString},
	}
	return &debeziumDecoder{
		schema:   schema,
		envelope: format.NewJSONDecoder(env, nil, format.JSONOptions{}),
		env:      make(types.Row, dbzFields),
		rows:     format.NewJSONDecoder(cols, nil, format.JSONOptions{}),
	}
}

func (d *debeziumDecoder) mode() dyntable.ChangelogMode { return dyntable.Retract }

// bytesOf views a string's bytes without copying; the decoders only read
// their input.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// field returns the envelope field i as text, or nil for null or absent.
func (d *debeziumDecoder) field(i int) []byte {
	if d.env[i].IsNull() {
		return nil
	}
	return bytesOf(d.env[i].Str())
}

func (d *debeziumDecoder) readEnvelope(value []byte) error {
	clear(d.env)
	if err := d.envelope.Decode(value, d.env); err != nil {
		return err
	}
	if !d.schema {
		if d.env[dbzOp].IsNull() && !d.env[dbzPayload].IsNull() {
			return errors.New("the change event has no 'op' but a 'payload': set 'debezium-json.schema-include' = 'true' for events that carry their schema")
		}
		return nil
	}
	p := d.field(dbzPayload)
	if p == nil {
		return errors.New("the change event has no 'payload' ('debezium-json.schema-include' = 'true')")
	}
	// Keep the payload's text alive while the envelope row is reused.
	payload := d.env[dbzPayload].Str()
	clear(d.env)
	return d.envelope.Decode(bytesOf(payload), d.env)
}

func (d *debeziumDecoder) decode(value []byte, b *chunkBuilder) error {
	if d.envelope.Skip(value) {
		return nil
	}
	if err := d.readEnvelope(value); err != nil {
		return err
	}
	if d.env[dbzOp].IsNull() {
		return errors.New("the change event has no 'op'")
	}
	op := d.env[dbzOp].Str()
	before, after := d.field(dbzBefore), d.field(dbzAfter)
	one := func(k dyntable.RowKind, what string, text []byte) error {
		if text == nil {
			return fmt.Errorf("the '%s' field of an op '%s' event is null", what, op)
		}
		row := b.row()
		if err := d.rows.Decode(text, row); err != nil {
			b.drop(1)
			return fmt.Errorf("'%s': %w", what, err)
		}
		b.add(k, row)
		return nil
	}
	switch op {
	case "c", "r":
		return one(dyntable.Insert, "after", after)
	case "d":
		if before == nil {
			return errors.New("the 'before' field of a DELETE event is null; for Debezium's Postgres connector, set the table's REPLICA IDENTITY to FULL")
		}
		return one(dyntable.Delete, "before", before)
	case "u":
		if before == nil {
			return errors.New("the 'before' field of an UPDATE event is null; for Debezium's Postgres connector, set the table's REPLICA IDENTITY to FULL")
		}
		if after == nil {
			return errors.New("the 'after' field of an UPDATE event is null")
		}
		// Decode both before adding either, so that a bad 'after' leaves
		// no lone -U behind.
		rb, ra := b.row(), b.row()
		if err := d.rows.Decode(before, rb); err != nil {
			b.drop(2)
			return fmt.Errorf("'before': %w", err)
		}
		if err := d.rows.Decode(after, ra); err != nil {
			b.drop(2)
			return fmt.Errorf("'after': %w", err)
		}
		b.add(dyntable.UpdateBefore, rb)
		b.add(dyntable.UpdateAfter, ra)
		return nil
	}
	return fmt.Errorf("unknown 'op' value %q (want c, r, u or d)", op)
}
