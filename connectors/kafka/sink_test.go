package kafka

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors"
	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/streamsql/streamsql/connectors/twophase"
	"github.com/streamsql/streamsql/dataflow"
	"github.com/streamsql/streamsql/dyntable"
	"github.com/streamsql/streamsql/types"
)

// sinkTable is a two-column table (k BIGINT, v STRING) written to topic
// "out" of the broker at addr, with extra options.
func sinkTable(addr string, opts ...string) *connectors.Table {
	o := map[string]string{"connector": "kafka", "topic": "out", "properties.bootstrap.servers": addr,
		"format": "json", "sink.delivery-guarantee": "exactly-once", "sink.transactional-id-prefix": "tp"}
	for i := 0; i+1 < len(opts); i += 2 {
		o[opts[i]] = opts[i+1]
	}
	return &connectors.Table{Name: "out", Options: o, Columns: []connectors.Column{
		{Name: "k", Type: types.Type{ID: types.BigInt}}, {Name: "v", Type: types.Type{ID: types.String}}}}
}

func openHandler(t *testing.T, tbl *connectors.Table, upsert bool, subtask int) *txnHandler {
	t.Helper()
	cfg, err := parseSinkConfig(tbl, upsert)
	if err != nil {
		t.Fatal(err)
	}
	h := newTxnHandler(cfg)
	// The job name scopes the process-wide registry of ids committed in
	// recovery: one per test, as one per job in production.
	if err := h.Open(ctxT(t), twophase.SubtaskInfo{JobName: t.Name(), SinkName: "out", Subtask: subtask, Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func rowsChunk(kind dyntable.RowKind, from, to int) *dyntable.Chunk {
	c := &dyntable.Chunk{}
	for i := from; i < to; i++ {
		c.Append(kind, types.Row{types.NewInt(int64(i)), types.NewString("v" + strconv.Itoa(i))})
	}
	return c
}

// jsonValues are the expected JSON values of rows from..to-1, sorted.
func jsonValues(from, to int) []string {
	var vs []string
	for i := from; i < to; i++ {
		vs = append(vs, `{"k":`+strconv.Itoa(i)+`,"v":"v`+strconv.Itoa(i)+`"}`)
	}
	return sortedCopy(vs)
}

func sortedCopy(vs []string) []string {
	out := append([]string(nil), vs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestHandlerRecoverAndAbort plays a crash after a pre-commit: the old
// handler pre-committed transaction A (checkpoint n) and had opened B
// after it. A new handler, in a "new process", commits A from its handle
// and fences the pool, which aborts B: read_committed shows exactly A,
// while B's records are in the log (read_uncommitted) but aborted.
func TestHandlerRecoverAndAbort(t *testing.T) {
	b := startBroker(t, 2)
	ctx := ctxT(t)
	h1 := openHandler(t, sinkTable(b.Addr()), false, 0)
	a, err := h1.BeginTransaction(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h1.Write(ctx, a, rowsChunk(dyntable.Insert, 0, 50)); err != nil {
		t.Fatal(err)
	}
	handleA, err := h1.PreCommit(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	extra := h1.Extra() // the checkpoint's pool record
	bTxn, err := h1.BeginTransaction(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if bTxn.(*kafkaTxn).k != 1 {
		t.Fatalf("B took pool id %d while id 0 is pending commit; want 1", bTxn.(*kafkaTxn).k)
	}
	if err := h1.Write(ctx, bTxn, rowsChunk(dyntable.Insert, 50, 80)); err != nil {
		t.Fatal(err)
	}
	if err := bTxn.(*kafkaTxn).p.flush(ctx, -1); err != nil {
		t.Fatal(err)
	}
	// The crash: h1 is dropped without Close or Abort.

	h2 := openHandler(t, sinkTable(b.Addr()), false, 0)
	if err := h2.RecoverAndCommit(ctx, handleA); err != nil {
		t.Fatal(err)
	}
	if err := h2.RecoverAndAbort(ctx, twophase.Recovered{Subtask: 0, Parallelism: 1, Handles: [][]byte{handleA}, NextSeq: 1, Extra: extra}); err != nil {
		t.Fatal(err)
	}
	// Committing A again (a second restart from the same checkpoint)
	// still succeeds: the recovery fenced id 1 only, not A's id 0.
	if err := h2.RecoverAndCommit(ctx, handleA); err != nil {
		t.Fatalf("repeated recovery commit: %v", err)
	}
	if got := values(readTopic(t, b.Addr(), "out", true)); !equal(got, jsonValues(0, 50)) {
		t.Fatalf("read_committed: %d records %v, want rows 0..49", len(got), got)
	}
	if got := readTopic(t, b.Addr(), "out", false); len(got) != 80 {
		t.Fatalf("read_uncommitted: %d records, want 80 (50 committed, 30 aborted)", len(got))
	}
	// The new handler continues: its next transaction must not take id
	// 0 (A's handle may still be recommitted until a checkpoint of this
	// process completes).
	c, err := h2.BeginTransaction(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if k := c.(*kafkaTxn).k; k == 0 {
		t.Fatal("the new transaction reuses id 0, whose handle a restart may commit again")
	}
	if err := h2.Write(ctx, c, rowsChunk(dyntable.Insert, 80, 90)); err != nil {
		t.Fatal(err)
	}
	hc, err := h2.PreCommit(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	_ = h2.Extra()
	if err := h2.Commit(ctx, hc); err != nil {
		t.Fatal(err)
	}
	if got := values(readTopic(t, b.Addr(), "out", true)); !equal(got, sortedCopy(append(jsonValues(0, 50), jsonValues(80, 90)...))) {
		t.Fatalf("read_committed after the next commit: %v", got)
	}
}

// TestHandlerPoolReuse checks the pool rules: an id pending commit is not
// reused; a committed id is reused only after a checkpoint snapshotted
// after its commit has completed.
func TestHandlerPoolReuse(t *testing.T) {
	b := startBroker(t, 1)
	ctx := ctxT(t)
	h := openHandler(t, sinkTable(b.Addr()), false, 0)
	step := func(from int) (int, []byte) {
		txn, err := h.BeginTransaction(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Write(ctx, txn, rowsChunk(dyntable.Insert, from, from+1)); err != nil {
			t.Fatal(err)
		}
		hd, err := h.PreCommit(ctx, txn)
		if err != nil {
			t.Fatal(err)
		}
		_ = h.Extra()
		return txn.(*kafkaTxn).k, hd
	}
	k1, h1 := step(1) // snapshot 1
	k2, h2 := step(2) // snapshot 2: checkpoint 1 declined, both pending
	if k1 != 0 || k2 != 1 {
		t.Fatalf("ids %d, %d; want 0, 1", k1, k2)
	}
	// Checkpoint 2 completes: both commit.
	if err := h.Commit(ctx, h1); err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(ctx, h2); err != nil {
		t.Fatal(err)
	}
	// Checkpoint 2's state may still list h1 and h2 (they were committed
	// after its snapshot), so ids 0 and 1 stay taken until checkpoint 3,
	// snapshotted after the commits, completes.
	k3, h3 := step(3) // snapshot 3
	if k3 != 2 {
		t.Fatalf("id %d right after the commits; want a new id 2", k3)
	}
	if err := h.Commit(ctx, h3); err != nil { // checkpoint 3 completed
		t.Fatal(err)
	}
	k4, _ := step(4)
	if k4 != 0 {
		t.Fatalf("id %d after checkpoint 3 completed; want id 0 again", k4)
	}
	if x := string(h.Extra()); x != `{"pool":3}` {
		t.Fatalf("extra %s, want pool 3", x)
	}
}

// TestHandlerZombieFenced: a second instance with the same prefix and
// subtask fences the first, whose pre-commit then fails with ErrFenced
// and a message naming the transactional id; the zombie's rows never
// become visible.
func TestHandlerZombieFenced(t *testing.T) {
	b := startBroker(t, 1)
	ctx := ctxT(t)
	zombie := openHandler(t, sinkTable(b.Addr()), false, 0)
	zt, err := zombie.BeginTransaction(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := zombie.Write(ctx, zt, rowsChunk(dyntable.Insert, 0, 10)); err != nil {
		t.Fatal(err)
	}
	if err := zt.(*kafkaTxn).p.flush(ctx, -1); err != nil {
		t.Fatal(err)
	}
	fresh := openHandler(t, sinkTable(b.Addr()), false, 0)
	ft, err := fresh.BeginTransaction(ctx, 0) // InitProducerID on tp-0-0
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Write(ctx, ft, rowsChunk(dyntable.Insert, 100, 103)); err != nil {
		t.Fatal(err)
	}
	_ = zombie.Write(ctx, zt, rowsChunk(dyntable.Insert, 10, 20))
	_, err = zombie.PreCommit(ctx, zt)
	if !errors.Is(err, ErrFenced) || !strings.Contains(err.Error(), "'tp-0-0'") {
		t.Fatalf("zombie pre-commit: %v; want ErrFenced naming 'tp-0-0'", err)
	}
	hd, err := fresh.PreCommit(ctx, ft)
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Commit(ctx, hd); err != nil {
		t.Fatal(err)
	}
	if got := values(readTopic(t, b.Addr(), "out", true)); !equal(got, jsonValues(100, 103)) {
		t.Fatalf("read_committed: %v, want only the new instance's rows", got)
	}
}

// TestHandlerTransactionTimeoutIsDataLoss: a pre-committed transaction
// that outlives 'properties.transaction.timeout.ms' is aborted by the
// broker. Its commit must fail permanently, saying POSSIBLE DATA LOSS,
// never succeed silently.
func TestHandlerTransactionTimeoutIsDataLoss(t *testing.T) {
	b := startBroker(t, 1, broker.Config{Topics: []string{"out"}, Partitions: 1, MaxTransactionTimeoutMs: 60000})
	ctx := ctxT(t)
	h := openHandler(t, sinkTable(b.Addr(), "properties.transaction.timeout.ms", "300"), false, 0)
	txn, err := h.BeginTransaction(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Write(ctx, txn, rowsChunk(dyntable.Insert, 0, 5)); err != nil {
		t.Fatal(err)
	}
	hd, err := h.PreCommit(ctx, txn)
	if err != nil {
		t.Fatal(err)
	}
	_ = h.Extra()
	// The checkpoint takes longer than the transaction timeout (300 ms):
	// the broker aborts the transaction meanwhile.
	time.Sleep(1500 * time.Millisecond)
	err = h.Commit(ctx, hd)
	t.Log(err)
	if !twophase.IsPermanent(err) || !errors.Is(err, ErrTxnLost) || !strings.Contains(err.Error(), "POSSIBLE DATA LOSS") {
		t.Fatalf("commit after the timeout: %v; want a permanent POSSIBLE DATA LOSS error", err)
	}
	if got := readTopic(t, b.Addr(), "out", true); len(got) != 0 {
		t.Fatalf("the timed-out transaction's rows are visible: %v", values(got))
	}
}

// TestUpsertRecords: upsert-kafka writes +I/+U as the row keyed by the
// primary key, -D as a tombstone, and drops -U.
func TestUpsertRecords(t *testing.T) {
	b := startBroker(t, 2)
	ctx := ctxT(t)
	tbl := sinkTable(b.Addr(), "key.format", "json", "value.format", "json")
	delete(tbl.Options, "format")
	tbl.Options["connector"] = "upsert-kafka"
	tbl.PrimaryKey = []int{0}
	h := openHandler(t, tbl, true, 0)
	c := &dyntable.Chunk{}
	row := func(k int, v string) types.Row { return types.Row{types.NewInt(int64(k)), types.NewString(v)} }
	c.Append(dyntable.Insert, row(1, "a"))
	c.Append(dyntable.Insert, row(2, "b"))
	c.Append(dyntable.UpdateBefore, row(1, "a"))
	c.Append(dyntable.UpdateAfter, row(1, "a2"))
	c.Append(dyntable.Delete, row(2, "b"))
	txn, err := h.BeginTransaction(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Write(ctx, txn, c); err != nil {
		t.Fatal(err)
	}
	hd, err := h.PreCommit(ctx, txn)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(ctx, hd); err != nil {
		t.Fatal(err)
	}
	got := readTopic(t, b.Addr(), "out", true)
	// Per key, in partition order: key 1: +I a, +U a2; key 2: +I b, tombstone.
	perKey := map[string][]string{}
	part := map[string]int32{}
	for _, r := range got {
		v := "<tombstone>"
		if r.Value != nil {
			v = string(r.Value)
		}
		perKey[string(r.Key)] = append(perKey[string(r.Key)], v)
		if p, ok := part[string(r.Key)]; ok && p != r.Partition {
			t.Fatalf("key %s in two partitions", r.Key)
		}
		part[string(r.Key)] = r.Partition
	}
	want := map[string][]string{
		`{"k":1}`: {`{"k":1,"v":"a"}`, `{"k":1,"v":"a2"}`},
		`{"k":2}`: {`{"k":2,"v":"b"}`, "<tombstone>"},
	}
	if len(perKey) != 2 {
		t.Fatalf("keys %v, want %v", perKey, want)
	}
	for k, vs := range want {
		if !equal(perKey[k], vs) {
			t.Fatalf("key %s: %v, want %v", k, perKey[k], vs)
		}
	}
	// The partition is Kafka's murmur2 of the key bytes. Reference values
	// computed with Kafka's Utils.murmur2 ... are not at hand; check the
	// property instead: the same key bytes give the same partition.
	p := newPartitioner("default", 0)
	for k, pt := range part {
		if got := p.partition([]byte(k), 2); int32(got) != pt {
			t.Fatalf("key %s in partition %d, partitioner says %d", k, pt, got)
		}
	}
}

// TestSinkOptions checks the option errors a user meets.
func TestSinkOptions(t *testing.T) {
	for _, tc := range []struct {
		opts   []string
		upsert bool
		pk     bool
		want   string
	}{
		{opts: []string{"sink.transactional-id-prefix", ""}, want: "requires option 'sink.transactional-id-prefix'"},
		{opts: []string{"sink.delivery-guarantee", "twice"}, want: "must be 'none', 'at-least-once' or 'exactly-once'"},
		{opts: []string{"format", "avro"}, want: "not 'avro'"},
		{opts: []string{"key.fields", "k"}, want: "needs 'key.format'"},
		{opts: []string{"key.fields", "nope", "key.format", "json"}, want: "no column 'nope'"},
		{opts: []string{"sink.partitioner", "hash"}, want: "'default', 'fixed' or 'round-robin'"},
		{opts: []string{"properties.transaction.timeout.ms", "soon"}, want: "'soon' is not a duration"},
		{opts: []string{"properties.transaction.timeout.ms", "0"}, want: "positive number of milliseconds"},
		{upsert: true, opts: []string{"key.format", "json"}, want: "require a PRIMARY KEY"},
		{upsert: true, pk: true, want: "requires option 'key.format'"},
	} {
		tbl := sinkTable("localhost:9092", tc.opts...)
		if tc.pk {
			tbl.PrimaryKey = []int{0}
		}
		if tbl.Options["sink.transactional-id-prefix"] == "" {
			delete(tbl.Options, "sink.transactional-id-prefix")
		}
		_, err := parseSinkConfig(tbl, tc.upsert)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want an error containing %q", tc.opts, err, tc.want)
		}
	}
	cfg, err := parseSinkConfig(sinkTable("h:1", "properties.transaction.timeout.ms", "1000"), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.CheckCheckpointInterval(time.Second, false); err == nil || !strings.Contains(err.Error(), "at least twice") {
		t.Fatalf("timeout 1 s, interval 1 s: %v", err)
	}
	if err := cfg.CheckCheckpointInterval(500*time.Millisecond, false); err != nil {
		t.Fatalf("timeout 1 s, interval 500 ms: %v", err)
	}
	if cfg.txnTimeout != time.Second {
		t.Fatalf("timeout %s", cfg.txnTimeout)
	}
	def, _ := parseSinkConfig(sinkTable("h:1"), false)
	if def.txnTimeout != 15*time.Minute || def.guarantee != guaranteeExactlyOnce {
		t.Fatalf("defaults: %s %s", def.txnTimeout, def.guarantee)
	}
	tbl := sinkTable("h:1")
	delete(tbl.Options, "sink.delivery-guarantee")
	if c, _ := parseSinkConfig(tbl, false); c.guarantee != guaranteeAtLeastOnce {
		t.Fatalf("default guarantee %s, want at-least-once", c.guarantee)
	}
}

// TestMurmur2MatchesKafka pins the default partitioner to Kafka's Java
// murmur2: Utils.toPositive(Utils.murmur2("hello".getBytes())) % n.
// The hash value is computed independently below, from the published
// algorithm (Utils.java), not through kafka-go.
func TestMurmur2MatchesKafka(t *testing.T) {
	ref := func(data []byte) uint32 {
		const seed, m, r = 0x9747b28c, 0x5bd1e995, 24
		h := uint32(seed) ^ uint32(len(data))
		n4 := len(data) / 4
		for i := 0; i < n4; i++ {
			k := uint32(data[4*i]) | uint32(data[4*i+1])<<8 | uint32(data[4*i+2])<<16 | uint32(data[4*i+3])<<24
			k *= m
			k ^= k >> r
			k *= m
			h *= m
			h ^= k
		}
		rest := data[n4*4:]
		switch len(rest) {
		case 3:
			h ^= uint32(rest[2]) << 16
			fallthrough
		case 2:
			h ^= uint32(rest[1]) << 8
			fallthrough
		case 1:
			h ^= uint32(rest[0])
			h *= m
		}
		h ^= h >> 13
		h *= m
		h ^= h >> 15
		return h
	}
	p := newPartitioner("default", 0)
	for _, key := range []string{"hello", "k", "", "abcd", "abcde", `{"k":1}`, "some longer key with odd length"} {
		for _, n := range []int{1, 3, 7, 12} {
			want := int((ref([]byte(key)) & 0x7fffffff) % uint32(n))
			if got := p.partition([]byte(key), n); got != want {
				t.Fatalf("key %q, %d partitions: %d, want %d", key, n, got, want)
			}
		}
	}
	// Null keys: sticky, moving on after stickyRecords records.
	seen := map[int]int{}
	for range 3 * stickyRecords {
		seen[p.partition(nil, 3)]++
	}
	if len(seen) != 3 || seen[0] != stickyRecords {
		t.Fatalf("null keys spread %v, want %d per partition", seen, stickyRecords)
	}
}

// TestTimeoutAboveBrokerMaximum: a transaction timeout above the
// broker's transaction.max.timeout.ms fails the first transaction with
// an error naming the option to lower.
func TestTimeoutAboveBrokerMaximum(t *testing.T) {
	b := startBroker(t, 1, broker.Config{Topics: []string{"out"}, Partitions: 1, MaxTransactionTimeoutMs: 1000})
	h := openHandler(t, sinkTable(b.Addr(), "properties.transaction.timeout.ms", "5000"), false, 0)
	_, err := h.BeginTransaction(ctxT(t), 0)
	if err == nil || !strings.Contains(err.Error(), "lower 'properties.transaction.timeout.ms'") {
		t.Fatalf("got %v", err)
	}
}

// TestAtLeastOnceBarrierWaitsForAcks: after SnapshotState returns, every
// row handed to the at-least-once sink before the barrier has been
// acknowledged by the broker, and an independent reader finds them all.
func TestAtLeastOnceBarrierWaitsForAcks(t *testing.T) {
	b := startBroker(t, 3)
	cfg, err := parseSinkConfig(sinkTable(b.Addr(), "sink.delivery-guarantee", "at-least-once"), false)
	if err != nil {
		t.Fatal(err)
	}
	o := &writerOp{cfg: cfg, wait: true}
	if err := o.Open(&dataflow.OpContext{Ctx: ctxT(t)}); err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for i := range 5 {
		if err := o.ProcessChunk(0, rowsChunk(dyntable.Insert, i*1000, (i+1)*1000), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.SnapshotState(dataflow.Barrier{CheckpointID: 1}); err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	sent, acked := o.sent, o.acked
	o.mu.Unlock()
	if sent != 5000 || acked != sent {
		t.Fatalf("after the barrier: %d rows sent, %d acknowledged; want 5000 and 5000", sent, acked)
	}
	if got := values(readTopic(t, b.Addr(), "out", false)); !equal(got, jsonValues(0, 5000)) {
		t.Fatalf("the topic holds %d records, want rows 0..4999", len(got))
	}
}

// TestHandlerRescaleRecovery: restored at parallelism 3 from a checkpoint
// taken at parallelism 2, former subtask 1's pending transaction (on id
// tp-1-0) is recovered by new subtask 2. New subtask 1, which recovered
// nothing, must not open a transaction on tp-1-0 before a checkpoint of
// the new run completes: a second restart from the same checkpoint
// commits that handle again, which must still succeed rather than be
// mistaken for lost data.
func TestHandlerRescaleRecovery(t *testing.T) {
	b := startBroker(t, 2)
	ctx := ctxT(t)
	old := openHandler(t, sinkTable(b.Addr()), false, 1)
	txn, err := old.BeginTransaction(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Write(ctx, txn, rowsChunk(dyntable.Insert, 0, 20)); err != nil {
		t.Fatal(err)
	}
	handle, err := old.PreCommit(ctx, txn)
	if err != nil {
		t.Fatal(err)
	}
	extra := old.Extra()
	rec := twophase.Recovered{Subtask: 1, Parallelism: 2, Handles: [][]byte{handle}, NextSeq: 1, Extra: extra}

	// The restored run: the runtime opens (and recovers) every subtask
	// before any row flows.
	new2 := openHandler(t, sinkTable(b.Addr()), false, 2)
	new1 := openHandler(t, sinkTable(b.Addr()), false, 1)
	if err := new2.RecoverAndCommit(ctx, handle); err != nil {
		t.Fatal(err)
	}
	if err := new2.RecoverAndAbort(ctx, rec); err != nil {
		t.Fatal(err)
	}
	t1, err := new1.BeginTransaction(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if k := t1.(*kafkaTxn).k; k == 0 {
		t.Fatal("new subtask 1 opened a transaction on tp-1-0, committed in recovery by subtask 2, before any checkpoint of the new run")
	}
	if err := new1.Write(ctx, t1, rowsChunk(dyntable.Insert, 100, 105)); err != nil {
		t.Fatal(err)
	}
	if err := t1.(*kafkaTxn).p.flush(ctx, -1); err != nil {
		t.Fatal(err)
	}
	// The second restart from the same checkpoint.
	again := openHandler(t, sinkTable(b.Addr()), false, 0)
	if err := again.RecoverAndCommit(ctx, handle); err != nil {
		t.Fatalf("recommitting the recovered handle: %v", err)
	}
	if got := values(readTopic(t, b.Addr(), "out", true)); !equal(got, jsonValues(0, 20)) {
		t.Fatalf("read_committed: %v", got)
	}
}

// TestSinkDocsListEveryOption keeps docs/kafka-sink.md in step with the
// options the sinks accept.
func TestSinkDocsListEveryOption(t *testing.T) {
	doc, err := os.ReadFile("../../docs/kafka-sink.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range sinkOptionDefs() {
		key := strings.TrimSuffix(d.Key, "#")
		if d.Prefix && strings.HasSuffix(key, "json.") {
			continue // the json encoder has no options
		}
		if !strings.Contains(string(doc), "`"+key) {
			t.Errorf("docs/kafka-sink.md does not mention option '%s'", d.Key)
		}
	}
}
