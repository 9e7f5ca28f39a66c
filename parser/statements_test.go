package parser

import "testing"

// A client reading line by line reads on while an EXECUTE STATEMENT SET
// BEGIN (or EXPLAIN STATEMENT SET BEGIN) has no END yet.
func TestNeedsEnd(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want bool
	}{
		{"EXECUTE STATEMENT SET BEGIN", true},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1;", true},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; INSERT INTO b SELECT 2;", true},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; END;", false},
		{"execute statement set begin\ninsert into a select 1;\nend;", false},
		{"EXPLAIN CHANGELOG_MODE STATEMENT SET BEGIN INSERT INTO a SELECT 1;", true},
		{"BEGIN STATEMENT SET;", false}, // the session buffers; each line runs
		{"INSERT INTO a SELECT 1;", false},
		{"SELECT 'EXECUTE STATEMENT SET BEGIN';", false},
		{"EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 'END;'", true},
	} {
		if got := NeedsEnd(c.sql); got != c.want {
			t.Errorf("NeedsEnd(%q) = %v, want %v", c.sql, got, c.want)
		}
	}
}
