package types

import (
	"fmt"
	"math"
	"sort"
	"time"
	"unsafe"

	"github.com/cockroachdb/apd/v3"
)

// Kind is the physical representation of a Value. Several SQL types share
// one kind: INT and BIGINT are KindInt, VARCHAR(n) and STRING are KindString.
type Kind uint8

// Value kinds.
const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindFloat
	KindDecimal
	KindString
	KindDate       // days since 1970-01-01
	KindTimestamp  // nanoseconds since 1970-01-01 00:00:00, wall clock, no zone
	KindInterval   // nanoseconds
	KindRow        // a ROW's field values, in order
	KindArray      // an ARRAY's elements
	KindMap        // a MAP's entries, as key, value, key, value, ...
	KindTime       // TIME: nanoseconds since midnight
	KindIntervalYM // INTERVAL YEAR TO MONTH: months
)

// Value is one SQL value. The zero Value is NULL.
//
// It is a small struct rather than an interface so that rows are flat
// slices and the hot path allocates only for strings and decimals. The
// fields are private: build values with the constructors and read them
// with the typed accessors, which panic on a kind mismatch because that is
// a planner bug, never a user error.
type Value struct {
	k Kind
	i int64 // bool (0/1), int, float64 bits, date days, timestamp/interval nanos
	s string
	// p is the *apd.Decimal of a DECIMAL or the *composite of a ROW, ARRAY
	// or MAP, immutable once stored. One pointer field for both keeps a
	// Value at 40 bytes.
	p unsafe.Pointer
}

// composite holds the values of a ROW, ARRAY or MAP.
type composite struct{ vals []Value }

// NullValue is SQL NULL.
var NullValue = Value{}

// NewBool returns a BOOLEAN value.
func NewBool(b bool) Value {
	if b {
		return Value{k: KindBool, i: 1}
	}
	return Value{k: KindBool}
}

// NewInt returns an INT or BIGINT value.
func NewInt(i int64) Value { return Value{k: KindInt, i: i} }

// NewFloat returns a DOUBLE value.
func NewFloat(f float64) Value { return Value{k: KindFloat, i: int64(math.Float64bits(f))} }

// NewString returns a STRING value.
func NewString(s string) Value { return Value{k: KindString, s: s} }

// NewBytes returns a BYTES value: a KindString value holding b's bytes
// (Str returns them), told apart from a STRING by its type only.
func NewBytes(b []byte) Value { return Value{k: KindString, s: string(b)} }

// NewDecimal returns a DECIMAL value. d must not be modified afterwards.
func NewDecimal(d *apd.Decimal) Value { return Value{k: KindDecimal, p: unsafe.Pointer(d)} }

// NewRow returns a ROW value of the given field values, which must not be
// modified afterwards.
func NewRow(fields []Value) Value {
	return Value{k: KindRow, p: unsafe.Pointer(&composite{vals: fields})}
}

// NewArray returns an ARRAY value of the given elements, which must not
// be modified afterwards.
func NewArray(elems []Value) Value {
	return Value{k: KindArray, p: unsafe.Pointer(&composite{vals: elems})}
}

// NewMap returns a MAP value of entries written key, value, key, value,
// ..., with distinct keys; it must not be modified afterwards.
func NewMap(entries []Value) Value {
	if len(entries)%2 != 0 {
		panic("types: NewMap needs key, value pairs")
	}
	return Value{k: KindMap, p: unsafe.Pointer(&composite{vals: entries})}
}

// NewMultiset returns a MULTISET value of the elements with their
// counts (each above 0, the elements distinct): the entries of a KindMap
// value, sorted by element so that equal bags are equal values. It takes
// ownership of both slices.
func NewMultiset(elems []Value, counts []int64) Value {
	idx := make([]int, len(elems))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return Compare(elems[idx[a]], elems[idx[b]]) < 0 })
	entries := make([]Value, 0, 2*len(elems))
	for _, i := range idx {
		entries = append(entries, elems[i], NewInt(counts[i]))
	}
	return NewMap(entries)
}

// NewDate returns a DATE value from days since the epoch.
func NewDate(days int64) Value { return Value{k: KindDate, i: days} }

// NewTimestamp returns a TIMESTAMP value from nanoseconds since the epoch.
func NewTimestamp(nanos int64) Value { return Value{k: KindTimestamp, i: nanos} }

// NewTimestampFromTime returns the TIMESTAMP for t's wall clock in t's location.
func NewTimestampFromTime(t time.Time) Value {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	u := time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
	return NewTimestamp(u.UnixNano())
}

// NewInterval returns an INTERVAL value.
func NewInterval(d time.Duration) Value { return Value{k: KindInterval, i: int64(d)} }

// NanosPerDay is the length of a day, the range of TIME values.
const NanosPerDay = 86400 * int64(1e9)

// NewTime returns a TIME value from nanoseconds since midnight, which
// must be in [0, NanosPerDay).
func NewTime(nanos int64) Value {
	if nanos < 0 || nanos >= NanosPerDay {
		panic(fmt.Sprintf("types: TIME of %d ns is outside a day", nanos))
	}
	return Value{k: KindTime, i: nanos}
}

// NewIntervalYM returns an INTERVAL YEAR TO MONTH value of months.
func NewIntervalYM(months int64) Value { return Value{k: KindIntervalYM, i: months} }

// Kind returns the value's kind.
func (v Value) Kind() Kind { return v.k }

// IsNull reports whether v is SQL NULL.
func (v Value) IsNull() bool { return v.k == KindNull }

func (v Value) must(k Kind) {
	if v.k != k {
		kindPanic(v.k, k)
	}
}

// kindPanic is kept out of line so that the accessors inline.
//
//go:noinline
func kindPanic(have, want Kind) {
	panic(fmt.Sprintf("types: value of kind %d read as kind %d", have, want))
}

// Bool returns a BOOLEAN value.
func (v Value) Bool() bool { v.must(KindBool); return v.i != 0 }

// Int returns an INT/BIGINT value.
func (v Value) Int() int64 { v.must(KindInt); return v.i }

// Float returns a DOUBLE value.
func (v Value) Float() float64 { v.must(KindFloat); return math.Float64frombits(uint64(v.i)) }

// Str returns a STRING value.
func (v Value) Str() string { v.must(KindString); return v.s }

// Decimal returns a DECIMAL value; the result must not be modified.
func (v Value) Decimal() *apd.Decimal { v.must(KindDecimal); return v.dec() }

func (v Value) dec() *apd.Decimal { return (*apd.Decimal)(v.p) }

// Elems returns the field values of a ROW, the elements of an ARRAY or the
// entries of a MAP (key, value, key, value, ...); the result must not be
// modified.
func (v Value) Elems() []Value {
	if v.k != KindRow && v.k != KindArray && v.k != KindMap {
		kindPanic(v.k, KindRow)
	}
	return (*composite)(v.p).vals
}

// IsComposite reports whether v is a ROW, ARRAY or MAP.
func (v Value) IsComposite() bool { return v.k == KindRow || v.k == KindArray || v.k == KindMap }

// Date returns a DATE as days since the epoch.
func (v Value) Date() int64 { v.must(KindDate); return v.i }

// Timestamp returns a TIMESTAMP as nanoseconds since the epoch.
func (v Value) Timestamp() int64 { v.must(KindTimestamp); return v.i }

// Interval returns an INTERVAL.
func (v Value) Interval() time.Duration { v.must(KindInterval); return time.Duration(v.i) }

// TimeOfDay returns a TIME as nanoseconds since midnight.
func (v Value) TimeOfDay() int64 { v.must(KindTime); return v.i }

// Months returns an INTERVAL YEAR TO MONTH as months.
func (v Value) Months() int64 { v.must(KindIntervalYM); return v.i }

// Time returns a DATE or TIMESTAMP as a UTC time.Time.
func (v Value) Time() time.Time {
	switch v.k {
	case KindDate:
		return time.Unix(v.i*86400, 0).UTC()
	case KindTimestamp:
		return time.Unix(0, v.i).UTC()
	}
	panic(fmt.Sprintf("types: value of kind %d read as time", v.k))
}

// Raw returns the int64 payload of bool, int, date, timestamp, time and
// interval values. It lets hot loops skip the kind check when the planner has
// already proven the kind.
func (v Value) Raw() int64 { return v.i }

// Set sets *v to x, like *v = x, for filling in a row that is being
// built. It stores the string and decimal pointers only when *v or x has
// one, so that filling freshly allocated rows with other values stores
// no pointer and costs no garbage-collector write barrier (*v = x costs
// a bulk barrier for the whole Value while the collector is marking).
func (v *Value) Set(x Value) {
	v.k, v.i = x.k, x.i
	if unsafe.StringData(v.s) != nil || unsafe.StringData(x.s) != nil {
		v.s = x.s
	}
	if v.p != nil || x.p != nil {
		v.p = x.p
	}
}

// Row is one row of values. Rows are immutable once emitted.
type Row []Value

// Copy returns a copy of r that shares no backing array with it.
func (r Row) Copy() Row {
	c := make(Row, len(r))
	copy(c, r)
	return c
}
