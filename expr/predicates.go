package expr

import (
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// Flink predicates TiDB does not parse, which the pre-lexer rewrites into
// forms TiDB does parse with the same precedence.
const (
	// FuncSimilarTo stands for x [NOT] SIMILAR TO p [ESCAPE c], written
	// x [NOT] REGEXP __similar_to(p [, c]).
	FuncSimilarTo = "__similar_to"
	// FuncSymmetric marks x [NOT] BETWEEN SYMMETRIC a AND b, written
	// x [NOT] BETWEEN __symmetric(a) AND b.
	FuncSymmetric = "__symmetric"
)

// similarTo binds x [NOT] SIMILAR TO p [ESCAPE c]: p is an SQL regular
// expression matching the whole of x, where % is any sequence, _ any
// character, and | * + ? {m,n} ( ) [ ] are regular expression operators.
func (b *binder) similarTo(x *ast.PatternRegexpExpr, fc *ast.FuncCallExpr) (Expr, error) {
	e, err := b.bind(x.Expr)
	if err != nil {
		return nil, err
	}
	args, err := b.bindAll(fc.Args)
	if err != nil {
		return nil, err
	}
	p := args[0]
	if !isStringType(e.Type()) || !isStringType(p.Type()) {
		return nil, b.errf(x, "cannot apply 'SIMILAR TO' to %s and %s", typeName(e.Type()), typeName(p.Type()))
	}
	esc := rune(-1)
	if len(args) == 2 {
		s, ok := constString(args[1])
		if !ok || len([]rune(s)) != 1 {
			return nil, b.errf(fc.Args[1], "SIMILAR TO ... ESCAPE expects a single character literal")
		}
		esc = []rune(s)[0]
	}
	x2 := &similarExpr{e: e, pat: p, esc: esc, not: x.Not}
	if s, ok := constString(p); ok {
		re, err := regexp.Compile(similarToRegexp(s, esc))
		if err != nil {
			return nil, b.errf(fc.Args[0], "invalid SIMILAR TO pattern '%s': %s", s, err)
		}
		x2.fixed = re
	}
	return x2, nil
}

// similarToRegexp translates an SQL regular expression to Go's syntax,
// anchored at both ends.
func similarToRegexp(p string, esc rune) string {
	var sb strings.Builder
	sb.WriteString(`^(?s:`)
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == esc && i+1 < len(rs):
			i++
			sb.WriteString(regexp.QuoteMeta(string(rs[i])))
		case r == '%':
			sb.WriteString(`.*`)
		case r == '_':
			sb.WriteString(`.`)
		case strings.ContainsRune(`.^$\`, r): // literal in SQL, special in regular expressions
			sb.WriteString(regexp.QuoteMeta(string(r)))
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteString(`)$`)
	return sb.String()
}

type similarExpr struct {
	e, pat Expr
	esc    rune
	not    bool
	fixed  *regexp.Regexp
}

func (x *similarExpr) Type() types.Type {
	return types.Type{ID: types.Boolean, NotNull: x.e.Type().NotNull && x.pat.Type().NotNull}
}
func (x *similarExpr) String() string {
	op := " SIMILAR TO "
	if x.not {
		op = " NOT SIMILAR TO "
	}
	s := "(" + x.e.String() + op + x.pat.String()
	if x.esc >= 0 {
		s += " ESCAPE " + quoteSQL(string(x.esc))
	}
	return s + ")"
}
func (x *similarExpr) children() []Expr { return []Expr{x.e, x.pat} }
func (x *similarExpr) withChildren(k []Expr) Expr {
	c := *x
	c.e, c.pat = k[0], k[1]
	return &c
}
func (x *similarExpr) Eval(row types.Row) (types.Value, error) {
	v, err := x.e.Eval(row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	re := x.fixed
	if re == nil {
		pv, err := x.pat.Eval(row)
		if err != nil || pv.IsNull() {
			return types.NullValue, err
		}
		if re, err = regexp.Compile(similarToRegexp(pv.Str(), x.esc)); err != nil {
			return types.NullValue, evalErr(x, "invalid SIMILAR TO pattern '%s'", pv.Str())
		}
	}
	return types.NewBool(re.MatchString(v.Str()) != x.not), nil
}

// betweenSymmetric binds x [NOT] BETWEEN SYMMETRIC a AND b: x lies
// between a and b in either order, (x BETWEEN a AND b) OR (x BETWEEN b
// AND a), with SQL's three-valued logic.
func (b *binder) betweenSymmetric(x *ast.BetweenExpr, fc *ast.FuncCallExpr) (Expr, error) {
	e, err := b.bind(x.Expr)
	if err != nil {
		return nil, err
	}
	lo, hi, err := b.bind2(fc.Args[0], x.Right)
	if err != nil {
		return nil, err
	}
	e, bounds, modes, _, err := prepList("BETWEEN", e, []Expr{lo, hi}, b.loc)
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	fwd := newBetween(e, bounds[0], bounds[1], modes[0], modes[1], false)
	rev := newBetween(e, bounds[1], bounds[0], modes[1], modes[0], false)
	var r Expr = newLogic(logicOr, fwd, rev)
	if x.Not {
		r = &not{e: r, te: asTruthExpr(r)}
	}
	return r, nil
}
