package operators

import (
	"context"
	"testing"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// recordingOutput keeps what a source emits. Its embedded SourceOutput is
// nil: a call the test does not expect panics.
type recordingOutput struct {
	dataflow.SourceOutput
	changes []dyntable.Change
}

func (o *recordingOutput) Emit(c *dyntable.Chunk) error {
	o.changes = append(o.changes, c.Changes...)
	return nil
}

func intRows(vs ...int64) []types.Row {
	var rows []types.Row
	for _, v := range vs {
		rows = append(rows, types.Row{types.NewInt(v)})
	}
	return rows
}

// TestConstSourcePosition: the rows come out once, as inserts; a source
// restored to a saved position emits only the rows after it, and a
// position that does not fit its rows is refused.
func TestConstSourcePosition(t *testing.T) {
	rows := intRows(1, 2, 3)
	s := NewConstSource(rows)
	var out recordingOutput
	if err := s.Run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.changes) != 3 || out.changes[0].Kind != dyntable.Insert || out.changes[2].Row[0].Int() != 3 {
		t.Fatalf("emitted %v, want +I 1, 2, 3", out.changes)
	}
	pos, err := s.SnapshotPosition(1)
	if err != nil {
		t.Fatal(err)
	}
	out.changes = nil
	if err := s.Run(context.Background(), &out); err != nil || len(out.changes) != 0 {
		t.Fatalf("a second run emitted %v (err %v), want nothing", out.changes, err)
	}

	r := NewConstSource(rows)
	if err := r.RestorePosition(pos); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), &out); err != nil || len(out.changes) != 0 {
		t.Fatalf("restored after all rows, emitted %v (err %v)", out.changes, err)
	}

	// Position 2 (as saved after two rows): only the third row follows.
	r = NewConstSource(rows)
	if err := r.RestorePosition([]byte{2}); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), &out); err != nil || len(out.changes) != 1 || out.changes[0].Row[0].Int() != 3 {
		t.Fatalf("restored at 2, emitted %v (err %v), want +I 3", out.changes, err)
	}

	for _, bad := range [][]byte{{4}, {}, {1, 0}, {0x80}} {
		if err := NewConstSource(rows).RestorePosition(bad); err == nil {
			t.Errorf("position %x for 3 rows was accepted", bad)
		}
	}
}
