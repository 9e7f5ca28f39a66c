package postgres

import (
	"reflect"
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/types"
)

// The statements the sink writes, spelled out by hand.
func TestStatements(t *testing.T) {
	tb := &dbconn.Table{Qualified: `"s"."t"`, Cols: []string{"id", "v"}, Types: []types.Type{types.TypeInt, types.TypeString}, PK: []int{0}}
	rows := []types.Row{{types.NewInt(1), types.NewString("a")}, {types.NewInt(2), types.NullValue}}
	q, args := dialect.Insert(tb, rows)
	if want := `INSERT INTO "s"."t" ("id", "v") VALUES ($1, $2), ($3, $4) ON CONFLICT ("id") DO UPDATE SET "v" = EXCLUDED."v"`; q != want {
		t.Errorf("insert:\n got %s\nwant %s", q, want)
	}
	if want := []any{int64(1), "a", int64(2), nil}; !reflect.DeepEqual(args, want) {
		t.Errorf("insert args %v, want %v", args, want)
	}
	q, args = dialect.Delete(tb, rows)
	if want := `DELETE FROM "s"."t" WHERE ("id") IN (($1), ($2))`; q != want {
		t.Errorf("delete:\n got %s\nwant %s", q, want)
	}
	if want := []any{int64(1), int64(2)}; !reflect.DeepEqual(args, want) {
		t.Errorf("delete args %v, want %v", args, want)
	}
	// Every column in the key: nothing to update.
	keyOnly := &dbconn.Table{Qualified: `"k"`, Cols: []string{"a", "b"}, Types: []types.Type{types.TypeInt, types.TypeInt}, PK: []int{1, 0}}
	q, _ = dialect.Insert(keyOnly, []types.Row{{types.NewInt(1), types.NewInt(2)}})
	if want := `INSERT INTO "k" ("a", "b") VALUES ($1, $2) ON CONFLICT ("b", "a") DO NOTHING`; q != want {
		t.Errorf("key-only insert:\n got %s\nwant %s", q, want)
	}
}
