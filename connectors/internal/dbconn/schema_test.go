package dbconn

import (
	"errors"
	"reflect"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

type col struct{ name, typ string }

func (c col) colName() string { return c.name }

func fitsInt(t types.Type, c col) error {
	if c.typ != "int" {
		return errors.New("has type " + c.typ)
	}
	return nil
}

func TestMatchColumns(t *testing.T) {
	tb := &connectors.Table{Columns: []connectors.Column{{Name: "B", Type: types.TypeInt}, {Name: "a", Type: types.TypeInt}}}
	// Matched case-insensitively, in the streamsql table's order.
	idx, err := MatchColumns(tb, []col{{"A", "int"}, {"x", "text"}, {"b", "int"}}, col.colName, fitsInt, "the table 't'")
	if err != nil || !reflect.DeepEqual(idx, []int{2, 0}) {
		t.Errorf("got %v, %v; want [2 0]", idx, err)
	}
	_, err = MatchColumns(tb, []col{{"b", "int"}}, col.colName, fitsInt, "the table 't'")
	if want := "column 'a' does not exist in the table 't'"; err == nil || err.Error() != want {
		t.Errorf("missing column: %v, want %s", err, want)
	}
	_, err = MatchColumns(tb, []col{{"a", "int"}, {"b", "text"}}, col.colName, fitsInt, "the table 't'")
	if want := "column 'B' has type text"; err == nil || err.Error() != want {
		t.Errorf("unfit column: %v, want %s", err, want)
	}
}

func TestSameKey(t *testing.T) {
	tb := &connectors.Table{Columns: []connectors.Column{{Name: "A"}, {Name: "b"}, {Name: "c"}}, PrimaryKey: []int{1, 0}}
	if d, a, same := SameKey(tb, []string{"a", "B"}); !same || !reflect.DeepEqual(d, []string{"a", "b"}) || !reflect.DeepEqual(a, []string{"a", "b"}) {
		t.Errorf("same key in another order and case: %v %v %v", d, a, same)
	}
	if _, _, same := SameKey(tb, []string{"a"}); same {
		t.Error("a shorter key is not the same")
	}
	if _, _, same := SameKey(tb, []string{"a", "c"}); same {
		t.Error("another column is not the same key")
	}
	if _, _, same := SameKey(&connectors.Table{}, nil); !same {
		t.Error("no key on either side is the same")
	}
}

// fakeRows is a result set of string pairs; failAt makes that row's Scan
// fail.
type fakeRows struct {
	rows   [][2]string
	i      int
	failAt int
	err    error
}

func (r *fakeRows) Next() bool { r.i++; return r.i <= len(r.rows) }
func (r *fakeRows) Err() error { return r.err }
func (r *fakeRows) Scan(dest ...any) error {
	if r.i == r.failAt {
		return errors.New("scan failed")
	}
	*dest[0].(*string), *dest[1].(*string) = r.rows[r.i-1][0], r.rows[r.i-1][1]
	return nil
}

func TestScanAll(t *testing.T) {
	fields := func(c *col) []any { return []any{&c.name, &c.typ} }
	got, err := ScanAll(&fakeRows{rows: [][2]string{{"a", "int"}, {"b", "text"}}}, fields)
	if err != nil || !reflect.DeepEqual(got, []col{{"a", "int"}, {"b", "text"}}) {
		t.Fatalf("ScanAll = %v, %v", got, err)
	}
	if _, err := ScanAll(&fakeRows{rows: [][2]string{{"a", "int"}, {"b", "text"}}, failAt: 2}, fields); err == nil || err.Error() != "scan failed" {
		t.Fatalf("a failing Scan: err = %v", err)
	}
	if _, err := ScanAll(&fakeRows{err: errors.New("read failed")}, fields); err == nil || err.Error() != "read failed" {
		t.Fatalf("a failing read: err = %v", err)
	}
}

func TestLostConnection(t *testing.T) {
	for _, c := range []struct {
		msg  string
		also []string
		want bool
	}{
		{"dial tcp: connect: connection refused", nil, true},
		{"write: broken pipe", nil, true},
		{"read: connection reset by peer", nil, true},
		{"unexpected EOF", nil, true},
		{"read: i/o timeout", nil, false},
		{"read: i/o timeout", []string{"i/o timeout"}, true},
		{"duplicate key", []string{"conn closed"}, false},
	} {
		if got := LostConnection(errors.New(c.msg), c.also...); got != c.want {
			t.Errorf("LostConnection(%q, %q) = %v, want %v", c.msg, c.also, got, c.want)
		}
	}
}
