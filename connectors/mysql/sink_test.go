package mysql

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/internal/changebuf"
	"github.com/streamsql/streamsql/connectors/internal/dbconn"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

func openUpsert(t *testing.T, dsn, name string, opts map[string]string) *changebuf.Operator {
	t.Helper()
	tbl, cfg := kvTable(t, dsn, name, opts)
	op := newUpsertOp(cfg, tbl, shapeOf(cfg, tbl))
	if err := op.Open(&dataflow.OpContext{Ctx: context.Background()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Close() })
	return op
}

// The upsert sink: +I/+U upsert, -D deletes, -U is ignored; buffered
// changes reach MySQL at the barrier.
func TestUpsertSinkFlushesOnBarrier(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "ups", "k BIGINT PRIMARY KEY, v BIGINT")
	op := openUpsert(t, dsn, name, map[string]string{"sink.buffer-flush.interval": "0"})
	q := "SELECT k, v FROM " + name
	if err := op.ProcessChunk(0, chunk(kv(dyntable.Insert, 1, 10), kv(dyntable.Insert, 2, 20), kv(dyntable.Insert, 3, 30)), nil); err != nil {
		t.Fatal(err)
	}
	eqRows(t, "buffered", RowsForTest(t, db, q))
	if err := op.SnapshotState(dataflow.Barrier{CheckpointID: 1}); err != nil {
		t.Fatal(err)
	}
	eqRows(t, "after barrier 1", RowsForTest(t, db, q), "1|10", "2|20", "3|30")
	if err := op.ProcessChunk(0, chunk(kv(dyntable.UpdateBefore, 1, 10), kv(dyntable.UpdateAfter, 1, 11),
		kv(dyntable.Delete, 2, 20), kv(dyntable.Insert, 4, 40), kv(dyntable.Delete, 4, 40), kv(dyntable.Delete, 9, 90)), nil); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(nil); err != nil {
		t.Fatal(err)
	}
	// 1 updated, 2 deleted, 4 inserted then deleted, 9 never existed.
	eqRows(t, "after finish", RowsForTest(t, db, q), "1|11", "3|30")
}

// Flushes by size (max-rows) and by interval, without a barrier.
func TestUpsertSinkFlushesBySizeAndInterval(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	name := TableForTest(t, db, "upsz", "k BIGINT PRIMARY KEY, v BIGINT")
	op := openUpsert(t, dsn, name, map[string]string{"sink.buffer-flush.max-rows": "3", "sink.buffer-flush.interval": "100 ms"})
	q := "SELECT k, v FROM " + name
	// Three changes of two keys compact to two: below max-rows.
	if err := op.ProcessChunk(0, chunk(kv(dyntable.Insert, 1, 1), kv(dyntable.UpdateAfter, 1, 2), kv(dyntable.Insert, 2, 2)), nil); err != nil {
		t.Fatal(err)
	}
	if err := op.ProcessChunk(0, chunk(kv(dyntable.Insert, 3, 3)), nil); err != nil { // the third key: flush
		t.Fatal(err)
	}
	eqRows(t, "after max-rows", RowsForTest(t, db, q), "1|2", "2|2", "3|3")
	if err := op.ProcessChunk(0, chunk(kv(dyntable.Insert, 4, 4)), nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := RowsForTest(t, db, q)
		if len(got) == 4 {
			eqRows(t, "after the interval", got, "1|2", "2|2", "3|3", "4|4")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the interval flush did not happen: %v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Every column is checked by name and type, and the primary key; the
// error names the column.
func TestSchemaCheckNamesTheColumn(t *testing.T) {
	dsn := DSNForTest(t)
	db := OpenForTest(t, dsn)
	ctx := context.Background()
	cases := []struct {
		mysqlCols string
		want      string
	}{
		{"k BIGINT PRIMARY KEY, v BIGINT", ""},
		{"k BIGINT PRIMARY KEY, v BIGINT, extra INT", ""}, // extra MySQL columns are fine
		{"k BIGINT PRIMARY KEY, w BIGINT", "column 'v' does not exist"},
		{"k BIGINT PRIMARY KEY, v VARCHAR(10)", "column 'v' has MySQL type varchar(10)"},
		{"k BIGINT PRIMARY KEY, v INT", "column 'v' has MySQL type int(11)"},
		{"k BIGINT, v BIGINT, PRIMARY KEY (k, v)", "primary key (k) differs"},
		{"k BIGINT, v BIGINT", "primary key (k) differs"},
	}
	for _, c := range cases {
		name := TableForTest(t, db, "sch", c.mysqlCols)
		tbl, cfg := kvTable(t, dsn, name, nil)
		p, err := newPool(cfg)
		if err != nil {
			t.Fatal(err)
		}
		err = checkSchema(ctx, p.db, cfg, tbl)
		p.close()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.mysqlCols, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got error %v, want one containing %q", c.mysqlCols, err, c.want)
		}
	}
	tbl, cfg := kvTable(t, dsn, "no_such_table_"+UniqueForTest("x"), nil)
	p, _ := newPool(cfg)
	defer p.close()
	if err := checkSchema(ctx, p.db, cfg, tbl); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing table: %v", err)
	}
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct{ in, addr, db, user, pass string }{
		{"jdbc:mysql://db.example:3307/shop", "db.example:3307", "shop", "", ""},
		{"jdbc:mysql://localhost/shop?useSSL=false&serverTimezone=UTC", "localhost:3306", "shop", "", ""},
		{"jdbc:mysql://localhost:3306/shop?user=app&password=pw1", "localhost:3306", "shop", "app", "pw1"},
		{"app:pw2@tcp(127.0.0.1:3306)/shop", "127.0.0.1:3306", "shop", "app", "pw2"},
	} {
		cfg, err := parseURL(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if cfg.Addr != c.addr || cfg.DBName != c.db || cfg.User != c.user || cfg.Passwd != c.pass {
			t.Errorf("%s: got %s %s %s %s", c.in, cfg.Addr, cfg.DBName, cfg.User, cfg.Passwd)
		}
	}
	for _, bad := range []string{"jdbc:postgresql://h/db", "jdbc:mysql://h:1/", "u:hunter2@tcp(h:1", "jdbc:mysql://h/db?bogus=1&password=hunter2"} {
		_, err := parseURL(bad)
		if err == nil {
			t.Errorf("%s: accepted", bad)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error shows the password: %v", bad, err)
		}
	}
}

func TestOptions(t *testing.T) {
	base := func(extra map[string]string, pk bool) *connectors.Table {
		t := &connectors.Table{Name: "t", Columns: []connectors.Column{{Name: "k", Type: types.TypeBigInt}},
			Options: map[string]string{"connector": "mysql", "url": "jdbc:mysql://h/db", "table-name": "t", "password": "hunter2"}}
		if pk {
			t.PrimaryKey = []int{0}
		}
		for k, v := range extra {
			t.Options[k] = v
		}
		return t
	}
	for _, c := range []struct {
		opts map[string]string
		pk   bool
		want dbconn.Semantic
		err  string
	}{
		{nil, true, dbconn.Upsert, ""},
		{nil, false, dbconn.AtLeastOnce, ""},
		{map[string]string{"sink.semantic": "exactly-once"}, false, dbconn.ExactlyOnce, ""},
		{map[string]string{"sink.semantic": "upsert"}, false, "", "needs a PRIMARY KEY"},
		{map[string]string{"sink.semantic": "twice"}, true, "", "must be 'exactly-once'"},
		{map[string]string{"sink.buffer-flush.max-rows": "0"}, true, "", "'sink.buffer-flush.max-rows' must be a positive integer"},
		{map[string]string{"sink.buffer-flush.interval": "soon"}, true, "", "sink.buffer-flush.interval"},
		{map[string]string{"passwd": "x"}, true, "", "unsupported option"},
	} {
		cfg, err := parseConfig(base(c.opts, c.pk))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: got %v, want error %q", c.opts, err, c.err)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the password: %v", err)
			}
			continue
		}
		if err != nil || cfg.semantic != c.want {
			t.Errorf("%v: got %v %v, want %s", c.opts, cfg, err, c.want)
			continue
		}
		if strings.Contains(cfg.String(), "hunter2") {
			t.Errorf("config string shows the password: %s", cfg)
		}
	}
	// A bare number of 'sink.buffer-flush.interval' is milliseconds, as
	// everywhere in Flink; this connector read it as seconds before.
	if cfg, err := parseConfig(base(map[string]string{"sink.buffer-flush.interval": "250"}, true)); err != nil || cfg.interval != 250*time.Millisecond {
		t.Errorf("interval '250' = %v, %v; want 250ms", cfg, err)
	}
	if cfg, err := parseConfig(base(map[string]string{"sink.buffer-flush.interval": "2 s"}, true)); err != nil || cfg.interval != 2*time.Second {
		t.Errorf("interval '2 s' = %v, %v; want 2s", cfg, err)
	}
	// The redaction net: a driver error quoting the password is cleaned
	// but keeps its identity for errors.Is.
	cfg, _ := parseConfig(base(nil, true))
	inner := errors.New("dial user:hunter2@tcp failed")
	err := cfg.redact(inner)
	if strings.Contains(err.Error(), "hunter2") || !errors.Is(err, inner) {
		t.Errorf("redact: %v", err)
	}
}
