// Package nexmark holds the Nexmark queries of this directory (ddl.sql
// and q0.sql ... q22.sql) as files embedded in the binary, for
// `streamsql bench nexmark`. CHANGES.md lists how they differ from the
// reference suite.
package nexmark

import (
	"embed"
	"fmt"
	"strings"
)

//go:embed ddl.sql q*.sql
var files embed.FS

// Queries lists the query names, q0 to q22.
func Queries() []string {
	var qs []string
	for i := 0; i <= 22; i++ {
		qs = append(qs, fmt.Sprintf("q%d", i))
	}
	return qs
}

// DDL returns ddl.sql, whose tables read 'events.num' = '10000000'.
func DDL() string { return mustRead("ddl.sql") }

// Query returns the text of query q ("q5").
func Query(q string) (string, error) {
	b, err := files.ReadFile(strings.ToLower(q) + ".sql")
	if err != nil {
		return "", fmt.Errorf("no Nexmark query %q (there are q0 to q22)", q)
	}
	return string(b), nil
}

func mustRead(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("nexmark: embedded file missing: " + name) // a build error, not a user's
	}
	return string(b)
}
