package mysql

import (
	"reflect"
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/types"
)

// The statements the sink writes, spelled out by hand.
func TestStatements(t *testing.T) {
	tb := &dbconn.Table{Qualified: "`db`.`t`", Cols: []string{"id", "v"}, Types: []types.Type{types.TypeInt, types.TypeString}, PK: []int{0}}
	rows := []types.Row{{types.NewInt(1), types.NewString("a")}, {types.NewInt(2), types.NullValue}}
	q, args := dialect.Insert(tb, rows)
	if want := "INSERT INTO `db`.`t` (`id`, `v`) VALUES (?, ?), (?, ?) ON DUPLICATE KEY UPDATE `v` = VALUES(`v`)"; q != want {
		t.Errorf("insert:\n got %s\nwant %s", q, want)
	}
	if want := []any{int64(1), "a", int64(2), nil}; !reflect.DeepEqual(args, want) {
		t.Errorf("insert args %v, want %v", args, want)
	}
	q, args = dialect.Delete(tb, rows)
	if want := "DELETE FROM `db`.`t` WHERE (`id`) IN ((?), (?))"; q != want {
		t.Errorf("delete:\n got %s\nwant %s", q, want)
	}
	if want := []any{int64(1), int64(2)}; !reflect.DeepEqual(args, want) {
		t.Errorf("delete args %v, want %v", args, want)
	}
	// Every column in the key: the upsert clause assigns the key to itself.
	keyOnly := &dbconn.Table{Qualified: "`k`", Cols: []string{"a", "b"}, Types: []types.Type{types.TypeInt, types.TypeInt}, PK: []int{1, 0}}
	q, _ = dialect.Insert(keyOnly, []types.Row{{types.NewInt(1), types.NewInt(2)}})
	if want := "INSERT INTO `k` (`a`, `b`) VALUES (?, ?) ON DUPLICATE KEY UPDATE `b` = `b`"; q != want {
		t.Errorf("key-only insert:\n got %s\nwant %s", q, want)
	}
	// Without a key: a plain INSERT.
	q, _ = dialect.Insert(&dbconn.Table{Qualified: "`n`", Cols: []string{"x"}, Types: []types.Type{types.TypeInt}}, []types.Row{{types.NewInt(7)}})
	if want := "INSERT INTO `n` (`x`) VALUES (?)"; q != want {
		t.Errorf("keyless insert:\n got %s\nwant %s", q, want)
	}
}
