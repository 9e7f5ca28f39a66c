package kafka

import (
	"fmt"
	"strings"
	"testing"
)

// TestRestoreResumesFromPosition reads a topic once, remembering the
// position after every chunk, then restores a fresh source from a
// position in the middle and reads on. The rows before that position and
// the rows after the restore must together be the topic, each row once:
// checked row by row and with an aggregate (count and sum of ids)
// computed straight from what was written.
func TestRestoreResumesFromPosition(t *testing.T) {
	b := srcBroker(t, 2, "r")
	addr := b.Addr()
	const n = 6000
	var msgs []srcMsg
	var wantSum int64
	for i := 1; i <= n; i++ {
		msgs = append(msgs, srcMsg{p: i % 2, value: js(i, fmt.Sprintf("v%d", i%7))})
		wantSum += int64(i)
	}
	produce(t, addr, "r", msgs[:n/2]...)
	// An aborted transaction in the middle of partition 0: its records
	// and markers occupy offsets that a position must step over.
	tx := txnClient(t, addr, "R")
	begin(t, tx)
	for i := 0; i < 50; i++ {
		txnProduce(t, tx, "r", 0, js(-1, "aborted"))
	}
	end(t, tx, false)
	produce(t, addr, "r", msgs[n/2:]...)

	first, err := readAll(t, openSource(t, srcTable(addr, "r"), 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(first.rows) != n || len(first.positions) < 4 {
		t.Fatalf("first run: %d rows in %d chunks, want %d rows in several chunks", len(first.rows), len(first.positions), n)
	}
	for _, k := range []int{0, len(first.positions) / 2, len(first.positions) - 2, len(first.positions) - 1} {
		s := openSource(t, srcTable(addr, "r"), 0, 1)
		if err := s.RestorePosition(first.positions[k]); err != nil {
			t.Fatal(err)
		}
		rest, err := readAll(t, s)
		if err != nil {
			t.Fatal(err)
		}
		got := append(append([]string(nil), first.rows[:first.ends[k]]...), rest.rows...)
		sameRows(t, fmt.Sprintf("restored after chunk %d", k), got, first.rows)
		// The aggregate, from the rows' ids, against the written input.
		var count, sum int64
		for _, r := range got {
			var id int64
			var v string
			if _, err := fmt.Sscanf(r, "+I[%d, %s", &id, &v); err != nil {
				t.Fatal(err)
			}
			count++
			sum += id
		}
		if count != n || sum != wantSum {
			t.Fatalf("restored after chunk %d: count %d sum %d, want %d and %d", k, count, sum, n, wantSum)
		}
	}
	// A position naming a partition this subtask does not read is refused.
	s := openSource(t, srcTable(addr, "r"), 1, 2)
	if err := s.RestorePosition(first.positions[0]); err == nil {
		t.Fatal("subtask 1 of 2 accepted a position naming partition 0")
	}
}

// TestRestoreToMissingOffsetFails: a restored position whose records no
// longer exist (here: beyond the end, as after the topic was recreated)
// fails the job naming the partition and offset, rather than silently
// starting elsewhere.
func TestRestoreToMissingOffsetFails(t *testing.T) {
	b := srcBroker(t, 1, "gone")
	produce(t, b.Addr(), "gone", srcMsg{value: js(1, "a")})
	s := openSource(t, srcTable(b.Addr(), "gone", "scan.bounded.mode", ""), 0, 1)
	if err := s.RestorePosition([]byte(`{"v":1,"offsets":[{"topic":"gone","partition":0,"offset":1000}],"skipped":0}`)); err != nil {
		t.Fatal(err)
	}
	_, err := readAll(t, s)
	if err == nil || !strings.Contains(err.Error(), "topic 'gone' partition 0 has no offset 1000") {
		t.Fatalf("want an error naming the missing offset, got %v", err)
	}
}
