// Package secrets is the one place that knows what a secret looks like in
// statement text and hides it. Every way statement text leaves the process
// goes through it: errors of every stage (the parser's included), logs,
// the REPL's history file, SHOW CREATE TABLE, EXPLAIN, the HTTP endpoint's
// jobs and job names.
//
// A secret is found by its form, never by remembering values:
//
//   - the value of an option whose key names a secret (IsSecretKey):
//     'password' = 'S3cr3t', also without the '=' and in JSON form;
//   - the password of a URL's or DSN's user information, which may hold
//     '@' and ':' (mysql://u:p@ss:w@h/db, u:p@ss@tcp(h:3306)/db): up to
//     the last '@' before the host;
//   - a key=value pair whose key names a secret, as in a URL query
//     (?user=u&password=S3cr3t) or a Kafka JAAS config
//     (... password="x";).
//
// Text that quotes only part of a statement, such as a syntax error near
// one token, cannot show which key a value belonged to: Spans of the
// whole statement locate the secrets, and Values lists them so that
// Known.Mask can hide them wherever they reappear.
package secrets

import (
	"regexp"
	"slices"
	"strings"
)

// Redacted is what a secret is shown as.
const Redacted = "******"

// IsSecretKey reports whether an option key (or the key of a key=value
// pair) names a secret: its last dot-separated part is password, passwd,
// pwd, secret, token or credentials, or ends in -password, -secret,
// -token, secret-key, api-key or private-key (with '-' or '_'); and any
// key ending in sasl.jaas.config.
func IsSecretKey(key string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	if strings.HasSuffix(k, "sasl.jaas.config") {
		return true
	}
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		k = k[i+1:]
	}
	k = strings.ReplaceAll(k, "_", "-")
	switch k {
	case "password", "passwd", "pwd", "secret", "token", "credentials", "apikey", "access-token", "secret-key", "api-key", "private-key":
		return true
	}
	for _, suf := range []string{"-password", "-secret", "-token", "secret-key", "-api-key", "private-key"} {
		if strings.HasSuffix(k, suf) {
			return true
		}
	}
	return false
}

// Span is a byte range [Start, End) of a text that holds a secret.
type Span struct{ Start, End int }

var (
	// 'key' = 'value' (SQL, a quote inside doubled; the '=' may be missing,
	// the value may run to the end of the text) and "key": "value" (JSON).
	sqlPairRe  = regexp.MustCompile(`'([^'\s]+)'\s*=?\s*'((?:[^']|'')*)('|$)`)
	jsonPairRe = regexp.MustCompile(`"([^"\s]+)"\s*:\s*"((?:[^"\\]|\\.)*)("|$)`)
	// key=value in a URL query, a JAAS config or a log line: a bare value
	// right after the '=', or a quoted one ("x", or ''x'' inside a SQL
	// string). The key must not follow a quote (that is sqlPairRe's).
	kvRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.'"-])([A-Za-z0-9_.-]+)(?:=([^&;\s'"]+)|\s*=\s*("[^"]*"?|''(?:[^']|'[^'])*(?:''|$)))`)
	// A run of text that may hold user information: no blanks and no quote
	// (a doubled quote, SQL's escape, stays inside).
	wordRe = regexp.MustCompile(`(?:[^\s'"` + "`" + `]|'')+`)
)

// Spans returns the byte ranges of text that hold secrets, sorted and
// not overlapping.
func Spans(text string) []Span {
	var out []Span
	for _, m := range sqlPairRe.FindAllStringSubmatchIndex(text, -1) {
		if IsSecretKey(text[m[2]:m[3]]) && m[5] > m[4] {
			out = append(out, Span{m[4], m[5]})
		}
	}
	for _, m := range jsonPairRe.FindAllStringSubmatchIndex(text, -1) {
		if IsSecretKey(text[m[2]:m[3]]) && m[5] > m[4] {
			out = append(out, Span{m[4], m[5]})
		}
	}
	for _, m := range kvRe.FindAllStringSubmatchIndex(text, -1) {
		if !IsSecretKey(text[m[2]:m[3]]) {
			continue
		}
		s, e := m[4], m[5]
		if s < 0 { // quoted
			s, e = m[6], m[7]
			v := text[s:e]
			q := `"`
			if strings.HasPrefix(v, "''") {
				q = "''"
			}
			s += len(q)
			if strings.HasSuffix(v[len(q):], q) {
				e -= len(q)
			}
		}
		if e > s {
			out = append(out, Span{s, e})
		}
	}
	for _, m := range wordRe.FindAllStringIndex(text, -1) {
		if sp, ok := userinfoPassword(text[m[0]:m[1]]); ok {
			out = append(out, Span{m[0] + sp.Start, m[0] + sp.End})
		}
	}
	return merge(out)
}

// userinfoPassword finds the password of user:password@host in a word:
// after "://" if there is one, the user information ends at the last '@'
// before the first '/', '?' or '#', and the password starts after its
// first ':'. Passwords may so hold '@' and ':' (u:p@ss@tcp(h)/db,
// mysql://u:p@ss:w@h/db).
func userinfoPassword(w string) (Span, bool) {
	start := 0
	if i := strings.Index(w, "://"); i >= 0 {
		start = i + 3
	}
	end := len(w)
	if i := strings.IndexAny(w[start:], "/?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndexByte(w[start:end], '@')
	if at < 0 {
		return Span{}, false
	}
	at += start
	colon := strings.IndexByte(w[start:at], ':')
	if colon < 0 || start+colon+1 == at {
		return Span{}, false
	}
	return Span{start + colon + 1, at}, true
}

func merge(s []Span) []Span {
	if len(s) < 2 {
		return s
	}
	slices.SortFunc(s, func(a, b Span) int { return a.Start - b.Start })
	out := s[:1]
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x.Start <= last.End {
			last.End = max(last.End, x.End)
			continue
		}
		out = append(out, x)
	}
	return out
}

// Mask returns text with every secret replaced by Redacted.
func Mask(text string) string {
	return apply(text, Spans(text))
}

func apply(text string, spans []Span) string {
	if len(spans) == 0 {
		return text
	}
	var sb strings.Builder
	prev := 0
	for _, s := range spans {
		sb.WriteString(text[prev:s.Start])
		sb.WriteString(Redacted)
		prev = s.End
	}
	sb.WriteString(text[prev:])
	return sb.String()
}

// MaskLine masks the secrets of one line of a larger text, given the
// spans of that text and the line's byte offset in it, and maps a
// 1-based column (counted in runes) of the line to the masked line, so
// that a caret still points at the same token.
func MaskLine(line string, lineOff int, spans []Span, col int) (string, int) {
	var local []Span
	for _, s := range spans {
		a, b := max(s.Start-lineOff, 0), min(s.End-lineOff, len(line))
		if a < b {
			local = append(local, Span{a, b})
		}
	}
	if len(local) == 0 {
		return line, col
	}
	// The column's byte offset in the line.
	off, n := len(line), 1
	for i := range line {
		if n == col {
			off = i
			break
		}
		n++
	}
	shift := 0
	for _, s := range local {
		switch {
		case off >= s.End:
			shift += len([]rune(Redacted)) - len([]rune(line[s.Start:s.End]))
		case off > s.Start: // inside a secret: point at its start
			shift -= len([]rune(line[s.Start:off]))
		}
	}
	return apply(line, local), max(col+shift, 1)
}

// Known is the set of secrets of one statement or script, to hide them in
// text derived from it.
type Known struct{ values []string }

// Values finds the secrets of sql (a statement or a whole script).
func Values(sql string) Known {
	var k Known
	for _, s := range Spans(sql) {
		v := sql[s.Start:s.End]
		k.add(v)
		k.add(strings.ReplaceAll(v, "''", "'")) // as a connector sees it
	}
	return k
}

// minScrub is the shortest secret hidden wherever it appears; a shorter
// one is hidden only where it stands quoted, so that masking a two-letter
// password does not garble every word holding those letters.
const minScrub = 4

func (k *Known) add(v string) {
	if v != "" && v != Redacted && !slices.Contains(k.values, v) {
		k.values = append(k.values, v)
	}
}

// Mask hides the known secrets in text, wherever they appear, and then
// whatever Mask finds by form.
func (k Known) Mask(text string) string {
	// Longest first, so that a secret holding another is hidden whole.
	vs := slices.Clone(k.values)
	slices.SortFunc(vs, func(a, b string) int { return len(b) - len(a) })
	for _, v := range vs {
		if len(v) >= minScrub {
			text = strings.ReplaceAll(text, v, Redacted)
			continue
		}
		for _, q := range []string{`'`, `"`} {
			text = strings.ReplaceAll(text, q+v+q, q+Redacted+q)
		}
	}
	return Mask(text)
}
