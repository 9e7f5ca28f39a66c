package repl

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/engine"
	"github.com/streamsql/streamsql/expr"
)

// Complete reports whether sql ends with a ';' outside quotes and
// comments, i.e. whether the statement is complete.
func Complete(sql string) bool {
	var sc stmtScanner
	sc.feed(sql)
	return sc.complete()
}

// blank reports whether sql holds nothing but spaces and comments.
func blank(sql string) bool {
	var sc stmtScanner
	sc.feed(sql)
	return sc.blank()
}

// stmtScanner walks a statement as it is typed, skipping quoted text and
// comments. Fed line by line, it reads each byte once: the REPL asks after
// every line whether the statement is complete, and rescanning the whole
// statement each time made a long paste quadratic.
type stmtScanner struct {
	quote        byte // the open quote, or 0
	lineComment  bool // after -- or #, until the newline
	blockComment bool // inside /* */, until */
	prev         byte // the byte before, for the two-byte tokens --, /* and */
	last         byte // the last significant byte; 0 if none yet
	beforePrev   byte // last before the latest significant byte, to take back a '-' or '/' that starts a comment
}

// feed scans more of the statement.
func (s *stmtScanner) feed(text string) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case s.lineComment:
			s.lineComment = c != '\n'
		case s.blockComment:
			if s.prev == '*' && c == '/' {
				s.blockComment = false
				c = 0 // a '/' that ends a comment starts nothing
			}
		case s.quote != 0:
			// A backslash is an ordinary character, as in Flink SQL; a
			// doubled quote closes and reopens the quote.
			switch {
			case c == s.quote:
				s.quote = 0
				s.last = c
			default:
				s.last = c
			}
		case c == '\'' || c == '"' || c == '`':
			s.quote, s.last = c, c
		case c == '#':
			s.lineComment = true
		case s.prev == '-' && c == '-':
			// The first '-' was taken as significant; a comment it starts is not.
			s.lineComment, s.last = true, s.beforePrev
			c = 0
		case s.prev == '/' && c == '*':
			s.blockComment, s.last = true, s.beforePrev
			c = 0
		case c != ' ' && c != '\t' && c != '\n' && c != '\r':
			s.beforePrev = s.last
			s.last = c
		}
		s.prev = c
	}
}

// complete reports whether the text fed so far ends a statement.
func (s *stmtScanner) complete() bool {
	return s.quote == 0 && !s.blockComment && s.last == ';'
}

// blank reports whether the text fed so far is only spaces and comments.
func (s *stmtScanner) blank() bool { return s.last == 0 }

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
// connector option keys inside WITH ( ... ) and connector names after
// 'connector' = ', otherwise keywords, table and view names, and column
// names. Option keys, values and connector names come from the config
// and connectors registries, so completion cannot drift from them.
type completer struct {
	s *engine.Session
	// typed returns the earlier lines of the statement being typed (""
	// at its first line), so that a WITH ( opened on an earlier line is
	// seen; nil means none.
	typed func() string
}

var (
	// withRE finds the start of a WITH ( option list.
	withRE = regexp.MustCompile(`(?i)\bWITH\s*\(`)
	// connectorRE finds the connector of an option list.
	connectorRE = regexp.MustCompile(`'connector'\s*=\s*'([^']*)'`)
	// withKeyRE is a key being typed: after ( or , and an opening quote.
	withKeyRE = regexp.MustCompile(`[(,]\s*'([^'=]*)$`)
	// withValueRE is a value being typed after 'key' = '.
	withValueRE = regexp.MustCompile(`'([^']+)'\s*=\s*'([^']*)$`)
)

// withOptions completes inside an open WITH ( ... ) of the statement
// text before the cursor: keys of the table's connector (every
// connector's while 'connector' is not given yet), connector names after
// 'connector' = ', and the values of boolean and enum options. ok is false
// outside an open option list.
func withOptions(before string) (cands [][]rune, n int, ok bool) {
	locs := withRE.FindAllStringIndex(before, -1)
	if len(locs) == 0 {
		return nil, 0, false
	}
	list := before[locs[len(locs)-1][1]-1:] // from the '('
	if !listOpen(list) {
		return nil, 0, false
	}
	var defs []connectors.OptionDef
	if m := connectorRE.FindStringSubmatch(list); m != nil {
		if c, err := connectors.Lookup(m[1]); err == nil {
			defs = c.Options()
		}
	} else {
		for _, name := range connectors.Names() {
			c, _ := connectors.Lookup(name)
			defs = append(defs, c.Options()...)
		}
	}
	if m := withValueRE.FindStringSubmatch(list); m != nil {
		var vals []string
		if m[1] == "connector" {
			vals = connectors.Names()
		} else {
			for _, d := range defs {
				if d.Key == m[1] {
					vals = d.Enum
					if d.Kind == config.Bool {
						vals = []string{"true", "false"}
					}
				}
			}
		}
		return suffixes(vals, m[2], "'", false), len([]rune(m[2])), true
	}
	if m := withKeyRE.FindStringSubmatch(list); m != nil {
		keys := []string{"connector"}
		for _, d := range defs {
			if !d.Prefix && !slices.Contains(keys, d.Key) {
				keys = append(keys, d.Key)
			}
		}
		return dedupe(suffixes(keys, m[1], "' = '", false)), len([]rune(m[1])), true
	}
	return nil, 0, false
}

// listOpen reports whether s, which starts with '(', is not closed by
// its ')' (parentheses inside '...' literals, such as a DSN's tcp(...),
// do not count).
func listOpen(s string) bool {
	depth, quoted := 0, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted = !quoted
		case quoted:
		case r == '(':
			depth++
		case r == ')':
			if depth--; depth == 0 {
				return false
			}
		}
	}
	return true
}

var setValueRE = regexp.MustCompile(`(?i)^\s*SET\s+'([^']+)'\s*=\s*'([^']*)$`)

// Do implements readline.AutoCompleter: the candidates are the rest of
// each completion after the typed prefix, whose length it returns.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	before := string(line[:pos])
	stmt := before
	if c.typed != nil {
		if t := c.typed(); t != "" {
			stmt = t + "\n" + before
		}
	}
	if cands, n, ok := withOptions(stmt); ok {
		return cands, n
	}
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
