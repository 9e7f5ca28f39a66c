package expr

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/types"
)

type likeKind uint8

const (
	likeExact likeKind = iota
	likePrefix
	likeSuffix
	likeContains
	likeGeneric
)

type likeTok struct {
	kind byte // 'l' literal, '_' one character, '%' any sequence
	s    string
}

// likePattern is a compiled LIKE pattern.
type likePattern struct {
	kind likeKind
	lit  string
	toks []likeTok
}

// compileLike compiles a LIKE pattern. esc < 0 means no escape character.
func compileLike(p string, esc rune) (*likePattern, error) {
	var toks []likeTok
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, likeTok{kind: 'l', s: lit.String()})
			lit.Reset()
		}
	}
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case esc >= 0 && c == esc:
			if i+1 >= len(rs) {
				return nil, fmt.Errorf("LIKE pattern %q ends with the escape character", p)
			}
			i++
			lit.WriteRune(rs[i])
		case c == '%':
			flush()
			if len(toks) == 0 || toks[len(toks)-1].kind != '%' {
				toks = append(toks, likeTok{kind: '%'})
			}
		case c == '_':
			flush()
			toks = append(toks, likeTok{kind: '_'})
		default:
			lit.WriteRune(c)
		}
	}
	flush()
	lp := &likePattern{kind: likeGeneric, toks: toks}
	switch {
	case len(toks) == 0:
		lp.kind, lp.lit = likeExact, ""
	case len(toks) == 1 && toks[0].kind == 'l':
		lp.kind, lp.lit = likeExact, toks[0].s
	case len(toks) == 2 && toks[0].kind == 'l' && toks[1].kind == '%':
		lp.kind, lp.lit = likePrefix, toks[0].s
	case len(toks) == 2 && toks[0].kind == '%' && toks[1].kind == 'l':
		lp.kind, lp.lit = likeSuffix, toks[1].s
	case len(toks) == 3 && toks[0].kind == '%' && toks[1].kind == 'l' && toks[2].kind == '%':
		lp.kind, lp.lit = likeContains, toks[1].s
	case len(toks) == 1 && toks[0].kind == '%':
		lp.kind, lp.lit = likePrefix, ""
	}
	return lp, nil
}

func (p *likePattern) match(s string) bool {
	switch p.kind {
	case likeExact:
		return s == p.lit
	case likePrefix:
		return strings.HasPrefix(s, p.lit)
	case likeSuffix:
		return strings.HasSuffix(s, p.lit)
	case likeContains:
		return strings.Contains(s, p.lit)
	}
	toks := p.toks
	ti, si := 0, 0
	starT, starS := -1, 0
	for {
		if ti < len(toks) {
			t := toks[ti]
			switch t.kind {
			case '%':
				if ti == len(toks)-1 {
					return true
				}
				starT, starS = ti, si
				ti++
				continue
			case '_':
				if si < len(s) {
					_, n := utf8.DecodeRuneInString(s[si:])
					si += n
					ti++
					continue
				}
			default:
				if strings.HasPrefix(s[si:], t.s) {
					si += len(t.s)
					ti++
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		// Mismatch: let the last % absorb one more character.
		if starT < 0 || starS >= len(s) {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[starS:])
		starS += n
		ti, si = starT+1, starS
	}
}

// likeExpr is [NOT] LIKE / ILIKE.
type likeExpr struct {
	e, pat Expr
	esc    rune // < 0: none
	not    bool
	ilike  bool
	fixed  *likePattern // compiled literal pattern
}

func (x *likeExpr) Type() types.Type {
	return types.Type{ID: types.Boolean, NotNull: x.e.Type().NotNull && x.pat.Type().NotNull}
}
func (x *likeExpr) String() string {
	op := " LIKE "
	if x.ilike {
		op = " ILIKE "
	}
	if x.not {
		op = " NOT" + op
	}
	s := "(" + x.e.String() + op + x.pat.String()
	if x.esc >= 0 {
		s += " ESCAPE '" + string(x.esc) + "'"
	}
	return s + ")"
}
func (x *likeExpr) children() []Expr { return []Expr{x.e, x.pat} }
func (x *likeExpr) withChildren(k []Expr) Expr {
	c := *x
	c.e, c.pat = k[0], k[1]
	return &c
}
func (x *likeExpr) Eval(row types.Row) (types.Value, error) {
	t, err := x.evalTruth(row)
	return truthValues[t], err
}

func (x *likeExpr) evalTruth(row types.Row) (uint8, error) {
	v, err := x.e.Eval(row)
	if err != nil || v.IsNull() {
		return 2, err
	}
	p := x.fixed
	if p == nil {
		pv, err := x.pat.Eval(row)
		if err != nil || pv.IsNull() {
			return 2, err
		}
		ps := pv.Str()
		if x.ilike {
			ps = strings.ToLower(ps)
		}
		if p, err = compileLike(ps, x.esc); err != nil {
			return 2, wrapErr(x, err)
		}
	}
	s := v.Str()
	if x.ilike {
		s = strings.ToLower(s)
	}
	return b2u(p.match(s) != x.not), nil
}

// regexpExpr is [NOT] REGEXP / REGEXP(s, re): true if any substring
// matches (Go RE2 syntax). As Flink's REGEXP, an empty pattern and a
// pattern computed at run time that does not compile match nothing.
type regexpExpr struct {
	name  string // "" for the operator form
	e, re Expr
	not   bool
	fixed *regexp.Regexp
	empty bool // the pattern is the literal ''
}

func (x *regexpExpr) Type() types.Type {
	return types.Type{ID: types.Boolean, NotNull: x.e.Type().NotNull && x.re.Type().NotNull}
}
func (x *regexpExpr) String() string {
	if x.name != "" {
		return renderCall(x.name, []Expr{x.e, x.re})
	}
	op := " REGEXP "
	if x.not {
		op = " NOT REGEXP "
	}
	return "(" + x.e.String() + op + x.re.String() + ")"
}
func (x *regexpExpr) children() []Expr { return []Expr{x.e, x.re} }
func (x *regexpExpr) withChildren(k []Expr) Expr {
	c := *x
	c.e, c.re = k[0], k[1]
	return &c
}
func (x *regexpExpr) Eval(row types.Row) (types.Value, error) {
	v, err := x.e.Eval(row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	re := x.fixed
	if re == nil && !x.empty {
		rv, err := x.re.Eval(row)
		if err != nil || rv.IsNull() {
			return types.NullValue, err
		}
		if rv.Str() != "" {
			re, _ = regexp.Compile(rv.Str()) // nil when invalid: no match
		}
	}
	return types.NewBool((re != nil && re.MatchString(v.Str())) != x.not), nil
}
