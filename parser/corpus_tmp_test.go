package parser

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCorpusTmp(t *testing.T) {
	files, _ := filepath.Glob("/root/.cache/go-build/fuzz/github.com/streamsql/streamsql/parser/FuzzParse/*")
	var worst time.Duration
	for _, f := range files {
		data, _ := os.ReadFile(f)
		lines := strings.Split(string(data), "\n")
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "string("), ")"))
		if err != nil { t.Fatal(err) }
		start := time.Now()
		Parse(s)
		if d := time.Since(start); d > worst { worst = d; t.Logf("%v %d %q", d, len(s), s[:min(len(s),100)]) }
	}
}
