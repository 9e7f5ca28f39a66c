package expr

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// The JSON functions. Flink's clause syntax (RETURNING, ON EMPTY, ON
// ERROR, WRAPPER, KEY ... VALUE, ON NULL, IS JSON) is rewritten by the
// pre-lexer into the internal calls below, with each clause a string
// literal argument.
const (
	// FuncJSONValue is JSON_VALUE(j, path [RETURNING t] [b ON EMPTY]
	// [b ON ERROR]) as __json_value(j, path, 'T', 'EMPTY', default,
	// 'ERROR', default): T is '' for STRING, a behaviour is NULL, ERROR or
	// DEFAULT, and a default is NULL unless DEFAULT gave one.
	FuncJSONValue = "__json_value"
	// FuncJSONQuery is JSON_QUERY(j, path [RETURNING t] [wrapper]
	// [b ON EMPTY] [b ON ERROR]) as __json_query(j, path, 'T', 'WRAPPER',
	// 'EMPTY', 'ERROR'): WRAPPER is WITHOUT, CONDITIONAL or UNCONDITIONAL,
	// a behaviour NULL, EMPTY ARRAY, EMPTY OBJECT or ERROR.
	FuncJSONQuery = "__json_query"
	// FuncJSONExists is JSON_EXISTS(j, path [b ON ERROR]) as
	// __json_exists(j, path, 'B'), B one of TRUE, FALSE, UNKNOWN, ERROR.
	FuncJSONExists = "__json_exists"
	// FuncJSONObject is JSON_OBJECT([KEY] k VALUE v, ... [NULL|ABSENT ON
	// NULL]) as __json_object('NULL'|'ABSENT', k1, v1, k2, v2, ...).
	FuncJSONObject = "__json_object"
	// FuncJSONArray is JSON_ARRAY(v, ... [NULL|ABSENT ON NULL]) as
	// __json_array('NULL'|'ABSENT', v1, v2, ...).
	FuncJSONArray = "__json_array"
	// FuncJSON is JSON(text) inside JSON_OBJECT and JSON_ARRAY, written
	// __json(text): TiDB reads JSON as a type name.
	FuncJSON = "__json"
	// FuncIsJSON stands for the predicate x IS [NOT] JSON [type], written
	// x [NOT] REGEXP __is_json('TYPE'): TiDB has no IS JSON, and REGEXP
	// binds like IS.
	FuncIsJSON = "__is_json"
)

func registerJSONFuncs(r map[string]funcDef) {
	for name, d := range map[string]funcDef{
		"json_value":   {2, 2, buildJSONValue},
		FuncJSONValue:  {7, 7, buildJSONValue},
		"json_query":   {2, 2, buildJSONQuery},
		FuncJSONQuery:  {6, 6, buildJSONQuery},
		"json_exists":  {2, 2, buildJSONExists},
		FuncJSONExists: {3, 3, buildJSONExists},
		FuncJSONObject: {1, -1, buildJSONObject},
		FuncJSONArray:  {1, -1, buildJSONArray},
		FuncJSON:       {1, 1, buildJSONRaw},
		"json_string":  {1, 1, buildJSONString},
		"json_quote":   {1, 1, buildJSONQuote},
		"json_unquote": {1, 1, buildJSONQuote},
	} {
		r[name] = d
	}
}

// jsonInput binds the JSON text argument: a STRING, or a number or
// BOOLEAN taken as its text (Flink accepts JSON_QUERY(1, '$')).
func (b *binder) jsonInput(x *ast.FuncCallExpr, name string, e Expr) (Expr, error) {
	t := e.Type()
	if isStringType(t) {
		return e, nil
	}
	if t.IsNumeric() || t.ID == types.Boolean {
		return Cast(e, types.TypeString)
	}
	return nil, b.argErr(x.Args[0], name, 0, len(x.Args), e, wantString)
}

// pathArg compiles the path argument, which must be a string literal.
func (b *binder) pathArg(x *ast.FuncCallExpr, name string, e Expr) (*jsonPath, error) {
	s, ok := constString(e)
	if !ok {
		return nil, b.errf(x.Args[1], "%s expects a string literal JSON path", name)
	}
	p, err := parseJSONPath(s)
	if err != nil {
		return nil, b.errf(x.Args[1], "%s: %s", name, err)
	}
	return p, nil
}

// bindJSONSearch binds the arguments of JSON_VALUE, JSON_QUERY and
// JSON_EXISTS, which start alike: the JSON text (see jsonInput), then the
// path, compiled here; the clause arguments follow.
func (b *binder) bindJSONSearch(x *ast.FuncCallExpr, name string) ([]Expr, *jsonPath, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, nil, err
	}
	if args[0], err = b.jsonInput(x, name, args[0]); err != nil {
		return nil, nil, err
	}
	path, err := b.pathArg(x, name, args[1])
	if err != nil {
		return nil, nil, err
	}
	return args, path, nil
}

// clauseArg reads clause argument i, a string literal the pre-lexer wrote.
func (b *binder) clauseArg(x *ast.FuncCallExpr, args []Expr, i int) (string, error) {
	s, ok := constString(args[i])
	if !ok {
		return "", b.errf(x.Args[i], "internal error: clause argument %d is not a string literal", i+1)
	}
	return s, nil
}

// jsonSearch parses text and applies the path. parseErr tells a document
// that is not JSON from a path error (strict mode).
func jsonSearch(text string, p *jsonPath) (v *jsonVal, parseErr, pathErr error) {
	doc, err := parseJSON(text)
	if err != nil {
		return nil, fmt.Errorf("not a JSON document: %w", err), nil
	}
	v, err = p.eval(doc)
	return v, nil, err
}

// ---------------------------------------------------------------------------
// JSON_VALUE

var errJSONNotScalar = errors.New("strict JSON path mode requires a scalar value")

func buildJSONValue(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	name := "JSON_VALUE"
	args, path, err := b.bindJSONSearch(x, name)
	if err != nil {
		return nil, err
	}
	ret := types.TypeString
	emptyMode, errorMode := "NULL", "NULL"
	var emptyDef, errorDef Expr
	if len(args) == 7 {
		var tname string
		if tname, err = b.clauseArg(x, args, 2); err != nil {
			return nil, err
		}
		if tname != "" {
			if ret, err = parseCastType(tname); err != nil {
				return nil, b.errf(x.Args[2], "JSON_VALUE ... RETURNING %s: %s", tname, err)
			}
		}
		if emptyMode, err = b.clauseArg(x, args, 3); err != nil {
			return nil, err
		}
		if errorMode, err = b.clauseArg(x, args, 5); err != nil {
			return nil, err
		}
		for _, d := range []struct {
			mode string
			i    int
			dst  *Expr
		}{{emptyMode, 4, &emptyDef}, {errorMode, 6, &errorDef}} {
			if d.mode != "DEFAULT" {
				continue
			}
			c, err := ImplicitCast(args[d.i], ret)
			if err != nil {
				if c, err = Cast(args[d.i], ret); err != nil {
					return nil, b.errf(x.Args[d.i], "JSON_VALUE: the DEFAULT value %s", err)
				}
			}
			*d.dst = c
		}
	}
	kept := []Expr{args[0]}
	iEmpty, iError := -1, -1
	if emptyDef != nil {
		iEmpty = len(kept)
		kept = append(kept, emptyDef)
	}
	if errorDef != nil {
		iError = len(kept)
		kept = append(kept, errorDef)
	}
	pathText, _ := constString(args[1])
	render := func(a []Expr) string {
		s := "JSON_VALUE(" + a[0].String() + ", " + quoteSQL(pathText)
		if ret.ID != types.String {
			s += " RETURNING " + typeName(ret)
		}
		if emptyMode != "NULL" {
			s += " " + emptyMode
			if iEmpty > 0 {
				s += " " + a[iEmpty].String()
			}
			s += " ON EMPTY"
		}
		if errorMode != "NULL" {
			s += " " + errorMode
			if iError > 0 {
				s += " " + a[iError].String()
			}
			s += " ON ERROR"
		}
		return s + ")"
	}
	return &call{name: name, args: kept, typ: ret.Nullable(), render: render,
		fn: func(vs []types.Value) (types.Value, error) {
			if vs[0].IsNull() {
				return types.NullValue, nil
			}
			onError := func(cause error) (types.Value, error) {
				switch errorMode {
				case "ERROR":
					return types.NullValue, cause
				case "DEFAULT":
					return vs[iError], nil
				}
				return types.NullValue, nil
			}
			v, parseErr, pathErr := jsonSearch(vs[0].Str(), path)
			switch {
			case parseErr != nil && path.strict:
				return onError(parseErr)
			case parseErr != nil:
				v = nil
			case pathErr != nil:
				return onError(pathErr)
			}
			if v != nil && !v.isScalar() && path.strict {
				return onError(errJSONNotScalar)
			}
			if v == nil || v.kind == jNull || !v.isScalar() {
				switch emptyMode {
				case "ERROR":
					return onError(errors.New("the JSON path found no value (ERROR ON EMPTY)"))
				case "DEFAULT":
					return vs[iEmpty], nil
				}
				return types.NullValue, nil
			}
			out, err := jsonScalarAs(v, ret)
			if err != nil {
				return onError(err)
			}
			return out, nil
		}}, nil
}

// jsonScalarAs converts a JSON scalar to the RETURNING type.
func jsonScalarAs(v *jsonVal, t types.Type) (types.Value, error) {
	var text string
	switch v.kind {
	case jBool:
		if t.ID == types.Boolean {
			return types.NewBool(v.b), nil
		}
		text = fmt.Sprint(v.b)
	case jNumber:
		text = javaNumber(v.s)
		if t.ID == types.Double || t.ID == types.Decimal {
			text = v.s
		}
	default:
		text = v.s
	}
	return CastValue(types.NewString(text), types.TypeString, t)
}

func quoteSQL(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// ---------------------------------------------------------------------------
// JSON_QUERY

func buildJSONQuery(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	name := "JSON_QUERY"
	args, path, err := b.bindJSONSearch(x, name)
	if err != nil {
		return nil, err
	}
	wrapper, emptyMode, errorMode := "WITHOUT", "NULL", "NULL"
	retArray := false // RETURNING ARRAY<STRING>
	if len(args) == 6 {
		tname, err := b.clauseArg(x, args, 2)
		if err != nil {
			return nil, err
		}
		if tname != "" {
			t, err := parseCastType(tname)
			retArray = err == nil && t.ID == types.Array && t.Fields[0].Type.ID == types.String
			if err != nil || t.ID != types.String && !retArray {
				return nil, b.errf(x.Args[2], "JSON_QUERY ... RETURNING %s is not supported; JSON_QUERY returns STRING or ARRAY<STRING>", tname)
			}
		}
		if wrapper, err = b.clauseArg(x, args, 3); err != nil {
			return nil, err
		}
		if emptyMode, err = b.clauseArg(x, args, 4); err != nil {
			return nil, err
		}
		if errorMode, err = b.clauseArg(x, args, 5); err != nil {
			return nil, err
		}
	}
	if retArray && (emptyMode == "EMPTY OBJECT" || errorMode == "EMPTY OBJECT") {
		return nil, b.errf(x.Args[2], "JSON_QUERY ... RETURNING ARRAY<STRING> cannot take EMPTY OBJECT ON EMPTY or ON ERROR")
	}
	pathText, _ := constString(args[1])
	behave := func(mode string, cause error) (types.Value, error) {
		switch mode {
		case "ERROR":
			return types.NullValue, cause
		case "EMPTY ARRAY":
			if retArray {
				return types.NewArray([]types.Value{}), nil
			}
			return types.NewString("[]"), nil
		case "EMPTY OBJECT":
			return types.NewString("{}"), nil
		}
		return types.NullValue, nil
	}
	typ := types.TypeString
	if retArray {
		typ = types.ArrayType(types.TypeString)
	}
	return &call{name: name, args: args[:1], typ: typ, strict: true,
		render: func(a []Expr) string {
			s := "JSON_QUERY(" + a[0].String() + ", " + quoteSQL(pathText)
			if retArray {
				s += " RETURNING ARRAY<STRING>"
			}
			if wrapper != "WITHOUT" {
				s += " WITH " + wrapper + " ARRAY WRAPPER"
			}
			if emptyMode != "NULL" {
				s += " " + emptyMode + " ON EMPTY"
			}
			if errorMode != "NULL" {
				s += " " + errorMode + " ON ERROR"
			}
			return s + ")"
		},
		f1: func(in types.Value) (types.Value, error) {
			v, parseErr, pathErr := jsonSearch(in.Str(), path)
			switch {
			case parseErr != nil && path.strict:
				return behave(errorMode, parseErr)
			case parseErr != nil:
				v = nil
			case pathErr != nil:
				return behave(errorMode, pathErr)
			}
			switch wrapper {
			case "UNCONDITIONAL":
				v = wrapJSON(v)
			case "CONDITIONAL":
				if v == nil || v.kind != jArray {
					v = wrapJSON(v)
				}
			}
			if v == nil || v.isScalar() {
				if path.strict && v != nil {
					return behave(errorMode, errors.New("strict JSON path mode requires an array or object"))
				}
				return behave(emptyMode, errors.New("the JSON path found no array or object (ERROR ON EMPTY)"))
			}
			if retArray {
				// Each element as STRING: a string's text, NULL for null,
				// any other value as its JSON text (FLINK-35687).
				if v.kind != jArray {
					return behave(errorMode, errors.New("RETURNING ARRAY<STRING> needs the path to find an array, found an object"))
				}
				out := make([]types.Value, len(v.arr))
				for i, el := range v.arr {
					switch el.kind {
					case jNull:
						out[i] = types.NullValue
					case jString:
						out[i] = types.NewString(el.s)
					default:
						out[i] = types.NewString(jsonText(el))
					}
				}
				return types.NewArray(out), nil
			}
			return types.NewString(jsonText(v)), nil
		}}, nil
}

// wrapJSON puts v in an array; a missing value becomes [null].
func wrapJSON(v *jsonVal) *jsonVal {
	if v == nil {
		v = &jsonVal{kind: jNull}
	}
	return &jsonVal{kind: jArray, arr: []*jsonVal{v}}
}

// ---------------------------------------------------------------------------
// JSON_EXISTS

func buildJSONExists(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	name := "JSON_EXISTS"
	args, path, err := b.bindJSONSearch(x, name)
	if err != nil {
		return nil, err
	}
	onError := "FALSE"
	if len(args) == 3 {
		if onError, err = b.clauseArg(x, args, 2); err != nil {
			return nil, err
		}
	}
	pathText, _ := constString(args[1])
	return &call{name: name, args: args[:1], typ: types.TypeBoolean, strict: true,
		render: func(a []Expr) string {
			s := "JSON_EXISTS(" + a[0].String() + ", " + quoteSQL(pathText)
			if onError != "FALSE" {
				s += " " + onError + " ON ERROR"
			}
			return s + ")"
		},
		f1: func(in types.Value) (types.Value, error) {
			v, parseErr, pathErr := jsonSearch(in.Str(), path)
			cause := pathErr
			if parseErr != nil && path.strict {
				cause = parseErr
			}
			if cause != nil {
				switch onError {
				case "TRUE":
					return types.NewBool(true), nil
				case "UNKNOWN":
					return types.NullValue, nil
				case "ERROR":
					return types.NullValue, cause
				}
				return types.NewBool(false), nil
			}
			if v != nil && v.kind == jArray && path.indefinite {
				return types.NewBool(len(v.arr) > 0), nil
			}
			return types.NewBool(v != nil && v.kind != jNull), nil
		}}, nil
}

// ---------------------------------------------------------------------------
// IS JSON

// isJSONExpr is x IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT]. It is
// never NULL: a NULL x is not JSON.
type isJSONExpr struct {
	e    Expr
	what string // VALUE, SCALAR, ARRAY or OBJECT
	not  bool
}

func (x *isJSONExpr) Type() types.Type { return types.TypeBoolean.WithNotNull(true) }
func (x *isJSONExpr) String() string {
	op := " IS JSON"
	if x.not {
		op = " IS NOT JSON"
	}
	if x.what != "VALUE" {
		op += " " + x.what
	}
	return "(" + x.e.String() + op + ")"
}
func (x *isJSONExpr) children() []Expr { return []Expr{x.e} }
func (x *isJSONExpr) withChildren(k []Expr) Expr {
	c := *x
	c.e = k[0]
	return &c
}
func (x *isJSONExpr) Eval(row types.Row) (types.Value, error) {
	v, err := x.e.Eval(row)
	if err != nil {
		return types.NullValue, err
	}
	ok := false
	if !v.IsNull() {
		if doc, err := parseJSON(v.Str()); err == nil {
			switch x.what {
			case "VALUE":
				ok = true
			case "SCALAR":
				ok = doc.isScalar()
			case "ARRAY":
				ok = doc.kind == jArray
			case "OBJECT":
				ok = doc.kind == jObject
			}
		}
	}
	return types.NewBool(ok != x.not), nil
}

// isJSON binds e [NOT] REGEXP __is_json('TYPE').
func (b *binder) isJSON(x *ast.PatternRegexpExpr, fc *ast.FuncCallExpr) (Expr, error) {
	e, err := b.bind(x.Expr)
	if err != nil {
		return nil, err
	}
	if !isStringType(e.Type()) {
		return nil, b.errf(x, "IS JSON expects a STRING, got %s", typeName(e.Type()))
	}
	what := "VALUE"
	if len(fc.Args) == 1 {
		w, err := b.bind(fc.Args[0])
		if err != nil {
			return nil, err
		}
		what, _ = constString(w)
	}
	return &isJSONExpr{e: e, what: what, not: x.Not}, nil
}

// ---------------------------------------------------------------------------
// JSON_OBJECT, JSON_ARRAY, JSON, JSON_STRING

// jsonArg is one value of a JSON constructor: an expression, and whether
// its text is JSON to insert as is (a nested JSON_OBJECT, JSON_ARRAY or
// JSON(...)) rather than a value to convert.
type jsonArg struct {
	raw   bool
	parse bool // JSON(text): check and normalize the text
}

// bindJSONArg binds a value of JSON_OBJECT or JSON_ARRAY.
func (b *binder) bindJSONArg(n ast.ExprNode) (Expr, jsonArg, error) {
	if fc, ok := n.(*ast.FuncCallExpr); ok {
		switch fc.FnName.L {
		case FuncJSON:
			e, err := b.bind(fc.Args[0])
			if err != nil {
				return nil, jsonArg{}, err
			}
			if !isStringType(e.Type()) {
				return nil, jsonArg{}, b.errf(fc.Args[0], "JSON expects a STRING, got %s", typeName(e.Type()))
			}
			return e, jsonArg{raw: true, parse: true}, nil
		case FuncJSONObject, FuncJSONArray:
			e, err := b.bind(n)
			return e, jsonArg{raw: true}, err
		}
	}
	e, err := b.bind(n)
	if err != nil {
		return nil, jsonArg{}, err
	}
	if e.Type().ID == types.Interval {
		return nil, jsonArg{}, b.errf(n, "an INTERVAL cannot be a JSON value")
	}
	return e, jsonArg{}, nil
}

// jsonOfValue converts a SQL value to JSON. DATE and TIMESTAMP values
// become strings in SQL's text form.
func jsonOfValue(v types.Value, t types.Type, a jsonArg) (*jsonVal, error) {
	switch {
	case v.IsNull():
		return &jsonVal{kind: jNull}, nil
	case a.raw:
		if v.Str() == "" && a.parse {
			return &jsonVal{kind: jNull}, nil
		}
		doc, err := parseJSON(v.Str())
		if err != nil {
			return nil, fmt.Errorf("JSON(%s): not a JSON document: %w", quoteSQL(v.Str()), err)
		}
		return doc, nil
	}
	switch v.Kind() {
	case types.KindBool:
		return &jsonVal{kind: jBool, b: v.Bool()}, nil
	case types.KindInt:
		return &jsonVal{kind: jNumber, s: types.Format(v, t)}, nil
	case types.KindFloat:
		return &jsonVal{kind: jNumber, s: javaDouble(v.Float())}, nil
	case types.KindDecimal:
		return &jsonVal{kind: jDecimal, s: types.Format(v, t)}, nil
	}
	return &jsonVal{kind: jString, s: types.Format(v, t)}, nil
}

func buildJSONObject(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	name := "JSON_OBJECT"
	mode, err := b.onNullArg(x)
	if err != nil {
		return nil, err
	}
	if len(x.Args)%2 != 1 {
		return nil, b.errf(x, "internal error: JSON_OBJECT with an odd number of key and value arguments")
	}
	var args []Expr
	var kinds []jsonArg
	for i := 1; i < len(x.Args); i += 2 {
		k, err := b.bind(x.Args[i])
		if err != nil {
			return nil, err
		}
		if _, ok := constString(k); !ok { // as Flink requires
			return nil, b.errf(x.Args[i], "JSON_OBJECT keys must be string literals, got %s", k)
		}
		v, a, err := b.bindJSONArg(x.Args[i+1])
		if err != nil {
			return nil, err
		}
		args = append(args, k, v)
		kinds = append(kinds, jsonArg{}, a)
	}
	return &call{name: name, args: args, typ: types.TypeString.WithNotNull(true),
		render: func(a []Expr) string {
			parts := make([]string, 0, len(a)/2+1)
			for i := 0; i < len(a); i += 2 {
				parts = append(parts, "KEY "+a[i].String()+" VALUE "+renderJSONArg(a[i+1], kinds[i+1]))
			}
			if mode == "ABSENT" {
				parts = append(parts, "ABSENT ON NULL")
			}
			return "JSON_OBJECT(" + strings.Join(parts, ", ") + ")"
		},
		fn: func(vs []types.Value) (types.Value, error) {
			dst := []byte{'{'}
			first := true
			for i := 0; i < len(vs); i += 2 {
				if vs[i].IsNull() {
					return types.NullValue, errors.New("a JSON_OBJECT key is NULL")
				}
				if vs[i+1].IsNull() && mode == "ABSENT" {
					continue
				}
				j, err := jsonOfValue(vs[i+1], args[i+1].Type(), kinds[i+1])
				if err != nil {
					return types.NullValue, err
				}
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = appendJSONString(dst, vs[i].Str())
				dst = append(dst, ':')
				dst = appendJSON(dst, j)
			}
			return types.NewString(string(append(dst, '}'))), nil
		}}, nil
}

func renderJSONArg(e Expr, a jsonArg) string {
	if a.parse {
		return "JSON(" + e.String() + ")"
	}
	return e.String()
}

// onNullArg reads the ON NULL behaviour, the first argument.
func (b *binder) onNullArg(x *ast.FuncCallExpr) (string, error) {
	e, err := b.bind(x.Args[0])
	if err != nil {
		return "", err
	}
	s, ok := constString(e)
	if !ok || (s != "NULL" && s != "ABSENT") {
		return "", b.errf(x.Args[0], "internal error: ON NULL argument %s", e)
	}
	return s, nil
}

func buildJSONArray(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	name := "JSON_ARRAY"
	mode, err := b.onNullArg(x)
	if err != nil {
		return nil, err
	}
	var args []Expr
	var kinds []jsonArg
	for _, n := range x.Args[1:] {
		v, a, err := b.bindJSONArg(n)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
		kinds = append(kinds, a)
	}
	return &call{name: name, args: args, typ: types.TypeString.WithNotNull(true),
		render: func(a []Expr) string {
			parts := make([]string, 0, len(a)+1)
			for i, e := range a {
				parts = append(parts, renderJSONArg(e, kinds[i]))
			}
			if mode == "NULL" {
				parts = append(parts, "NULL ON NULL")
			}
			return "JSON_ARRAY(" + strings.Join(parts, ", ") + ")"
		},
		fn: func(vs []types.Value) (types.Value, error) {
			dst := []byte{'['}
			first := true
			for i, v := range vs {
				if v.IsNull() && mode == "ABSENT" {
					continue
				}
				j, err := jsonOfValue(v, args[i].Type(), kinds[i])
				if err != nil {
					return types.NullValue, err
				}
				if j.kind == jNull && mode == "ABSENT" { // JSON('') is NULL
					continue
				}
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = appendJSON(dst, j)
			}
			return types.NewString(string(append(dst, ']'))), nil
		}}, nil
}

func buildJSONRaw(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	return nil, b.errf(x, "JSON(...) can only be used as a value of JSON_OBJECT or JSON_ARRAY")
}

// buildJSONString binds JSON_STRING(v): v serialized as JSON, NULL for NULL.
func buildJSONString(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	if args[0].Type().ID == types.Interval {
		return nil, b.argErr(x.Args[0], name, 0, 1, args[0], "a value that is not an INTERVAL")
	}
	t := args[0].Type()
	return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
		f1: func(v types.Value) (types.Value, error) {
			j, err := jsonOfValue(v, t, jsonArg{})
			if err != nil {
				return types.NullValue, err
			}
			return types.NewString(string(appendJSON(nil, j))), nil
		}}, nil
}

func buildJSONQuote(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	f := jsonQuote
	if name == "JSON_UNQUOTE" {
		f = jsonUnquote
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
		f1: func(v types.Value) (types.Value, error) { return types.NewString(f(v.Str())), nil }}, nil
}

// BindJSONAgg binds the arguments of JSON_ARRAYAGG (value, 'NULL' |
// 'ABSENT') or JSON_OBJECTAGG (key, value, 'NULL' | 'ABSENT'), as the
// pre-lexer writes them, into the one expression the aggregate collects
// per row: the element's JSON text, or the member's "key":value text.
// It is NULL when the value is NULL and ABSENT ON NULL drops it (the
// aggregate skips NULLs). It also returns the value expression alone and
// the ON NULL behaviour, for the aggregate's name in EXPLAIN.
func BindJSONAgg(object bool, args []ast.ExprNode, s *Scope, errf ErrorFunc) (collected, value Expr, mode string, err error) {
	if s == nil {
		s = &Scope{}
	}
	if errf == nil {
		errf = defaultErrf
	}
	b := &binder{s: s, errf: errf}
	want := 2
	if object {
		want = 3
	}
	if len(args) != want {
		return nil, nil, "", b.errf(nil, "internal error: %d arguments to a JSON aggregate", len(args))
	}
	m, err := b.bind(args[want-1])
	if err != nil {
		return nil, nil, "", err
	}
	mode, _ = constString(m)
	v, kind, err := b.bindJSONArg(args[want-2])
	if err != nil {
		return nil, nil, "", err
	}
	vt := v.Type()
	element := func(x types.Value) ([]byte, bool, error) {
		if x.IsNull() && mode == "ABSENT" {
			return nil, false, nil
		}
		j, err := jsonOfValue(x, vt, kind)
		if err != nil {
			return nil, false, err
		}
		if j.kind == jNull && mode == "ABSENT" {
			return nil, false, nil
		}
		return appendJSON(nil, j), true, nil
	}
	if !object {
		return &call{name: "JSON_ARRAYAGG", args: []Expr{v}, typ: types.TypeString,
			render: func(a []Expr) string { return "JSON_STRING(" + renderJSONArg(a[0], kind) + ")" },
			f1: func(x types.Value) (types.Value, error) {
				t, ok, err := element(x)
				if !ok || err != nil {
					return types.NullValue, err
				}
				return types.NewString(string(t)), nil
			}}, v, mode, nil
	}
	k, err := b.bind(args[0])
	if err != nil {
		return nil, nil, "", err
	}
	if !isStringType(k.Type()) || k.Type().ID == types.Null {
		return nil, nil, "", b.errf(args[0], "JSON_OBJECTAGG keys must be STRING, got %s", typeName(k.Type()))
	}
	return &call{name: "JSON_OBJECTAGG", args: []Expr{k, v}, typ: types.TypeString,
		render: func(a []Expr) string {
			return "JSON_MEMBER(" + a[0].String() + ", " + renderJSONArg(a[1], kind) + ")"
		},
		f2: func(key, x types.Value) (types.Value, error) {
			if key.IsNull() {
				return types.NullValue, errors.New("a JSON_OBJECTAGG key is NULL")
			}
			t, ok, err := element(x)
			if !ok || err != nil {
				return types.NullValue, err
			}
			m := appendJSONString(nil, key.Str())
			m = append(m, ':')
			return types.NewString(string(append(m, t...))), nil
		}}, v, mode, nil
}
