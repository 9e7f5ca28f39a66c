package operators

import (
	"context"
	"testing"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// positionedSource emits its rows and keeps a position and the
// checkpoint events it is told of.
type positionedSource struct {
	dataflow.BaseSource
	rows      []types.Row
	pos       []byte
	saved     int64
	completed int64
}

func (s *positionedSource) Run(_ context.Context, out dataflow.SourceOutput) error {
	c := &dyntable.Chunk{}
	for _, r := range s.rows {
		c.Append(dyntable.Insert, r)
	}
	return out.Emit(c)
}
func (s *positionedSource) SnapshotPosition(id int64) ([]byte, error) {
	s.saved = id
	return s.pos, nil
}
func (s *positionedSource) RestorePosition(p []byte) error { s.pos = p; return nil }
func (s *positionedSource) NotifyCheckpointComplete(id int64) error {
	s.completed = id
	return nil
}

// plainSource is a source without a position.
type plainSource struct{ dataflow.BaseSource }

func (plainSource) Run(context.Context, dataflow.SourceOutput) error { return nil }

// TestProjectingSource: rows come out narrowed to the fields, in their
// order, and checkpoint calls reach the wrapped source, or fail when it
// cannot keep a position.
func TestProjectingSource(t *testing.T) {
	src := &positionedSource{rows: []types.Row{
		{types.NewInt(1), types.NewString("a"), types.NewInt(10)},
		{types.NewInt(2), types.NewString("b"), types.NewInt(20)},
	}}
	p := NewProjectingSource(src, [][]int{{2}, {0}})
	var out recordingOutput
	if err := p.Run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.changes) != 2 {
		t.Fatalf("emitted %v", out.changes)
	}
	for i, want := range [][2]int64{{10, 1}, {20, 2}} {
		r := out.changes[i].Row
		if len(r) != 2 || r[0].Int() != want[0] || r[1].Int() != want[1] {
			t.Errorf("row %d is %v, want %v", i, r, want)
		}
	}

	if err := p.RestorePosition([]byte("p7")); err != nil {
		t.Fatal(err)
	}
	if pos, err := p.SnapshotPosition(3); err != nil || string(pos) != "p7" {
		t.Errorf("position %q (err %v), want the wrapped source's p7", pos, err)
	}
	if err := p.NotifyCheckpointComplete(4); err != nil || src.saved != 3 || src.completed != 4 {
		t.Errorf("the wrapped source saw checkpoints %d saved, %d complete (err %v); want 3 and 4", src.saved, src.completed, err)
	}

	plain := NewProjectingSource(plainSource{}, [][]int{{0}})
	if _, err := plain.SnapshotPosition(1); err == nil {
		t.Error("a source without a position gave one")
	}
	if err := plain.RestorePosition([]byte{0}); err == nil {
		t.Error("a source without a position took one")
	}
	if err := plain.NotifyCheckpointComplete(1); err != nil {
		t.Errorf("a source that does not listen failed the notice: %v", err)
	}
}

// TestProjectingSourcePaths: a path takes a field out of a ROW column,
// and out of a ROW nested in it; a NULL ROW on the path gives NULL.
func TestProjectingSourcePaths(t *testing.T) {
	inner := types.NewRow([]types.Value{types.NewString("x"), types.NewInt(3)})
	src := &positionedSource{rows: []types.Row{
		{types.NewInt(1), types.NewRow([]types.Value{types.NewInt(10), inner})},
		{types.NewInt(2), types.NewRow([]types.Value{types.NewInt(20), types.NullValue})},
		{types.NewInt(3), types.NullValue},
	}}
	p := NewProjectingSource(src, [][]int{{1, 1, 0}, {0}, {1, 0}})
	var out recordingOutput
	if err := p.Run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	want := []string{"[x 1 10]", "[NULL 2 20]", "[NULL 3 NULL]"}
	if len(out.changes) != len(want) {
		t.Fatalf("emitted %v", out.changes)
	}
	for i, w := range want {
		if got := "[" + types.FormatRow(out.changes[i].Row, nil, " ") + "]"; got != w {
			t.Errorf("row %d is %s, want %s", i, got, w)
		}
	}
}
