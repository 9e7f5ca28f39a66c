package expr

import (
	"fmt"

	"github.com/streamsql/streamsql/types"
)

// hashBucket is the bucket key of Flink's split distinct aggregation,
// MOD(HASH_CODE(x), n): an INT NOT NULL in [0, n). The planner builds it
// (planner/build_agg_split.go); SQL cannot name it. The hash is
// types.Hash64 of the value's key encoding, which is stable across
// processes and versions: a restored job must put each value into the
// bucket whose state already counts it. Equal values (by the key
// encoding, so 1.5 and 1.50) share a bucket; NULL is in bucket 0.
type hashBucket struct {
	arg Expr
	n   uint64
}

// NewHashBucket returns MOD(HASH_CODE(arg), n); n must be above 0.
func NewHashBucket(arg Expr, n int) Expr {
	if n <= 0 {
		panic(fmt.Sprintf("expr: NewHashBucket with %d buckets", n))
	}
	return &hashBucket{arg: arg, n: uint64(n)}
}

func (h *hashBucket) Type() types.Type { return types.TypeInt.WithNotNull(true) }

func (h *hashBucket) Eval(row types.Row) (types.Value, error) {
	v, err := h.arg.Eval(row)
	if err != nil {
		return types.Value{}, err
	}
	if v.IsNull() {
		return types.NewInt(0), nil
	}
	return types.NewInt(int64(types.Hash64(types.Row{v}, nil) % h.n)), nil
}

func (h *hashBucket) String() string {
	return fmt.Sprintf("MOD(HASH_CODE(%s), %d)", h.arg, h.n)
}

func (h *hashBucket) children() []Expr { return []Expr{h.arg} }
func (h *hashBucket) withChildren(kids []Expr) Expr {
	return &hashBucket{arg: kids[0], n: h.n}
}
