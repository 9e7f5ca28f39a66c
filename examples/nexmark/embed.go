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

// DDL returns ddl.sql, whose table reads 'events.num' = '10000000' at
// 'first-event.rate' = 'next-event.rate' = '1000000'.
func DDL() string { return mustRead("ddl.sql") }

// Configure returns ddl.sql reading events events at rate events per
// second of event time (both of the reference's rate options), with the
// options in extra ("'seed' = '1'") added to its WITH clause.
func Configure(events int64, rate string, extra ...string) (string, error) {
	ddl := DDL()
	for _, r := range []struct{ old, new string }{
		{"'events.num' = '10000000'", fmt.Sprintf("'events.num' = '%d'", events)},
		{"'first-event.rate' = '1000000'", fmt.Sprintf("'first-event.rate' = '%s'", rate)},
		{"'next-event.rate' = '1000000'", fmt.Sprintf("'next-event.rate' = '%s'", rate)},
	} {
		if !strings.Contains(ddl, r.old) {
			return "", fmt.Errorf("ddl.sql no longer sets %s", r.old)
		}
		ddl = strings.Replace(ddl, r.old, r.new, 1)
	}
	if len(extra) > 0 {
		const last = "'bid.proportion' = '46'"
		if !strings.Contains(ddl, last) {
			return "", fmt.Errorf("ddl.sql no longer sets %s", last)
		}
		ddl = strings.Replace(ddl, last, last+",\n    "+strings.Join(extra, ",\n    "), 1)
	}
	return ddl, nil
}

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
