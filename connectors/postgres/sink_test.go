package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/mysql/mysqltest"
	"github.com/streamsql/streamsql/connectors/postgres/pgtest"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	mysqltest.StopSharedBinlog()
	os.Exit(code)
}

func unique(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// kvTable creates a PostgreSQL table (k BIGINT PRIMARY KEY, v BIGINT),
// dropped when the test ends, and its streamsql declaration.
func kvTable(t *testing.T, s *pgtest.Server, opts map[string]string) (*connectors.Table, string) {
	t.Helper()
	name := unique("kv")
	c := s.Conn(t)
	s.Exec(t, c, "CREATE TABLE "+name+" (k BIGINT PRIMARY KEY, v BIGINT)")
	t.Cleanup(func() { _, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+name) })
	tbl := &connectors.Table{Name: name,
		Columns:    []connectors.Column{{Name: "k", Type: types.TypeBigInt.WithNotNull(true)}, {Name: "v", Type: types.TypeBigInt}},
		PrimaryKey: []int{0},
		Options:    map[string]string{"connector": "jdbc", "url": s.JDBC(), "table-name": name}}
	for k, v := range opts {
		tbl.Options[k] = v
	}
	return tbl, name
}

func kv(kind dyntable.RowKind, k, v int64) dyntable.Change {
	return dyntable.Change{Kind: kind, Row: types.Row{types.NewInt(k), types.NewInt(v)}}
}

func chunk(chs ...dyntable.Change) *dyntable.Chunk { return &dyntable.Chunk{Changes: chs} }

func eqRows(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

func create(t *testing.T, tbl *connectors.Table) dataflow.Operator {
	t.Helper()
	ts, err := connector{}.NewSink(tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	op, err := ts.Create(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// The upsert sink: +I/+U upsert (INSERT ... ON CONFLICT DO UPDATE), -D
// deletes, -U is dropped for its +U; buffered changes reach PostgreSQL at
// the barrier.
func TestUpsertSinkFlushesOnBarrier(t *testing.T) {
	s := pgtest.Machine(t)
	tbl, name := kvTable(t, s, map[string]string{"sink.buffer-flush.interval": "0"})
	op := create(t, tbl)
	if err := op.Open(&dataflow.OpContext{Ctx: context.Background()}); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	c := s.Conn(t)
	q := "SELECT k, v FROM " + name
	if err := op.ProcessChunk(0, chunk(kv(dyntable.Insert, 1, 10), kv(dyntable.Insert, 2, 20), kv(dyntable.Insert, 3, 30)), nil); err != nil {
		t.Fatal(err)
	}
	eqRows(t, "buffered", pgtest.Rows(t, c, q))
	if err := op.SnapshotState(dataflow.Barrier{CheckpointID: 1}); err != nil {
		t.Fatal(err)
	}
	eqRows(t, "after barrier 1", pgtest.Rows(t, c, q), "1|10", "2|20", "3|30")
	if err := op.ProcessChunk(0, chunk(kv(dyntable.UpdateBefore, 1, 10), kv(dyntable.UpdateAfter, 1, 11),
		kv(dyntable.Delete, 2, 20), kv(dyntable.Insert, 4, 40), kv(dyntable.Delete, 4, 40), kv(dyntable.Delete, 9, 90)), nil); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(nil); err != nil {
		t.Fatal(err)
	}
	// 1 updated, 2 deleted, 4 inserted then deleted, 9 never existed.
	eqRows(t, "after finish", pgtest.Rows(t, c, q), "1|11", "3|30")
}

// Every column type the sink writes, read back as PostgreSQL prints it.
func TestSinkWritesEveryType(t *testing.T) {
	s := pgtest.Machine(t)
	name := unique("types")
	c := s.Conn(t)
	s.Exec(t, c, "CREATE TABLE "+name+` (id INT PRIMARY KEY, b BOOLEAN, d DOUBLE PRECISION, n NUMERIC(10,2), s TEXT, dt DATE, ts TIMESTAMP(6), "Mixed" VARCHAR(20))`)
	t.Cleanup(func() { _, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+name) })
	dec, _, _ := apd.NewFromString("12.34")
	tbl := &connectors.Table{Name: name, PrimaryKey: []int{0},
		Columns: []connectors.Column{{Name: "id", Type: types.TypeInt}, {Name: "b", Type: types.TypeBoolean}, {Name: "d", Type: types.TypeDouble},
			{Name: "n", Type: types.DecimalType(10, 2)}, {Name: "s", Type: types.TypeString}, {Name: "dt", Type: types.TypeDate},
			{Name: "ts", Type: types.TimestampType(6)}, {Name: "mixed", Type: types.TypeString}},
		Options: map[string]string{"connector": "jdbc", "url": s.JDBC(), "table-name": "public." + name}}
	op := create(t, tbl)
	if err := op.Open(&dataflow.OpContext{Ctx: context.Background()}); err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	// 2024-02-29 is day 19782 since 1970-01-01 (54 years: 13 leap days,
	// 54*365+13 = 19723, plus 31 + 28 days of 2024 = 19782).
	row := types.Row{types.NewInt(1), types.NewBool(true), types.NewFloat(0.5), types.NewDecimal(dec), types.NewString("it's"),
		types.NewDate(19782), types.NewTimestamp(19782*86400e9 + 3723_000_001_000), types.NewString("x")}
	nulls := types.Row{types.NewInt(2), types.NullValue, types.NullValue, types.NullValue, types.NullValue, types.NullValue, types.NullValue, types.NullValue}
	if err := op.ProcessChunk(0, &dyntable.Chunk{Changes: []dyntable.Change{{Kind: dyntable.Insert, Row: row}, {Kind: dyntable.Insert, Row: nulls}}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := op.Finish(nil); err != nil {
		t.Fatal(err)
	}
	eqRows(t, "rows", pgtest.Rows(t, c, "SELECT * FROM "+name),
		"1|t|0.5|12.34|it's|2024-02-29|2024-02-29 01:02:03.000001|x",
		"2|NULL|NULL|NULL|NULL|NULL|NULL|NULL")
}

// The table is checked when the sink opens; each error names what
// differs, and a wrong password never shows.
func TestSinkChecksTheTable(t *testing.T) {
	s := pgtest.Machine(t)
	tbl, name := kvTable(t, s, nil)
	c := s.Conn(t)
	s.Exec(t, c, "CREATE TABLE "+name+"_nokey (k BIGINT, v TEXT)")
	t.Cleanup(func() { _, _ = c.Exec(context.Background(), "DROP TABLE IF EXISTS "+name+"_nokey") })
	open := func(mod func(*connectors.Table)) error {
		t2 := *tbl
		t2.Options = map[string]string{}
		for k, v := range tbl.Options {
			t2.Options[k] = v
		}
		t2.Columns = append([]connectors.Column(nil), tbl.Columns...)
		mod(&t2)
		ts, err := connector{}.NewSink(&t2, nil)
		if err != nil {
			return err
		}
		op, _ := ts.Create(0, 1)
		defer op.Close()
		return op.Open(&dataflow.OpContext{Ctx: context.Background(), Parallelism: 1, State: state.NewMemoryStore("t")})
	}
	for _, tc := range []struct {
		name string
		mod  func(*connectors.Table)
		want string
	}{
		{"missing table", func(t *connectors.Table) { t.Options["table-name"] = "nope_nope" }, `the PostgreSQL table '"nope_nope"' does not exist`},
		{"missing column", func(t *connectors.Table) { t.Columns[1].Name = "w" }, "column 'w' does not exist"},
		{"wrong type", func(t *connectors.Table) { t.Columns[1].Type = types.TypeString }, "column 'v' has PostgreSQL type bigint, which does not hold STRING"},
		{"key differs", func(t *connectors.Table) { t.PrimaryKey = []int{1} }, "the primary key (v) differs"},
		{"no key in PostgreSQL", func(t *connectors.Table) {
			t.Options["table-name"] = name + "_nokey"
			t.Columns[1].Type = types.TypeString
		}, "the primary key (k) differs from the PostgreSQL table '" + name + "_nokey''s primary key ()"},
		{"exactly-once without prepared transactions", func(t *connectors.Table) { t.Options["sink.semantic"] = "exactly-once" },
			"max_prepared_transactions is 0"},
		{"unknown option", func(t *connectors.Table) { t.Options["sink.flush"] = "1" }, "unsupported option(s) for connector 'jdbc': 'sink.flush'"},
		{"wrong password", func(t *connectors.Table) {
			t.Options["url"] = strings.Replace(t.Options["url"], "127.0.0.1", "localhost", 1)
			t.Options["password"] = "Sup3rS3cret"
			t.Options["sink.max-retries"] = "1"
			t.Options["table-name"] = "x"
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := open(tc.mod)
			if tc.want == "" {
				// The machine's server trusts every local user, so the
				// password is not even checked; only its absence from any
				// error is.
				if err != nil && strings.Contains(err.Error(), "Sup3rS3cret") {
					t.Fatalf("the password leaked: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestURLs(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"jdbc:postgresql://h/db?user=u", ""},
		{"jdbc:postgresql://h:5433/db?user=u&password=p&sslmode=disable&currentSchema=x", ""},
		{"jdbc:postgresql://h:5432/?user=u", "the database is missing"},
		{"jdbc:postgresql://h:5432/db", "option 'username' is missing"},
		{"jdbc:postgresql://h:5432/db?user=u&password=Hidden1&bogus=1", "unsupported JDBC parameter 'bogus'"},
		{"postgresql://h:5432/db?user=u", "expected 'jdbc:postgresql://host:port/database'"},
	} {
		_, err := parseConn(map[string]string{"url": tc.url})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.url, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "Hidden1"):
			t.Errorf("%s: the password leaked: %v", tc.url, err)
		}
	}
}

// The exactly-once handler on a server with prepared transactions: rows
// are invisible until COMMIT PREPARED; a repeated commit succeeds; on
// recovery the checkpoint's handle is committed and a transaction
// prepared after it is rolled back.
func TestPreparedTransactions(t *testing.T) {
	s := pgtest.Shared(t)
	tbl, name := kvTable(t, s, map[string]string{"sink.semantic": "exactly-once"})
	c := s.Conn(t)
	q := "SELECT k, v FROM " + name
	info := twophase.SubtaskInfo{JobName: unique("job"), SinkName: name, Subtask: 0, Parallelism: 1}
	cfg, err := parseConfig(tbl)
	if err != nil {
		t.Fatal(err)
	}
	newHandler := func() *pcHandler {
		h := &pcHandler{target: target{cfg: cfg, t: tbl}}
		if err := h.Open(context.Background(), info); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	ctx := context.Background()
	h := newHandler()
	prepare := func(h *pcHandler, seq int64, chs ...dyntable.Change) []byte {
		t.Helper()
		txn, _ := h.BeginTransaction(ctx, seq)
		if err := h.Write(ctx, txn, chunk(chs...)); err != nil {
			t.Fatal(err)
		}
		b, err := h.PreCommit(ctx, txn)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	h0 := prepare(h, 0, kv(dyntable.Insert, 1, 1), kv(dyntable.Insert, 2, 2))
	eqRows(t, "prepared, not committed", pgtest.Rows(t, c, q))
	if err := h.Commit(ctx, h0); err != nil {
		t.Fatal(err)
	}
	eqRows(t, "committed", pgtest.Rows(t, c, q), "1|1", "2|2")
	if err := h.Commit(ctx, h0); err != nil {
		t.Fatalf("a second commit of the same handle: %v", err)
	}
	// Transaction 1 is in the "checkpoint"; transaction 2 was prepared
	// after it. Then the process "dies" (the handler is dropped).
	h1 := prepare(h, 1, kv(dyntable.UpdateAfter, 1, 10))
	prepare(h, 2, kv(dyntable.Delete, 2, 2))
	var gid handle
	_ = json.Unmarshal(h1, &gid)
	if !strings.HasPrefix(gid.GID, "streamsql:"+info.JobName+":"+name+":0.1:1.") {
		t.Fatalf("transaction name %q", gid.GID)
	}
	if got := pgtest.Rows(t, c, "SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'streamsql:"+info.JobName+":%'"); got[0] != "2" {
		t.Fatalf("prepared transactions: %v, want 2", got)
	}
	h2 := newHandler()
	if err := h2.RecoverAndCommit(ctx, h1); err != nil {
		t.Fatal(err)
	}
	if err := h2.RecoverAndAbort(ctx, twophase.Recovered{Subtask: 0, Parallelism: 1, NextSeq: 2, Handles: [][]byte{h1}}); err != nil {
		t.Fatal(err)
	}
	eqRows(t, "recovered", pgtest.Rows(t, c, q), "1|10", "2|2")
	eqRows(t, "nothing left prepared", pgtest.Rows(t, c, "SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'streamsql:"+info.JobName+":%'"))
	// An empty transaction prepares nothing and commits trivially.
	e := prepare(h2, 3)
	if err := h2.Commit(ctx, e); err != nil {
		t.Fatal(err)
	}
}
