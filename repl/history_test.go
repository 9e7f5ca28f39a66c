package repl

import (
	"strings"
	"testing"
)

func TestHistoryEntryMasksSecrets(t *testing.T) {
	got := historyEntry([]string{"CREATE TABLE t (a INT) WITH (", "  'connector' = 'mysql', 'password' = 'hunter2',", "  'url' = 'app:s3cret@tcp(db:3306)/x');"})
	if strings.Contains(got, "hunter2") || strings.Contains(got, "s3cret") || strings.Contains(got, "\\n") {
		t.Fatalf("history entry %q keeps a secret or a line break", got)
	}
	if !strings.Contains(got, "'connector' = 'mysql'") || !strings.Contains(got, "app:") {
		t.Fatalf("history entry %q lost more than the secrets", got)
	}
}
