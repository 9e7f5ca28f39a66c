package kafka

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/kafka/broker"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startBroker runs a local broker with topic "out" of the given
// partitions for one test.
func startBroker(t testing.TB, partitions int, cfg ...broker.Config) *broker.Broker {
	t.Helper()
	c := broker.Config{Topics: []string{"out"}, Partitions: partitions}
	if len(cfg) > 0 {
		c = cfg[0]
	}
	b, err := broker.Start(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// consumed is one record as an independent client saw it.
type consumed struct {
	Partition int32
	Key       []byte // nil for a null key
	Value     []byte // nil for a tombstone
}

// readTopic reads every record of topic with franz-go (tests only: an
// independent client checks what kafka-go wrote) at read_committed or
// read_uncommitted, until the high watermarks (or last stable offsets)
// known at the start are reached.
func readTopic(t testing.TB, addr, topic string, committed bool) []consumed {
	t.Helper()
	level := kgo.ReadUncommitted()
	if committed {
		level = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(level),
		kgo.FetchMaxWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []consumed
	// Poll until two consecutive empty polls: kfake answers at once, so
	// an empty poll after 50 ms of waiting means the end of the
	// (stable) log.
	empty := 0
	deadline := time.Now().Add(20 * time.Second)
	for empty < 2 && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			out = append(out, consumed{Partition: r.Partition, Key: r.Key, Value: r.Value})
		})
		for _, e := range fs.Errors() {
			if !errors.Is(e.Err, context.DeadlineExceeded) {
				t.Fatalf("reading %s: %v", topic, e.Err)
			}
		}
		if n == 0 {
			empty++
		} else {
			empty = 0
		}
	}
	return out
}

// values returns the records' values, sorted.
func values(rs []consumed) []string {
	var vs []string
	for _, r := range rs {
		vs = append(vs, string(r.Value))
	}
	sort.Strings(vs)
	return vs
}

func seqStrings(prefix string, from, to int) []string {
	var vs []string
	for i := from; i < to; i++ {
		vs = append(vs, prefix+strconv.Itoa(i))
	}
	sort.Strings(vs)
	return vs
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestProducerCommitVisibility checks the transactional protocol itself:
// records of an open (even pre-committed) transaction are invisible to a
// read_committed reader and visible to a read_uncommitted one; after
// EndTxn(commit) they are visible, each once; an aborted transaction's
// records never become visible. The reader is franz-go, independent of
// the kafka-go code under test.
func TestProducerCommitVisibility(t *testing.T) {
	b := startBroker(t, 3)
	ctx := ctxT(t)
	c := kafkaClient([]string{b.Addr()}, 10*time.Second)
	p, err := newTxnProducer(ctx, c, "out", 3, "t-0-0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Transaction 1: 30 records over 3 partitions, flushed but open.
	if err := p.begin(); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if err := p.add(ctx, i%3, []byte("k"), []byte("a"+strconv.Itoa(i)), nil, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	h, err := p.preCommit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := readTopic(t, b.Addr(), "out", true); len(got) != 0 {
		t.Fatalf("read_committed saw %d records of an open transaction", len(got))
	}
	if got := values(readTopic(t, b.Addr(), "out", false)); !equal(got, seqStrings("a", 0, 30)) {
		t.Fatalf("read_uncommitted saw %v, want the 30 written records", got)
	}
	if err := endTxn(ctx, c, h, true); err != nil {
		t.Fatal(err)
	}
	// A repeated commit (a retry after a lost answer) succeeds.
	if err := endTxn(ctx, c, h, true); err != nil {
		t.Fatalf("repeated commit: %v", err)
	}
	// Transaction 2 on the same session, aborted.
	if err := p.begin(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := p.add(ctx, i%3, nil, []byte("x"+strconv.Itoa(i)), nil, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.flush(ctx, -1); err != nil {
		t.Fatal(err)
	}
	if err := p.abort(ctx); err != nil {
		t.Fatal(err)
	}
	// Transaction 3: the sequences continue across transactions.
	if err := p.begin(); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if err := p.add(ctx, i%3, nil, []byte("c"+strconv.Itoa(i)), nil, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	h3, err := p.preCommit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := endTxn(ctx, c, h3, true); err != nil {
		t.Fatal(err)
	}
	want := append(seqStrings("a", 0, 30), seqStrings("c", 0, 6)...)
	sort.Strings(want)
	got := readTopic(t, b.Addr(), "out", true)
	if vs := values(got); !equal(vs, want) {
		t.Fatalf("read_committed saw %v,\nwant %v", vs, want)
	}
	// Records went to the partitions they were added to: a<i> to i%3.
	for _, r := range got {
		if r.Value[0] == 'a' {
			i, _ := strconv.Atoi(string(r.Value[1:]))
			if int32(i%3) != r.Partition {
				t.Fatalf("record %s in partition %d, want %d", r.Value, r.Partition, i%3)
			}
		}
	}
}

// TestProducerRecoveryCommit is the crash between pre-commit and commit:
// a new client, knowing only the stored handle, commits the transaction
// with EndTxn, without InitProducerID (which would abort it).
func TestProducerRecoveryCommit(t *testing.T) {
	b := startBroker(t, 2)
	ctx := ctxT(t)
	p, err := newTxnProducer(ctx, kafkaClient([]string{b.Addr()}, 10*time.Second), "out", 2, "r-0-0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_ = p.begin()
	for i := range 10 {
		_ = p.add(ctx, i%2, nil, []byte("v"+strconv.Itoa(i)), nil, time.Now())
	}
	h, err := p.preCommit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p = nil // the "crash": the session and its client are gone
	if got := readTopic(t, b.Addr(), "out", true); len(got) != 0 {
		t.Fatalf("visible before the recovery commit: %d records", len(got))
	}
	c2 := kafkaClient([]string{b.Addr()}, 10*time.Second)
	if err := endTxn(ctx, c2, h, true); err != nil {
		t.Fatal(err)
	}
	if got := values(readTopic(t, b.Addr(), "out", true)); !equal(got, seqStrings("v", 0, 10)) {
		t.Fatalf("after recovery commit: %v", got)
	}
}

// TestProducerZombieFenced: a second producer with the same
// transactional id fences the first, whose next request fails with
// ErrFenced and whose open transaction is aborted.
func TestProducerZombieFenced(t *testing.T) {
	b := startBroker(t, 1)
	ctx := ctxT(t)
	c := kafkaClient([]string{b.Addr()}, 10*time.Second)
	zombie, err := newTxnProducer(ctx, c, "out", 1, "z-0-0", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_ = zombie.begin()
	_ = zombie.add(ctx, 0, nil, []byte("zombie-1"), nil, time.Now())
	if err := zombie.flush(ctx, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := newTxnProducer(ctx, c, "out", 1, "z-0-0", time.Minute); err != nil {
		t.Fatal(err)
	}
	_ = zombie.add(ctx, 0, nil, []byte("zombie-2"), nil, time.Now())
	_, err = zombie.preCommit(ctx)
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("zombie's write: got %v, want ErrFenced", err)
	}
	if err := endTxn(ctx, c, zombie.handle, true); err == nil || !isFencing(err) {
		t.Fatalf("zombie's commit: got %v, want a fencing error", err)
	}
	if got := readTopic(t, b.Addr(), "out", true); len(got) != 0 {
		t.Fatalf("the zombie's records are visible: %v", values(got))
	}
}

// TestProducerEpochOfNewID records what InitProducerID returns for an id
// the broker has never seen (epoch 0) and for a known one (a higher
// epoch): recovery relies on it to find every id a pool ever used.
func TestProducerEpochOfNewID(t *testing.T) {
	b := startBroker(t, 1)
	ctx := ctxT(t)
	c := kafkaClient([]string{b.Addr()}, 10*time.Second)
	for i := range 3 {
		_, e, err := initProducerID(ctx, c, "e-0-0", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if int(e) != i {
			t.Fatalf("InitProducerID #%d: epoch %d, want %d", i+1, e, i)
		}
	}
}
