package dyntable

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/types"
)

func row(k string, v int64) types.Row { return types.Row{types.NewString(k), types.NewInt(v)} }

func render(t *Table) string {
	var s []string
	for _, r := range t.Rows() {
		s = append(s, types.FormatRow(r, nil, " "))
	}
	return strings.Join(s, ",")
}

func TestMultisetTable(t *testing.T) {
	tb := NewTable(nil)
	for _, ch := range []Change{
		{Insert, row("a", 1)}, {Insert, row("a", 1)}, {Insert, row("b", 2)},
		{UpdateBefore, row("a", 1)}, {UpdateAfter, row("a", 5)},
	} {
		if err := tb.Apply(ch); err != nil {
			t.Fatal(err)
		}
	}
	if got := render(tb); got != "a 1,b 2,a 5" || tb.Len() != 3 {
		t.Fatalf("table %q len %d", got, tb.Len())
	}
	if err := tb.Apply(Change{Delete, row("z", 9)}); err == nil || !strings.Contains(err.Error(), "not in the table") {
		t.Fatalf("retracting an absent row must fail loudly, got %v", err)
	}
}

func TestKeyedTable(t *testing.T) {
	tb := NewTable([]int{0})
	for _, ch := range []Change{
		{Insert, row("a", 1)}, {UpdateAfter, row("a", 2)}, {Insert, row("b", 3)}, {Delete, row("b", 3)},
		{UpdateAfter, row("c", 4)},
	} {
		if err := tb.Apply(ch); err != nil {
			t.Fatal(err)
		}
	}
	if got := render(tb); got != "a 2,c 4" {
		t.Fatalf("keyed table %q", got)
	}
}

func TestSinkEncodings(t *testing.T) {
	if err := AppendOnly.Accepts(InsertOnly); err != nil {
		t.Fatal(err)
	}
	if err := AppendOnly.Accepts(Retract); err == nil {
		t.Fatal("append-only must reject updates")
	}
	if err := UpsertEncoding.Accepts(Retract); err != nil {
		t.Fatal(err)
	}
	c := &Chunk{Changes: []Change{{Insert, row("a", 1)}, {UpdateBefore, row("a", 1)}, {UpdateAfter, row("a", 2)}, {Delete, row("a", 2)}}}
	out, err := UpsertEncoding.Encode(c, []int{0})
	if err != nil || len(out.Changes) != 3 || out.Changes[1].Kind != UpdateAfter {
		t.Fatalf("upsert must drop a -U its +U follows: %v %v", out, err)
	}
	if _, err := AppendOnly.Encode(&Chunk{Changes: []Change{{Delete, row("a", 1)}}}, nil); err == nil {
		t.Fatal("a -D reaching an append-only sink must fail")
	}
}

func TestModesAndKinds(t *testing.T) {
	if Retract.String() != "[I,UB,UA,D]" || Upsert.String() != "[I,UA,D]" || InsertOnly.String() != "[I]" {
		t.Fatal("mode strings")
	}
	if !Upsert.HasUpdates() || Upsert.Contains(UpdateBefore) || !InsertOnly.IsInsertOnly() {
		t.Fatal("mode predicates")
	}
	for _, s := range []string{"+I", "-U", "+U", "-D"} {
		k, err := ParseRowKind(s)
		if err != nil || k.String() != s {
			t.Fatalf("ParseRowKind(%s) = %v %v", s, k, err)
		}
	}
	if _, err := ParseRowKind("+X"); err == nil {
		t.Fatal("bad kind accepted")
	}
	if got := FormatChange(Change{UpdateAfter, row("x", 3)}, nil); got != "+U[x, 3]" {
		t.Fatal(got)
	}
}

// TestUpsertEncodingPairsRetractions: a -U is dropped only when an
// accumulating change of the same key follows it in the chunk; otherwise
// the key left the result and the -U becomes a -D.
func TestUpsertEncodingPairsRetractions(t *testing.T) {
	kinds := func(c *Chunk) string {
		var s []string
		for _, ch := range c.Changes {
			s = append(s, ch.Kind.String()+"["+ch.Row[0].Str()+"]")
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		in   []Change
		want string
	}{
		// A -U whose +U was filtered out: a deletion.
		{[]Change{{UpdateBefore, row("a", 15)}}, "-D[a]"},
		// A -U whose +U follows later, after another key's changes.
		{[]Change{{UpdateBefore, row("a", 1)}, {Insert, row("b", 1)}, {UpdateAfter, row("a", 2)}}, "+I[b] +U[a]"},
		// A +U of another key does not pair with it.
		{[]Change{{UpdateBefore, row("a", 1)}, {UpdateAfter, row("b", 2)}}, "-D[a] +U[b]"},
		// Two updates of one key, the second one's +U filtered out.
		{[]Change{{UpdateBefore, row("a", 1)}, {UpdateAfter, row("a", 2)}, {UpdateBefore, row("a", 2)}}, "+U[a] -D[a]"},
		// A deletion between them breaks the pairing.
		{[]Change{{UpdateBefore, row("a", 1)}, {Delete, row("a", 1)}, {Insert, row("a", 3)}}, "-D[a] -D[a] +I[a]"},
	} {
		c := &Chunk{Changes: append([]Change(nil), tc.in...)}
		out, err := UpsertEncoding.Encode(c, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(out); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.in, got, tc.want)
		}
	}
}
