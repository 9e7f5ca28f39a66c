package window

// Test helpers of the window operators' tests. They keep the names of
// the operators package's helpers they mirror (joinNewCtx, joinRow, the
// tj* helpers of its time-based operator tests), so that a test moved
// between the two packages reads the same.

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// joinNewCtx is an operator context over a fresh memory store.
func joinNewCtx() *dataflow.OpContext {
	return &dataflow.OpContext{JobName: "test", NodeName: "op", Parallelism: 1, State: state.NewMemoryStore("t"),
		Metrics: dataflow.NewSubtaskMetrics()}
}

// joinRow builds a row: nil is NULL, int an INT, string a STRING,
// float64 a DOUBLE, a types.Value is taken as is.
func joinRow(vals ...any) types.Row {
	r := make(types.Row, len(vals))
	for i, x := range vals {
		switch v := x.(type) {
		case nil:
			r[i] = types.NullValue
		case int:
			r[i] = types.NewInt(int64(v))
		case string:
			r[i] = types.NewString(v)
		case float64:
			r[i] = types.NewFloat(v)
		case types.Value:
			r[i] = v
		default:
			panic(fmt.Sprintf("joinRow: unsupported %T", x))
		}
	}
	return r
}

// tjCollector records output changes as "+I[...]" strings.
type tjCollector struct {
	t   testing.TB
	out []string
}

func (c *tjCollector) Emit(ch *dyntable.Chunk) {
	if ch.Len() == 0 {
		c.t.Errorf("operator emitted an empty chunk")
	}
	for _, x := range ch.Changes {
		c.out = append(c.out, x.Kind.String()+"["+types.FormatRow(x.Row, nil, ", ")+"]")
	}
}

func (c *tjCollector) EmitWatermark(int64) error { return nil }

// take returns and clears what was emitted so far.
func (c *tjCollector) take() []string {
	o := c.out
	c.out = nil
	return o
}

// tjTS is a timestamp at second s (fractional seconds allowed).
func tjTS(s float64) types.Value { return types.NewTimestamp(int64(math.Round(s * 1e9))) }

// tjOpen opens op with a fresh memory store.
func tjOpen(t testing.TB, op dataflow.Operator) (*tjCollector, state.Store) {
	t.Helper()
	st := state.NewMemoryStore("tj")
	if err := op.Open(&dataflow.OpContext{NodeName: "test", Parallelism: 1, State: st}); err != nil {
		t.Fatal(err)
	}
	return &tjCollector{t: t}, st
}

// tjPush feeds rows to input as inserts and returns the output.
func tjPush(t testing.TB, op dataflow.Operator, c *tjCollector, input int, rows ...types.Row) []string {
	t.Helper()
	ch := &dyntable.Chunk{}
	for _, r := range rows {
		ch.Append(dyntable.Insert, r)
	}
	if err := op.ProcessChunk(input, ch, c); err != nil {
		t.Fatal(err)
	}
	return c.take()
}

// tjWM sends the watermark at second sec and returns the output.
func tjWM(t testing.TB, op dataflow.Operator, c *tjCollector, sec float64) []string {
	t.Helper()
	if err := op.ProcessWatermark(tjTS(sec).Timestamp(), c); err != nil {
		t.Fatal(err)
	}
	return c.take()
}

func tjExpect(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}
