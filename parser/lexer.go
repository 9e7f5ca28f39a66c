package parser

import "strings"

// The pre-lexer's tokenizer. It only needs to be exact about token
// boundaries: where strings, quoted identifiers and comments begin and end,
// where statements end, and how parentheses nest. Everything it does not
// rewrite is handed to TiDB verbatim, so TiDB stays the judge of what the
// tokens mean.

type tokKind uint8

const (
	tkIdent       tokKind = iota // bare word: keywords and identifiers (letters, digits, _, $, any byte >= 0x80)
	tkQuotedIdent                // `identifier` with `` as the escaped backtick
	tkString                     // 'string' ('' escapes a quote; a backslash is an ordinary character, as in Flink)
	tkDString                    // "string" ("" escapes a quote); a string in TiDB's default SQL mode
	tkNumber                     // 12, 1.5, .5, 1e-3
	tkPunct                      // operators and punctuation, one to three bytes
)

type token struct {
	kind       tokKind
	start, end int // byte offsets in the original script
}

// span is a byte range [start, end) of the original script.
type span struct{ start, end int }

// lexResult is the tokenized script. Comments are kept apart from tokens:
// the rewriter blanks them out so that TiDB and the pre-lexer agree on what
// is a comment (TiDB would otherwise run /*! ... */ as code and treat --x
// without a space as two minus signs).
type lexResult struct {
	toks     []token
	comments []span
}

// multiPunct lists the operators that must stay one token; longest first so
// that "<=>" is not read as "<=" ">" (and in particular never yields "=>").
var multiPunct = []string{"<=>", "->>", "<=", ">=", "<>", "!=", "=>", "||", "&&", ":=", "<<", ">>", "->"}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// lex tokenizes the whole script. The only errors are unterminated strings,
// quoted identifiers and comments, reported at their opening quote; the
// tokens before the error are returned with it, so that errors in earlier
// statements can be reported first.
func lex(src string) (*lexResult, *posError) {
	res := &lexResult{}
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case isSpace(c):
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-', c == '#':
			// Line comment. Flink treats "--" as a comment even without a
			// following space; so do we (TiDB would not, see lexResult).
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src)
			} else {
				end += i
			}
			res.comments = append(res.comments, span{i, end})
			i = end
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return res, &posError{i, "unterminated comment"}
			}
			end += i + 4
			res.comments = append(res.comments, span{i, end})
			i = end
		case c == '\'' || c == '"' || c == '`':
			end, ok := scanQuoted(src, i)
			if !ok {
				what := "unterminated string literal"
				if c == '`' {
					what = "unterminated quoted identifier"
				}
				return res, &posError{i, what}
			}
			kind := tkString
			switch c {
			case '"':
				kind = tkDString
			case '`':
				kind = tkQuotedIdent
			}
			res.toks = append(res.toks, token{kind, i, end})
			i = end
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]) && !(i > 0 && (isIdentByte(src[i-1]) || src[i-1] == '`')):
			end, isNum := scanNumber(src, i)
			kind := tkNumber
			if !isNum {
				kind = tkIdent // e.g. 0x1F or 1abc: MySQL reads these as one word too
			}
			res.toks = append(res.toks, token{kind, i, end})
			i = end
		case isIdentByte(c):
			end := i
			for end < len(src) && isIdentByte(src[end]) {
				end++
			}
			res.toks = append(res.toks, token{tkIdent, i, end})
			i = end
		default:
			n := 1
			for _, p := range multiPunct {
				if strings.HasPrefix(src[i:], p) {
					n = len(p)
					break
				}
			}
			res.toks = append(res.toks, token{tkPunct, i, i + n})
			i += n
		}
	}
	return res, nil
}

// scanQuoted returns the end of the quoted token starting at src[i]. A
// doubled quote character escapes itself. A backslash is an ordinary
// character, as in Flink SQL: TiDB runs with NO_BACKSLASH_ESCAPES.
func scanQuoted(src string, i int) (int, bool) {
	q := src[i]
	j := i + 1
	for j < len(src) {
		switch c := src[j]; {
		case c == q:
			if j+1 < len(src) && src[j+1] == q {
				j += 2
				continue
			}
			return j + 1, true
		default:
			j++
		}
	}
	return len(src), false
}

// scanNumber scans digits[.digits][e[+-]digits] and then any identifier
// bytes glued to it. It reports whether the whole word is a plain number.
func scanNumber(src string, i int) (int, bool) {
	j := i
	for j < len(src) && isDigit(src[j]) {
		j++
	}
	if j < len(src) && src[j] == '.' {
		j++
		for j < len(src) && isDigit(src[j]) {
			j++
		}
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDigit(src[k]) {
			j = k
			for j < len(src) && isDigit(src[j]) {
				j++
			}
		}
	}
	end := j
	for end < len(src) && isIdentByte(src[end]) {
		end++
	}
	return end, end == j
}

// unquote returns the value of a string literal or quoted identifier token
// text: a doubled quote is one quote, every other byte (backslashes
// included, see scanQuoted) is itself, as TiDB reads the same text.
func unquote(text string) string {
	if len(text) < 2 {
		return text
	}
	q := text[0]
	body := text[1 : len(text)-1]
	return strings.ReplaceAll(body, string([]byte{q, q}), string(q))
}

// quoteString renders s as a single-quoted SQL string literal that TiDB
// reads back as exactly s.
func quoteString(s string) string {
	var sb strings.Builder
	sb.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'':
			sb.WriteString("''")
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte('\'')
	return sb.String()
}
