package dyntable

import "strings"

// ChangelogMode is the set of row kinds a stream may contain. The planner
// infers it for every operator, and sinks check it.
type ChangelogMode uint8

// Mode bits, and the common modes.
const (
	ModeI  ChangelogMode = 1 << Insert
	ModeUB ChangelogMode = 1 << UpdateBefore
	ModeUA ChangelogMode = 1 << UpdateAfter
	ModeD  ChangelogMode = 1 << Delete

	InsertOnly ChangelogMode = ModeI
	// Retract is a full changelog with -U/+U pairs.
	Retract ChangelogMode = ModeI | ModeUB | ModeUA | ModeD
	// Upsert is a keyed changelog without -U: each +U replaces the row
	// with the same upsert key.
	Upsert ChangelogMode = ModeI | ModeUA | ModeD
)

// Contains reports whether kind k may appear.
func (m ChangelogMode) Contains(k RowKind) bool { return m&(1<<k) != 0 }

// IsInsertOnly reports whether the stream is append-only.
func (m ChangelogMode) IsInsertOnly() bool { return m == ModeI }

// HasUpdates reports whether the stream contains anything but inserts.
func (m ChangelogMode) HasUpdates() bool { return m&^ModeI != 0 }

// Union is the mode of a stream that merges m and o.
func (m ChangelogMode) Union(o ChangelogMode) ChangelogMode { return m | o }

// String renders the mode as EXPLAIN shows it: [I,UB,UA,D].
func (m ChangelogMode) String() string {
	var parts []string
	for _, p := range []struct {
		b ChangelogMode
		s string
	}{{ModeI, "I"}, {ModeUB, "UB"}, {ModeUA, "UA"}, {ModeD, "D"}} {
		if m&p.b != 0 {
			parts = append(parts, p.s)
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}
