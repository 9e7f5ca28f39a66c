package cluster

// The records of an internal topic. A stage's output rows and the
// control signals that must cross the stage boundary in order with them
// travel as Kafka records of one topic:
//
//	key    value
//	kg     'D' kind row          a row: kind is its RowKind (+I/-U/+U/-D),
//	                             row types.EncodeRow; kg the row's key
//	                             group, 2 bytes big-endian (hash exchanges;
//	                             empty otherwise)
//	-      'W' task wm           upstream task's watermark (varints); the
//	                             task is active
//	-      'I' task              upstream task is idle (KindIdle)
//	-      'E' task              upstream task's end of input
//
// Rows use the encoding of rows in state (types.EncodeRow), which gives
// back the very row. A row goes to the partition the in-memory hash
// exchange would send it to: the same key encoding, the same key group,
// and partition = the key group's range (state.SubtaskFor). Markers go
// to every partition, so each downstream task hears from every upstream
// task.

import (
	"encoding/binary"
	"fmt"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// Record types, the first byte of a value.
const (
	recRow       byte = 'D'
	recWatermark byte = 'W'
	recIdle      byte = 'I'
	recEnd       byte = 'E'
)

// router sends the rows of one exchange to partitions, as the
// in-memory exchange of the same kind sends them to subtasks.
type router struct {
	kind dataflow.PartitionKind
	keys []int
	rr   int // rebalance: the next partition
	kb   []byte
}

// records implements kafka.RecordsFunc for the exchange.
func (r *router) records(c *dyntable.Chunk, partitions int, add func(partition int, key, value []byte) error) error {
	if r.kind == dataflow.Rebalance {
		// Round-robin per chunk, as the in-memory exchange does.
		r.rr = (r.rr + 1) % partitions
	}
	for _, ch := range c.Changes {
		part, key := 0, []byte(nil)
		switch r.kind {
		case dataflow.Hash:
			r.kb = types.EncodeKey(r.kb[:0], ch.Row, r.keys)
			kg := state.KeyGroup(r.kb)
			part = state.SubtaskFor(kg, partitions)
			key = binary.BigEndian.AppendUint16(make([]byte, 0, 2), uint16(kg))
		case dataflow.Rebalance:
			part = r.rr
		case dataflow.Single:
			part = 0
		default:
			return fmt.Errorf("cluster: internal error: %d is not an exchange kind", r.kind)
		}
		if err := add(part, key, encodeRow(ch)); err != nil {
			return err
		}
	}
	return nil
}

// encodeRow is the value of a row record.
func encodeRow(ch dyntable.Change) []byte {
	v := make([]byte, 2, 2+16*len(ch.Row))
	v[0], v[1] = recRow, byte(ch.Kind)
	return types.EncodeRow(v, ch.Row)
}

// encodeMarker is the value of a watermark or end-of-input marker of
// upstream task task.
func encodeMarker(typ byte, task int, wm int64) []byte {
	v := []byte{typ}
	v = binary.AppendUvarint(v, uint64(task))
	if typ == recWatermark {
		v = binary.AppendVarint(v, wm)
	}
	return v
}

// record is a decoded value.
type record struct {
	typ    byte
	change dyntable.Change // recRow
	task   int             // markers
	wm     int64           // recWatermark
}

// decodeRecord decodes a value written by encodeRow or encodeMarker; an
// upstream task number must be below upstream.
func decodeRecord(v []byte, upstream int) (record, error) {
	if len(v) == 0 {
		return record{}, fmt.Errorf("empty record")
	}
	r := record{typ: v[0]}
	switch r.typ {
	case recRow:
		if len(v) < 2 || v[1] > byte(dyntable.Delete) {
			return r, fmt.Errorf("row record without a valid row kind")
		}
		row, err := types.DecodeRow(v[2:])
		if err != nil {
			return r, err
		}
		r.change = dyntable.Change{Kind: dyntable.RowKind(v[1]), Row: row}
		return r, nil
	case recWatermark, recIdle, recEnd:
		t, n := binary.Uvarint(v[1:])
		if n <= 0 || t >= uint64(upstream) {
			return r, fmt.Errorf("marker of upstream task %d (n=%d) of %d", t, n, upstream)
		}
		r.task = int(t)
		if r.typ == recWatermark {
			wm, m := binary.Varint(v[1+n:])
			if m <= 0 {
				return r, fmt.Errorf("watermark marker without a watermark")
			}
			r.wm = wm
		}
		return r, nil
	}
	return r, fmt.Errorf("unknown record type %q", r.typ)
}
