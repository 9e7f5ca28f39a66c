package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/postgres/pgtest"
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

// BenchmarkCDC measures postgres-cdc on the private PostgreSQL, as
// BenchmarkCDC of connectors/mysql does mysql-cdc: the snapshot of a
// 200,000-row table (rows/s, a new slot with an exported snapshot each
// time), and the slot read back from a position before 200,000 rows
// inserted in transactions of 1,000 (events/s). Each figure is the
// source alone, into a counter.
func BenchmarkCDC(b *testing.B) {
	s := pgtest.Shared(b)
	c := s.Conn(b)
	const n = 200000
	name := unique("bench")
	s.Exec(b, c, "CREATE TABLE "+name+" (id BIGINT PRIMARY KEY, name TEXT, amount NUMERIC(10,2), ts TIMESTAMP(3))",
		"ALTER TABLE "+name+" REPLICA IDENTITY FULL")
	var slots []string
	b.Cleanup(func() {
		for _, sl := range slots {
			_, _ = c.Exec(context.Background(), "SELECT pg_drop_replication_slot($1)", sl)
		}
		_, _ = c.Exec(context.Background(), "DROP PUBLICATION IF EXISTS pub_"+name)
		_, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+name)
	})
	insert := func(from int) {
		for i := from; i < from+n; i += 1000 {
			s.Exec(b, c, fmt.Sprintf("INSERT INTO %s SELECT k, 'n' || k, (k %% 1000) + 0.25, TIMESTAMP '2024-01-01 00:00:00' FROM generate_series(%d, %d) AS k",
				name, i, i+999))
		}
	}
	insert(0)
	// run reads want changes with a source on slot, restored from pos
	// unless nil; stop ends it early (for a slot to be created).
	run := func(slot, mode string, pos []byte, want int, stop <-chan struct{}) time.Duration {
		sc, err := cdcConnector{}.NewScan(cdcTable(s, name, slot, map[string]string{"scan.startup.mode": mode}), nil)
		if err != nil {
			b.Fatal(err)
		}
		src, _ := sc.Create(0, 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := src.Open(&dataflow.OpContext{Ctx: ctx}); err != nil {
			b.Fatal(err)
		}
		defer src.Close()
		if pos != nil {
			if err := src.RestorePosition(pos); err != nil {
				b.Fatal(err)
			}
		}
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		start := time.Now()
		if err := src.Run(ctx, &cdcCounter{n: want}); !errors.Is(err, errEnough) && !(stop != nil && errors.Is(err, context.Canceled)) {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	b.Run("snapshot", func(b *testing.B) {
		var d time.Duration
		for i := 0; i < b.N; i++ {
			slot := unique("bslot")
			slots = append(slots, slot)
			d += run(slot, "initial", nil, n, nil)
		}
		b.ReportMetric(float64(n*b.N)/d.Seconds(), "rows/s")
	})
	b.Run("stream", func(b *testing.B) {
		var d time.Duration
		for i := 0; i < b.N; i++ {
			// A latest-offset source creates the slot; its confirmed
			// position is the start of what is inserted next.
			slot := unique("bslot")
			slots = append(slots, slot)
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() { run(slot, "latest-offset", nil, 1, stop); close(done) }()
			var lsn []string
			for k := 0; len(lsn) == 0; k++ {
				if k == 600 {
					b.Fatal("no slot after 30 s")
				}
				time.Sleep(50 * time.Millisecond)
				lsn = pgtest.Rows(b, c, "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '"+slot+"' AND confirmed_flush_lsn IS NOT NULL")
			}
			close(stop)
			<-done
			insert(n * (i + 1))
			d += run(slot, "latest-offset", []byte(`{"lsn":"`+lsn[0]+`"}`), n, nil)
		}
		b.ReportMetric(float64(n*b.N)/d.Seconds(), "events/s")
	})
}
