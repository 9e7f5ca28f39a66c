package expr

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/internal/numcmp"
	"github.com/streamsql/streamsql/types"
)

// call is a scalar function call. Exactly one of f0..f3 / fn is set; the
// closures capture only constants (never the argument expressions), so a
// copy with other arguments (RemapColumns) stays valid.
type call struct {
	name   string
	args   []Expr
	typ    types.Type
	strict bool // a NULL argument yields NULL without calling the body
	nondet bool
	f0     func() (types.Value, error)
	f1     func(a types.Value) (types.Value, error)
	f2     func(a, b types.Value) (types.Value, error)
	f3     func(a, b, c types.Value) (types.Value, error)
	fn     func(vs []types.Value) (types.Value, error)
	render func(args []Expr) string
}

func (c *call) Type() types.Type { return c.typ }
func (c *call) String() string {
	if c.render != nil {
		return c.render(c.args)
	}
	return renderCall(c.name, c.args)
}
func (c *call) children() []Expr { return c.args }
func (c *call) withChildren(k []Expr) Expr {
	n := *c
	n.args = k
	return &n
}
func (c *call) nondeterministic() bool { return c.nondet }

func (c *call) Eval(row types.Row) (types.Value, error) {
	var v, a, b, d types.Value
	var skip bool
	var err error
	switch {
	case c.f1 != nil:
		if a, skip, err = evalArg(row, c.args[0], c.strict); skip {
			return types.NullValue, err
		}
		v, err = c.f1(a)
	case c.f2 != nil:
		if a, skip, err = evalArg(row, c.args[0], c.strict); skip {
			return types.NullValue, err
		}
		if b, skip, err = evalArg(row, c.args[1], c.strict); skip {
			return types.NullValue, err
		}
		v, err = c.f2(a, b)
	case c.f3 != nil:
		if a, skip, err = evalArg(row, c.args[0], c.strict); skip {
			return types.NullValue, err
		}
		if b, skip, err = evalArg(row, c.args[1], c.strict); skip {
			return types.NullValue, err
		}
		if d, skip, err = evalArg(row, c.args[2], c.strict); skip {
			return types.NullValue, err
		}
		v, err = c.f3(a, b, d)
	case c.f0 != nil:
		v, err = c.f0()
	default:
		vs := make([]types.Value, len(c.args))
		for i, e := range c.args {
			if vs[i], skip, err = evalArg(row, e, c.strict); skip {
				return types.NullValue, err
			}
		}
		v, err = c.fn(vs)
	}
	if err != nil {
		return v, wrapErr(c, err)
	}
	return v, nil
}

// evalArg evaluates a call's argument e. skip reports that the call's
// result is already known: NULL, on an error or, for a strict call, a
// NULL argument. (Small enough to inline: call.Eval is a hot path.)
func evalArg(row types.Row, e Expr, strict bool) (v types.Value, skip bool, err error) {
	v, err = e.Eval(row)
	return v, err != nil || (strict && v.IsNull()), err
}

// strictType returns t, NOT NULL if every argument is.
func strictType(t types.Type, args ...Expr) types.Type {
	nn := true
	for _, a := range args {
		nn = nn && a.Type().NotNull
	}
	t.NotNull = nn
	return t
}

// ---------------------------------------------------------------------------
// Registry

type builder func(b *binder, x *ast.FuncCallExpr, name string) (Expr, error)

type funcDef struct {
	minArgs, maxArgs int // maxArgs < 0: unbounded
	build            builder
}

var registry map[string]funcDef

// builtinPrefix marks a Flink function whose name TiDB reserves: the
// pre-lexer writes REGEXP(s, p) as __fn_regexp(s, p) (see package parser).
const builtinPrefix = "__fn_"

func init() {
	registry = map[string]funcDef{
		// control
		"coalesce": {1, -1, buildCoalesce},
		"ifnull":   {2, 2, buildCoalesce},
		"nullif":   {2, 2, buildNullIf},
		"if":       {3, 3, buildIf},
		"isnull":   {1, 1, buildIsNullFunc},
		"greatest": {1, -1, buildGreatest},
		"least":    {1, -1, buildGreatest},
		// casts
		FuncCast:    {2, 2, buildInternalCast},
		FuncTryCast: {2, 2, buildInternalCast},
		// strings
		"concat":             {1, -1, buildConcat},
		"concat_ws":          {2, -1, buildConcatWS},
		"upper":              {1, 1, buildCase},
		"ucase":              {1, 1, buildCase},
		"lower":              {1, 1, buildCase},
		"lcase":              {1, 1, buildCase},
		"substring":          {2, 3, buildSubstring},
		"substr":             {2, 3, buildSubstring},
		"mid":                {3, 3, buildSubstring},
		"char_length":        {1, 1, buildCharLength},
		"character_length":   {1, 1, buildCharLength},
		"length":             {1, 1, buildCharLength},
		"trim":               {1, 3, buildTrim},
		"ltrim":              {1, 1, buildTrim},
		"rtrim":              {1, 1, buildTrim},
		"replace":            {3, 3, buildReplace},
		"position":           {2, 2, buildLocate},
		"locate":             {2, 3, buildLocate},
		"instr":              {2, 2, buildLocate},
		"lpad":               {3, 3, buildPad},
		"rpad":               {3, 3, buildPad},
		"repeat":             {2, 2, buildRepeat},
		"reverse":            {1, 1, buildReverse},
		"left":               {2, 2, buildLeftRight},
		"right":              {2, 2, buildLeftRight},
		"initcap":            {1, 1, buildInitcap},
		"split_index":        {3, 3, buildSplitIndex},
		"regexp":             {2, 2, buildRegexpFunc},
		"regexp_like":        {2, 2, buildRegexpFunc},
		"regexp_replace":     {3, 3, buildRegexpReplace},
		"regexp_extract":     {2, 3, buildRegexpExtract},
		"regexp_extract_all": {2, 3, buildRegexpExtractAll},
		// numbers
		"abs":     {1, 1, buildAbs},
		"round":   {1, 2, buildRound},
		"floor":   {1, 1, buildFloorCeil},
		"ceil":    {1, 1, buildFloorCeil},
		"ceiling": {1, 1, buildFloorCeil},
		"sign":    {1, 1, buildSign},
		"sqrt":    {1, 1, buildMath1},
		"exp":     {1, 1, buildMath1},
		"ln":      {1, 1, buildMath1},
		"log10":   {1, 1, buildMath1},
		"log2":    {1, 1, buildMath1},
		"log":     {1, 2, buildLog},
		"power":   {2, 2, buildPower},
		"pow":     {2, 2, buildPower},
		"pi":      {0, 0, buildPi},
	}
	registerTimeFuncs(registry)
	registerMathFuncs(registry)
	registerTextFuncs(registry)
	registerBytesFuncs(registry) // funcs_bytes.go
	registerHashFuncs(registry)
	registerJSONFuncs(registry)
	registerCompositeFuncs(registry)   // composite.go
	registerValueFuncs(registry)       // values.go
	registerCollectionFuncs(registry)  // funcs_collection.go
	registerCollectionFuncs2(registry) // funcs_collection2.go
}

func (b *binder) call(x *ast.FuncCallExpr) (Expr, error) {
	switch x.FnName.L {
	case ast.TimestampLiteral, ast.DateLiteral:
		return b.temporalLiteralNode(x)
	case ast.TimeLiteral:
		return b.timeLiteralNode(x) // timeofday.go
	}
	key := strings.TrimPrefix(x.FnName.L, builtinPrefix)
	name := strings.ToUpper(key)
	if x.Schema.O != "" {
		return nil, b.errf(x, "unknown function %s.%s", x.Schema.O, name)
	}
	def, ok := registry[key]
	if !ok {
		if _, ok := Unsupported(key); ok {
			return nil, b.errf(x, "%s", UnsupportedError(key))
		}
		return nil, b.errf(x, "unknown function %s", name)
	}
	if n := len(x.Args); n < def.minArgs || (def.maxArgs >= 0 && n > def.maxArgs) {
		var want string
		switch {
		case def.maxArgs < 0:
			want = fmt.Sprintf("at least %d", def.minArgs)
		case def.minArgs == def.maxArgs:
			want = fmt.Sprint(def.minArgs)
		default:
			want = fmt.Sprintf("%d to %d", def.minArgs, def.maxArgs)
		}
		return nil, b.errf(x, "wrong number of arguments to %s (got %d, expected %s)", name, n, want)
	}
	local := b.ltzLocal
	b.ltzLocal = wallClockFuncs[key]
	defer func() { b.ltzLocal = local }()
	return def.build(b, x, name)
}

// wallClockFuncs take a TIMESTAMP apart or round it by its wall clock: a
// TIMESTAMP_LTZ argument is read as its TIMESTAMP in the session zone.
var wallClockFuncs = map[string]bool{
	"date_format": true, "extract": true, FuncExtract: true, "year": true, "quarter": true, "month": true,
	"week": true, "weekofyear": true, "dayofyear": true, "dayofmonth": true, "day": true, "dayofweek": true,
	"hour": true, "minute": true, "second": true, "date": true, FuncFloorTo: true, FuncCeilTo: true,
	"timestampdiff": true, FuncTimestampDiff: true, "datediff": true,
}

// expect checks argument i of a call against pred.
func (b *binder) expect(x *ast.FuncCallExpr, name string, i int, e Expr, pred func(types.Type) bool, want string) error {
	if pred(e.Type()) {
		return nil
	}
	return b.argErr(x.Args[i], name, i, len(x.Args), e, want)
}

func (b *binder) argErr(n ast.Node, name string, i, nargs int, e Expr, want string) error {
	if nargs == 1 {
		return b.errf(n, "%s expects %s, got %s", name, want, typeName(e.Type()))
	}
	return b.errf(n, "%s expects %s as argument %d, got %s", name, want, i+1, typeName(e.Type()))
}

func (b *binder) bindArgs(x *ast.FuncCallExpr) ([]Expr, error) { return b.bindAll(x.Args) }

// argType is what a function argument must be: a test of its type and,
// for the error, what was expected.
type argType struct {
	ok   func(types.Type) bool
	want string
}

// The argument types of bindArgsAs. The scalar ones let a NULL literal
// through (it reads as a NULL of the type); argArray, argMap and
// argStringArray do not, since their functions need the element types.
var (
	argString      = argType{isStringType, wantString}
	argInteger     = argType{isIntegerType, wantInteger}
	argBoolean     = argType{isBoolType, wantBoolean}
	argArray       = argType{func(t types.Type) bool { return t.ID == types.Array }, "ARRAY"}
	argArrayOrNull = argType{func(t types.Type) bool { return t.ID == types.Array || t.ID == types.Null }, "ARRAY"}
	argMap         = argType{func(t types.Type) bool { return t.ID == types.Map }, "MAP"}
	argMapOrNull   = argType{func(t types.Type) bool { return t.ID == types.Map || t.ID == types.Null }, "MAP"}
	argStringArray = argType{func(t types.Type) bool { return t.ID == types.Array && isStringType(t.Elem()) }, "ARRAY<STRING>"}
)

// bindArgsAs binds the arguments of x and checks argument i against
// sig[i], in order, so the first wrong argument is the one reported. An
// optional argument the call leaves out is not checked; arguments past
// sig are the caller's to check.
func (b *binder) bindArgsAs(x *ast.FuncCallExpr, name string, sig ...argType) ([]Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(args) && i < len(sig); i++ {
		if err := b.expect(x, name, i, args[i], sig[i].ok, sig[i].want); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// bindTyped binds all arguments and checks each against one predicate.
func (b *binder) bindTyped(x *ast.FuncCallExpr, name string, pred func(types.Type) bool, want string) ([]Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	for i, a := range args {
		if err := b.expect(x, name, i, a, pred, want); err != nil {
			return nil, err
		}
	}
	return args, nil
}

const (
	wantString  = "STRING"
	wantInteger = "INT"
	wantNumber  = "a number"
	wantBoolean = "BOOLEAN"
	wantTime    = "DATE or TIMESTAMP"
)

// constString returns the value of a string literal argument.
func constString(e Expr) (string, bool) {
	if v, ok := IsLiteral(e); ok && v.Kind() == types.KindString {
		return v.Str(), true
	}
	return "", false
}

func constInt(e Expr) (int64, bool) {
	if v, ok := IsLiteral(e); ok && v.Kind() == types.KindInt {
		return v.Int(), true
	}
	return 0, false
}

// ---------------------------------------------------------------------------
// Control functions

func buildCoalesce(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	out, t, err := unify(name, args)
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	for _, a := range out {
		if a.Type().NotNull {
			t.NotNull = true
		}
	}
	return &coalesce{name: name, args: out, typ: t}, nil
}

func buildNullIf(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	l, r, mode, err := comparePrep("=", args[0], args[1], b.loc)
	if err != nil {
		return nil, b.errf(x, "NULLIF: %s", err)
	}
	return &nullIf{a: l, b: r, mode: mode, typ: l.Type().Nullable()}, nil
}

func buildIf(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argBoolean)
	if err != nil {
		return nil, err
	}
	out, t, err := unify(name, args[1:])
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	t.NotNull = out[0].Type().NotNull && out[1].Type().NotNull
	return &ifExpr{c: args[0], a: out[0], b: out[1], typ: t}, nil
}

func buildIsNullFunc(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	return &isNull{e: args[0]}, nil
}

func buildGreatest(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	out, t, err := unify(name, args)
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	if t.ID == types.Null {
		return NewLiteral(types.NullValue, t), nil
	}
	mode := cmAny
	switch {
	case t.ID == types.String:
		mode = cmString
	case t.ID == types.Double:
		mode = cmFloat
	case t.ID == types.Decimal:
		mode = cmDecimal
	case t.ID == types.Boolean || t.IsInteger() || isTemporal(t) || t.ID == types.Interval || t.ID == types.Time || t.ID == types.IntervalYM:
		mode = cmInt
	default:
		return nil, b.errf(x, "%s does not support %s", name, typeName(t))
	}
	greatest := name == "GREATEST"
	return &call{name: name, args: out, typ: strictType(t, out...), strict: true,
		fn: func(vs []types.Value) (types.Value, error) {
			best := vs[0]
			for _, v := range vs[1:] {
				c := cmpValues(mode, v, best)
				if (greatest && c > 0) || (!greatest && c < 0) {
					best = v
				}
			}
			return best, nil
		}}, nil
}

// ---------------------------------------------------------------------------
// Casts written by the pre-lexer

func buildInternalCast(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	e, err := b.bind(x.Args[0])
	if err != nil {
		return nil, err
	}
	te, err := b.bind(x.Args[1])
	if err != nil {
		return nil, err
	}
	text, ok := constString(te)
	if !ok {
		return nil, b.errf(x.Args[1], "CAST target type must be a type name")
	}
	to, err := parseCastType(text)
	if err != nil {
		return nil, b.errf(x.Args[1], "%s", err)
	}
	var c Expr
	if x.FnName.L == FuncTryCast {
		c, err = newCast(e, to, true, b.loc)
	} else {
		c, err = newCast(e, to, false, b.loc)
	}
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	return c, nil
}

// parseCastType parses a CAST target as the pre-lexer writes it
// (types.ParseType reads the time zone suffixes and keeps the case of ROW
// field names).
func parseCastType(text string) (types.Type, error) {
	return types.ParseType(text)
}

// ---------------------------------------------------------------------------
// String functions

func buildConcat(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	c := &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true}
	if len(args) == 2 {
		c.f2 = func(a, b types.Value) (types.Value, error) { return types.NewString(a.Str() + b.Str()), nil }
	} else {
		c.fn = func(vs []types.Value) (types.Value, error) {
			var sb strings.Builder
			for _, v := range vs {
				sb.WriteString(v.Str())
			}
			return types.NewString(sb.String()), nil
		}
	}
	return c, nil
}

func buildConcatWS(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args[0]),
		fn: func(vs []types.Value) (types.Value, error) {
			if vs[0].IsNull() {
				return types.NullValue, nil
			}
			sep := vs[0].Str()
			var sb strings.Builder
			first := true
			for _, v := range vs[1:] {
				if v.IsNull() {
					continue
				}
				if !first {
					sb.WriteString(sep)
				}
				first = false
				sb.WriteString(v.Str())
			}
			return types.NewString(sb.String()), nil
		}}, nil
}

func stringResult(e Expr) types.Type {
	if e.Type().ID == types.String {
		return e.Type()
	}
	return strictType(types.TypeString, e)
}

// buildStringMap binds a function that maps one STRING to another
// string (UPPER, LOWER, REVERSE, INITCAP): strict, typed as its argument.
func buildStringMap(b *binder, x *ast.FuncCallExpr, name string, f func(string) string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: stringResult(args[0]), strict: true,
		f1: func(a types.Value) (types.Value, error) { return types.NewString(f(a.Str())), nil }}, nil
}

func buildCase(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	f := strings.ToUpper
	if name == "LOWER" || name == "LCASE" {
		f = strings.ToLower
	}
	return buildStringMap(b, x, name, f)
}

// runeSlice returns s[start:end] counted in characters, clamped.
func runeSlice(s string, start, end int64) string {
	if start < 0 {
		start = 0
	}
	if end <= start {
		return ""
	}
	i, bs, be := int64(0), -1, len(s)
	for k := range s {
		if i == start {
			bs = k
		}
		if i == end {
			be = k
			break
		}
		i++
	}
	if bs < 0 {
		return ""
	}
	return s[bs:be]
}

// substring implements MySQL's SUBSTRING(s, pos[, len]): 1-based, a
// negative pos counts from the end, pos 0 or len <= 0 give the empty string.
func substring(s string, pos, n int64, hasLen bool) string {
	if pos == 0 || (hasLen && n <= 0) {
		return ""
	}
	cnt := int64(utf8.RuneCountInString(s))
	var start int64
	if pos > 0 {
		start = pos - 1
	} else {
		start = cnt + pos
		if start < 0 {
			return ""
		}
	}
	if start >= cnt {
		return ""
	}
	end := cnt
	if hasLen && n < cnt-start {
		end = start + n
	}
	if cnt == int64(len(s)) {
		return s[start:end]
	}
	return runeSlice(s, start, end)
}

// substringFlink is SUBSTRING as Flink (and Calcite) computes it:
// position 0 counts as 1, a negative position counts from the end, and
// the window [start, start+n) is clipped to the string after it is
// placed, so SUBSTRING('hello', -7, 4) is 'he'.
func substringFlink(s string, pos, n int64, hasLen bool) string {
	cnt := int64(utf8.RuneCountInString(s))
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
	case pos < 0:
		start = cnt + pos
	}
	end := cnt
	if hasLen {
		if n <= 0 {
			return ""
		}
		if n < cnt-start {
			end = start + n
		}
	}
	start = max(start, 0)
	if start >= end {
		return ""
	}
	if cnt == int64(len(s)) {
		return s[start:end]
	}
	return runeSlice(s, start, end)
}

func buildSubstring(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argString, argInteger, argInteger)
	if err != nil {
		return nil, err
	}
	c := &call{name: name, args: args, typ: stringResult(args[0]), strict: true}
	c.typ = strictType(c.typ, args...)
	sub := substring
	if name != "MID" {
		sub = substringFlink
	}
	if len(args) == 2 {
		c.f2 = func(s, p types.Value) (types.Value, error) {
			return types.NewString(sub(s.Str(), p.Int(), 0, false)), nil
		}
	} else {
		c.f3 = func(s, p, n types.Value) (types.Value, error) {
			return types.NewString(sub(s.Str(), p.Int(), n.Int(), true)), nil
		}
	}
	return c, nil
}

func buildCharLength(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeInt, args...), strict: true,
		f1: func(a types.Value) (types.Value, error) {
			return types.NewInt(int64(utf8.RuneCountInString(a.Str()))), nil
		}}, nil
}

// trimChars removes characters in set from the ends of s.
func trimChars(s, set string, left, right bool) string {
	if set == "" {
		return s
	}
	if left {
		s = strings.TrimLeft(s, set)
	}
	if right {
		s = strings.TrimRight(s, set)
	}
	return s
}

func buildTrim(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	left, right := true, true
	switch name {
	case "LTRIM":
		right = false
	case "RTRIM":
		left = false
	}
	// TiDB: TRIM(s), TRIM(rem FROM s) -> [s, rem], TRIM(dir [rem] FROM s) -> [s, rem, dir].
	dirWord := ""
	argNodes := x.Args
	if len(argNodes) == 3 {
		d, ok := argNodes[2].(*ast.TrimDirectionExpr)
		if !ok {
			return nil, b.errf(x, "wrong number of arguments to %s (got 3, expected 1 or 2)", name)
		}
		switch d.Direction {
		case ast.TrimLeading:
			right, dirWord = false, "LEADING"
		case ast.TrimTrailing:
			left, dirWord = false, "TRAILING"
		default:
			dirWord = "BOTH"
		}
		argNodes = argNodes[:2]
	}
	args, err := b.bindAll(argNodes)
	if err != nil {
		return nil, err
	}
	for i, a := range args {
		if !isStringType(a.Type()) {
			return nil, b.argErr(argNodes[i], name, i, len(args), a, wantString)
		}
	}
	c := &call{name: name, args: args, typ: strictType(stringResult(args[0]), args...), strict: true}
	if len(args) == 1 {
		c.f1 = func(a types.Value) (types.Value, error) {
			return types.NewString(trimChars(a.Str(), " ", left, right)), nil
		}
		if name == "TRIM" {
			c.render = func(a []Expr) string { return "TRIM(" + a[0].String() + ")" }
		}
		return c, nil
	}
	c.f2 = func(a, set types.Value) (types.Value, error) {
		return types.NewString(trimChars(a.Str(), set.Str(), left, right)), nil
	}
	if name != "TRIM" { // LTRIM(s, chars), RTRIM(s, chars), BTRIM(s, chars)
		return c, nil
	}
	c.render = func(a []Expr) string {
		s := "TRIM("
		if dirWord != "" {
			s += dirWord + " "
		}
		return s + a[1].String() + " FROM " + a[0].String() + ")"
	}
	return c, nil
}

func buildReplace(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
		f3: func(s, from, to types.Value) (types.Value, error) {
			if from.Str() == "" {
				return s, nil
			}
			return types.NewString(strings.ReplaceAll(s.Str(), from.Str(), to.Str())), nil
		}}, nil
}

// locate returns the 1-based character position of sub in s at or after
// character position from (1-based), 0 if absent.
func locate(sub, s string, from int64) int64 {
	if from < 1 {
		return 0
	}
	start := runeSlice(s, from-1, math.MaxInt64)
	if from > 1 && start == "" && sub != "" {
		return 0
	}
	if from-1 > int64(utf8.RuneCountInString(s)) {
		return 0
	}
	i := strings.Index(start, sub)
	if i < 0 {
		return 0
	}
	return from + int64(utf8.RuneCountInString(start[:i]))
}

func buildLocate(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argString, argString, argInteger)
	if err != nil {
		return nil, err
	}
	c := &call{name: name, args: args, typ: strictType(types.TypeInt, args...), strict: true}
	switch {
	case name == "INSTR": // INSTR(s, sub)
		c.f2 = func(s, sub types.Value) (types.Value, error) { return types.NewInt(locate(sub.Str(), s.Str(), 1)), nil }
	case len(args) == 3:
		c.f3 = func(sub, s, from types.Value) (types.Value, error) {
			return types.NewInt(locate(sub.Str(), s.Str(), from.Int())), nil
		}
	default: // POSITION(sub IN s), LOCATE(sub, s)
		c.f2 = func(sub, s types.Value) (types.Value, error) { return types.NewInt(locate(sub.Str(), s.Str(), 1)), nil }
		if name == "POSITION" {
			c.render = func(a []Expr) string { return "POSITION(" + a[0].String() + " IN " + a[1].String() + ")" }
		}
	}
	return c, nil
}

const maxResultLen = 1 << 30

func buildPad(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argString, argInteger, argString)
	if err != nil {
		return nil, err
	}
	leftPad := name == "LPAD"
	return &call{name: name, args: args, typ: types.TypeString, strict: true,
		f3: func(s, n, pad types.Value) (types.Value, error) {
			str, want, p := s.Str(), n.Int(), pad.Str()
			if want < 0 || p == "" { // as Flink: NULL even when no padding is needed
				return types.NullValue, nil
			}
			if want > maxResultLen {
				return types.NullValue, fmt.Errorf("result longer than %d characters", maxResultLen)
			}
			have := int64(utf8.RuneCountInString(str))
			if want <= have {
				return types.NewString(runeSlice(str, 0, want)), nil
			}
			var fill strings.Builder
			pr := []rune(p)
			for i := int64(0); i < want-have; i++ {
				fill.WriteRune(pr[i%int64(len(pr))])
			}
			if leftPad {
				return types.NewString(fill.String() + str), nil
			}
			return types.NewString(str + fill.String()), nil
		}}, nil
}

func buildRepeat(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argString, argInteger)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
		f2: func(s, n types.Value) (types.Value, error) {
			k := n.Int()
			if k <= 0 || s.Str() == "" {
				return types.NewString(""), nil
			}
			if k > maxResultLen/int64(len(s.Str())) {
				return types.NullValue, fmt.Errorf("result longer than %d bytes", maxResultLen)
			}
			return types.NewString(strings.Repeat(s.Str(), int(k))), nil
		}}, nil
}

func buildReverse(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	return buildStringMap(b, x, name, func(s string) string {
		r := []rune(s)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r)
	})
}

func buildLeftRight(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argString, argInteger)
	if err != nil {
		return nil, err
	}
	left := name == "LEFT"
	return &call{name: name, args: args, typ: strictType(stringResult(args[0]), args...), strict: true,
		f2: func(s, n types.Value) (types.Value, error) {
			k := n.Int()
			if k <= 0 {
				return types.NewString(""), nil
			}
			if left {
				return types.NewString(runeSlice(s.Str(), 0, k)), nil
			}
			cnt := int64(utf8.RuneCountInString(s.Str()))
			return types.NewString(runeSlice(s.Str(), cnt-k, cnt)), nil
		}}, nil
}

func buildInitcap(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	return buildStringMap(b, x, name, func(s string) string {
		var sb strings.Builder
		start := true
		for _, r := range s {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				if start {
					sb.WriteRune(unicode.ToUpper(r))
				} else {
					sb.WriteRune(unicode.ToLower(r))
				}
				start = false
			} else {
				sb.WriteRune(r)
				start = true
			}
		}
		return sb.String()
	})
}

func buildSplitIndex(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argString, argString, argInteger)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: types.TypeString, strict: true,
		f3: func(s, sep, idx types.Value) (types.Value, error) {

			i := idx.Int()
			if i < 0 || sep.Str() == "" {
				return types.NullValue, nil
			}
			parts := strings.Split(s.Str(), sep.Str())
			if i >= int64(len(parts)) {
				return types.NullValue, nil
			}
			return types.NewString(parts[i]), nil
		}}, nil
}

func (b *binder) newRegexp(n ast.Node, patNode ast.Node, name string, e, p Expr, negate bool) (Expr, error) {
	op := name
	if op == "" {
		op = "REGEXP"
	}
	if !isStringType(e.Type()) || !isStringType(p.Type()) {
		return nil, b.errf(n, "cannot apply '%s' to %s and %s", op, typeName(e.Type()), typeName(p.Type()))
	}
	x := &regexpExpr{name: name, e: e, re: p, not: negate}
	if s, ok := constString(p); ok && s == "" {
		x.empty = true
	} else if ok {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, b.errf(patNode, "invalid regular expression %q: %s", s, err)
		}
		x.fixed = re
	}
	return x, nil
}

func buildRegexpFunc(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	return b.newRegexp(x, x.Args[1], name, args[0], args[1], false)
}

// bindPatternArgs binds the arguments of a regular expression function
// whose pattern is argument 2, checking them against sig (see
// bindArgsAs), and compiles a literal pattern (fixed is nil for a
// run-time one).
func (b *binder) bindPatternArgs(x *ast.FuncCallExpr, name string, sig ...argType) (args []Expr, fixed *regexp.Regexp, err error) {
	if args, err = b.bindArgsAs(x, name, sig...); err != nil {
		return nil, nil, err
	}
	if fixed, err = b.compileArg(x, 1, args[1]); err != nil {
		return nil, nil, err
	}
	return args, fixed, nil
}

// compileArg compiles a literal regular expression argument at bind time.
func (b *binder) compileArg(x *ast.FuncCallExpr, i int, e Expr) (*regexp.Regexp, error) {
	s, ok := constString(e)
	if !ok {
		return nil, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, b.errf(x.Args[i], "invalid regular expression %q: %s", s, err)
	}
	return re, nil
}

// regexpOf returns the literal pattern's compiled form, or compiles the
// run-time pattern v; nil when it does not compile, which makes the
// regular expression functions return NULL, as Flink's do.
func regexpOf(fixed *regexp.Regexp, v types.Value) *regexp.Regexp {
	if fixed != nil {
		return fixed
	}
	re, err := regexp.Compile(v.Str())
	if err != nil {
		return nil
	}
	return re
}

func buildRegexpReplace(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, fixed, err := b.bindPatternArgs(x, name, argString, argString, argString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
		f3: func(s, p, repl types.Value) (types.Value, error) {
			re := regexpOf(fixed, p)
			if re == nil {
				return types.NullValue, nil
			}
			return types.NewString(re.ReplaceAllString(s.Str(), javaReplacement(repl.Str(), re.NumSubexp()))), nil
		}}, nil
}

func buildRegexpExtract(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	// The index is checked after the pattern compiles, so a bad pattern
	// is the error reported first.
	args, fixed, err := b.bindPatternArgs(x, name, argString, argString)
	if err != nil {
		return nil, err
	}
	extract := func(s, p types.Value, idx int64) (types.Value, error) {
		re := regexpOf(fixed, p)
		if re == nil {
			return types.NullValue, nil
		}
		m := re.FindStringSubmatch(s.Str())
		if m == nil || idx < 0 || idx >= int64(len(m)) {
			return types.NullValue, nil
		}
		return types.NewString(m[idx]), nil
	}
	c := &call{name: name, args: args, typ: types.TypeString, strict: true}
	if len(args) == 3 {
		if err := b.expect(x, name, 2, args[2], isIntegerType, wantInteger); err != nil {
			return nil, err
		}
		c.f3 = func(s, p, i types.Value) (types.Value, error) { return extract(s, p, i.Int()) }
	} else {
		c.f2 = func(s, p types.Value) (types.Value, error) { return extract(s, p, 0) } // the whole match, as Flink
	}
	return c, nil
}

// buildRegexpExtractAll binds REGEXP_EXTRACT_ALL(string, regex[, index]),
// Flink's: the ARRAY<STRING> of group index (default 1) of every match,
// a NULL element where the group took no part in the match. Unlike
// REGEXP_EXTRACT, a pattern that does not compile and an index outside
// [0, groups] fail (at bind time when they are literals), even without a
// match, as Flink's do.
func buildRegexpExtractAll(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, fixed, err := b.bindPatternArgs(x, name, argString, argString)
	if err != nil {
		return nil, err
	}
	if len(args) == 3 {
		if err := b.expect(x, name, 2, args[2], isIntegerType, wantInteger); err != nil {
			return nil, err
		}
		if i, ok := constInt(args[2]); ok && fixed != nil && (i < 0 || i > int64(fixed.NumSubexp())) {
			return nil, b.errf(x.Args[2], "%s: extract group index %d is out of range [0, %d]", name, i, fixed.NumSubexp())
		}
	} else if fixed != nil && fixed.NumSubexp() < 1 {
		return nil, b.errf(x.Args[1], "%s: extract group index 1 (the default) is out of range [0, 0]: the pattern has no group", name)
	}
	extract := func(s, p types.Value, idx int64) (types.Value, error) {
		re := fixed
		if re == nil {
			var err error
			if re, err = regexp.Compile(p.Str()); err != nil {
				return types.NullValue, fmt.Errorf("%s: invalid regular expression %q: %s", name, p.Str(), err)
			}
		}
		if idx < 0 || idx > int64(re.NumSubexp()) {
			return types.NullValue, fmt.Errorf("%s: extract group index %d is out of range [0, %d]", name, idx, re.NumSubexp())
		}
		str := s.Str()
		ms := re.FindAllStringSubmatchIndex(str, -1)
		out := make([]types.Value, len(ms))
		for i, m := range ms {
			if lo, hi := m[2*idx], m[2*idx+1]; lo >= 0 {
				out[i] = types.NewString(str[lo:hi])
			} else {
				out[i] = types.NullValue
			}
		}
		return types.NewArray(out), nil
	}
	t := types.ArrayType(types.TypeString)
	c := &call{name: name, args: args, typ: strictType(t, args...), strict: true}
	if len(args) == 3 {
		c.f3 = func(s, p, i types.Value) (types.Value, error) { return extract(s, p, i.Int()) }
	} else {
		c.f2 = func(s, p types.Value) (types.Value, error) { return extract(s, p, 1) } // group 1, as Flink
	}
	return c, nil
}

// ---------------------------------------------------------------------------
// Numeric functions

func numericArg(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	a := args[0]
	if !isNumericType(a.Type()) {
		if isTemporal(a.Type()) && (name == "FLOOR" || name == "CEIL" || name == "CEILING") {
			return nil, b.errf(x.Args[0], "%s expects a number, got %s (write %s(ts TO unit) to round a time)", name, typeName(a.Type()), name)
		}
		return nil, b.argErr(x.Args[0], name, 0, len(args), a, wantNumber)
	}
	if a.Type().ID == types.Null {
		a = NewLiteral(types.NullValue, types.TypeInt)
	}
	return a, nil
}

func buildAbs(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	a, err := numericArg(b, x, name)
	if err != nil {
		return nil, err
	}
	t := a.Type()
	isInt := t.ID == types.Int
	return &call{name: name, args: []Expr{a}, typ: t, strict: true,
		f1: func(v types.Value) (types.Value, error) {
			switch v.Kind() {
			case types.KindInt:
				i := v.Int()
				if i >= 0 {
					return v, nil
				}
				if i == math.MinInt64 || (isInt && i == math.MinInt32) {
					return types.NullValue, fmt.Errorf("%s overflow (ABS(%d))", t.ID, i)
				}
				return types.NewInt(-i), nil
			case types.KindFloat:
				return types.NewFloat(math.Abs(v.Float())), nil
			}
			return types.NewDecimal(new(apd.Decimal).Abs(v.Decimal())), nil
		}}, nil
}

// roundDecimal rounds d HALF_UP to r decimal places (r may be negative)
// and returns it with scale max(r, 0).
func roundDecimal(d *apd.Decimal, r int64) (*apd.Decimal, error) {
	return quantizePlaces(&decCtx, d, r)
}

// quantizePlaces is ROUND's and TRUNCATE's step on a DECIMAL: d to r
// decimal places with ctx's rounding (r < 0 rounds left of the point),
// returned with scale max(r, 0) and never a negative zero.
func quantizePlaces(ctx *apd.Context, d *apd.Decimal, r int64) (*apd.Decimal, error) {
	out := new(apd.Decimal)
	if _, err := ctx.Quantize(out, d, -int32(r)); err != nil {
		return nil, err
	}
	if r < 0 {
		if _, err := ctx.Quantize(out, out, 0); err != nil {
			return nil, err
		}
	}
	if out.IsZero() {
		out.Negative = false
	}
	return out, nil
}

// buildRound binds ROUND(x[, r]): x rounded HALF_UP to r decimal places.
func buildRound(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	return buildPlaces(b, x, name, roundDecimal, func(t types.Type, v, r int64) (types.Value, error) {
		d, err := roundDecimal(apd.New(v, 0), r)
		if err != nil {
			return types.NullValue, err
		}
		i, err := d.Int64()
		if err != nil || (t.ID == types.Int && (i < math.MinInt32 || i > math.MaxInt32)) {
			return types.NullValue, fmt.Errorf("%s overflow (ROUND(%d, %d))", t.ID, v, r)
		}
		return types.NewInt(i), nil
	})
}

func buildFloorCeil(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	a, err := numericArg(b, x, name)
	if err != nil {
		return nil, err
	}
	t := a.Type()
	rt := t
	if t.ID == types.Decimal {
		rt = types.DecimalType(min(types.MaxDecimalPrecision, t.Precision-t.Scale+1), 0)
		rt.NotNull = t.NotNull
	}
	ceil := name != "FLOOR"
	return &call{name: name, args: []Expr{a}, typ: rt, strict: true,
		f1: func(v types.Value) (types.Value, error) {
			switch v.Kind() {
			case types.KindInt:
				return v, nil
			case types.KindFloat:
				if ceil {
					return types.NewFloat(math.Ceil(v.Float())), nil
				}
				return types.NewFloat(math.Floor(v.Float())), nil
			}
			d := new(apd.Decimal)
			var err error
			if ceil {
				_, err = decCtx.Ceil(d, v.Decimal())
			} else {
				_, err = decCtx.Floor(d, v.Decimal())
			}
			if err != nil {
				return types.NullValue, err
			}
			out, ok := fitDecimal(d, rt.Precision, 0)
			if !ok {
				return types.NullValue, fmt.Errorf("%s overflow", typeName(rt))
			}
			return types.NewDecimal(out), nil
		}}, nil
}

func buildSign(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	a, err := numericArg(b, x, name)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: []Expr{a}, typ: a.Type(), strict: true,
		f1: func(v types.Value) (types.Value, error) {
			switch v.Kind() {
			case types.KindInt:
				return types.NewInt(int64(numcmp.Int(v.Int(), 0))), nil
			case types.KindFloat:
				f := v.Float()
				switch {
				case f > 0:
					return types.NewFloat(1), nil
				case f < 0:
					return types.NewFloat(-1), nil
				}
				return v, nil
			}
			return types.NewDecimal(apd.New(int64(v.Decimal().Sign()), 0)), nil
		}}, nil
}

var math1 = map[string]func(float64) float64{
	"SQRT": math.Sqrt, "EXP": math.Exp, "LN": math.Log, "LOG10": math.Log10, "LOG2": math.Log2,
}

func buildMath1(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	a, err := numericArg(b, x, name)
	if err != nil {
		return nil, err
	}
	f := math1[name]
	return &call{name: name, args: []Expr{a}, typ: strictType(types.TypeDouble, a), strict: true,
		f1: func(v types.Value) (types.Value, error) { return types.NewFloat(f(types.ToFloat(v))), nil }}, nil
}

func buildLog(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isNumericType, wantNumber)
	if err != nil {
		return nil, err
	}
	c := &call{name: name, args: args, typ: strictType(types.TypeDouble, args...), strict: true}
	if len(args) == 1 {
		c.f1 = func(v types.Value) (types.Value, error) { return types.NewFloat(math.Log(types.ToFloat(v))), nil }
	} else { // LOG(base, x)
		c.f2 = func(base, v types.Value) (types.Value, error) {
			return types.NewFloat(math.Log(types.ToFloat(v)) / math.Log(types.ToFloat(base))), nil
		}
	}
	return c, nil
}

func buildPower(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isNumericType, wantNumber)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeDouble, args...), strict: true,
		f2: func(a, e types.Value) (types.Value, error) {
			return types.NewFloat(math.Pow(types.ToFloat(a), types.ToFloat(e))), nil
		}}, nil
}

func buildPi(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	return NewLiteral(types.NewFloat(math.Pi), types.TypeDouble), nil
}
