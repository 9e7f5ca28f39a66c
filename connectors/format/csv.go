package format

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

type CSVOptions struct {
	delim    byte
	quote    byte
	quoted   bool // quote is in use
	escape   byte
	escaped  bool // escape is in use
	comments bool
	null     string
	hasNull  bool
	elems    string // 'csv.array-element-delimiter': between ARRAY elements and ROW fields
}

func ParseCSVOptions(o map[string]string) (CSVOptions, error) {
	c := DefaultCSVOptions()
	var err error
	if v, ok := o["csv.field-delimiter"]; ok {
		if c.delim, err = charOption("csv.field-delimiter", v); err != nil {
			return c, err
		}
	}
	disable, err := connectors.Bool(o, "csv.disable-quote-character", false)
	if err != nil {
		return c, err
	}
	if v, ok := o["csv.quote-character"]; ok {
		if disable {
			return c, fmt.Errorf("option 'csv.quote-character' cannot be set when 'csv.disable-quote-character' is 'true'")
		}
		if c.quote, err = charOption("csv.quote-character", v); err != nil {
			return c, err
		}
	}
	c.quoted = !disable
	if v, ok := o["csv.escape-character"]; ok {
		if c.escape, err = charOption("csv.escape-character", v); err != nil {
			return c, err
		}
		c.escaped = true
	}
	if c.comments, err = connectors.Bool(o, "csv.allow-comments", false); err != nil {
		return c, err
	}
	c.null, c.hasNull = o["csv.null-literal"]
	if v, ok := o["csv.array-element-delimiter"]; ok {
		if v == `\t` {
			v = "\t"
		}
		if v == "" || strings.ContainsAny(v, "\r\n") {
			return c, fmt.Errorf("option 'csv.array-element-delimiter' must be a non-empty string without line breaks, got %s", strconv.Quote(v))
		}
		c.elems = v
	}
	if c.quoted && c.quote == c.delim {
		return c, fmt.Errorf("options 'csv.quote-character' and 'csv.field-delimiter' must differ")
	}
	if c.escaped && (c.escape == c.delim || (c.quoted && c.escape == c.quote)) {
		return c, fmt.Errorf("option 'csv.escape-character' must differ from the delimiter and the quote character")
	}
	if c.escaped && strings.IndexByte(c.elems, c.escape) >= 0 {
		return c, fmt.Errorf("option 'csv.array-element-delimiter' must not contain the escape character")
	}
	return c, nil
}

// charOption reads a one-character option; '\t' (backslash, t) is a tab.
func charOption(key, v string) (byte, error) {
	if v == `\t` {
		return '\t', nil
	}
	if len(v) != 1 || v[0] >= 0x80 || v[0] == '\n' || v[0] == '\r' {
		return 0, fmt.Errorf("option '%s' must be a single ASCII character other than a line break, got %s", key, strconv.Quote(v))
	}
	return v[0], nil
}

// csvDecoder reads one CSV record per line, fields in column order, no
// header (Flink's csv format). A field that starts with the quote
// character is quoted: it ends at the next lone quote, a doubled quote
// inside stands for one, and it may hold delimiters and line breaks
// (the record then spans lines); after the closing quote comes the
// delimiter or the end of the record. A quote character inside an
// unquoted field is plain text. With 'csv.escape-character', the escape
// makes the next character literal, quoted or not.
//
// Values: a field equal to 'csv.null-literal' is NULL; an empty field is
// the empty string for a STRING column and NULL for any other type (Flink
// fails on it, as CAST of an empty string to INT does); otherwise the
// field is read as
// CAST(<text> AS <type>). A record with more or fewer fields than the
// table has columns is malformed. ROW and ARRAY columns: see nested. With 'csv.allow-comments', lines that
// start with '#' are skipped. Empty lines are skipped.
//
// With a projection, the record still has every column's field, but only
// the projected ones are converted.
type csvDecoder struct {
	cols    []column
	at      []int // the row index of each field's value, -1 for none
	o       CSVOptions
	scratch []byte
	elem    []byte // an element being unescaped (nested)
}

// NewCSVDecoder returns a decoder of records of the columns cs into rows
// of those columns, or, when fields is not nil, of the columns fields of
// cs (indexes, in row order).
func NewCSVDecoder(cs []connectors.Column, fields []int, o CSVOptions) *csvDecoder {
	d := &csvDecoder{cols: makeColumns(cs), at: make([]int, len(cs)), o: o}
	for i := range d.at {
		d.at[i] = i
	}
	if fields != nil {
		for i := range d.at {
			d.at[i] = -1
		}
		for i, f := range fields {
			d.at[f] = i
		}
	}
	return d
}

func (d *csvDecoder) Skip(line []byte) bool {
	return len(line) == 0 || (d.o.comments && line[0] == '#')
}

func (d *csvDecoder) Decode(b []byte, row types.Row) error {
	n := 0 // fields read
	i := 0
	for {
		var (
			field []byte
			err   error
		)
		if d.o.quoted && i < len(b) && b[i] == d.o.quote {
			field, i, err = d.quotedField(b, i)
		} else {
			field, i, err = d.plainField(b, i)
		}
		if err != nil {
			return err
		}
		if n < len(d.cols) && d.at[n] >= 0 {
			if err := d.set(row, n, field); err != nil {
				return err
			}
		}
		n++
		if i >= len(b) {
			break
		}
		i++ // the delimiter
	}
	if n != len(d.cols) {
		return fmt.Errorf("row length mismatch: %d fields expected but found %d", len(d.cols), n)
	}
	return nil
}

func (d *csvDecoder) set(row types.Row, n int, field []byte) error {
	c := &d.cols[n]
	if d.o.hasNull && string(field) == d.o.null {
		return nil
	}
	if len(field) == 0 && c.t.ID != types.String && !(c.t.IsComposite() && d.o.hasNull) {
		return nil
	}
	var (
		v   types.Value
		err error
	)
	if c.t.IsComposite() {
		v, err = d.nested(field, c)
	} else {
		v, err = fromText(field, c)
	}
	if err != nil {
		return err
	}
	row[d.at[n]] = v
	return nil
}

// plainField reads an unquoted field starting at b[i]; it returns the
// field and the index of the delimiter after it (or len(b)).
func (d *csvDecoder) plainField(b []byte, i int) ([]byte, int, error) {
	start := i
	for ; i < len(b); i++ {
		c := b[i]
		if c == d.o.delim {
			return b[start:i], i, nil
		}
		if d.o.escaped && c == d.o.escape {
			return d.plainFieldSlow(b, start, i)
		}
	}
	return b[start:], i, nil
}

func (d *csvDecoder) plainFieldSlow(b []byte, start, i int) ([]byte, int, error) {
	out := append(d.scratch[:0], b[start:i]...)
	defer func() { d.scratch = out[:0] }()
	for ; i < len(b); i++ {
		c := b[i]
		if c == d.o.delim {
			return out, i, nil
		}
		if c == d.o.escape {
			i++
			if i >= len(b) {
				return nil, i, fmt.Errorf("escape character at the end of the record")
			}
			c = b[i]
		}
		out = append(out, c)
	}
	return out, i, nil
}

// quotedField reads a quoted field whose opening quote is b[i].
func (d *csvDecoder) quotedField(b []byte, i int) ([]byte, int, error) {
	q := d.o.quote
	start := i + 1
	var out []byte
	unescaped := false // out holds the field's start
	copied := start
	for i = start; i < len(b); i++ {
		c := b[i]
		switch {
		case c == q:
			if i+1 < len(b) && b[i+1] == q { // a doubled quote
				if !unescaped {
					out, unescaped = d.scratch[:0], true
				}
				out = append(out, b[copied:i+1]...)
				i++
				copied = i + 1
				continue
			}
			var field []byte
			if !unescaped {
				field = b[start:i]
			} else {
				field = append(out, b[copied:i]...)
				d.scratch = field[:0]
			}
			i++
			if i < len(b) && b[i] != d.o.delim {
				return nil, i, fmt.Errorf("expected a delimiter after the closing quote at byte %d of the record, found %s", i+1, quoteByte(b[i]))
			}
			return field, i, nil
		case d.o.escaped && c == d.o.escape:
			if !unescaped {
				out, unescaped = d.scratch[:0], true
			}
			out = append(out, b[copied:i]...)
			i++
			if i >= len(b) {
				return nil, i, ErrIncomplete
			}
			out = append(out, b[i])
			copied = i + 1
		}
	}
	return nil, i, ErrIncomplete
}
