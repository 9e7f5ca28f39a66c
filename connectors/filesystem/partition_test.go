package filesystem_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/engine/enginetest"
	"github.com/streamsql/streamsql/parser"
	"github.com/streamsql/streamsql/types"
)

// A PARTITIONED BY table is written into Hive-style col=value/ folders
// (values escaped as Hive does, NULL as __DEFAULT_PARTITION__), and the
// directory reads back as the same rows. The expected folders and rows
// follow from the four rows inserted.
func TestFileSinkPartitionedBy(t *testing.T) {
	dir := t.TempDir()
	s := engine.NewSession(&bytes.Buffer{})
	jobs := enginetest.Exec(t, s, fmt.Sprintf(`
CREATE TABLE src (dt STRING, hr INT, v BIGINT) WITH ('connector' = 'values');
INSERT INTO src VALUES ('2024-01-01', 10, 1), ('2024-01-01', 11, 2), ('2024-01-02', 10, 3), ('a/b:c', NULL, 4);
CREATE TABLE out_t (v BIGINT, dt STRING, hr INT) PARTITIONED BY (dt, hr) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'json');
INSERT INTO out_t SELECT v, dt, hr FROM src;
`, dir))
	if err := jobs[len(jobs)-1].Wait(); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") {
			t.Errorf("uncommitted file %s", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		got[filepath.ToSlash(rel)] = append(got[filepath.ToSlash(rel)], strings.Fields(string(b))...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"dt=2024-01-01/hr=10":                   {`{"v":1,"dt":"2024-01-01","hr":10}`},
		"dt=2024-01-01/hr=11":                   {`{"v":2,"dt":"2024-01-01","hr":11}`},
		"dt=2024-01-02/hr=10":                   {`{"v":3,"dt":"2024-01-02","hr":10}`},
		"dt=a%2Fb%3Ac/hr=__DEFAULT_PARTITION__": {`{"v":4,"dt":"a/b:c","hr":null}`},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("partition folders:\n got %v\nwant %v", got, want)
	}
	// The directory reads back as the table.
	stmts, err := parser.Parse("SELECT v, dt, hr FROM out_t")
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Execute(context.Background(), stmts[0])
	if err != nil {
		t.Fatal(err)
	}
	var q []string
	ts := []types.Type{r.Query.Columns[0].Type, r.Query.Columns[1].Type, r.Query.Columns[2].Type}
	err = r.Query.Run(context.Background(), func(c *dyntable.Chunk) error {
		for _, ch := range c.Changes {
			q = append(q, types.FormatRow(ch.Row, ts, " "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(q)
	if w := "[1 2024-01-01 10 2 2024-01-01 11 3 2024-01-02 10 4 a/b:c NULL]"; fmt.Sprint(q) != w {
		t.Fatalf("read back %v, want %s", q, w)
	}
}
