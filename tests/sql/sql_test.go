// Package sql runs the golden SQL suite (the *.test files below this
// directory) through the same code as `streamsql test`.
package sql

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/sqltest"
)

var rewrite = flag.Bool("rewrite", false, "refill the expected output of every query block")

func TestGolden(t *testing.T) {
	var files []string
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".test") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no .test files found")
	}
	blocks := 0
	for _, f := range files {
		t.Run(strings.TrimSuffix(f, ".test"), func(t *testing.T) {
			res, err := sqltest.RunFile(f, sqltest.Options{Rewrite: *rewrite})
			if err != nil {
				t.Fatal(err)
			}
			blocks += res.Passed + res.Failed
			for _, fl := range res.Failures {
				t.Errorf("%s", fl)
			}
		})
	}
	t.Logf("%d blocks in %d files", blocks, len(files))
}
