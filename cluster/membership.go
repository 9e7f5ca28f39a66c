package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/segmentio/kafka-go"
)

// Membership goes through one Kafka consumer group per job, with
// kafka-go's ConsumerGroup. The group "consumes" one topic, the tasks
// topic, which has one partition per task and carries no records: its
// partitions are only the units the group protocol hands out. The
// balancer below (run by whichever member the broker elects leader)
// maps partition i to the i-th task of the job's sorted task list.
//
// The plan fingerprint guards the group twice. It is part of the
// protocol name, so the broker itself rejects a member whose job
// differs from the running members' (INCONSISTENT_GROUP_PROTOCOL); and
// it is in every member's metadata, so a leader refuses such a member
// should it get in anyway (an empty group rejoined by both at once).

// GroupID is the consumer group of a job's workers.
func GroupID(job string) string { return "streamsql-" + job }

// TasksTopic is the topic whose partitions stand for a job's tasks.
func TasksTopic(job string) string { return "streamsql-" + job + "-tasks" }

// refusedPartition is assigned, alone, to a member the leader refuses:
// the only way an assignment can say so through kafka-go's group API.
const refusedPartition = -1

// protocolName is the group protocol of workers running the plan with
// fingerprint fp.
func protocolName(fp string) string {
	if len(fp) > 16 {
		fp = fp[:16]
	}
	return "streamsql-tasks-" + fp
}

// balancer is the worker's kafka.GroupBalancer. UserData is called at
// every join with what the worker owns then; AssignGroups runs on the
// leader only.
type balancer struct {
	topic    string // the tasks topic
	fp       string
	name     string
	tasks    []TaskID
	log      *slog.Logger
	owned    func() []int // the worker's owned task indexes, now
	mu       sync.Mutex
	lastSent []int // Owned of the last UserData, for rejoin decisions
}

var _ kafka.GroupBalancer = (*balancer)(nil)

func (b *balancer) ProtocolName() string { return protocolName(b.fp) }

func (b *balancer) UserData() ([]byte, error) {
	owned := b.owned()
	b.mu.Lock()
	b.lastSent = owned
	b.mu.Unlock()
	return memberMeta{Version: memberMetaVersion, Worker: b.name, Fingerprint: b.fp, Owned: owned}.encode(), nil
}

// advertised is the Owned list of the last join.
func (b *balancer) advertised() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastSent
}

func (b *balancer) AssignGroups(gm []kafka.GroupMember, partitions []kafka.Partition) kafka.GroupMemberAssignments {
	topic := b.topic
	n := len(b.tasks)
	if len(partitions) < n {
		// The worker checked the topic before joining; a topic changed
		// since is a broken invariant of the deployment. Assign what exists.
		b.log.Error("the tasks topic has fewer partitions than the job has tasks", "topic", topic, "partitions", len(partitions), "tasks", n)
		n = len(partitions)
	}
	members := make([]member, len(gm))
	for i, m := range gm {
		members[i].id = m.ID
		members[i].meta, members[i].bad = decodeMemberMeta(m.UserData)
	}
	a := assign(members, n, func(i int) int { return b.tasks[i].Stage })
	out := kafka.GroupMemberAssignments{}
	names := make([]string, 0, len(gm))
	for _, m := range members {
		if why, ok := a.refused[m.id]; ok {
			b.log.Error("refusing a worker", "member", m.id, "reason", why)
			out[m.id] = map[string][]int{topic: {refusedPartition}}
			continue
		}
		ts := a.tasks[m.id]
		out[m.id] = map[string][]int{topic: ts}
		names = append(names, fmt.Sprintf("%s=[%s]", m.meta.Worker, b.taskNames(ts)))
	}
	slices.Sort(names)
	attrs := []any{"workers", len(names), "tasks", n, "assignment", strings.Join(names, " ")}
	if len(a.revoking) > 0 {
		attrs = append(attrs, "moving", b.taskNames(a.revoking))
	}
	b.log.Info("assigned tasks as group leader", attrs...)
	return out
}

func (b *balancer) taskNames(idx []int) string {
	s := make([]string, len(idx))
	for i, t := range idx {
		s[i] = b.tasks[t].String()
	}
	return strings.Join(s, ",")
}

// sortedTasks is the job's task list in the order that maps tasks to
// partitions of the tasks topic: by stage, then partition.
func sortedTasks(tasks []TaskID) []TaskID {
	s := slices.Clone(tasks)
	slices.SortFunc(s, func(a, b TaskID) int {
		if c := cmp.Compare(a.Stage, b.Stage); c != 0 {
			return c
		}
		return cmp.Compare(a.Partition, b.Partition)
	})
	return slices.Compact(s)
}

// ensureTasksTopic creates the job's tasks topic with one partition per
// task, or checks the one that exists. It retries an unreachable broker
// until ctx ends (the caller bounds it).
func ensureTasksTopic(ctx context.Context, c *kafka.Client, topic string, n int) error {
	var last error
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		last = ensureTasksTopicOnce(ctx, c, topic, n)
		var perm *permanentError
		if errors.As(last, &perm) {
			return struct{}{}, backoff.Permanent(last)
		}
		return struct{}{}, last
	}, backoff.WithBackOff(&backoff.ExponentialBackOff{InitialInterval: 100 * time.Millisecond, Multiplier: 2, MaxInterval: 2 * time.Second}),
		backoff.WithMaxElapsedTime(0))
	if err != nil && last != nil {
		return last
	}
	return err
}

// permanentError is an answer that retrying does not change.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func ensureTasksTopicOnce(ctx context.Context, c *kafka.Client, topic string, n int) error {
	md, err := c.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return err
	}
	for _, t := range md.Topics {
		if t.Name != topic || t.Error != nil {
			continue
		}
		if len(t.Partitions) != n {
			return &permanentError{fmt.Errorf("the tasks topic '%s' has %d partitions but the job has %d tasks: "+
				"it was created for another version of the job; give the job a new 'pipeline.name', or delete the topic "+
				"(and the job's internal topics and checkpoints) to start it afresh", topic, len(t.Partitions), n)}
		}
		return nil
	}
	res, err := c.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic: topic, NumPartitions: n, ReplicationFactor: -1,
	}}})
	if err != nil {
		return err
	}
	if err := res.Errors[topic]; err != nil && !errors.Is(err, kafka.TopicAlreadyExists) {
		return err
	}
	// Created (or by another worker at the same moment): the retry
	// checks it once the metadata lists it.
	return errJustCreated
}

var errJustCreated = errors.New("the tasks topic was just created and is not listed yet")
