package bench

import (
	"strconv"
	"strings"
	"testing"

	nexmarkq "github.com/streamsql/streamsql/examples/nexmark"
)

// BenchmarkNexmark runs each Nexmark query of examples/nexmark over b.N
// generated events (one op is one event, of any kind) at parallelism 1:
//
//	go test -run=NONE -bench=Nexmark/q5 -benchtime=1000000x ./bench
//
// `streamsql bench nexmark` measures the same with CPU time and peak RSS;
// BENCHMARKS.md records its figures.
func BenchmarkNexmark(b *testing.B) {
	for _, q := range nexmarkq.Queries() {
		b.Run(q, func(b *testing.B) {
			text, err := nexmarkq.Query(q)
			if err != nil {
				b.Fatal(err)
			}
			// b.N events over 10 s of event time, as in ddl.sql.
			n := max(b.N, 50)
			ddl, err := nexmarkq.Configure(int64(n), strconv.Itoa(max(n/10, 1)))
			if err != nil {
				b.Fatal(err)
			}
			if strings.Contains(text, "'path' = 'nexmark-q10'") {
				dir := b.TempDir()
				text = strings.ReplaceAll(text, "'path' = 'nexmark-q10'", "'path' = '"+dir+"'")
			}
			if strings.Contains(text, nexmarkq.SideInputPath) { // q13's side-input file
				p, err := nexmarkq.WriteSideInput(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				text = nexmarkq.WithSideInput(text, p)
			}
			b.ResetTimer()
			runScript(b, ddl+"\n"+text)
			b.StopTimer()
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
