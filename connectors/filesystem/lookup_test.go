package filesystem_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

func TestLookupLoadsFilesByKey(t *testing.T) {
	dir := t.TempDir()
	// Two files: key 1 appears in both, key 2 once, a NULL key never matches.
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("1,one\n2,two\n,none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.csv"), []byte("1,uno\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cols := []connectors.Column{{Name: "k", Type: types.TypeBigInt}, {Name: "v", Type: types.TypeString}}
	sc := newScan(t, cols, map[string]string{"path": dir, "format": "csv"})
	ls, ok := sc.(connectors.LookupSource)
	if !ok {
		t.Fatal("the filesystem source must be a LookupSource")
	}
	if _, err := ls.Lookup([]int{2}); err == nil {
		t.Fatal("a key column out of range must be rejected")
	}
	l, err := ls.Lookup([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want := map[int64][]string{1: {"one", "uno"}, 2: {"two"}, 3: nil}
	for k, vs := range want {
		rows, err := l.Lookup(ctx, types.Row{types.NewInt(k)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows {
			if r[0].Int() != k {
				t.Fatalf("key %d: row %v", k, r)
			}
			got = append(got, r[1].Str())
		}
		if len(got) != len(vs) || (len(vs) > 0 && (got[0] != vs[0] || got[len(got)-1] != vs[len(vs)-1])) {
			t.Fatalf("key %d: got %v, want %v", k, got, vs)
		}
	}
}
