package mysql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/mysql/mysqltest"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
)

// cdcCounter is a SourceOutput that counts changes and stops the source
// once it has n.
type cdcCounter struct {
	dataflow.NoControl
	n, got int
}

var errEnough = errors.New("enough")

func (c *cdcCounter) Emit(ch *dyntable.Chunk) error {
	c.got += ch.Len()
	if c.got >= c.n {
		return errEnough
	}
	return nil
}

func (c *cdcCounter) EmitWatermark(int64) error { return nil }

// BenchmarkCDC measures mysql-cdc on the private MariaDB: the snapshot
// of a 200,000-row table (rows/s; chunked, in chunks of 8,096 rows, and
// in one transaction), and the binlog read back from a
// position before 200,000 rows inserted in transactions of 1,000
// (events/s). Each figure is the source alone, into a counter.
func BenchmarkCDC(b *testing.B) {
	s := mysqltest.SharedBinlog(b)
	db := OpenForTest(b, s.DSN())
	const n = 200000
	name := TableForTest(b, db, "bench", "id BIGINT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), ts DATETIME(3)")
	tbl := cdcTable(s.Port, name, nil)
	insert := func(from int) {
		for i := from; i < from+n; i += 1000 {
			var vals []string
			for k := i; k < i+1000; k++ {
				vals = append(vals, fmt.Sprintf("(%d, 'n%d', %d.25, '2024-01-01 00:00:00.000')", k, k, k%1000))
			}
			if _, err := db.Exec("INSERT INTO " + name + " VALUES " + strings.Join(vals, ",")); err != nil {
				b.Fatal(err)
			}
		}
	}
	insert(0)
	run := func(pos []byte, want int) time.Duration {
		sc, err := cdcConnector{}.NewScan(tbl, nil)
		if err != nil {
			b.Fatal(err)
		}
		src, _ := sc.Create(0, 1)
		ctx := context.Background()
		if err := src.Open(&dataflow.OpContext{Ctx: ctx}); err != nil {
			b.Fatal(err)
		}
		defer src.Close()
		if pos != nil {
			if err := src.RestorePosition(pos); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		if err := src.Run(ctx, &cdcCounter{n: want}); !errors.Is(err, errEnough) {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	for _, chunked := range []string{"true", "false"} {
		b.Run("snapshot/chunked="+chunked, func(b *testing.B) {
			tbl.Options["scan.incremental.snapshot.enabled"] = chunked
			defer delete(tbl.Options, "scan.incremental.snapshot.enabled")
			var d time.Duration
			for i := 0; i < b.N; i++ {
				d += run(nil, n)
			}
			b.ReportMetric(float64(n*b.N)/d.Seconds(), "rows/s")
		})
	}
	b.Run("binlog", func(b *testing.B) {
		var d time.Duration
		for i := 0; i < b.N; i++ {
			src := &cdcSource{cfg: &cdcConfig{config: &config{}}}
			p, err := src.masterStatus(context.Background(), db)
			if err != nil {
				b.Fatal(err)
			}
			pos, _ := json.Marshal(p)
			insert(n * (i + 1))
			d += run(pos, n)
		}
		b.ReportMetric(float64(n*b.N)/d.Seconds(), "events/s")
	})
}
