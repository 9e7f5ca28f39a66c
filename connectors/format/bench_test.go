package format

import (
	"runtime"
	"syscall"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/types"
)

var bidCols = []connectors.Column{
	{Name: "auction", Type: types.TypeBigInt}, {Name: "bidder", Type: types.TypeBigInt},
	{Name: "price", Type: types.TypeBigInt}, {Name: "channel", Type: types.TypeString},
	{Name: "url", Type: types.TypeString}, {Name: "dateTime", Type: types.TimestampType(3)},
	{Name: "extra", Type: types.TypeString},
}

var bidLine = []byte(`{"auction":1012,"bidder":2093,"price":5501302,"channel":"Baidu","url":"https://www.nexmark.com/Baidu/item.htm?query=1&channel_id=882012","dateTime":"2024-01-01 00:00:01.123","extra":"5ad1f95c1f3fa0a9"}`)

// threadCPU is the CPU time of the calling thread, in ns: on a shared
// machine the wall clock of a benchmark says little.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func benchDecode(b *testing.B, fields []int) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	d := NewJSONDecoder(bidCols, fields, JSONOptions{})
	row := make(types.Row, len(bidCols))
	b.SetBytes(int64(len(bidLine)))
	b.ReportAllocs()
	c0 := threadCPU()
	for b.Loop() {
		clear(row)
		if err := d.Decode(bidLine, row); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(threadCPU()-c0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkDecodeJSONBid decodes a Nexmark bid line into all 7 columns.
func BenchmarkDecodeJSONBid(b *testing.B) { benchDecode(b, nil) }

// BenchmarkDecodeJSONBidProjected decodes it into auction and price only,
// as SELECT auction, COUNT(*), MAX(price) ... GROUP BY auction reads it.
func BenchmarkDecodeJSONBidProjected(b *testing.B) { benchDecode(b, []int{0, 2}) }
