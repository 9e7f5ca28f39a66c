package expr

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/streamsql/streamsql/types"
)

// Hash functions: the digest of a string's UTF-8 bytes as lower-case hex,
// as Flink's MD5, SHA1, SHA224, SHA256, SHA384, SHA512 and SHA2 return it.
// TYPEOF is here too, as the other function about a value rather than of it.

func registerHashFuncs(r map[string]funcDef) {
	for _, n := range []string{"md5", "sha1", "sha224", "sha256", "sha384", "sha512"} {
		r[n] = funcDef{1, 1, buildHash}
	}
	r["sha2"] = funcDef{2, 2, buildHash}
	r["typeof"] = funcDef{1, 2, buildTypeOf}
}

var hashes = map[string]func() hash.Hash{
	"MD5": md5.New, "SHA1": sha1.New, "SHA224": sha256.New224, "SHA256": sha256.New,
	"SHA384": sha512.New384, "SHA512": sha512.New,
}

// sha2Hash returns the SHA-2 function of a bit length.
func sha2Hash(bits int64) (func() hash.Hash, bool) {
	h, ok := map[int64]func() hash.Hash{224: sha256.New224, 256: sha256.New, 384: sha512.New384, 512: sha512.New}[bits]
	return h, ok
}

func hexDigest(h func() hash.Hash, s string) types.Value {
	d := h()
	d.Write([]byte(s))
	return types.NewString(hex.EncodeToString(d.Sum(nil)))
}

func buildHash(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgsAs(x, name, argString, argInteger) // the bit length is SHA2's
	if err != nil {
		return nil, err
	}
	if name != "SHA2" {
		h := hashes[name]
		return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
			f1: func(v types.Value) (types.Value, error) { return hexDigest(h, v.Str()), nil }}, nil
	}
	if n, ok := constInt(args[1]); ok {
		if _, ok := sha2Hash(n); !ok {
			return nil, b.errf(x.Args[1], "SHA2 expects a bit length of 224, 256, 384 or 512, got %d", n)
		}
	}
	return &call{name: name, args: args, typ: strictType(types.TypeString, args...), strict: true,
		f2: func(v, n types.Value) (types.Value, error) {
			h, ok := sha2Hash(n.Int())
			if !ok {
				return types.NullValue, fmt.Errorf("SHA2 expects a bit length of 224, 256, 384 or 512, got %d", n.Int())
			}
			return hexDigest(h, v.Str()), nil
		}}, nil
}

// buildTypeOf binds TYPEOF(x[, force_serializable]): x's type as streamsql
// writes it, e.g. 'INT NOT NULL'. The second argument must be a BOOLEAN
// literal; the name is the same either way.
func buildTypeOf(b *binder, x *ast.FuncCallExpr, name string) (Expr, error) {
	args, err := b.bindArgs(x)
	if err != nil {
		return nil, err
	}
	if len(args) == 2 {
		if v, ok := IsLiteral(args[1]); !ok || v.Kind() != types.KindBool {
			return nil, b.argErr(x.Args[1], name, 1, 2, args[1], "a BOOLEAN literal")
		}
	}
	return NewLiteral(types.NewString(args[0].Type().String()), types.TypeString.WithNotNull(true)), nil
}
