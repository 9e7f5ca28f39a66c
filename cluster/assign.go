package cluster

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
)

// memberMeta is what a worker tells the group about itself when it
// joins, in the UserData of its group metadata. The group leader's
// balancer reads every member's to compute the next assignment.
type memberMeta struct {
	// Version of this encoding; a leader refuses members of another.
	Version int `json:"v"`
	// Worker names the process in logs: the --name flag or host-pid.
	Worker string `json:"worker"`
	// Fingerprint of the job's plan; members with another are refused.
	Fingerprint string `json:"fp"`
	// Owned lists the task indexes (into the sorted task list) running
	// or still stopping on the worker at the time it joined: the
	// balancer keeps them there when balance allows (stickiness), and
	// never hands one to another member while this one still owns it.
	Owned []int `json:"owned,omitempty"`
}

const memberMetaVersion = 1

func (m memberMeta) encode() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic("cluster: member metadata does not encode: " + err.Error()) // plain struct: cannot happen
	}
	return b
}

func decodeMemberMeta(b []byte) (memberMeta, error) {
	var m memberMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("member metadata %q: %w", b, err)
	}
	if m.Version != memberMetaVersion {
		return m, fmt.Errorf("member metadata version %d, this worker speaks %d", m.Version, memberMetaVersion)
	}
	return m, nil
}

// member is one member of the group as the balancer sees it.
type member struct {
	id   string // the group member id
	meta memberMeta
	bad  error // metadata that does not decode
}

// assignment is the balancer's result: task indexes per member id, and
// the members refused with why.
type assignment struct {
	tasks   map[string][]int
	refused map[string]string
	// revoking lists the tasks taken from a member this round and given
	// to nobody until that member has stopped them and rejoined.
	revoking []int
}

// assign spreads nTasks tasks over members, Kafka Streams style:
//
//   - even: each accepted member gets ⌊n/m⌋ or ⌈n/m⌉ tasks (members
//     beyond n get none: idle, they stand by);
//   - sticky: a task stays with the member that owns it (runs it now)
//     while that member is under its quota, and the ⌈n/m⌉ quotas go to
//     the members owning most, so a rebalance moves as few tasks as
//     balance needs;
//   - never twice at once: a task owned by a member but moved away from
//     it is assigned to nobody in this generation. Its owner stops it
//     and rejoins, which triggers the next rebalance; the task is free
//     then and goes to the member that needs it. (Kafka Streams'
//     cooperative rebalancing does the same in two rounds.)
//   - one plan: members whose fingerprint differs from the accepted one
//     are refused and get no task. The accepted fingerprint is the one
//     whose members own most tasks (the running cluster), then the one
//     most members have, then the smallest, so that all leaders agree.
//
// Free tasks are handed out stage-aware: to the member under quota with
// fewest tasks of that stage, so each stage's tasks spread too. stageOf
// gives a task index's stage.
func assign(members []member, nTasks int, stageOf func(int) int) assignment {
	out := assignment{tasks: map[string][]int{}, refused: map[string]string{}}
	type fpStat struct{ owned, members int }
	stats := map[string]*fpStat{}
	for _, m := range members {
		if m.bad != nil {
			continue
		}
		s := stats[m.meta.Fingerprint]
		if s == nil {
			s = &fpStat{}
			stats[m.meta.Fingerprint] = s
		}
		s.owned += len(m.meta.Owned)
		s.members++
	}
	accepted := ""
	for fp, s := range stats {
		a := stats[accepted]
		if a == nil || s.owned > a.owned || s.owned == a.owned && (s.members > a.members || s.members == a.members && fp < accepted) {
			accepted = fp
		}
	}
	var live []member
	for _, m := range members {
		switch {
		case m.bad != nil:
			out.refused[m.id] = m.bad.Error()
		case m.meta.Fingerprint != accepted:
			out.refused[m.id] = fmt.Sprintf("worker %s runs a job whose plan fingerprint is %s, but the workers of this job run %s: the job files differ",
				m.meta.Worker, m.meta.Fingerprint, accepted)
		default:
			live = append(live, m)
		}
	}
	if len(live) == 0 || nTasks == 0 {
		return out
	}

	// Quotas: the members owning most get the larger ones.
	slices.SortFunc(live, func(a, b member) int {
		if c := cmp.Compare(len(b.meta.Owned), len(a.meta.Owned)); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	quota := make([]int, len(live))
	for i := range live {
		quota[i] = nTasks / len(live)
		if i < nTasks%len(live) {
			quota[i]++
		}
	}

	// Keep owned tasks up to the quota; a task two members claim (a
	// zombie's, or one whose stop was not seen yet) stays with the first.
	taken := make([]bool, nTasks)
	owned := make([]bool, nTasks)
	got := make([][]int, len(live))
	for i, m := range live {
		for _, t := range m.meta.Owned {
			if t < 0 || t >= nTasks {
				continue
			}
			owned[t] = true
			if taken[t] || len(got[i]) >= quota[i] {
				continue
			}
			taken[t] = true
			got[i] = append(got[i], t)
		}
	}
	for t := range nTasks {
		if owned[t] && !taken[t] {
			out.revoking = append(out.revoking, t)
		}
	}

	// Hand out free tasks.
	perStage := make([]map[int]int, len(live))
	for i := range live {
		perStage[i] = map[int]int{}
		for _, t := range got[i] {
			perStage[i][stageOf(t)]++
		}
	}
	for t := range nTasks {
		if taken[t] || owned[t] {
			continue
		}
		best := -1
		for i := range live {
			if len(got[i]) >= quota[i] {
				continue
			}
			if best < 0 || perStage[i][stageOf(t)] < perStage[best][stageOf(t)] ||
				perStage[i][stageOf(t)] == perStage[best][stageOf(t)] && len(got[i]) < len(got[best]) {
				best = i
			}
		}
		if best < 0 {
			break // every member is at its quota: tasks are being revoked
		}
		taken[t] = true
		got[best] = append(got[best], t)
		perStage[best][stageOf(t)]++
	}
	for i, m := range live {
		slices.Sort(got[i])
		out.tasks[m.id] = append([]int{}, got[i]...)
	}
	return out
}
