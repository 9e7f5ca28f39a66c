package expr

import (
	"testing"

	"github.com/streamsql/streamsql/types"
)

func benchRows() []types.Row {
	rows := make([]types.Row, 1024)
	for i := range rows {
		rows[i] = types.Row{
			types.NewInt(int64(i % 50)),         // a
			types.NewInt(int64(i*7%200 - 50)),   // b
			types.NewInt(int64(i) * 1000000000), // big
			types.NewFloat(float64(i) / 3),      // d
			mustDec("12.34"),                    // price
			types.NewString("Hello"),            // s
			types.NewTimestamp(int64(i) * 1e9),  // ts
		}
	}
	return rows
}

var benchCols = testCols[:7]

func benchBind(b *testing.B, sql string) Expr {
	e, err := Bind(parseExpr(b, sql), &Scope{Columns: benchCols}, testErrf)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func BenchmarkEval(b *testing.B) {
	rows := benchRows()
	for _, c := range []struct{ name, sql string }{
		{"filter", "a > 10 AND b < 100"},
		{"project", "a * 2 + b"},
		{"bigint", "big + a * 3"},
		{"double", "d * 2.0e0 + a"},
		{"decimal", "price * 2"},
		{"between", "a BETWEEN 5 AND 20"},
		{"in", "a IN (1, 2, 3, 5, 8, 13)"},
		{"like", "s LIKE 'He%'"},
		{"timestamp", "ts - INTERVAL '5' SECOND"},
		{"floor_to", "__floor_to(ts, 'MINUTE')"},
		{"case", "CASE WHEN a > 25 THEN 'hi' ELSE 'lo' END"},
		{"concat", "CONCAT(s, '!')"},
	} {
		e := benchBind(b, c.sql)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for i := 0; b.Loop(); i++ {
				v, err := e.Eval(rows[i&1023])
				if err != nil {
					b.Fatal(err)
				}
				if !v.IsNull() {
					n++
				}
			}
			_ = n
		})
	}
}

// BenchmarkPipeline evaluates what one row costs in a filter + projection
// stage: WHERE a > 10 AND b < 100, SELECT a * 2 + b, s, ts.
func BenchmarkPipeline(b *testing.B) {
	rows := benchRows()
	filter := benchBind(b, "a > 10 AND b < 100")
	proj := []Expr{benchBind(b, "a * 2 + b"), benchBind(b, "s"), benchBind(b, "__floor_to(ts, 'MINUTE')")}
	out := make(types.Row, len(proj))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := rows[i&1023]
		ok, err := EvalBool(filter, r)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			continue
		}
		for j, p := range proj {
			if out[j], err = p.Eval(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}
