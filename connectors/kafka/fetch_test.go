package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnClient is a franz-go transactional producer (tests only: an
// independent implementation writes the transactions the source reads).
func txnClient(t testing.TB, addr, tid string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID(tid),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// txnProduce writes one record in cl's open transaction.
func txnProduce(t testing.TB, cl *kgo.Client, topic string, p int32, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func begin(t testing.TB, cl *kgo.Client) {
	t.Helper()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
}

func end(t testing.TB, cl *kgo.Client, commit bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatal(err)
	}
}

// kgoRead reads topic from the start to its end (the last stable offset
// under read_committed) with franz-go: the independent reader the
// source is measured against.
func kgoRead(t testing.TB, addr, topic string, committed bool) []string {
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
	var out []string
	empty := 0
	deadline := time.Now().Add(20 * time.Second)
	for empty < 3 && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(r *kgo.Record) {
			n++
			var v struct {
				ID int64  `json:"id"`
				V  string `json:"v"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Errorf("kgo read %q: %v", r.Value, err)
			}
			out = append(out, fmt.Sprintf("+I[%d, %s]", v.ID, v.V))
		})
		if n == 0 {
			empty++
		} else {
			empty = 0
		}
	}
	return out
}

// TestReadCommitted writes, on a two-partition topic, plain records and
// transactions of three producers, committed and aborted, interleaved in
// one partition, and an aborted transaction followed by a committed one
// of the same producer:
//
//	p0: n1  a1  c1  b1  n2  b2  [B abort]  ...            [A commit] [C commit] b5 [B commit]
//	p1: a2  b3  [B abort]  c2  b4? ...
//
// (the exact layout is what the broker makes of the calls below). Under
// read_committed the rows are those of committed transactions and plain
// writes, hand-listed in wantCommitted; under read_uncommitted every
// data record. Control records never appear. Both are also checked
// against franz-go's reader.
func TestReadCommitted(t *testing.T) {
	b := srcBroker(t, 2, "tx")
	addr := b.Addr()
	ta, tb, tc := txnClient(t, addr, "A"), txnClient(t, addr, "B"), txnClient(t, addr, "C")
	produce(t, addr, "tx", srcMsg{p: 0, value: js(1, "n1")})
	begin(t, ta)
	txnProduce(t, ta, "tx", 0, js(2, "a1"))
	begin(t, tc)
	txnProduce(t, tc, "tx", 0, js(3, "c1"))
	begin(t, tb)
	txnProduce(t, tb, "tx", 0, js(4, "b1"))
	produce(t, addr, "tx", srcMsg{p: 0, value: js(5, "n2")})
	txnProduce(t, ta, "tx", 1, js(6, "a2"))
	txnProduce(t, tb, "tx", 0, js(7, "b2"))
	txnProduce(t, tb, "tx", 1, js(8, "b3"))
	end(t, tb, false) // abort B: b1, b2, b3
	txnProduce(t, tc, "tx", 1, js(9, "c2"))
	end(t, ta, true) // commit A: a1, a2
	end(t, tc, true) // commit C: c1, c2
	begin(t, tb)
	txnProduce(t, tb, "tx", 0, js(10, "b4"))
	end(t, tb, true) // the same producer, committed this time
	begin(t, tb)
	txnProduce(t, tb, "tx", 1, js(11, "b5"))
	end(t, tb, false) // aborted again, last in partition 1
	produce(t, addr, "tx", srcMsg{p: 1, value: js(12, "n3")})

	wantCommitted := []string{"+I[1, n1]", "+I[2, a1]", "+I[3, c1]", "+I[5, n2]", "+I[6, a2]", "+I[9, c2]", "+I[10, b4]", "+I[12, n3]"}
	wantAll := append(append([]string(nil), wantCommitted...), "+I[4, b1]", "+I[7, b2]", "+I[8, b3]", "+I[11, b5]")

	for _, c := range []struct {
		level string
		want  []string
	}{{"read_committed", wantCommitted}, {"read_uncommitted", wantAll}} {
		t.Run(c.level, func(t *testing.T) {
			s := openSource(t, srcTable(addr, "tx", "properties.isolation.level", c.level), 0, 1)
			r, err := readAll(t, s)
			if err != nil {
				t.Fatal(err)
			}
			sameRows(t, c.level, r.got(), c.want)
			sameRows(t, c.level+" vs franz-go", r.got(), kgoRead(t, addr, "tx", c.level == "read_committed"))
			// The final position is each partition's end: past the last
			// control record too, so a restore would not read it again.
			// Partition 0: 9 records + 4 markers (A, B, C, B) = 13 offsets
			// ... as the broker reports them; compare with ListOffsets.
			ends, err := s.listOffsets(context.Background(), -1)
			if err != nil {
				t.Fatal(err)
			}
			var pos position
			if err := json.Unmarshal(lastPosition(t, r), &pos); err != nil {
				t.Fatal(err)
			}
			for i, o := range pos.Offsets {
				if o.Offset != ends[i] {
					t.Fatalf("final position of partition %d is %d, want the end %d", o.Partition, o.Offset, ends[i])
				}
			}
		})
	}
	// Each data record has an offset, each transaction marker too: the
	// ends add up to 12 records + 7 markers (A on 2 partitions, B on 2,
	// C on 2, the second B on 1, the third B on 1 = 8).
	s := openSource(t, srcTable(addr, "tx"), 0, 1)
	ends, err := s.listOffsets(context.Background(), -1)
	if err != nil {
		t.Fatal(err)
	}
	if total := ends[0] + ends[1]; total != 12+8 {
		t.Fatalf("the partitions end at %v: %d offsets, want 12 records + 8 markers", ends, total)
	}
}

// lastPosition is the position after the source's last chunk, or after
// its last idle round when that came later.
func lastPosition(t testing.TB, r *recorder) []byte {
	t.Helper()
	b, err := r.src.SnapshotPosition(0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadCommittedStopsAtOpenTransaction: a bounded read_committed
// source ends at the last stable offset, before an open transaction and
// everything written after it; read_uncommitted reads on.
func TestReadCommittedStopsAtOpenTransaction(t *testing.T) {
	b := srcBroker(t, 1, "open")
	addr := b.Addr()
	produce(t, addr, "open", srcMsg{p: 0, value: js(1, "before")})
	td := txnClient(t, addr, "D")
	begin(t, td)
	txnProduce(t, td, "open", 0, js(2, "open-txn"))
	produce(t, addr, "open", srcMsg{p: 0, value: js(3, "after")})

	s := openSource(t, srcTable(addr, "open"), 0, 1)
	r, err := readAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "read_committed", r.got(), []string{"+I[1, before]"})
	s = openSource(t, srcTable(addr, "open", "properties.isolation.level", "read_uncommitted"), 0, 1)
	r, err = readAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "read_uncommitted", r.got(), []string{"+I[1, before]", "+I[2, open-txn]", "+I[3, after]"})
	end(t, td, false)
}

// TestAbortedAcrossFetches makes fetches small, so that aborted
// transactions span several fetch rounds and fetches start in the middle
// of batches; the rows must still be exactly the committed ones.
func TestAbortedAcrossFetches(t *testing.T) {
	defer func(a, b int32) { fetchMaxBytes, partitionMaxBytes = a, b }(fetchMaxBytes, partitionMaxBytes)
	partitionMaxBytes = 300
	bk := srcBroker(t, 1, "small")
	addr := bk.Addr()
	ta, tb := txnClient(t, addr, "SA"), txnClient(t, addr, "SB")
	var want []string
	id := 0
	for round := 0; round < 6; round++ {
		begin(t, ta)
		begin(t, tb)
		for i := 0; i < 5; i++ {
			id++
			txnProduce(t, ta, "small", 0, js(id, fmt.Sprintf("keep-%d", round)))
			want = append(want, fmt.Sprintf("+I[%d, keep-%d]", id, round))
			id++
			txnProduce(t, tb, "small", 0, js(id, fmt.Sprintf("drop-%d", round)))
		}
		end(t, tb, false)
		end(t, ta, true)
	}
	s := openSource(t, srcTable(addr, "small"), 0, 1)
	r, err := readAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "small fetches", r.got(), want)
	sameRows(t, "vs franz-go", r.got(), kgoRead(t, addr, "small", true))
}

// TestFetchRetriesTransientErrors: the broker answers the first fetches
// with "not leader for partition" and then drops a connection; the source
// retries (looking the leaders up again) and reads every row once.
func TestFetchRetriesTransientErrors(t *testing.T) {
	b := srcBroker(t, 2, "flaky")
	produce(t, b.Addr(), "flaky", srcMsg{p: 0, value: js(1, "a")}, srcMsg{p: 1, value: js(2, "b")}, srcMsg{p: 0, value: js(3, "c")})
	var calls atomic.Int32
	b.Cluster().ControlKey(kmsg.Fetch.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		b.Cluster().KeepControl()
		n := calls.Add(1)
		switch {
		case n <= 3:
			req := r.(*kmsg.FetchRequest)
			resp := req.ResponseKind().(*kmsg.FetchResponse)
			for _, rt := range req.Topics {
				st := kmsg.NewFetchResponseTopic()
				st.Topic = rt.Topic
				for _, rp := range rt.Partitions {
					sp := kmsg.NewFetchResponseTopicPartition()
					sp.Partition = rp.Partition
					sp.ErrorCode = kerr.NotLeaderForPartition.Code
					st.Partitions = append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
			return resp, nil, true
		case n == 4:
			return nil, errors.New("drop the connection"), true
		}
		b.Cluster().DropControl()
		return nil, nil, false
	})
	s := openSource(t, srcTable(b.Addr(), "flaky"), 0, 1)
	r, err := readAll(t, s)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "after transient errors", r.got(), []string{"+I[1, a]", "+I[2, b]", "+I[3, c]"})
	if calls.Load() < 5 {
		t.Fatalf("only %d fetches reached the broker", calls.Load())
	}
}
