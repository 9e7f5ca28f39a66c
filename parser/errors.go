package parser

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/internal/secrets"
)

// Error is a parse or planning error positioned in the user's original text.
type Error struct {
	Line, Col  int    // 1-based; Col counts characters (runes) of the line
	Msg        string // without position
	SourceLine string // the line Line refers to, without its newline, secrets masked
	// caret is Col in SourceLine, which masking may have shortened or
	// lengthened; 0 means Col.
	caret int
}

// Error renders the message, the source line and a caret under the column:
//
//	line 1, column 15: syntax error near "FROMM t"
//	SELECT a, b FROMM t
//	              ^
func (e *Error) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "line %d, column %d: %s\n%s\n", e.Line, e.Col, e.Msg, e.SourceLine)
	// Tabs before the column stay tabs so the caret lines up in a terminal.
	col := e.Col
	if e.caret > 0 {
		col = e.caret
	}
	n := 0
	for _, r := range e.SourceLine {
		if n >= col-1 {
			break
		}
		if r == '\t' {
			sb.WriteByte('\t')
		} else {
			sb.WriteByte(' ')
		}
		n++
	}
	for ; n < col-1; n++ {
		sb.WriteByte(' ')
	}
	sb.WriteByte('^')
	return sb.String()
}

// posError is an error at a byte offset of the original script, before it
// is turned into an *Error (which needs the whole script for line/column).
type posError struct {
	off int
	msg string
}

// errorAt builds an *Error for byte offset off of the original script src.
func errorAt(src string, off int, msg string) *Error {
	off = max(0, min(off, len(src)))
	lineStart := strings.LastIndexByte(src[:off], '\n') + 1
	return errorOnLine(src, lineStart, strings.Count(src[:lineStart], "\n")+1,
		utf8.RuneCountInString(src[lineStart:off])+1, msg)
}

// errorOnLine builds an *Error at a line and column of src, the line
// starting at byte lineStart. Errors leave the process as text, so the
// secrets of src (secrets.Spans) are masked here, once for every stage:
// in the quoted line, with the caret kept on its token, and in the
// message, which may quote a value without its key.
func errorOnLine(src string, lineStart, line, col int, msg string) *Error {
	lineEnd := strings.IndexByte(src[lineStart:], '\n')
	if lineEnd < 0 {
		lineEnd = len(src)
	} else {
		lineEnd += lineStart
	}
	text := strings.TrimSuffix(src[lineStart:lineEnd], "\r")
	masked, caret := secrets.MaskLine(text, lineStart, secrets.Spans(src), col)
	e := &Error{Line: line, Col: col, Msg: secrets.Values(src).Mask(msg), SourceLine: masked}
	if caret != col {
		e.caret = caret
	}
	return e
}

// positioner computes line and column of offsets that mostly increase,
// as the statements of a script and their options, watermarks and window
// functions are met, without rescanning the script from the start each
// time. It is used only while parsing (Errorf is stateless: it may be called
// from several goroutines).
type positioner struct {
	src            string
	off, line, col int // the position of offset off
}

func newPositioner(src string) *positioner { return &positioner{src: src, line: 1, col: 1} }

// at returns the same line and column as errorAt.
func (p *positioner) at(off int) (line, col int) {
	off = max(0, min(off, len(p.src)))
	if off < p.off {
		p.off, p.line, p.col = 0, 1, 1
	}
	for p.off < off {
		if p.src[p.off] == '\n' {
			p.line++
			p.col = 1
			p.off++
			continue
		}
		// Only whole runes move the cursor, so that it never rests inside
		// one; a partial rune before off counts as errorAt counts it.
		_, size := utf8.DecodeRuneInString(p.src[p.off:])
		if p.off+size > off {
			break
		}
		p.off += size
		p.col++
	}
	return p.line, p.col + utf8.RuneCountInString(p.src[p.off:off])
}

// tidbPos matches the position TiDB's scanner puts in its syntax errors:
// line L column C near "<rest of the statement from the failing token>".
var tidbPos = regexp.MustCompile(`line (\d+) column (\d+) near "`)

// tidbErrCode matches the "[parser:1064]" prefix of TiDB's coded errors.
var tidbErrCode = regexp.MustCompile(`^\[[a-z]+:\d+\]`)

// translateTiDBError turns an error TiDB returned for the rewritten text of
// statement s into an *Error in the original text. TiDB reports the line
// and column just after the token it failed on, and quotes the text from
// that token's start; we recover the token's start offset from the quote,
// map it back, and quote the original text instead of the rewritten one.
func (s *Statement) translateTiDBError(err error) *Error {
	msg := err.Error()
	loc := tidbPos.FindStringSubmatchIndex(msg)
	if loc == nil {
		// Not positioned (e.g. "Unknown character set"): report it at the
		// statement start, without TiDB's error code.
		msg = strings.TrimSpace(tidbErrCode.ReplaceAllString(msg, ""))
		if msg == "" || mentionsInternalName(msg) {
			msg = "invalid statement"
		}
		return s.errorAtOrig(s.start, msg)
	}
	line, _ := strconv.Atoi(msg[loc[2]:loc[3]])
	col, _ := strconv.Atoi(msg[loc[4]:loc[5]])
	rest := msg[loc[1]:]
	endOff := tidbLineColToOffset(s.rewritten, line, col)

	// The quoted text is rw[tokStart:] (cut at 2048 bytes) followed by '"'
	// and TiDB's own remark, if any. Find the largest tokStart <= endOff
	// for which that holds (in practice within one token of endOff).
	tokStart, extra := endOff, ""
	for off := endOff; off >= 0 && off >= endOff-4096; off-- {
		q := s.rewritten[off:]
		if len(q) > 2048 {
			q = q[:2048]
		}
		if strings.HasPrefix(rest, q) && len(rest) > len(q) && rest[len(q)] == '"' {
			tokStart = off
			extra = strings.TrimSpace(rest[len(q)+1:])
			if j := strings.Index(extra, "(total length"); j >= 0 {
				extra = strings.TrimSpace(extra[:j])
			}
			break
		}
	}
	if mentionsInternalName(extra) {
		extra = ""
	}

	orig := s.offsets.toOrig(tokStart)
	var m string
	if near := s.nearText(orig); near == "" {
		m = "syntax error at end of statement"
	} else {
		m = fmt.Sprintf("syntax error near %q", near)
	}
	if extra != "" {
		m += ": " + extra
	}
	return s.errorAtOrig(orig, m)
}

// tidbLineColToOffset converts TiDB's scanner position to a byte offset of
// text. TiDB counts bytes; on the first line the column is the number of
// bytes read, on later lines it is one more (it counts the newline).
func tidbLineColToOffset(text string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	if line > 1 {
		col--
	}
	return max(0, min(off+col, len(text)))
}

// nearText is the original token at offset off (a token start: TiDB
// fails at token starts, and synthesized text maps to the start of the
// construct it replaced), shortened for the message. It is empty at the end
// of the statement.
func (s *Statement) nearText(off int) string {
	i := sort.Search(len(s.toks), func(i int) bool { return s.toks[i].end > off })
	if i == len(s.toks) {
		return ""
	}
	// A token holding a secret is masked here: cut short below, the
	// secret could not be found by its value any more.
	t, _ := secrets.MaskLine(s.src[s.toks[i].start:s.toks[i].end], s.toks[i].start-s.start,
		secrets.Spans(s.src[s.start:s.end]), 1)
	const maxRunes = 40
	if utf8.RuneCountInString(t) > maxRunes {
		n := 0
		for j := range t {
			if n == maxRunes {
				t = t[:j] + "..."
				break
			}
			n++
		}
	}
	return t
}

// internalNames are the names the rewrites synthesize. They must never
// appear in an error message unless the user wrote them.
var internalNames = []string{CastFunc, TryCastFunc, IntervalFunc, FloorToFunc, CeilToFunc, placeholderPrefix, watermarkPrefix, columnAliasPrefix, AggFilterFunc, computedPrefix, qualifiedPrefix, likePlaceholder}

func mentionsInternalName(msg string) bool {
	l := strings.ToLower(msg)
	for _, n := range internalNames {
		if strings.Contains(l, n) {
			return true
		}
	}
	return false
}
