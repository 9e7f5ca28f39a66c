package nexmark

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SideInputPath is the placeholder 'path' of q13's side_input table;
// runners replace it by the file WriteSideInput wrote.
const SideInputPath = "nexmark-side-input"

// SideInputRows is the number of rows of q13's side input.
const SideInputRows = 10000

// WriteSideInput writes q13's bounded side input, the CSV rows
// (key, value) = (k, 'k') for k in 0..9999, as the reference's
// side-input file, into dir and returns the file's path.
func WriteSideInput(dir string) (string, error) {
	var b strings.Builder
	for k := 0; k < SideInputRows; k++ {
		s := strconv.Itoa(k)
		b.WriteString(s + "," + s + "\n")
	}
	p := filepath.Join(dir, "side_input.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("writing the q13 side input: %w", err)
	}
	return p, nil
}

// WithSideInput replaces the side-input placeholder of a query text by
// path; texts without it are returned as they are.
func WithSideInput(text, path string) string {
	return strings.ReplaceAll(text, "'path' = '"+SideInputPath+"'", "'path' = '"+path+"'")
}
