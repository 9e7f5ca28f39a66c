package filesystem_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

const benchRows = 200_000

var benchCols = []connectors.Column{
	{Name: "id", Type: types.TypeBigInt}, {Name: "name", Type: types.TypeString},
	{Name: "amount", Type: types.TypeDouble}, {Name: "ts", Type: types.TimestampType(3)},
}

func benchFile(b *testing.B, format string) string {
	b.Helper()
	var sb strings.Builder
	for i := range benchRows {
		ts := fmt.Sprintf("2024-01-01 %02d:%02d:%02d.%03d", i/3600%24, i/60%60, i%60, i%1000)
		if format == "json" {
			fmt.Fprintf(&sb, `{"id":%d,"name":"user-%d","amount":%d.%02d,"ts":"%s"}`+"\n", i, i, i%10000, i%100, ts)
		} else {
			fmt.Fprintf(&sb, "%d,user-%d,%d.%02d,%s\n", i, i, i%10000, i%100, ts)
		}
	}
	p := filepath.Join(b.TempDir(), "data."+format)
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

type counter struct {
	dataflow.NoControl
	rows int
}

func (c *counter) Emit(ch *dyntable.Chunk) error { c.rows += len(ch.Changes); return nil }
func (c *counter) EmitWatermark(int64) error     { return nil }

func benchRead(b *testing.B, format string) {
	p := benchFile(b, format)
	fi, _ := os.Stat(p)
	sc := newScan(b, benchCols, map[string]string{"path": p, "format": format})
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	total := 0
	for range b.N {
		src := open(b, sc, 0, 1)
		var c counter
		if err := src.Run(context.Background(), &c); err != nil {
			b.Fatal(err)
		}
		if c.rows != benchRows {
			b.Fatalf("read %d rows", c.rows)
		}
		total += c.rows
	}
	b.ReportMetric(float64(total)/time.Since(start).Seconds(), "rows/s")
}

// BenchmarkJSONRead reads 200,000 JSON lines of 4 columns (BIGINT,
// STRING, DOUBLE, TIMESTAMP(3)) through the source, on one goroutine.
func BenchmarkJSONRead(b *testing.B) { benchRead(b, "json") }

// BenchmarkCSVRead is BenchmarkJSONRead for CSV.
func BenchmarkCSVRead(b *testing.B) { benchRead(b, "csv") }

// BenchmarkJSONReadEncodingJSON is the yardstick: the same file decoded
// with encoding/json into a struct per line, nothing else.
func BenchmarkJSONReadEncodingJSON(b *testing.B) {
	p := benchFile(b, "json")
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	total := 0
	for range b.N {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var rec struct {
			ID     int64   `json:"id"`
			Name   string  `json:"name"`
			Amount float64 `json:"amount"`
			TS     string  `json:"ts"`
		}
		for sc.Scan() {
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				b.Fatal(err)
			}
			total++
		}
		f.Close()
	}
	b.ReportMetric(float64(total)/time.Since(start).Seconds(), "rows/s")
}
