package expr

import (
	"fmt"
	"sort"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// The rest of Flink's ARRAY_* and MAP_* functions (Flink 1.19/1.20),
// with the NULL rules of Flink's function reference: a NULL array or map
// argument makes the result NULL, elements compare with NULL equal to
// NULL (as ARRAY_DISTINCT's), and the order of the first array is kept.

func registerCollectionFuncs2(r map[string]funcDef) {
	r["array_append"] = funcDef{2, 2, buildArrayElemOp}
	r["array_prepend"] = funcDef{2, 2, buildArrayElemOp}
	r["array_remove"] = funcDef{2, 2, buildArrayElemOp}
	r["array_slice"] = funcDef{2, 3, buildArraySlice}
	r["array_sort"] = funcDef{1, 3, buildArraySort}
	r["array_concat"] = funcDef{1, -1, buildArraySetOp}
	r["array_union"] = funcDef{2, 2, buildArraySetOp}
	r["array_except"] = funcDef{2, 2, buildArraySetOp}
	r["array_intersect"] = funcDef{2, 2, buildArraySetOp}
	r["array_max"] = funcDef{1, 1, buildArrayExtreme}
	r["array_min"] = funcDef{1, 1, buildArrayExtreme}
	r["map_entries"] = funcDef{1, 1, buildMapEntries}
	r["map_from_arrays"] = funcDef{2, 2, buildMapFromArrays}
	r["map_union"] = funcDef{1, -1, buildMapUnion}
}

// containsValue reports whether vs holds v (NULL finds NULL).
func containsValue(vs []types.Value, v types.Value) bool {
	for _, o := range vs {
		if types.Equal(o, v) {
			return true
		}
	}
	return false
}

// buildArrayElemOp binds ARRAY_APPEND(array, element) and
// ARRAY_PREPEND(array, element), the array with the element (NULL too)
// added at its end or start, and ARRAY_REMOVE(array, element), the array
// without every element equal to it (a NULL element removes the NULLs).
// A NULL array is NULL.
func buildArrayElemOp(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argArrayOrNull)
	if err != nil {
		return nil, err
	}
	at := args[0].Type()
	if at.ID == types.Null {
		at = types.ArrayType(args[1].Type().Nullable())
	}
	et := at.Elem()
	if name != "ARRAY_REMOVE" {
		ct, ok := CommonType(et, args[1].Type())
		if !ok {
			return nil, b.errf(x.Args[1], "%s: element of type %s does not fit an ARRAY of %s", name, args[1].Type(), et)
		}
		et = ct
		at = types.ArrayType(et).WithNotNull(at.NotNull)
		if args[0], err = ImplicitCast(args[0], at); err != nil {
			return nil, b.errf(x.Args[0], "%s: %v", name, err)
		}
	}
	if args[1], err = ImplicitCast(args[1], et.Nullable()); err != nil {
		return nil, b.errf(x.Args[1], "%s: %v", name, err)
	}
	return &call{name: name, args: args, typ: at,
		fn: func(vs []types.Value) (types.Value, error) {
			if vs[0].IsNull() {
				return types.NullValue, nil
			}
			es := vs[0].Elems()
			out := make([]types.Value, 0, len(es)+1)
			switch name {
			case "ARRAY_APPEND":
				out = append(append(out, es...), vs[1])
			case "ARRAY_PREPEND":
				out = append(append(out, vs[1]), es...)
			default:
				for _, e := range es {
					if !types.Equal(e, vs[1]) {
						out = append(out, e)
					}
				}
			}
			return types.NewArray(out), nil
		}}, nil
}

// buildArraySlice binds ARRAY_SLICE(array, start[, end]): the elements
// from position start to end, both included, as Flink's: positions from
// 1, 0 read as 1, negative ones count from the end (-1 the last); end
// defaults to the length; an empty array when start is after end or both
// are outside the array; NULL if an argument is.
func buildArraySlice(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argArrayOrNull, argInteger, argInteger)
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(args[0].Type(), args...), strict: true,
		fn: func(vs []types.Value) (types.Value, error) {
			es := vs[0].Elems()
			n := int64(len(es))
			pos := func(p int64) int64 {
				switch {
				case p == 0:
					return 1
				case p < 0:
					return n + p + 1
				}
				return p
			}
			start, end := pos(vs[1].Int()), n
			if len(vs) > 2 {
				end = pos(vs[2].Int())
			}
			if start > end || (start > n && end > n) || (start < 1 && end < 1) {
				return types.NewArray(nil), nil
			}
			start, end = max(start, 1), min(end, n)
			return types.NewArray(append([]types.Value(nil), es[start-1:end]...)), nil
		}}, nil
}

// buildArraySort binds ARRAY_SORT(array[, ascending[, nullsFirst]]):
// the elements sorted, ascending by default; NULLs first when ascending
// and last when descending unless nullsFirst says; NULL if an argument
// is.
func buildArraySort(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argArrayOrNull, argBoolean, argBoolean)
	if err != nil {
		return nil, err
	}
	if et := args[0].Type().Elem(); et.IsComposite() {
		return nil, b.errf(x.Args[0], "%s: elements of type %s cannot be sorted", name, et)
	}
	return &call{name: name, args: args, typ: strictType(args[0].Type(), args...), strict: true,
		fn: func(vs []types.Value) (types.Value, error) {
			asc := len(vs) < 2 || vs[1].Bool()
			nullsFirst := asc
			if len(vs) > 2 {
				nullsFirst = vs[2].Bool()
			}
			out := append([]types.Value(nil), vs[0].Elems()...)
			sort.SliceStable(out, func(i, j int) bool {
				a, c := out[i], out[j]
				if an, cn := a.IsNull(), c.IsNull(); an || cn {
					return an != cn && an == nullsFirst
				}
				if asc {
					return types.Compare(a, c) < 0
				}
				return types.Compare(a, c) > 0
			})
			return types.NewArray(out), nil
		}}, nil
}

// bindCommonArgs binds the arguments of a function over several arrays
// or maps (ARRAY_CONCAT, MAP_UNION, ...): each must be of type want (a
// NULL literal too), they must have a common type, which must not be the
// NULL type (the error names what it needs as oneOf, "an ARRAY"), and
// each is cast to it (nullable) and returned with it. Checks run argument
// by argument, so the first that does not fit is the one reported.
func (b *binder) bindCommonArgs(x *ast.FuncCallExpr, name string, want argType, oneOf string) ([]Expr, types.Type, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, types.Type{}, err
	}
	t := types.TypeNull
	for i := range args {
		if err := b.expect(x, name, i, args[i], want.ok, want.want); err != nil {
			return nil, types.Type{}, err
		}
		ct, ok := CommonType(t, args[i].Type())
		if !ok {
			return nil, types.Type{}, b.errf(x.Args[i], "%s: %s and %s have no common type", name, t, args[i].Type())
		}
		t = ct
	}
	if t.ID == types.Null {
		return nil, types.Type{}, b.errf(x, "%s needs %s argument of known type", name, oneOf)
	}
	for i := range args {
		if args[i], err = ImplicitCast(args[i], t.Nullable()); err != nil {
			return nil, types.Type{}, b.errf(x.Args[i], "%s: %v", name, err)
		}
	}
	return args, t, nil
}

// buildArraySetOp binds ARRAY_CONCAT(array, ...), the arrays one after
// the other, and, of two arrays, ARRAY_UNION (the distinct elements of
// both), ARRAY_EXCEPT (the distinct elements of the first not in the
// second) and ARRAY_INTERSECT (the distinct elements of the first also in
// the second), each in the first array's order. NULL if an array is.
func buildArraySetOp(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, at, err := b.bindCommonArgs(x, name, argArrayOrNull, "an ARRAY")
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(at, args...), strict: true,
		fn: func(vs []types.Value) (types.Value, error) {
			var out []types.Value
			switch name {
			case "ARRAY_CONCAT":
				for _, v := range vs {
					out = append(out, v.Elems()...)
				}
			case "ARRAY_UNION":
				for _, v := range vs {
					for _, e := range v.Elems() {
						if !containsValue(out, e) {
							out = append(out, e)
						}
					}
				}
			default:
				other := vs[1].Elems()
				for _, e := range vs[0].Elems() {
					if containsValue(other, e) == (name == "ARRAY_INTERSECT") && !containsValue(out, e) {
						out = append(out, e)
					}
				}
			}
			return types.NewArray(out), nil
		}}, nil
}

// buildArrayExtreme binds ARRAY_MAX(array) and ARRAY_MIN(array): the
// largest or smallest non-NULL element; NULL for a NULL or empty array
// or one of NULLs only.
func buildArrayExtreme(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argArray)
	if err != nil {
		return nil, err
	}
	et := args[0].Type().Elem()
	if et.IsComposite() {
		return nil, b.errf(x.Args[0], "%s: elements of type %s cannot be compared", name, et)
	}
	sign := 1
	if name == "ARRAY_MIN" {
		sign = -1
	}
	return &call{name: name, args: args, typ: et.Nullable(), strict: true,
		f1: func(a types.Value) (types.Value, error) {
			best := types.NullValue
			for _, e := range a.Elems() {
				if !e.IsNull() && (best.IsNull() || sign*types.Compare(e, best) > 0) {
					best = e
				}
			}
			return best, nil
		}}, nil
}

// buildMapEntries binds MAP_ENTRIES(map): its entries as an ARRAY of
// ROW<key, value>, in the map's order; NULL for a NULL map.
func buildMapEntries(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argMap)
	if err != nil {
		return nil, err
	}
	mt := args[0].Type()
	rt := types.RowType([]types.Field{{Name: "key", Type: mt.Elem()}, {Name: "value", Type: mt.MapValue()}})
	return &call{name: name, args: args, typ: types.ArrayType(rt.WithNotNull(true)).WithNotNull(mt.NotNull), strict: true,
		f1: func(m types.Value) (types.Value, error) {
			es := m.Elems()
			out := make([]types.Value, 0, len(es)/2)
			for i := 0; i+1 < len(es); i += 2 {
				out = append(out, types.NewRow([]types.Value{es[i], es[i+1]}))
			}
			return types.NewArray(out), nil
		}}, nil
}

// buildMapFromArrays binds MAP_FROM_ARRAYS(keys, values): the map of
// keys[i] to values[i]; a repeated key keeps its last value (as the MAP
// constructor); arrays of different lengths fail the job, as in Flink;
// NULL if either array is.
func buildMapFromArrays(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argArray, argArray)
	if err != nil {
		return nil, err
	}
	t := types.MapType(args[0].Type().Elem(), args[1].Type().Elem())
	return &call{name: name, args: args, typ: strictType(t, args...), strict: true,
		f2: func(k, v types.Value) (types.Value, error) {
			ks, vs := k.Elems(), v.Elems()
			if len(ks) != len(vs) {
				return types.NullValue, fmt.Errorf("the key and value arrays have different lengths (%d and %d)", len(ks), len(vs))
			}
			entries := make([]types.Value, 0, 2*len(ks))
			for i := range ks {
				entries = append(entries, ks[i], vs[i])
			}
			return types.NewMap(dedupMapEntries(entries)), nil
		}}, nil
}

// buildMapUnion binds MAP_UNION(map, ...): the maps merged, a later
// map's value winning for a key in several; NULL if a map is.
func buildMapUnion(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, mt, err := b.bindCommonArgs(x, name, argMapOrNull, "a MAP")
	if err != nil {
		return nil, err
	}
	return &call{name: name, args: args, typ: strictType(mt, args...), strict: true,
		fn: func(vs []types.Value) (types.Value, error) {
			var entries []types.Value
			for _, v := range vs {
				entries = append(entries, v.Elems()...)
			}
			return types.NewMap(dedupMapEntries(entries)), nil
		}}, nil
}
