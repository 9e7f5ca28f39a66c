package expr

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// likeRegexp translates a LIKE pattern (escape '!') into an anchored
// regular expression: the reference the matcher is checked against.
func likeRegexp(p string) *regexp.Regexp {
	var sb strings.Builder
	sb.WriteString("(?s)^")
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '!':
			i++
			sb.WriteString(regexp.QuoteMeta(string(rs[i])))
		case '%':
			sb.WriteString(".*")
		case '_':
			sb.WriteString(".")
		default:
			sb.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	sb.WriteString("$")
	return regexp.MustCompile(sb.String())
}

func TestLikeMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alpha := []rune("abé")
	palpha := []rune("abé%_!")
	gen := func(a []rune, n int) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			sb.WriteRune(a[r.IntN(len(a))])
		}
		return sb.String()
	}
	for i := 0; i < 20000; i++ {
		p := gen(palpha, r.IntN(7))
		if strings.HasSuffix(strings.TrimRight(p, "!"), "") && strings.Count(p, "!")%2 == 1 && strings.HasSuffix(p, "!") {
			continue // dangling escape
		}
		lp, err := compileLike(p, '!')
		if err != nil {
			continue
		}
		s := gen(alpha, r.IntN(8))
		if got, want := lp.match(s), likeRegexp(p).MatchString(s); got != want {
			t.Fatalf("%q LIKE %q = %v, want %v", s, p, got, want)
		}
	}
}

func TestLikeBacktracking(t *testing.T) {
	runEval(t, []evalCase{
		{"'abc' LIKE '%b%c'", "true"},
		{"'xab' LIKE '%a_'", "true"},
		{"'aaa' LIKE '%a%a%a%a'", "false"},
		{"'abab' LIKE '%ab'", "true"},
		{"'abab' LIKE '_%ab'", "true"},
	})
}
