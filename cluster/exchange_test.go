package cluster

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

func TestRecordRoundTrip(t *testing.T) {
	rows := []dyntable.Change{
		{Kind: dyntable.Insert, Row: types.Row{types.NewInt(7), types.NewString("a\x00b"), types.NullValue}},
		{Kind: dyntable.UpdateBefore, Row: types.Row{types.NewInt(-1), types.NewString(""), types.NewTimestamp(1700000000123000000)}},
		{Kind: dyntable.UpdateAfter, Row: types.Row{types.NewInt(0), types.NewString("x"), types.NewFloat(1.5)}},
		{Kind: dyntable.Delete, Row: types.Row{}},
	}
	for _, ch := range rows {
		r, err := decodeRecord(encodeRow(ch), 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.typ != recRow || r.change.Kind != ch.Kind || types.FormatRow(r.change.Row, nil, "|") != types.FormatRow(ch.Row, nil, "|") {
			t.Errorf("%s %v came back as %c %s %v", ch.Kind, ch.Row, r.typ, r.change.Kind, r.change.Row)
		}
	}
	for _, m := range []struct {
		typ  byte
		task int
		wm   int64
	}{{recWatermark, 3, 1700000000000000000}, {recWatermark, 0, dataflow.MinWatermark}, {recIdle, 2, 0}, {recEnd, 3, 0}} {
		r, err := decodeRecord(encodeMarker(m.typ, m.task, m.wm), 4)
		if err != nil {
			t.Fatal(err)
		}
		if r.typ != m.typ || r.task != m.task || r.wm != m.wm {
			t.Errorf("marker %c/%d/%d came back as %c/%d/%d", m.typ, m.task, m.wm, r.typ, r.task, r.wm)
		}
	}
	for _, bad := range []struct {
		v    []byte
		want string
	}{
		{nil, "empty"}, {[]byte{'D'}, "row kind"}, {[]byte{'D', 9}, "row kind"}, {[]byte{'X'}, "unknown"},
		{encodeMarker(recEnd, 4, 0), "upstream task 4"}, {[]byte{'W', 1}, "without a watermark"},
	} {
		if _, err := decodeRecord(bad.v, 4); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: got %v, want an error with %q", bad.v, err, bad.want)
		}
	}
}

// TestRouterKeyGroups checks that a hash exchange's records carry their
// key group and land in the partition owning it, so that the keyed
// state of downstream task p holds only key groups of range p.
func TestRouterKeyGroups(t *testing.T) {
	rt := &router{kind: dataflow.Hash, keys: []int{1}}
	c := &dyntable.Chunk{}
	for i := range 500 {
		c.Changes = append(c.Changes, dyntable.Change{Row: types.Row{types.NewInt(int64(i)), types.NewInt(int64(i % 97))}})
	}
	const parts = 5
	seen := map[int]bool{}
	err := rt.records(c, parts, func(p int, key, value []byte) error {
		kg := int(binary.BigEndian.Uint16(key))
		if !state.RangeFor(p, parts).Contains(kg) {
			t.Errorf("key group %d in partition %d, outside its range %v", kg, p, state.RangeFor(p, parts))
		}
		r, err := decodeRecord(value, 1)
		if err != nil {
			return err
		}
		if want := state.KeyGroup(types.EncodeKey(nil, types.Row{r.change.Row[1]}, nil)); want != kg {
			t.Errorf("row %v keyed %d, its key group is %d", r.change.Row, kg, want)
		}
		seen[p] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != parts {
		t.Errorf("97 keys reached %d of %d partitions", len(seen), parts)
	}
}
