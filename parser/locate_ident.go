package parser

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// ErrorAtIdent positions an error at the first identifier of the
// statement spelled name (case-insensitively, backquoted or not). TiDB
// records positions only for expressions, so errors about a table name,
// say, find their place this way; when the name does not occur, the
// error falls back to ErrorAtNode(n).
func (s *Statement) ErrorAtIdent(name string, n ast.Node, format string, args ...any) error {
	for _, t := range s.toks {
		text := s.src[t.start:t.end]
		switch t.kind {
		case tkIdent:
		case tkQuotedIdent:
			text = strings.ReplaceAll(text[1:len(text)-1], "``", "`")
		default:
			continue
		}
		if strings.EqualFold(text, name) {
			return s.errorAtOrig(t.start, fmt.Sprintf(format, args...))
		}
	}
	return s.ErrorAtNode(n, format, args...)
}
