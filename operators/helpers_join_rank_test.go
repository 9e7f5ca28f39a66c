package operators

// Test helpers shared by join_test.go, rank_test.go and normalize_test.go.
// Every name starts with "join" to stay clear of other operators' tests.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// joinV builds a value: nil is NULL, int an INT, string a STRING,
// float64 a DOUBLE, a types.Value is taken as is.
func joinV(x any) types.Value {
	switch v := x.(type) {
	case nil:
		return types.NullValue
	case int:
		return types.NewInt(int64(v))
	case int64:
		return types.NewInt(v)
	case string:
		return types.NewString(v)
	case float64:
		return types.NewFloat(v)
	case types.Value:
		return v
	}
	panic(fmt.Sprintf("joinV: unsupported %T", x))
}

// joinDec builds a DECIMAL value from its text.
func joinDec(s string) types.Value {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return types.NewDecimal(d)
}

func joinRow(vals ...any) types.Row {
	r := make(types.Row, len(vals))
	for i, v := range vals {
		r[i] = joinV(v)
	}
	return r
}

// joinC builds a change: joinC("+I", 1, "a").
func joinC(kind string, vals ...any) dyntable.Change {
	k, err := dyntable.ParseRowKind(kind)
	if err != nil {
		panic(err)
	}
	return dyntable.Change{Kind: k, Row: joinRow(vals...)}
}

// joinCollector records every emitted change and checks that chunks are
// never empty.
type joinCollector struct {
	t       testing.TB
	changes []dyntable.Change
}

func (c *joinCollector) Emit(ch *dyntable.Chunk) {
	if ch.Len() == 0 {
		c.t.Errorf("operator emitted an empty chunk")
	}
	c.changes = append(c.changes, ch.Changes...)
}

func (*joinCollector) EmitWatermark(int64) error { return nil }

// joinHarness drives one operator directly and materializes its output
// as a multiset table.
type joinHarness struct {
	t     testing.TB
	op    dataflow.Operator
	out   joinCollector
	table *dyntable.Table
}

func joinOpen(t testing.TB, op dataflow.Operator) *joinHarness {
	t.Helper()
	if err := op.Open(joinNewCtx()); err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := op.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &joinHarness{t: t, op: op, out: joinCollector{t: t}, table: dyntable.NewTable(nil)}
}

// pushErr feeds one chunk and returns the emitted changes (formatted) and
// the operator's error.
func (h *joinHarness) pushErr(input int, changes ...dyntable.Change) ([]string, error) {
	h.t.Helper()
	h.out.changes = nil
	c := &dyntable.Chunk{Changes: slices.Clone(changes)}
	err := h.op.ProcessChunk(input, c, &h.out)
	var got []string
	for _, ch := range h.out.changes {
		got = append(got, dyntable.FormatChange(ch, nil))
		if aerr := h.table.Apply(ch); aerr != nil {
			h.t.Fatalf("materializing %s: %v", dyntable.FormatChange(ch, nil), aerr)
		}
	}
	return got, err
}

// push feeds one chunk, fails on error, and returns the emitted changes.
func (h *joinHarness) push(input int, changes ...dyntable.Change) []string {
	h.t.Helper()
	got, err := h.pushErr(input, changes...)
	if err != nil {
		h.t.Fatalf("ProcessChunk: %v", err)
	}
	return got
}

// expect pushes a chunk and compares the exact changelog.
func (h *joinHarness) expect(input int, changes []dyntable.Change, want ...string) {
	h.t.Helper()
	got := h.push(input, changes...)
	if !slices.Equal(got, want) {
		h.t.Fatalf("after %s:\n got  %s\n want %s", joinFormatChanges(changes), joinList(got), joinList(want))
	}
}

// expectTable compares the materialized output, ignoring order.
func (h *joinHarness) expectTable(want ...string) {
	h.t.Helper()
	got := joinFormatRows(h.table.Rows())
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(got, w) {
		h.t.Fatalf("materialized output:\n got  %s\n want %s", joinList(got), joinList(w))
	}
}

// joinCs is shorthand for a chunk's changes.
func joinCs(cs ...dyntable.Change) []dyntable.Change { return cs }

func joinFormatChanges(cs []dyntable.Change) string {
	var s []string
	for _, c := range cs {
		s = append(s, dyntable.FormatChange(c, nil))
	}
	return strings.Join(s, " ")
}

// joinFormatRows formats rows as [a, b] and sorts them.
func joinFormatRows(rows []types.Row) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, "["+types.FormatRow(r, nil, ", ")+"]")
	}
	slices.Sort(out)
	return out
}

func joinList(s []string) string {
	if len(s) == 0 {
		return "(nothing)"
	}
	return strings.Join(s, " ")
}

// joinSameMultiset fails unless got and want hold the same rows.
func joinSameMultiset(t testing.TB, what string, got, want []types.Row) {
	t.Helper()
	g, w := joinFormatRows(got), joinFormatRows(want)
	if !slices.Equal(g, w) {
		t.Fatalf("%s:\n got  %s\n want %s", what, joinList(g), joinList(w))
	}
}

// joinRemoveRow removes one copy of r (by encoding) from rows.
func joinRemoveRow(rows []types.Row, r types.Row) []types.Row {
	k := string(types.EncodeRow(nil, r))
	for i, x := range rows {
		if string(types.EncodeRow(nil, x)) == k {
			return slices.Delete(rows, i, i+1)
		}
	}
	panic("joinRemoveRow: row not present")
}

// joinNewCtx returns a fresh operator context with a memory store.
func joinNewCtx() *dataflow.OpContext {
	return &dataflow.OpContext{JobName: "test", NodeName: "op", Parallelism: 1, State: state.NewMemoryStore("t"),
		Metrics: dataflow.NewSubtaskMetrics()}
}
