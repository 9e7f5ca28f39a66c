// Package bills generates the billing example's input and checks its
// output: the seed example of streamsql, where bills arrive on Kafka,
// are deduplicated over the whole history, summed per user and written
// exactly once to MySQL (or to files) and to a Kafka topic.
//
// The input is deterministic from a seed. Each event is a JSON object
//
//	{"bill_id": 17, "user_id": 3, "amount_cents": 1299, "event_time": "2026-11-29 10:00:00.017"}
//
// Of the records, about 5% are resends of an earlier bill, picked from
// the whole history so far (same content: a producer retry, say); about
// 10% arrive late, their event time up to 3 s behind their neighbours';
// and about 0.1% are malformed (truncated or not JSON), which the job
// skips and counts. The reference totals are computed here, straight
// from the generated events, independently of the engine.
package bills

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// Bill is one bill event.
type Bill struct {
	ID, User, Cents int64
	Time            time.Time
}

// Record is one Kafka record of the input: a bill, or malformed bytes.
type Record struct {
	Key, Value []byte
	Bill       *Bill // nil for a malformed record
	Duplicate  bool
}

// Config shapes the input.
type Config struct {
	Seed  int64
	Bills int   // distinct bills
	Users int64 // user ids are 1..Users
	Start time.Time
}

// DefaultConfig is the README demo's input.
func DefaultConfig() Config {
	return Config{Seed: 42, Bills: 200_000, Users: 1000, Start: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)}
}

// Generate returns the records in the order they are produced.
func Generate(c Config) []Record {
	r := rand.New(rand.NewSource(c.Seed))
	var out []Record
	var sent []*Bill
	for i := 0; i < c.Bills; i++ {
		b := &Bill{ID: int64(i + 1), User: 1 + r.Int63n(c.Users), Cents: 1 + r.Int63n(100_000),
			Time: c.Start.Add(time.Duration(i) * time.Millisecond)}
		if r.Intn(10) == 0 { // late: up to 3 s behind
			b.Time = b.Time.Add(-time.Duration(r.Int63n(3000)) * time.Millisecond)
		}
		out = append(out, encode(b, false))
		sent = append(sent, b)
		if r.Intn(19) == 0 { // ~5% of records are resends of any earlier bill
			out = append(out, encode(sent[r.Intn(len(sent))], true))
		}
		if r.Intn(1000) == 0 {
			out = append(out, malformed(r, i))
		}
	}
	return out
}

func encode(b *Bill, dup bool) Record {
	v := fmt.Sprintf(`{"bill_id": %d, "user_id": %d, "amount_cents": %d, "event_time": "%s"}`,
		b.ID, b.User, b.Cents, b.Time.Format("2006-01-02 15:04:05.000"))
	return Record{Key: []byte(strconv.FormatInt(b.ID, 10)), Value: []byte(v), Bill: b, Duplicate: dup}
}

func malformed(r *rand.Rand, i int) Record {
	vs := []string{
		`{"bill_id": ` + strconv.Itoa(i) + `, "user_id": `,
		`not json at all`,
		`{"bill_id": "x` + strconv.Itoa(i) + `", "user_id": 1, "amount_cents": 5, "event_time": "2026-11-29 10:00:00.000"}`,
	}
	return Record{Key: []byte("bad"), Value: []byte(vs[r.Intn(len(vs))])}
}

// Total is one user's result.
type Total struct{ Cents, Bills int64 }

// Reference computes the per-user totals over distinct bills, straight
// from the records.
func Reference(recs []Record) map[int64]Total {
	seen := map[int64]bool{}
	ref := map[int64]Total{}
	for _, rec := range recs {
		if rec.Bill == nil || seen[rec.Bill.ID] {
			continue
		}
		seen[rec.Bill.ID] = true
		t := ref[rec.Bill.User]
		t.Cents += rec.Bill.Cents
		t.Bills++
		ref[rec.Bill.User] = t
	}
	return ref
}

// Produce writes recs to topic with kafka-go, keyed by bill id (so a
// resend lands in the partition of its original), acknowledged by the
// broker. rate > 0 spreads the records over time (records per second);
// progress, if not nil, is called with the number written so far.
func Produce(ctx context.Context, brokers, topic string, recs []Record, rate int, progress func(int)) error {
	w := &kafka.Writer{Addr: kafka.TCP(brokers), Topic: topic, Balancer: &kafka.Hash{},
		RequiredAcks: kafka.RequireAll, BatchSize: 5000, BatchBytes: 8 << 20, BatchTimeout: time.Millisecond}
	defer w.Close()
	const batch = 5000
	start := time.Now()
	for i := 0; i < len(recs); i += batch {
		j := min(i+batch, len(recs))
		msgs := make([]kafka.Message, 0, j-i)
		for _, r := range recs[i:j] {
			msgs = append(msgs, kafka.Message{Key: r.Key, Value: r.Value})
		}
		if err := w.WriteMessages(ctx, msgs...); err != nil {
			return fmt.Errorf("producing bills: %w", err)
		}
		if progress != nil {
			progress(j)
		}
		if rate > 0 {
			due := start.Add(time.Duration(float64(j) / float64(rate) * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(d):
				}
			}
		}
	}
	return nil
}

// Diff compares observed totals with the reference. lost counts bills
// missing from a user's total, duplicated bills counted twice, and
// mismatched the users whose total differs in any way (including the
// users that are missing or should not be there).
func Diff(ref, got map[int64]Total) (lost, duplicated, mismatched int64) {
	for u, w := range ref {
		g := got[u]
		if g != w {
			mismatched++
		}
		if g.Bills < w.Bills {
			lost += w.Bills - g.Bills
		} else {
			duplicated += g.Bills - w.Bills
		}
	}
	for u, g := range got {
		if _, ok := ref[u]; !ok {
			mismatched++
			duplicated += g.Bills
		}
	}
	return
}
