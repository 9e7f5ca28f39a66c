package dyntable

import (
	"fmt"
	"strings"
	"time"

	"github.com/streamsql/streamsql/types"
)

// RowKind is the kind of one change in a changelog, as in Flink.
type RowKind uint8

// The four row kinds. Their String forms are Flink's short strings.
const (
	Insert       RowKind = iota // +I: a new row
	UpdateBefore                // -U: the old content of an updated row (retraction)
	UpdateAfter                 // +U: the new content of an updated row
	Delete                      // -D: a row removed
)

var kindStrings = [...]string{"+I", "-U", "+U", "-D"}

func (k RowKind) String() string {
	if int(k) < len(kindStrings) {
		return kindStrings[k]
	}
	return fmt.Sprintf("RowKind(%d)", k)
}

// IsAccumulate reports whether k adds a row (+I, +U).
func (k RowKind) IsAccumulate() bool { return k == Insert || k == UpdateAfter }

// IsRetract reports whether k removes a row (-U, -D).
func (k RowKind) IsRetract() bool { return k == UpdateBefore || k == Delete }

// ParseRowKind parses "+I", "-U", "+U" or "-D".
func ParseRowKind(s string) (RowKind, error) {
	for i, ks := range kindStrings {
		if strings.EqualFold(s, ks) {
			return RowKind(i), nil
		}
	}
	return 0, fmt.Errorf("invalid row kind %q: want +I, -U, +U or -D", s)
}

// Change is one row of a changelog with its kind.
type Change struct {
	Kind RowKind
	Row  types.Row
}

// Chunk is a batch of changes: the unit of data that moves between
// operators. Data never moves one row per channel send.
//
// Ownership: a chunk handed to an operator or a channel belongs to the
// receiver; the sender must not touch it again. The rows inside are
// immutable and may be retained by anyone (state, other chunks).
type Chunk struct {
	Changes []Change
}

// Len returns the number of changes.
func (c *Chunk) Len() int { return len(c.Changes) }

// Append adds a change.
func (c *Chunk) Append(k RowKind, r types.Row) {
	c.Changes = append(c.Changes, Change{Kind: k, Row: r})
}

// FormatChange renders a change as Flink's Row.toString does: +I[1, abc].
func FormatChange(ch Change, ts []types.Type) string {
	return ch.Kind.String() + "[" + types.FormatRow(ch.Row, ts, ", ") + "]"
}

// FormatChangeIn is FormatChange showing TIMESTAMP_LTZ values in zone loc.
func FormatChangeIn(ch Change, ts []types.Type, loc *time.Location) string {
	return ch.Kind.String() + "[" + types.FormatRowIn(ch.Row, ts, ", ", loc) + "]"
}
