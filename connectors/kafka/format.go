package kafka

import (
	"errors"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/format"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// The value formats of the source. 'json' and 'csv' reuse the decoders of
// connectors/format (the filesystem connector's), one record value being
// one JSON object or one CSV record; 'debezium-json' is in
// format_debezium.go.
const (
	formatJSON          = "json"
	formatCSV           = "csv"
	formatDebezium      = "debezium-json"
	formatRaw           = "raw"
	maxChangesPerRecord = 2 // debezium-json's update: -U and +U
)

// formatOptionDefs are the options of the value formats, Flink's names.
var formatOptionDefs = format.OptionDefs(format.JSONOptionDefs, format.CSVOptionDefs, format.RawOptionDefs, []connectors.OptionDef{
	{Key: "debezium-json.ignore-parse-errors", Kind: config.Bool, Default: "false", Description: "skip (and count) malformed records instead of failing"},
	{Key: "debezium-json.schema-include", Kind: config.Bool, Default: "false", Description: "the messages carry Debezium's schema: {\"schema\": ..., \"payload\": {...}}"},
})

// valueDecoder turns one record value into changes.
type valueDecoder interface {
	// decode appends the changes value stands for to b. On error it has
	// appended nothing.
	decode(value []byte, b *chunkBuilder) error
	// mode is the changelog mode of what decode produces.
	mode() dyntable.ChangelogMode
}

// newValueDecoder checks the format options of t and returns the factory
// of its decoders (one per subtask: decoders keep scratch space).
func newValueDecoder(t *connectors.Table, name string) (func() valueDecoder, bool, error) {
	o := t.Options
	for k := range o {
		if f, _, ok := strings.Cut(k, "."); ok && (f == formatJSON || f == formatCSV || f == formatDebezium || f == formatRaw) && f != name {
			return nil, false, fmt.Errorf("option '%s' does not apply to 'format' = '%s'", k, name)
		}
	}
	if name == formatCSV {
		if err := format.CheckCSVColumns(t.Columns); err != nil {
			return nil, false, err
		}
	}
	for _, c := range t.Columns {
		if name == formatCSV {
			break
		}
		if !format.Readable(c.Type, name == formatJSON) {
			return nil, false, fmt.Errorf("column '%s': type %s cannot be read from format '%s'", c.Name, c.Type, name)
		}
	}
	ignore, err := connectors.Bool(o, name+".ignore-parse-errors", false)
	if err != nil {
		return nil, false, err
	}
	cols := t.Columns
	switch name {
	case formatRaw:
		ro, err := format.ParseRawOptions(o, cols)
		if err != nil {
			return nil, false, err
		}
		return func() valueDecoder { return &rawDecoder{rowDecoder{d: format.NewRawCodec(cols, ro)}} }, false, nil
	case formatJSON:
		var jo format.JSONOptions
		if jo.FailOnMissingField, err = connectors.Bool(o, "json.fail-on-missing-field", false); err != nil {
			return nil, false, err
		}
		if jo.FailOnMissingField && ignore {
			return nil, false, fmt.Errorf("options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be 'true'")
		}
		return func() valueDecoder { return &rowDecoder{d: format.NewJSONDecoder(cols, nil, jo)} }, ignore, nil
	case formatCSV:
		co, err := format.ParseCSVOptions(o)
		if err != nil {
			return nil, false, err
		}
		return func() valueDecoder { return &rowDecoder{d: format.NewCSVDecoder(cols, nil, co)} }, ignore, nil
	case formatDebezium:
		schema, err := connectors.Bool(o, "debezium-json.schema-include", false)
		if err != nil {
			return nil, false, err
		}
		return func() valueDecoder { return newDebeziumDecoder(cols, schema) }, ignore, nil
	}
	return nil, false, fmt.Errorf("option 'format' must be 'json', 'csv', 'raw' or 'debezium-json', got '%s'", name)
}

// nullDecoder is a valueDecoder that reads a null record value (a
// tombstone, which other formats skip) as a row.
type nullDecoder interface {
	decodeNull(b *chunkBuilder)
}

// rawDecoder reads the raw format: one column, the whole value; a null
// value is a row holding NULL, as in Flink.
type rawDecoder struct{ rowDecoder }

func (r *rawDecoder) decodeNull(b *chunkBuilder) {
	b.add(dyntable.Insert, b.row()) // rows handed out are NULL
}

// rowDecoder reads one insert per record ('json', 'csv').
type rowDecoder struct{ d format.Decoder }

func (r *rowDecoder) mode() dyntable.ChangelogMode { return dyntable.InsertOnly }

func (r *rowDecoder) decode(value []byte, b *chunkBuilder) error {
	if r.d.Skip(value) {
		return nil // a blank record, as a blank line of a file
	}
	row := b.row()
	if err := r.d.Decode(value, row); err != nil {
		b.drop(1)
		if errors.Is(err, format.ErrIncomplete) {
			return errors.New("a quoted field is not closed before the end of the record")
		}
		return err
	}
	b.add(dyntable.Insert, row)
	return nil
}

// chunkBuilder fills a chunk whose rows share one backing array, so that
// decoding allocates per chunk, not per row. Rows handed out by row are
// NULL; the caller either adds them (in order) or drops them.
type chunkBuilder struct {
	width int
	rows  int // capacity in rows
	vals  []types.Value
	used  int // rows handed out
	chunk *dyntable.Chunk
}

func newChunkBuilder(width, rows int) *chunkBuilder {
	b := &chunkBuilder{width: width, rows: rows}
	b.reset()
	return b
}

func (b *chunkBuilder) reset() {
	b.vals = make([]types.Value, b.rows*b.width)
	b.used = 0
	b.chunk = &dyntable.Chunk{Changes: make([]dyntable.Change, 0, b.rows)}
}

// full reports whether a record might not fit any more.
func (b *chunkBuilder) full() bool { return b.used+maxChangesPerRecord > b.rows }

func (b *chunkBuilder) len() int { return len(b.chunk.Changes) }

// row hands out the next row.
func (b *chunkBuilder) row() types.Row {
	w := b.width
	r := types.Row(b.vals[b.used*w : (b.used+1)*w : (b.used+1)*w])
	b.used++
	return r
}

// drop gives back the last n rows handed out and not added.
func (b *chunkBuilder) drop(n int) {
	for ; n > 0; n-- {
		b.used--
		clear(b.vals[b.used*b.width : (b.used+1)*b.width])
	}
}

func (b *chunkBuilder) add(k dyntable.RowKind, r types.Row) {
	b.chunk.Changes = append(b.chunk.Changes, dyntable.Change{Kind: k, Row: r})
}

// take returns the chunk and starts a new one.
func (b *chunkBuilder) take() *dyntable.Chunk {
	c := b.chunk
	b.reset()
	return c
}
