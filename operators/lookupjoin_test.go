package operators

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
)

// ljFake is a Lookuper over a map from an INT key to rows (k, name); it
// counts the lookups of each key and its lifecycle calls.
type ljFake struct {
	rows           map[int64][]types.Row
	calls          map[int64]int
	opened, closed int
	fail           error
}

func (f *ljFake) Open(context.Context) error { f.opened++; return nil }
func (f *ljFake) Close() error               { f.closed++; return nil }
func (f *ljFake) Lookup(_ context.Context, key types.Row) ([]types.Row, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	if len(key) != 1 || key[0].IsNull() {
		return nil, errors.New("bad key")
	}
	f.calls[key[0].Int()]++
	return f.rows[key[0].Int()], nil
}

func ljSetup(t *testing.T, jt JoinType, cond Predicate) (*ljFake, *joinHarness) {
	f := &ljFake{calls: map[int64]int{}, rows: map[int64][]types.Row{
		1: {joinRow(1, "a")},
		2: {joinRow(2, "b"), joinRow(2, "bb")},
	}}
	// Left rows are (id, k); the key is column 1; the table has 2 columns.
	op := NewLookupJoin(LookupJoinSpec{Type: jt, LeftKeys: []int{1}, LeftWidth: 2, RightWidth: 2,
		Condition: cond, Table: "r", NewLookuper: func() (Lookuper, error) { return f, nil }})
	return f, joinOpen(t, op)
}

func TestLookupJoinInnerBatchesKeys(t *testing.T) {
	f, h := ljSetup(t, InnerJoin, nil)
	if f.opened != 1 {
		t.Fatalf("Open called %d times", f.opened)
	}
	// Chunk 1: x(1) -> a; y(2) -> b, bb; z(3) none; n(NULL) none (never
	// looked up); w(1) -> a again, from the chunk's batch.
	h.expect(0, joinCs(joinC("+I", "x", 1), joinC("+I", "y", 2), joinC("+I", "z", 3), joinC("+I", "n", nil), joinC("+I", "w", 1)),
		"+I[x, 1, 1, a]", "+I[y, 2, 2, b]", "+I[y, 2, 2, bb]", "+I[w, 1, 1, a]")
	if f.calls[1] != 1 || f.calls[2] != 1 || f.calls[3] != 1 || len(f.calls) != 3 {
		t.Fatalf("lookups per key: %v, want each of 1, 2, 3 once", f.calls)
	}
	// The table changes: the next chunk sees the new rows (processing
	// time), and earlier output is not retracted (nothing but +I).
	f.rows[3] = []types.Row{joinRow(3, "c")}
	f.rows[1] = nil
	h.expect(0, joinCs(joinC("+I", "z2", 3), joinC("+I", "x2", 1)), "+I[z2, 3, 3, c]")
	if f.calls[1] != 2 || f.calls[3] != 2 {
		t.Fatalf("second chunk must look keys up again: %v", f.calls)
	}
}

func TestLookupJoinLeftAndCondition(t *testing.T) {
	// Condition: the looked-up name is not "b".
	cond := func(r types.Row) (bool, error) { return r[3].Str() != "b", nil }
	_, h := ljSetup(t, LeftJoin, cond)
	// x(1) -> a; y(2) -> bb only (b filtered); z(3) padded; n(NULL) padded.
	h.expect(0, joinCs(joinC("+I", "x", 1), joinC("+I", "y", 2), joinC("+I", "z", 3), joinC("+I", "n", nil)),
		"+I[x, 1, 1, a]", "+I[y, 2, 2, bb]", "+I[z, 3, NULL, NULL]", "+I[n, NULL, NULL, NULL]")
	// Every row filtered: padded once.
	_, h2 := ljSetup(t, LeftJoin, func(types.Row) (bool, error) { return false, nil })
	h2.expect(0, joinCs(joinC("+I", "y", 2)), "+I[y, 2, NULL, NULL]")
}

func TestLookupJoinErrors(t *testing.T) {
	f, h := ljSetup(t, InnerJoin, nil)
	if _, err := h.pushErr(0, joinC("-D", "x", 1)); err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Fatalf("a retraction must fail: %v", err)
	}
	f.fail = errors.New("connection refused")
	if _, err := h.pushErr(0, joinC("+I", "x", 1)); err == nil || !strings.Contains(err.Error(), "table 'r': connection refused") {
		t.Fatalf("a failed lookup must fail naming the table: %v", err)
	}
	op := NewLookupJoin(LookupJoinSpec{Type: InnerJoin, LeftKeys: []int{1}, LeftWidth: 2, RightWidth: 2, Table: "r",
		NewLookuper: func() (Lookuper, error) { return f, nil }})
	if err := op.Open(joinNewCtx()); err != nil {
		t.Fatal(err)
	}
	if err := op.Close(); err != nil || f.closed < 1 {
		t.Fatalf("Close: %v, closed %d", err, f.closed)
	}
}
