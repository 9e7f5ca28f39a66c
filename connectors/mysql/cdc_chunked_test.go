package mysql

import (
	"reflect"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// window's sorting of a transaction's changes, worked out by hand: the
// chunk is (10, 20] of table m; emitted are keys <= 10 of m and table a
// (done before m); later are keys above 20 of m and table z.
func TestChunkWindow(t *testing.T) {
	row := func(k int64, v string) types.Row { return types.Row{types.NewInt(k), types.NewString(v)} }
	after, hi := int64(10), int64(20)
	region := func(table string, k int64) int {
		switch {
		case table == "a":
			return -1
		case table == "z":
			return 1
		case k <= after:
			return -1
		case k <= hi:
			return 0
		}
		return 1
	}
	chunk := map[int64]types.Row{12: row(12, "a"), 15: row(15, "b"), 18: row(18, "c")}
	in := &dyntable.Chunk{}
	in.Append(dyntable.Insert, row(5, "x"))        // emitted key: emitted
	in.Append(dyntable.Insert, row(25, "y"))       // later key: dropped
	in.Append(dyntable.UpdateBefore, row(12, "a")) // in the chunk: patched
	in.Append(dyntable.UpdateAfter, row(12, "a2"))
	in.Append(dyntable.Delete, row(15, "b"))       // in the chunk: removed
	in.Append(dyntable.UpdateBefore, row(18, "c")) // key moves from the chunk to an emitted key
	in.Append(dyntable.UpdateAfter, row(7, "c"))
	in.Append(dyntable.UpdateBefore, row(3, "d")) // from an emitted key to a later one
	in.Append(dyntable.UpdateAfter, row(30, "d"))
	in.Append(dyntable.UpdateBefore, row(4, "e")) // within emitted keys
	in.Append(dyntable.UpdateAfter, row(4, "e2"))
	in.Append(dyntable.UpdateBefore, row(22, "f")) // from a later key into the chunk
	in.Append(dyntable.UpdateAfter, row(19, "f"))
	tables := make([]string, in.Len())
	for i := range tables {
		tables[i] = "m"
	}
	in.Append(dyntable.Insert, row(14, "other table, done"))
	in.Append(dyntable.Delete, row(16, "other table, later"))
	tables = append(tables, "a", "z")
	out := &dyntable.Chunk{}
	window(in, tables, func(string) int { return 0 }, region, chunk, out)
	var got []string
	for _, c := range out.Changes {
		got = append(got, dyntable.FormatChange(c, []types.Type{types.TypeBigInt, types.TypeString}))
	}
	want := []string{"+I[5, x]", "+I[7, c]", "-D[3, d]", "-U[4, e]", "+U[4, e2]", "+I[14, other table, done]"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("emitted %v, want %v", got, want)
	}
	wantChunk := map[int64]types.Row{12: row(12, "a2"), 19: row(19, "f")}
	if !reflect.DeepEqual(chunk, wantChunk) {
		t.Fatalf("chunk %v, want %v", chunk, wantChunk)
	}
}
