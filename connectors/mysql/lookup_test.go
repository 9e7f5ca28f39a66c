package mysql

import (
	"context"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

// Lookups by a non-key column with a PARTIAL cache: every answer is
// checked against the rows inserted, and hits and misses are counted.
func TestLookupWithPartialCache(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "lk", "id BIGINT PRIMARY KEY, grp INT, name VARCHAR(20)")
	if _, err := db.Exec("INSERT INTO " + name + " VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 20, 'c')"); err != nil {
		t.Fatal(err)
	}
	tbl := &connectors.Table{Name: "dim", Columns: []connectors.Column{
		{Name: "id", Type: types.TypeBigInt}, {Name: "grp", Type: types.TypeInt}, {Name: "name", Type: types.TypeString}},
		PrimaryKey: []int{0},
		Options: map[string]string{"connector": "mysql", "url": dsn, "table-name": name,
			"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "100"}}
	sc, err := connector{}.NewScan(tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sc.(*scan)
	l, err := sc.(connectors.LookupSource).Lookup([]int{1}) // by grp
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	look := func(grp int64) string {
		t.Helper()
		rows, err := l.Lookup(ctx, types.Row{types.NewInt(grp)})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range rows {
			names = append(names, r[2].Str())
		}
		return strings.Join(names, ",")
	}
	// grp 20 holds b and c (order as MySQL returns them; sort-free check
	// by length and membership), grp 10 holds a, grp 30 nothing.
	if g := look(20); g != "b,c" && g != "c,b" {
		t.Fatalf("grp 20: %q", g)
	}
	if g := look(10); g != "a" {
		t.Fatalf("grp 10: %q", g)
	}
	if g := look(30); g != "" {
		t.Fatalf("grp 30: %q", g)
	}
	// A change in MySQL is not seen while the key is cached (a hit) ...
	if _, err := db.Exec("UPDATE " + name + " SET name = 'z' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if g := look(10); g != "a" {
		t.Fatalf("cached grp 10: %q", g)
	}
	look(20)
	look(30) // a missing key is cached too
	// 3 distinct keys: 3 misses; the 3 repeated lookups are hits.
	if h, m := s.lookupStats.Hits.Load(), s.lookupStats.Misses.Load(); h != 3 || m != 3 {
		t.Fatalf("hits %d misses %d, want 3 and 3", h, m)
	}
	// ... and a lookuper without a cache sees it.
	tbl.Options["lookup.cache"] = "NONE"
	delete(tbl.Options, "lookup.partial-cache.max-rows")
	sc2, err := connector{}.NewScan(tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := sc2.(connectors.LookupSource).Lookup([]int{1})
	if err != nil {
		t.Fatal(err)
	}
	if err := l2.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	rows, err := l2.Lookup(ctx, types.Row{types.NewInt(10)})
	if err != nil || len(rows) != 1 || rows[0][2].Str() != "z" {
		t.Fatalf("uncached grp 10: %v %v", rows, err)
	}
	if sc2.(*scan).lookupStats.Hits.Load() != 0 {
		t.Fatal("no cache, no hits")
	}
}
