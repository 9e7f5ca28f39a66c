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
	out, err := UpsertEncoding.Encode(c)
	if err != nil || len(out.Changes) != 3 || out.Changes[1].Kind != UpdateAfter {
		t.Fatalf("upsert must drop -U only: %v %v", out, err)
	}
	if _, err := AppendOnly.Encode(&Chunk{Changes: []Change{{Delete, row("a", 1)}}}); err == nil {
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
