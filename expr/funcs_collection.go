package expr

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// Flink's collection functions over ARRAY and MAP values (composite.go
// has the constructors, indexing, CARDINALITY and ELEMENT).

func registerCollectionFuncs(r map[string]funcDef) {
	r["split"] = funcDef{2, 2, buildSplit}
	r["str_to_map"] = funcDef{1, 3, buildStrToMap}
	r["array_contains"] = funcDef{2, 2, buildArraySearch}
	r["array_position"] = funcDef{2, 2, buildArraySearch}
	r["array_join"] = funcDef{2, 3, buildArrayJoin}
	r["array_reverse"] = funcDef{1, 1, buildArrayUnary}
	r["array_distinct"] = funcDef{1, 1, buildArrayUnary}
	r["map_keys"] = funcDef{1, 1, buildMapPart}
	r["map_values"] = funcDef{1, 1, buildMapPart}
}

// buildSplit binds SPLIT(string, delimiter): the pieces between the
// delimiters (empty pieces kept); an empty delimiter splits into
// characters.
func buildSplit(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	t := types.ArrayType(types.TypeString.WithNotNull(true))
	return &call{name: name, args: args, typ: strictType(t, args...), strict: true,
		f2: func(s, d types.Value) (types.Value, error) {
			parts := strings.Split(s.Str(), d.Str())
			out := make([]types.Value, len(parts))
			for i, p := range parts {
				out[i] = types.NewString(p)
			}
			return types.NewArray(out), nil
		}}, nil
}

// buildStrToMap binds STR_TO_MAP(text[, listDelimiter[, keyValueDelimiter]]):
// text split into entries at listDelimiter (default ','), each split into
// key and value at the first keyValueDelimiter (default '='); an entry
// without one maps its key to NULL. The delimiters are regular
// expressions, as in Flink (Go's RE2 syntax).
func buildStrToMap(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindTyped(x, name, isStringType, wantString)
	if err != nil {
		return nil, err
	}
	t := types.MapType(types.TypeString, types.TypeString)
	c := &call{name: name, args: args, typ: strictType(t, args...), strict: true}
	c.fn = func(vs []types.Value) (types.Value, error) {
		list, kv := ",", "="
		if len(vs) > 1 {
			list = vs[1].Str()
		}
		if len(vs) > 2 {
			kv = vs[2].Str()
		}
		lre, err := regexp.Compile(list)
		if err != nil {
			return types.NullValue, fmt.Errorf("invalid list delimiter %q: %v", list, err)
		}
		kre, err := regexp.Compile(kv)
		if err != nil {
			return types.NullValue, fmt.Errorf("invalid key-value delimiter %q: %v", kv, err)
		}
		var entries []types.Value
		for _, e := range lre.Split(vs[0].Str(), -1) {
			p := kre.Split(e, 2)
			v := types.NullValue
			if len(p) == 2 {
				v = types.NewString(p[1])
			}
			entries = append(entries, types.NewString(p[0]), v)
		}
		return types.NewMap(dedupMapEntries(entries)), nil
	}
	return c, nil
}

// buildArraySearch binds ARRAY_CONTAINS(array, value), whether the array
// holds value (a NULL value finds a NULL element), and
// ARRAY_POSITION(array, value), the 1-based position of its first
// occurrence or 0. Both are NULL for a NULL array.
func buildArraySearch(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argArray)
	if err != nil {
		return nil, err
	}
	at := args[0].Type()
	needle, err := ImplicitCast(args[1], at.Elem().Nullable())
	if err != nil {
		return nil, b.errf(x.Args[1], "%s: %v", name, err)
	}
	args[1] = needle
	rt := types.TypeBoolean
	if name == "ARRAY_POSITION" {
		rt = types.TypeInt
	}
	rt.NotNull = at.NotNull
	return &call{name: name, args: args, typ: rt,
		fn: func(vs []types.Value) (types.Value, error) {
			if vs[0].IsNull() {
				return types.NullValue, nil
			}
			for i, e := range vs[0].Elems() {
				if e.IsNull() == vs[1].IsNull() && types.Compare(e, vs[1]) == 0 {
					if name == "ARRAY_POSITION" {
						return types.NewInt(int64(i + 1)), nil
					}
					return types.NewBool(true), nil
				}
			}
			if name == "ARRAY_POSITION" {
				return types.NewInt(0), nil
			}
			return types.NewBool(false), nil
		}}, nil
}

// buildArrayJoin binds ARRAY_JOIN(array, delimiter[, nullReplacement]):
// the string elements joined by delimiter, NULL elements skipped or
// replaced.
func buildArrayJoin(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argStringArray, argString, argString)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
		fn: func(vs []types.Value) (types.Value, error) {
			var parts []string
			for _, e := range vs[0].Elems() {
				switch {
				case !e.IsNull():
					parts = append(parts, e.Str())
				case len(vs) > 2:
					parts = append(parts, vs[2].Str())
				}
			}
			return types.NewString(strings.Join(parts, vs[1].Str())), nil
		}}, nil
}

// buildArrayUnary binds ARRAY_REVERSE(array) and ARRAY_DISTINCT(array)
// (the first occurrence of each element, NULL included, in order).
func buildArrayUnary(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argArray)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: args[0].Type(), strict: true,
		f1: func(a types.Value) (types.Value, error) {
			es := a.Elems()
			out := make([]types.Value, 0, len(es))
			if name == "ARRAY_REVERSE" {
				for i := len(es) - 1; i >= 0; i-- {
					out = append(out, es[i])
				}
				return types.NewArray(out), nil
			}
			for _, e := range es {
				dup := false
				for _, o := range out {
					if types.Equal(o, e) {
						dup = true
						break
					}
				}
				if !dup {
					out = append(out, e)
				}
			}
			return types.NewArray(out), nil
		}}, nil
}

// buildMapPart binds MAP_KEYS(map) and MAP_VALUES(map), as arrays in the
// map's order.
func buildMapPart(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argMap)
	if err != nil {
		return nil, err
	}
	mt := args[0].Type()
	off, et := 0, mt.Elem()
	if name == "MAP_VALUES" {
		off, et = 1, mt.MapValue()
	}
	t := types.ArrayType(et)
	t.NotNull = mt.NotNull
	return &call{name: name, args: args, typ: t, strict: true,
		f1: func(m types.Value) (types.Value, error) {
			es := m.Elems()
			out := make([]types.Value, 0, len(es)/2)
			for i := off; i < len(es); i += 2 {
				out = append(out, es[i])
			}
			return types.NewArray(out), nil
		}}, nil
}
