package repl

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/expr"
)

// Complete reports whether sql ends with a ';' outside quotes and
// comments, i.e. whether the statement is complete.
func Complete(sql string) bool {
	complete, _ := scan(sql)
	return complete
}

// blank reports whether sql holds nothing but spaces and comments.
func blank(sql string) bool {
	_, b := scan(sql)
	return b
}

// scan walks sql once, skipping quoted text and comments. complete is
// true when the last significant character is a ';' outside quotes and
// comments; blank when there is no significant character at all.
func scan(sql string) (complete, blank bool) {
	inQuote := byte(0)
	last := byte(0)
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case inQuote != 0:
			last = c
			if c == '\\' && inQuote != '`' {
				i++
			} else if c == inQuote {
				inQuote = 0
			}
			continue
		case c == '\'' || c == '"' || c == '`':
			inQuote = c
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-', c == '#':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return false, last == 0
			}
			i += end + 3
			continue
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			last = c
		}
	}
	return inQuote == 0 && last == ';', last == 0
}

// keywords are completed in the case the user types them in.
var keywords = []string{
	"ADD", "ALL", "AND", "AS", "ASC", "AVG", "BETWEEN", "BIGINT", "BOOLEAN", "BY", "CASE", "CAST", "CEIL",
	"CHANGELOG", "COALESCE", "CONCAT", "COUNT", "CREATE", "CURRENT_TIMESTAMP", "DATE", "DECIMAL", "DELETE",
	"DESC", "DESCRIBE", "DISTINCT", "DOUBLE", "DROP", "ELSE", "END", "ENFORCED", "EXISTS", "EXIT", "EXPLAIN",
	"FALSE", "FLOOR", "FROM", "FULL", "FUNCTIONS", "GROUP", "HAVING", "HELP", "IF", "IN", "INNER", "INSERT", "INT", "INTERVAL",
	"INTO", "IS", "JOB", "JOBS", "JOIN", "KEY", "LEFT", "LIKE", "LIMIT", "MATERIALIZED", "MAX", "MIN", "NOT",
	"NULL", "ON", "OR", "ORDER", "OUTER", "OVER", "PARTITION", "PRIMARY", "QUIT", "RESET", "RIGHT", "ROW_NUMBER",
	"SAVEPOINT", "SELECT", "SET", "SHOW", "STOP", "STRING", "SUM", "TABLE", "TABLES", "THEN", "TIMESTAMP",
	"TIMESTAMP_LTZ", "TO", "TRUE", "TRY_CAST", "UNION", "USING", "VALUES", "VIEW", "WATERMARK", "WHEN", "WHERE",
	"WITH",
}

// completer completes, by Tab, the word before the cursor: option keys
// inside SET '...' and RESET '...', option values after SET 'key' = ',
// otherwise keywords, table and view names, and column names.
type completer struct{ s *engine.Session }

var setValueRE = regexp.MustCompile(`(?i)^\s*SET\s+'([^']+)'\s*=\s*'([^']*)$`)

// Do implements readline.AutoCompleter: the candidates are the rest of
// each completion after the typed prefix, whose length it returns.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	before := string(line[:pos])
	// SET 'key' = '<value>
	if m := setValueRE.FindStringSubmatch(before); m != nil {
		d, ok := config.Lookup(m[1])
		if !ok {
			return nil, 0
		}
		vals := d.Enum
		if d.Kind == config.Bool {
			vals = []string{"true", "false"}
		}
		return suffixes(vals, m[2], "';", false), len([]rune(m[2]))
	}
	// Option keys: the word may hold dots and dashes.
	start := pos
	for start > 0 && (isWord(line[start-1]) || line[start-1] == '.' || line[start-1] == '-') {
		start--
	}
	word := string(line[start:pos])
	head := strings.ToUpper(strings.TrimSpace(string(line[:start])))
	if strings.HasPrefix(head, "SET") || strings.HasPrefix(head, "RESET") {
		var keys []string
		for _, d := range config.Defs {
			keys = append(keys, d.Key)
		}
		end := ""
		if strings.HasSuffix(head, "'") {
			end = "'"
		}
		if cands := suffixes(keys, word, end, false); len(cands) > 0 || strings.HasSuffix(head, "'") {
			return cands, len([]rune(word))
		}
	}
	// Identifiers and keywords.
	start = pos
	for start > 0 && isWord(line[start-1]) {
		start--
	}
	word = string(line[start:pos])
	if word == "" {
		return nil, 0
	}
	lower := strings.ToLower(word) == word && strings.ToUpper(word) != word
	var kw []string
	for _, k := range slices.Concat(keywords, expr.FunctionNames()) { // the catalog: every built-in function
		if lower {
			k = strings.ToLower(k)
		}
		kw = append(kw, k)
	}
	out := suffixes(kw, word, " ", true)
	out = append(out, suffixes(c.s.Tables(), word, "", true)...)
	out = append(out, suffixes(c.s.Columns(), word, "", true)...)
	return dedupe(out), len([]rune(word))
}

// suffixes returns what completes prefix into each candidate, followed by
// end.
func suffixes(cands []string, prefix, end string, fold bool) [][]rune {
	var out [][]rune
	for _, k := range cands {
		has := strings.HasPrefix(k, prefix)
		if fold {
			has = len(k) >= len(prefix) && strings.EqualFold(k[:len(prefix)], prefix)
		}
		if has && len(k) >= len(prefix) {
			out = append(out, []rune(k[len(prefix):]+end))
		}
	}
	return out
}

func dedupe(in [][]rune) [][]rune {
	seen := map[string]bool{}
	var out [][]rune
	for _, r := range in {
		if !seen[string(r)] {
			seen[string(r)] = true
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i]) < string(out[j]) })
	return out
}

func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
