package expr

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// ROW, ARRAY and MAP values: constructors, field access, indexing and the
// collection functions. The pre-lexer (package parser) writes Flink's
// syntax as calls TiDB parses:
//
//	ROW(a, b)        __row(a, b)
//	ARRAY[a, b]      __array(a, b)
//	MAP[k, v, ...]   __map(k, v, ...)
//	x[i]             __item(x, i)
//	(x).f            __field(x, 'f')
//
// and r.f, t.r.f (field access) reach the binder as column names whose
// qualifier is a ROW column (see binder.fieldAccess).
const (
	FuncRow   = "__row"
	FuncArray = "__array"
	FuncMap   = "__map"
	FuncItem  = "__item"
	FuncField = "__field"
)

func registerCompositeFuncs(r map[string]funcDef) {
	r[FuncRow] = funcDef{1, -1, buildRowCtor}
	r[FuncArray] = funcDef{1, -1, buildArrayCtor}
	r[FuncMap] = funcDef{2, -1, buildMapCtor}
	r[FuncItem] = funcDef{2, 2, buildItem}
	r[FuncField] = funcDef{2, 2, buildFieldAccess}
	r["cardinality"] = funcDef{1, 1, buildCardinality}
	r["element"] = funcDef{1, 1, buildElement}
}

// compositeCtor builds a ROW, ARRAY or MAP from its argument values.
type compositeCtor struct {
	args []Expr
	typ  types.Type
	name string // ROW, ARRAY or MAP, for String
}

func (c *compositeCtor) Type() types.Type { return c.typ }

func (c *compositeCtor) Eval(row types.Row) (types.Value, error) {
	vals := make([]types.Value, len(c.args))
	for i, a := range c.args {
		v, err := a.Eval(row)
		if err != nil {
			return types.NullValue, err
		}
		vals[i] = v
	}
	switch c.typ.ID {
	case types.RowT:
		return types.NewRow(vals), nil
	case types.Array:
		return types.NewArray(vals), nil
	}
	return types.NewMap(dedupMapEntries(vals)), nil
}

// dedupMapEntries keeps the last value of each key, in the order the keys
// first appear, as Flink's MAP[...] does.
func dedupMapEntries(vals []types.Value) []types.Value {
	out := vals[:0:0]
	for i := 0; i+1 < len(vals); i += 2 {
		dup := false
		for j := 0; j < len(out); j += 2 {
			if types.Equal(out[j], vals[i]) {
				out[j+1] = vals[i+1]
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, vals[i], vals[i+1])
		}
	}
	return out
}

func (c *compositeCtor) String() string {
	parts := make([]string, len(c.args))
	for i, a := range c.args {
		parts[i] = a.String()
	}
	if c.typ.ID == types.RowT {
		return "ROW(" + strings.Join(parts, ", ") + ")"
	}
	return c.name + "[" + strings.Join(parts, ", ") + "]"
}

func (c *compositeCtor) children() []Expr { return c.args }
func (c *compositeCtor) withChildren(k []Expr) Expr {
	return &compositeCtor{args: k, typ: c.typ, name: c.name}
}

func buildRowCtor(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	fields := make([]types.Field, len(args))
	for i, a := range args {
		// Flink names the fields of ROW(...) EXPR$0, EXPR$1, ...
		fields[i] = types.Field{Name: fmt.Sprintf("EXPR$%d", i), Type: a.Type()}
	}
	t := types.RowType(fields)
	t.NotNull = true
	return &compositeCtor{args: args, typ: t, name: "ROW"}, nil
}

func buildArrayCtor(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	out, et, err := unifyElems("ARRAY", args)
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	t := types.ArrayType(et)
	t.NotNull = true
	return &compositeCtor{args: out, typ: t, name: "ARRAY"}, nil
}

func buildMapCtor(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	if len(x.Args)%2 != 0 {
		return nil, b.errf(x, "MAP[...] needs key, value pairs, got %d arguments", len(x.Args))
	}
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	var keys, vals []Expr
	for i := 0; i < len(args); i += 2 {
		keys, vals = append(keys, args[i]), append(vals, args[i+1])
	}
	keys, kt, err := unifyElems("MAP keys", keys)
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	vals, vt, err := unifyElems("MAP values", vals)
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	out := make([]Expr, 0, len(args))
	for i := range keys {
		out = append(out, keys[i], vals[i])
	}
	t := types.MapType(kt, vt)
	t.NotNull = true
	return &compositeCtor{args: out, typ: t, name: "MAP"}, nil
}

// unifyElems converts elements to their common type, which is NOT NULL
// when every element is.
func unifyElems(what string, es []Expr) ([]Expr, types.Type, error) {
	out, t, err := unify(what, es)
	if err != nil {
		return nil, t, err
	}
	nn := true
	for _, e := range es {
		nn = nn && e.Type().NotNull
	}
	t.NotNull = nn
	return out, t, nil
}

// fieldAccess reads field idx of a ROW; NULL when the row is NULL.
type fieldAccess struct {
	e    Expr
	idx  int
	name string
	typ  types.Type
}

func (f *fieldAccess) Type() types.Type { return f.typ }

func (f *fieldAccess) Eval(row types.Row) (types.Value, error) {
	v, err := f.e.Eval(row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	es := v.Elems()
	if f.idx >= len(es) {
		return types.NullValue, evalErr(f, "internal error: ROW value has %d fields, field %d read", len(es), f.idx+1)
	}
	return es[f.idx], nil
}

func (f *fieldAccess) String() string   { return f.e.String() + "." + f.name }
func (f *fieldAccess) children() []Expr { return []Expr{f.e} }
func (f *fieldAccess) withChildren(k []Expr) Expr {
	return &fieldAccess{e: k[0], idx: f.idx, name: f.name, typ: f.typ}
}

// newFieldAccess reads field name of e, a ROW.
func newFieldAccess(e Expr, name string) (Expr, error) {
	t := e.Type()
	if t.ID != types.RowT {
		return nil, fmt.Errorf("cannot read field '%s' of %s: it is not a ROW", name, typeName(t))
	}
	i := t.FieldIndex(name)
	if i < 0 {
		return nil, fmt.Errorf("%s has no field '%s'", typeName(t), name)
	}
	ft := t.Fields[i].Type
	ft.NotNull = ft.NotNull && t.NotNull
	return &fieldAccess{e: e, idx: i, name: t.Fields[i].Name, typ: ft}, nil
}

// fieldAccess resolves a column name whose qualifier is not a table but
// a ROW column: r.f, t.r.f, r.f.g. ok is false when no reading applies,
// so that the caller reports the unknown column.
func (b *binder) fieldAccess(x *ast.ColumnNameExpr) (Expr, bool, error) {
	schema, tbl, name := x.Name.Schema.O, x.Name.Table.O, x.Name.Name.O
	if tbl == "" {
		return nil, false, nil
	}
	try := func(qual, col string, path ...string) (Expr, bool, error) {
		idx, ok := b.lookup(qual, col)
		if !ok {
			return nil, false, nil
		}
		c := b.s.Columns[idx]
		var e Expr = &colRef{idx: idx, name: c.Name, typ: c.Type}
		for _, f := range path {
			fe, err := newFieldAccess(e, f)
			if err != nil {
				return nil, true, b.errf(x, "%s", err)
			}
			e = fe
		}
		return e, true, nil
	}
	// t.r.f: table t, ROW column r, field f.
	if schema != "" {
		if e, ok, err := try(schema, tbl, name); ok {
			return e, ok, err
		}
		// r.f.g: ROW column r, field f, its field g.
		return try("", schema, tbl, name)
	}
	// r.f: ROW column r, field f.
	return try("", tbl, name)
}

// lookup finds the one column named col (qualified by qual if not empty):
// an exact match first, else a case-insensitive one.
func (b *binder) lookup(qual, col string) (int, bool) {
	find := func(eq func(a, b string) bool) []int {
		var m []int
		for i, c := range b.s.Columns {
			if eq(c.Name, col) && (qual == "" || eq(c.Table, qual)) {
				m = append(m, i)
			}
		}
		return m
	}
	m := find(func(a, b string) bool { return a == b })
	if len(m) == 0 {
		m = find(strings.EqualFold)
	}
	if len(m) != 1 {
		return 0, false
	}
	return m[0], true
}

// item is x[i]: the i-th element (from 1) of an ARRAY, NULL out of range;
// the value of key i in a MAP, NULL if absent.
type item struct {
	e, i Expr
	typ  types.Type
}

func (it *item) Type() types.Type { return it.typ }

func (it *item) Eval(row types.Row) (types.Value, error) {
	v, err := it.e.Eval(row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	k, err := it.i.Eval(row)
	if err != nil || k.IsNull() {
		return types.NullValue, err
	}
	es := v.Elems()
	if v.Kind() == types.KindArray {
		n := k.Int()
		if n < 1 || n > int64(len(es)) {
			return types.NullValue, nil
		}
		return es[n-1], nil
	}
	for j := 0; j+1 < len(es); j += 2 {
		if types.Compare(es[j], k) == 0 && !es[j].IsNull() {
			return es[j+1], nil
		}
	}
	return types.NullValue, nil
}

func (it *item) String() string   { return it.e.String() + "[" + it.i.String() + "]" }
func (it *item) children() []Expr { return []Expr{it.e, it.i} }
func (it *item) withChildren(k []Expr) Expr {
	return &item{e: k[0], i: k[1], typ: it.typ}
}

func buildItem(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	e, i := args[0], args[1]
	t := e.Type()
	switch t.ID {
	case types.Array:
		if !isIntegerType(i.Type()) {
			return nil, b.errf(x.Args[1], "an ARRAY index must be an INT, got %s", typeName(i.Type()))
		}
		return &item{e: e, i: i, typ: t.Elem().Nullable()}, nil
	case types.Map:
		k, err := ImplicitCast(i, t.Elem())
		if err != nil {
			return nil, b.errf(x.Args[1], "a key of %s: %v", typeName(t), err)
		}
		return &item{e: e, i: k, typ: t.MapValue().Nullable()}, nil
	}
	return nil, b.errf(x, "cannot index %s: [...] reads an ARRAY or a MAP", typeName(t))
}

// cardinality is CARDINALITY(array or map): its number of elements or entries.
type cardinality struct{ e Expr }

func (c *cardinality) Type() types.Type {
	return types.TypeInt.WithNotNull(c.e.Type().NotNull)
}

func (c *cardinality) Eval(row types.Row) (types.Value, error) {
	v, err := c.e.Eval(row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	n := len(v.Elems())
	if v.Kind() == types.KindMap {
		n /= 2
	}
	return types.NewInt(int64(n)), nil
}

func (c *cardinality) String() string             { return "CARDINALITY(" + c.e.String() + ")" }
func (c *cardinality) children() []Expr           { return []Expr{c.e} }
func (c *cardinality) withChildren(k []Expr) Expr { return &cardinality{e: k[0]} }

func buildCardinality(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	if t := args[0].Type(); t.ID == types.Multiset {
		// Flink's type check takes a MULTISET, but its code generator
		// refuses it ("Expect an array or a map."), so no Flink query
		// counts one.
		return nil, b.errf(x.Args[0], "CARDINALITY of %s is not supported: Flink takes only an ARRAY or a MAP", typeName(t))
	} else if t.ID != types.Array && t.ID != types.Map && t.ID != types.Null {
		return nil, b.argErr(x.Args[0], name, 0, 1, args[0], "ARRAY or MAP")
	}
	return &cardinality{e: args[0]}, nil
}

// element is ELEMENT(array): the only element of a one-element array,
// NULL for an empty one; more elements fail the job, as in Flink.
type element struct {
	e   Expr
	typ types.Type
}

func (el *element) Type() types.Type { return el.typ }

func (el *element) Eval(row types.Row) (types.Value, error) {
	v, err := el.e.Eval(row)
	if err != nil || v.IsNull() {
		return types.NullValue, err
	}
	switch es := v.Elems(); len(es) {
	case 0:
		return types.NullValue, nil
	case 1:
		return es[0], nil
	default:
		return types.NullValue, evalErr(el, "ELEMENT of an array of %d elements: it must have at most one", len(es))
	}
}

func (el *element) String() string   { return "ELEMENT(" + el.e.String() + ")" }
func (el *element) children() []Expr { return []Expr{el.e} }
func (el *element) withChildren(k []Expr) Expr {
	return &element{e: k[0], typ: el.typ}
}

func buildElement(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	if args[0].Type().ID != types.Array {
		return nil, b.argErr(x.Args[0], name, 0, 1, args[0], "ARRAY")
	}
	return &element{e: args[0], typ: args[0].Type().Elem().Nullable()}, nil
}

// castComposite converts a ROW, ARRAY or MAP value field by field (ROW
// fields by position, as Flink does).
func castComposite(v types.Value, from, to types.Type) (types.Value, error) {
	es := v.Elems()
	out := make([]types.Value, len(es))
	for i, e := range es {
		fi := i
		if to.ID != types.RowT {
			fi = 0
			if to.ID == types.Map || to.ID == types.Multiset {
				fi = i % 2
			}
		}
		c, err := castValue(e, from.Fields[fi].Type, to.Fields[fi].Type)
		if err != nil {
			return types.NullValue, err
		}
		out[i] = c
	}
	switch to.ID {
	case types.RowT:
		return types.NewRow(out), nil
	case types.Array:
		return types.NewArray(out), nil
	case types.Multiset:
		return mergedMultiset(out), nil
	}
	return types.NewMap(out), nil
}

// mergedMultiset builds a MULTISET from element, count entries whose
// elements a cast may have made equal (1.2 and 1.4 as INT): their
// counts are added.
func mergedMultiset(entries []types.Value) types.Value {
	var elems []types.Value
	var counts []int64
	at := map[string]int{}
	for j := 0; j+1 < len(entries); j += 2 {
		k := string(types.AppendValue(nil, entries[j]))
		if i, ok := at[k]; ok {
			counts[i] += entries[j+1].Int()
			continue
		}
		at[k] = len(elems)
		elems = append(elems, entries[j])
		counts = append(counts, entries[j+1].Int())
	}
	return types.NewMultiset(elems, counts)
}

// compositeShape reports whether from and to are both ROW (with as many
// fields), ARRAY or MAP, with each field pair accepted by ok.
func compositeShape(from, to types.Type, ok func(f, t types.Type) bool) bool {
	if from.ID != to.ID || !from.IsComposite() || len(from.Fields) != len(to.Fields) {
		return false
	}
	for i := range from.Fields {
		if !ok(from.Fields[i].Type, to.Fields[i].Type) {
			return false
		}
	}
	return true
}

// commonComposite is the common type of two ROW, ARRAY or MAP types of
// one shape: field by field, the names of a.
func commonComposite(a, b types.Type) (types.Type, bool) {
	if !compositeShape(a, b, func(f, t types.Type) bool { _, ok := CommonType(f, t); return ok }) {
		return types.Type{}, false
	}
	fields := make([]types.Field, len(a.Fields))
	for i := range a.Fields {
		ct, _ := CommonType(a.Fields[i].Type, b.Fields[i].Type)
		fields[i] = types.Field{Name: a.Fields[i].Name, Type: ct}
	}
	return types.Type{ID: a.ID, Fields: fields}, true
}

func buildFieldAccess(b *binder, x *ast.FuncCallExpr, _ string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	name, ok := IsLiteral(args[1])
	if !ok || name.Kind() != types.KindString {
		return nil, b.errf(x, "internal error: field access without a field name")
	}
	e, err := newFieldAccess(args[0], name.Str())
	if err != nil {
		return nil, b.errf(x, "%s", err)
	}
	return e, nil
}
