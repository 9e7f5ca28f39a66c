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
