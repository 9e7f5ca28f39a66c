package expr

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/cockroachdb/apd/v3"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/internal/civil"
	"github.com/streamsql/streamsql/types"
)

// Numeric functions beyond the basic ones in funcs.go: trigonometry,
// E(), seeded RAND, RAND_INTEGER, UUID, BIN, HEX and TRUNCATE.

func registerMathFuncs(r map[string]funcDef) {
	for name, d := range map[string]funcDef{
		"sin":          {1, 1, buildMath1},
		"cos":          {1, 1, buildMath1},
		"tan":          {1, 1, buildMath1},
		"cot":          {1, 1, buildMath1},
		"asin":         {1, 1, buildMath1},
		"acos":         {1, 1, buildMath1},
		"atan":         {1, 1, buildMath1},
		"sinh":         {1, 1, buildMath1},
		"cosh":         {1, 1, buildMath1},
		"tanh":         {1, 1, buildMath1},
		"degrees":      {1, 1, buildMath1},
		"radians":      {1, 1, buildMath1},
		"atan2":        {2, 2, buildAtan2},
		"e":            {0, 0, buildE},
		"rand":         {0, 1, buildRand},
		"rand_integer": {1, 2, buildRandInteger},
		"uuid":         {0, 0, buildUUID},
		"bin":          {1, 1, buildBin},
		"hex":          {1, 1, buildHex},
		"truncate":     {1, 2, buildTruncate},
	} {
		r[name] = d
	}
	for name, f := range map[string]func(float64) float64{
		"SIN": math.Sin, "COS": math.Cos, "TAN": math.Tan,
		"COT":  func(x float64) float64 { return 1 / math.Tan(x) },
		"ASIN": math.Asin, "ACOS": math.Acos, "ATAN": math.Atan,
		"SINH": math.Sinh, "COSH": math.Cosh, "TANH": math.Tanh,
		// Java's Math.toDegrees and Math.toRadians, which Flink calls.
		"DEGREES": func(x float64) float64 { return x * (180 / math.Pi) },
		"RADIANS": func(x float64) float64 { return x / 180 * math.Pi },
	} {
		math1[name] = f
	}
}

func buildAtan2(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isNumericType, wantNumber)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeDouble, args...), strict: true,
		f2: func(y, x types.Value) (types.Value, error) {
			return types.NewFloat(math.Atan2(types.ToFloat(y), types.ToFloat(x))), nil
		}}, nil
}

func buildE(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	return NewLiteral(types.NewFloat(math.E), types.TypeDouble.WithNotNull(true)), nil
}

// javaRandom is java.util.Random, so that RAND(seed) and RAND_INTEGER(seed,
// bound) produce the numbers Flink produces for the same seed. One
// instance lives in each bound call, behind a mutex: bound expressions
// may be evaluated concurrently.
type javaRandom struct {
	mu   sync.Mutex
	seed int64
}

const (
	javaRandMul  = 0x5DEECE66D
	javaRandMask = (1 << 48) - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaRandMul) & javaRandMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaRandMul + 0xB) & javaRandMask
	return int32(uint64(r.seed) >> (48 - bits))
}

// nextDouble is Random.nextDouble.
func (r *javaRandom) nextDouble() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	hi := int64(r.next(26))
	lo := int64(r.next(27))
	return float64(hi<<27+lo) * (1.0 / (1 << 53))
}

// nextInt is Random.nextInt(bound), bound > 0.
func (r *javaRandom) nextInt(bound int32) int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.next(31)
	m := bound - 1
	if bound&m == 0 { // a power of two
		return int32((int64(bound) * int64(v)) >> 31)
	}
	u := v
	for {
		v = u % bound
		if u-v+m >= 0 { // no int32 overflow: the draw is unbiased
			return v
		}
		u = r.next(31)
	}
}

// randomSeed draws a seed for an unseeded generator.
func randomSeed() int64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var s int64
	for _, c := range b {
		s = s<<8 | int64(c)
	}
	return s
}

func buildRand(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	if len(x.Args) == 0 {
		r := newJavaRandom(randomSeed())
		return &call{name: name, typ: types.Type{ID: types.Double, NotNull: true}, nondet: true,
			f0: func() (types.Value, error) { return types.NewFloat(r.nextDouble()), nil }}, nil
	}
	seed, err := b.seedArg(x, name, 0)
	if err != nil {
		return nil, err
	}
	r := newJavaRandom(seed)
	return &call{name: name, args: []Expr{NewLiteral(types.NewInt(seed), types.TypeInt.WithNotNull(true))},
		typ: types.Type{ID: types.Double, NotNull: true}, nondet: true,
		f1: func(types.Value) (types.Value, error) { return types.NewFloat(r.nextDouble()), nil }}, nil
}

// seedArg reads a seed argument, which must be an integer literal: the
// generator is created once, at bind time.
func (b *binder) seedArg(x *ast.FuncCallExpr, name string, i int) (int64, error) {
	e, err := b.bind(x.Args[i])
	if err != nil {
		return 0, err
	}
	v, ok := constInt(e)
	if !ok {
		return 0, b.argErr(x.Args[i], name, i, len(x.Args), e, "an integer literal seed")
	}
	return v, nil
}

func buildRandInteger(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	var r *javaRandom
	bi := 0
	if len(x.Args) == 2 {
		seed, err := b.seedArg(x, name, 0)
		if err != nil {
			return nil, err
		}
		r, bi = newJavaRandom(seed), 1
	} else {
		r = newJavaRandom(randomSeed())
	}
	bound, err := b.bind(x.Args[bi])
	if err != nil {
		return nil, err
	}
	if err := b.expect(x, name, bi, bound, isIntegerType, wantInteger); err != nil {
		return nil, err
	}
	return &call{name: name, args: []Expr{bound}, typ: strictType(types.TypeInt, bound), strict: true, nondet: true,
		f1: func(n types.Value) (types.Value, error) {
			k := n.Int()
			if k <= 0 || k > math.MaxInt32 {
				return types.NullValue, fmt.Errorf("bound must be between 1 and %d, got %d", math.MaxInt32, k)
			}
			return types.NewInt(int64(r.nextInt(int32(k)))), nil
		}}, nil
}

func buildUUID(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	return &call{name: name, typ: types.TypeString.WithNotNull(true), nondet: true,
		f0: func() (types.Value, error) {
			var u [16]byte
			if _, err := rand.Read(u[:]); err != nil {
				return types.NullValue, err
			}
			u[6] = u[6]&0x0f | 0x40 // version 4
			u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
			h := hex.EncodeToString(u[:])
			return types.NewString(h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]), nil
		}}, nil
}

// BIN and HEX of an integer print its 64-bit two's complement, as Java's
// Long.toBinaryString and Long.toHexString do.
func buildBin(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isIntegerType, wantInteger)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
		f1: func(v types.Value) (types.Value, error) {
			return types.NewString(strconv.FormatUint(uint64(v.Int()), 2)), nil
		}}, nil
}

func buildHex(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	a := args[0]
	if !isIntegerType(a.Type()) && !isStringType(a.Type()) {
		return nil, b.argErr(x.Args[0], name, 0, 1, a, "an integer or STRING")
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
		f1: func(v types.Value) (types.Value, error) {
			if v.Kind() == types.KindString {
				return types.NewString(strings.ToUpper(hex.EncodeToString([]byte(v.Str())))), nil
			}
			return types.NewString(strings.ToUpper(strconv.FormatUint(uint64(v.Int()), 16))), nil
		}}, nil
}

// buildTruncate binds TRUNCATE(x[, n]): x cut toward zero to n decimal
// places (n < 0 zeroes digits left of the point), typed as ROUND types it.
func buildTruncate(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	return buildPlaces(b, x, name, truncDecimal, func(_ types.Type, v, r int64) (types.Value, error) {
		p := civil.Pow10[-r]
		return types.NewInt(v / p * p), nil
	})
}

// buildPlaces binds ROUND and TRUNCATE, f(x[, r]) with r an integer
// literal (default 0), which differ only in their step: op on a DOUBLE or
// DECIMAL x (through placesOf), intOp on an integer x when -18 <= r < 0,
// where x's type t bounds the result. An integer x is itself for r >= 0
// and 0 for r < -18. The result is typed by roundType.
func buildPlaces(b *binder, x *ast.FuncCallExpr, name string, op func(*apd.Decimal, int64) (*apd.Decimal, error),
	intOp func(t types.Type, v, r int64) (types.Value, error)) (Expr, error) {
	a, err := numericArg(b, x, name)
	if err != nil {
		return nil, err
	}
	args := []Expr{a}
	var r int64
	if len(x.Args) == 2 {
		re, err := b.bind(x.Args[1])
		if err != nil {
			return nil, err
		}
		v, ok := constInt(re)
		if !ok {
			return nil, b.argErr(x.Args[1], name, 1, 2, re, "an integer literal")
		}
		r = v
		args = append(args, re)
	}
	t := a.Type()
	rt := roundType(t, r)
	f := func(v types.Value) (types.Value, error) {
		if v.Kind() == types.KindInt {
			switch {
			case r >= 0:
				return v, nil
			case -r > 18:
				return types.NewInt(0), nil
			}
			return intOp(t, v.Int(), r)
		}
		return placesOf(v, r, rt, op)
	}
	c := &call{name: name, args: args, typ: rt, strict: true}
	if len(args) == 2 {
		c.f2 = func(v, _ types.Value) (types.Value, error) { return f(v) }
	} else {
		c.f1 = f
	}
	return c, nil
}

// roundType is the result type of ROUND(x, r) and TRUNCATE(x, r): x's
// type, with a DECIMAL's scale reduced to r (Flink's ROUND strategy).
func roundType(t types.Type, r int64) types.Type {
	if t.ID != types.Decimal {
		return t
	}
	p, s := int64(t.Precision), int64(t.Scale)
	rt := t
	switch {
	case r >= s:
	case r < 0:
		rt = types.DecimalType(int(min(types.MaxDecimalPrecision, 1+p-s)), 0)
	default:
		rt = types.DecimalType(int(min(types.MaxDecimalPrecision, 1+p-s+r)), int(r))
	}
	rt.NotNull = t.NotNull
	return rt
}

// placesOf applies op, ROUND's or TRUNCATE's step to r decimal places,
// to a DOUBLE or DECIMAL value v of result type rt. A DOUBLE goes through
// an exact decimal and back (NaN, infinities and values op cannot take
// stay as they are); a DECIMAL that no longer fits rt is an overflow.
func placesOf(v types.Value, r int64, rt types.Type, op func(*apd.Decimal, int64) (*apd.Decimal, error)) (types.Value, error) {
	if v.Kind() == types.KindFloat {
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) || r > 300 || r < -300 {
			return v, nil
		}
		d := new(apd.Decimal)
		if _, err := d.SetFloat64(f); err != nil {
			return v, nil
		}
		out, err := op(d, r)
		if err != nil {
			return v, nil
		}
		return types.NewFloat(types.ToFloat(types.NewDecimal(out))), nil
	}
	d, err := op(v.Decimal(), r)
	if err != nil {
		return types.NullValue, err
	}
	out, ok := fitDecimal(d, rt.Precision, rt.Scale)
	if !ok {
		return types.NullValue, fmt.Errorf("%s overflow", typeName(rt))
	}
	return types.NewDecimal(out), nil
}

// truncDecimal cuts d toward zero to r decimal places (r may be negative)
// and returns it with scale max(r, 0).
func truncDecimal(d *apd.Decimal, r int64) (*apd.Decimal, error) {
	c := decCtx
	c.Rounding = apd.RoundDown
	return quantizePlaces(&c, d, r)
}
