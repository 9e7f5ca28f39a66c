package expr

import (
	"testing"
)

func BenchmarkOneRow(b *testing.B) {
	rows := benchRows()[:4]
	for _, sql := range []string{"a > 10 AND b < 100", "a * 2 + b", "a IN (1, 2, 3, 5, 8, 13)"} {
		e := benchBind(b, sql)
		b.Run(sql, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				e.Eval(rows[i&3])
			}
		})
	}
}
