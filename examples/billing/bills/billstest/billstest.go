// Package billstest holds the checks the billing crash loops (tests/billing,
// tests/cluster) share: the output topic read by an independent
// read_committed client, and the XA transactions a job left prepared.
// Only tests import it: it links franz-go's client, which product code
// does not use.
package billstest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/examples/billing/bills"
)

// CheckTopic reads the totals topic as a read_committed consumer
// (franz-go, a client independent of the product's) and checks, per
// user, that the bill counts it sees strictly increase and end at the
// reference. It returns the users whose final value is missing or
// short, the users with a repeated or decreasing count (a change
// delivered twice, or an aborted one seen), and the users with a wrong
// final total.
func CheckTopic(t testing.TB, addr, topic string, ref map[int64]bills.Total) (short, repeated, wrong int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	last := map[int64]bills.Total{}
	bad := map[int64]bool{}
	// The first records may take long to arrive on a loaded machine (the
	// client connects and fetches metadata first): wait up to a minute
	// for them; once records flow, 3 s without any mark the end.
	start, lastRecord, got := time.Now(), time.Now(), false
	for got && time.Since(lastRecord) < 3*time.Second || !got && time.Since(start) < time.Minute {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		n := 0
		fs.EachRecord(func(rec *kgo.Record) {
			n++
			if rec.Value == nil {
				return // a tombstone; the job deletes no user
			}
			var v struct {
				UserID     *int64 `json:"user_id"`
				TotalCents int64  `json:"total_cents"`
				Bills      int64  `json:"bills"`
			}
			if err := json.Unmarshal(rec.Value, &v); err != nil {
				t.Fatalf("output record %q: %v", rec.Value, err)
			}
			if v.UserID == nil {
				var k struct {
					UserID int64 `json:"user_id"`
				}
				if err := json.Unmarshal(rec.Key, &k); err != nil {
					t.Fatalf("output key %q: %v", rec.Key, err)
				}
				v.UserID = &k.UserID
			}
			u := *v.UserID
			if prev, ok := last[u]; ok && v.Bills <= prev.Bills {
				bad[u] = true
			}
			last[u] = bills.Total{Cents: v.TotalCents, Bills: v.Bills}
		})
		if n > 0 {
			got, lastRecord = true, time.Now()
		}
	}
	for u, w := range ref {
		switch g, ok := last[u]; {
		case !ok || g.Bills < w.Bills:
			short++
		case g != w:
			if wrong < 3 {
				t.Logf("topic %s: user %d ends at %+v, want %+v", topic, u, g, w)
			}
			wrong++
		}
	}
	return short, int64(len(bad)), wrong
}

// xaRow is one line of XA RECOVER.
type xaRow struct {
	format, gl int
	data       []byte
}

func recoverXids(t testing.TB, db *sql.DB, marker string) []xaRow {
	t.Helper()
	rows, err := db.Query("XA RECOVER")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []xaRow
	for rows.Next() {
		var v xaRow
		var bl int
		if err := rows.Scan(&v.format, &v.gl, &bl, &v.data); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(v.data), marker) {
			out = append(out, v)
		}
	}
	return out
}

// PreparedXids lists the prepared XA transactions whose xid contains
// marker (the job's name).
func PreparedXids(t testing.TB, db *sql.DB, marker string) []string {
	var out []string
	for _, x := range recoverXids(t, db, marker) {
		out = append(out, string(x.data))
	}
	return out
}

// RollbackLeftovers rolls back the prepared XA transactions whose xid
// contains marker, left by an interrupted earlier run of a test.
func RollbackLeftovers(t testing.TB, db *sql.DB, marker string) {
	for _, v := range recoverXids(t, db, marker) {
		q := fmt.Sprintf("XA ROLLBACK X'%x',X'%x',%d", v.data[:v.gl], v.data[v.gl:], v.format)
		if _, err := db.Exec(q); err != nil {
			t.Logf("rolling back a leftover xid: %v", err)
		}
	}
}

// Tail is the end of s, at most n bytes, for logs in failure messages.
func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
