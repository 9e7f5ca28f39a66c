package expr

import (
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// FuncAny carries the values of CASE x WHEN a, b THEN ...: the pre-lexer
// writes WHEN __any(a, b), and caseExpr makes one WHEN per value.
const FuncAny = "__any"

func registerValueFuncs(r map[string]funcDef) {
	r["overlay"] = funcDef{3, 4, buildOverlay}
}

// buildOverlay binds OVERLAY(s PLACING r FROM p [FOR n]), which the
// pre-lexer writes overlay(s, r, p[, n]): s with the n characters from
// position p (default: as many as r has) replaced by r, as Flink computes
// it: SUBSTRING(s, 1, p - 1) || r || SUBSTRING(s, p + n).
func buildOverlay(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argString, argString, argInteger, argInteger)
	if err != nil {
		return nil, err
	}

	c := &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true}
	overlay := func(s, r string, p, n int64) types.Value {
		head := substringFlink(s, 1, p-1, true)
		tail := substringFlink(s, p+n, 0, false)
		return types.NewString(head + r + tail)
	}
	if len(args) == 3 {
		c.f3 = func(s, r, p types.Value) (types.Value, error) {
			return overlay(s.Str(), r.Str(), p.Int(), int64(utf8.RuneCountInString(r.Str()))), nil
		}
	} else {
		c.fn = func(vs []types.Value) (types.Value, error) {
			return overlay(vs[0].Str(), vs[1].Str(), vs[2].Int(), vs[3].Int()), nil
		}
	}
	return c, nil
}
