package cluster

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func meta(fp string, owned ...int) memberMeta {
	return memberMeta{Version: memberMetaVersion, Worker: "w", Fingerprint: fp, Owned: owned}
}

// stageOf2 is a job of 2 stages with 3 tasks each: indexes 0-2 are
// stage 0, 3-5 stage 1.
func stageOf2(i int) int { return i / 3 }

func TestAssignFreshSpreadsEvenlyAndPerStage(t *testing.T) {
	a := assign([]member{{id: "a", meta: meta("f")}, {id: "b", meta: meta("f")}, {id: "c", meta: meta("f")}}, 6, stageOf2)
	// Worked out by hand: quotas 2/2/2; each free task goes to the
	// member under quota with fewest tasks of its stage, then fewest in
	// all, then the first: 0→a, 1→b, 2→c (stage 0), 3→a, 4→b, 5→c.
	want := map[string][]int{"a": {0, 3}, "b": {1, 4}, "c": {2, 5}}
	if !reflect.DeepEqual(a.tasks, want) || len(a.revoking) != 0 || len(a.refused) != 0 {
		t.Fatalf("got %+v, want %v", a, want)
	}
}

func TestAssignKeepsOwnedTasks(t *testing.T) {
	// b left; a and c keep theirs and share b's two.
	a := assign([]member{{id: "a", meta: meta("f", 0, 3)}, {id: "c", meta: meta("f", 2, 5)}}, 6, stageOf2)
	want := map[string][]int{"a": {0, 1, 3}, "c": {2, 4, 5}}
	if !reflect.DeepEqual(a.tasks, want) || len(a.revoking) != 0 {
		t.Fatalf("got %+v, want %v", a, want)
	}
}

func TestAssignJoinRevokesBeforeHandingOver(t *testing.T) {
	// Two members own 3 tasks each; d joins. Quotas 2/2/2: a and c keep
	// two each and must give one up, which nobody gets in this round.
	a := assign([]member{{id: "a", meta: meta("f", 0, 1, 3)}, {id: "c", meta: meta("f", 2, 4, 5)}, {id: "d", meta: meta("f")}}, 6, stageOf2)
	want := map[string][]int{"a": {0, 1}, "c": {2, 4}, "d": {}}
	if !reflect.DeepEqual(a.tasks, want) || !reflect.DeepEqual(a.revoking, []int{3, 5}) {
		t.Fatalf("got %+v, want %v revoking [3 5]", a, want)
	}
	// The next round, after a and c stopped 3 and 5 and rejoined: d
	// gets them.
	a = assign([]member{{id: "a", meta: meta("f", 0, 1)}, {id: "c", meta: meta("f", 2, 4)}, {id: "d", meta: meta("f")}}, 6, stageOf2)
	want = map[string][]int{"a": {0, 1}, "c": {2, 4}, "d": {3, 5}}
	if !reflect.DeepEqual(a.tasks, want) || len(a.revoking) != 0 {
		t.Fatalf("second round: got %+v, want %v", a, want)
	}
}

func TestAssignDoubleClaimStaysWithOne(t *testing.T) {
	// A zombie and the new owner both claim task 1.
	a := assign([]member{{id: "a", meta: meta("f", 0, 1)}, {id: "b", meta: meta("f", 1, 2)}}, 4, func(int) int { return 0 })
	// Sorted by tasks owned (2 each) then id: a keeps 0,1; b keeps 2 and
	// gets the free 3; 1 stays with a only.
	want := map[string][]int{"a": {0, 1}, "b": {2, 3}}
	if !reflect.DeepEqual(a.tasks, want) {
		t.Fatalf("got %+v, want %v", a, want)
	}
}

func TestAssignMoreWorkersThanTasks(t *testing.T) {
	a := assign([]member{{id: "a", meta: meta("f")}, {id: "b", meta: meta("f", 1)}, {id: "c", meta: meta("f")}, {id: "d", meta: meta("f")}}, 2, func(int) int { return 0 })
	// b owns 1 and gets a larger quota first; the other quota goes to a.
	want := map[string][]int{"a": {0}, "b": {1}, "c": {}, "d": {}}
	if !reflect.DeepEqual(a.tasks, want) {
		t.Fatalf("got %+v, want %v", a, want)
	}
}

func TestAssignRefusesOtherFingerprint(t *testing.T) {
	// The running cluster (owning tasks) has f; x just joined with g; a
	// member with unreadable metadata is refused too.
	a := assign([]member{{id: "a", meta: meta("f", 0, 1)}, {id: "x", meta: meta("g")}, {id: "y", meta: meta("g")}, {id: "z", bad: errors.New("bad metadata")}}, 2, func(int) int { return 0 })
	if !reflect.DeepEqual(a.tasks, map[string][]int{"a": {0, 1}}) {
		t.Fatalf("tasks %v", a.tasks)
	}
	if len(a.refused) != 3 || !strings.Contains(a.refused["x"], "plan fingerprint is g") || !strings.Contains(a.refused["x"], "run f") || a.refused["z"] != "bad metadata" {
		t.Fatalf("refused %v", a.refused)
	}
	// Nobody owns anything: the fingerprint most members have wins.
	a = assign([]member{{id: "a", meta: meta("f")}, {id: "x", meta: meta("g")}, {id: "y", meta: meta("g")}}, 2, func(int) int { return 0 })
	if !reflect.DeepEqual(a.tasks, map[string][]int{"x": {0}, "y": {1}}) || len(a.refused) != 1 {
		t.Fatalf("got %+v", a)
	}
}

func TestMemberMetaRoundTrip(t *testing.T) {
	m := memberMeta{Version: memberMetaVersion, Worker: "w1", Fingerprint: "abc", Owned: []int{2, 5}}
	got, err := decodeMemberMeta(m.encode())
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := decodeMemberMeta([]byte(`{"v":99}`)); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Fatalf("want a version error, got %v", err)
	}
}
